//! What an atom's projection is when some of the cells it reads are missing (NaN).
//!
//! Models up to format versions 4 (forests), 2 (boosted models) and 1 (isolation
//! forests) made a projection missing as soon as one of its cells was
//! ([`MissingCells::AnyCellMissing`]): with a fifth of the pixels missing at random,
//! nearly every patch of an image then reads one, and a manifold forest loses almost all
//! its directions. Trees grown since sum the present cells and rescale the sum to the
//! atom's whole weight ([`MissingCells::RescaledPresent`]):
//!
//! ```text
//! a · x  =  (sum over present j of w_j x_j) * (sum_j |w_j|) / (sum over present j of |w_j|)
//! ```
//!
//! which is the plain sum when every cell is present, an unbiased guess of it when cells
//! are missing at random (each present term stands for its share of the atom's weight:
//! `n_cells / n_present` for a patch of unit weights), and keeps the scale of the
//! projection, so that thresholds learnt on complete rows still apply. The projection is
//! missing only when no present cell carries weight (every cell missing); then the
//! split's learnt side for missing values applies as before.
//!
//! The rule is computed only where the plain sum came out NaN: on complete rows no
//! arithmetic changes, and models grown on complete data are the same bit for bit.

use serde::{Deserialize, Serialize};

/// How a projection treats missing cells; each tree records the rule it was grown with
/// and is scored with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MissingCells {
    /// The projection is missing when any cell is (trees saved by earlier versions).
    AnyCellMissing,
    /// The sum over the present cells, rescaled to the atom's whole weight; missing only
    /// when every cell is (trees grown by this version).
    #[default]
    RescaledPresent,
}

impl MissingCells {
    /// `plain`, the sum of the terms from 0.0 in the atom's order, or under
    /// [`MissingCells::RescaledPresent`] where it is NaN, [`rescaled_present_sum`] of the
    /// `(weight, value)` terms.
    #[inline(always)]
    pub fn resolve(self, plain: f32, terms: impl Iterator<Item = (f32, f32)>) -> f32 {
        if plain.is_nan() && self == MissingCells::RescaledPresent {
            rescaled_present_sum(terms)
        } else {
            plain
        }
    }
}

/// The projection of [`MissingCells::RescaledPresent`] on `(weight, value)` terms in
/// the atom's order: present terms summed from 0.0 in that order, times the atom's
/// whole weight over the present weight (not multiplied at all when every weight is
/// present); NaN when no present cell carries weight. Training, scoring and
/// contributions all call this one function, so they see the same value bit for bit.
#[inline(never)]
pub fn rescaled_present_sum(terms: impl Iterator<Item = (f32, f32)>) -> f32 {
    let (mut sum, mut present, mut whole) = (0.0f32, 0.0f32, 0.0f32);
    for (weight, value) in terms {
        // Adding +0.0 for a missing term is skipping it (sums starting from +0.0 are
        // never -0.0), and selecting it spares a branch taken at random.
        let is_present = !value.is_nan();
        whole += weight.abs();
        sum += if is_present { weight * value } else { 0.0 };
        present += if is_present { weight.abs() } else { 0.0 };
    }
    rescale_present_sum(sum, present, whole)
}

/// The last step of [`rescaled_present_sum`], shared with the node projector's
/// vectorised paths, which sum `sum`, `present` and `whole` the same way: NaN when no
/// present weight, `sum` when the present weight is the whole, else `sum` rescaled.
#[inline(always)]
pub(crate) fn rescale_present_sum(sum: f32, present: f32, whole: f32) -> f32 {
    if present == 0.0 {
        f32::NAN
    } else if present == whole {
        sum
    } else {
        sum * (whole / present)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_cells_are_rescaled_to_the_whole_weight() {
        let nan = f32::NAN;
        // A patch of four unit cells, one missing: 4/3 of the present sum.
        let patch = [(1.0, 2.0), (1.0, nan), (1.0, 4.0), (1.0, 6.0)];
        assert_eq!(rescaled_present_sum(patch.into_iter()), 12.0 * (4.0 / 3.0));
        // Weighted: the present weight is 2 + 1 of 2 + 1 + 1 (signs ignored).
        let weighted = [(2.0, 1.0), (-1.0, nan), (-1.0, 3.0)];
        assert_eq!(rescaled_present_sum(weighted.into_iter()), -(4.0 / 3.0));
        // Nothing missing: the plain sum, unmultiplied.
        let complete = [(0.1f32, 0.3f32), (0.7, 0.9)];
        assert_eq!(
            rescaled_present_sum(complete.into_iter()).to_bits(),
            (0.0 + 0.1f32 * 0.3 + 0.7 * 0.9).to_bits()
        );
        assert!(rescaled_present_sum([(1.0, nan), (2.0, nan)].into_iter()).is_nan());
    }

    #[test]
    fn the_rule_applies_only_where_the_plain_sum_is_missing() {
        let terms = [(1.0, f32::NAN), (1.0, 3.0)];
        assert!(MissingCells::AnyCellMissing
            .resolve(f32::NAN, terms.into_iter())
            .is_nan());
        assert_eq!(
            MissingCells::RescaledPresent.resolve(f32::NAN, terms.into_iter()),
            6.0
        );
        assert_eq!(
            MissingCells::RescaledPresent.resolve(5.0, terms.into_iter()),
            5.0
        );
    }
}
