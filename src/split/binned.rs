//! Split search in bins (`SplitRule::max_bins`): a node's projections on an atom are
//! put in equal-width bins over their range and counted by bin, as whole values are
//! counted by value, instead of put in order. Thresholds are then searched between
//! bins only: an approximation of the exact search, as LightGBM's and scikit-learn's
//! histogram boosters make once per fit, made here per node over its own range, so
//! that deeper nodes still split finely.

use super::counted_scan::{Counting, ValueTable};
use super::criterion::SplitCriterion;
use super::scan::{midpoint, NodeScan};
use super::search::SplitCandidate;

/// One atom's projections at a node, with their range.
pub(super) struct BinnedAtom<'a> {
    pub values: &'a [f32],
    pub low: f32,
    /// `high - low` of the projections: positive and finite, as is `bins / width`.
    pub width: f32,
    pub atom: usize,
}

/// The projections' bin: `0..bins`, equal widths over `low..=low + width`, never
/// decreasing as the value grows (subtraction and a positive scale keep the order).
/// `value` lies in the range and `scale` is finite, so the product is never NaN.
#[inline(always)]
fn bin_of(value: f32, low: f32, scale: f32, last: u32) -> u32 {
    // Clamped first: a value rounding past the range lands in an end bin.
    let bin = ((value - low) * scale).clamp(0.0, last as f32);
    // SAFETY: `bin` is a number in `0..=last` (not NaN: see above), which `i32` holds;
    // without the checks of `as`, the conversion runs four values at a time.
    unsafe { bin.to_int_unchecked::<i32>() as u32 }
}

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// Searches `atom` in `bins` bins counted as `counting` says, offering its best
    /// split to `best` with a threshold between the samples' own values, so that
    /// the samples part at it exactly as their bins did.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_binned(
        &self,
        atom: BinnedAtom<'_>,
        bins: usize,
        counting: Counting,
        table: &mut ValueTable,
        left: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let BinnedAtom {
            values,
            low,
            width,
            atom,
        } = atom;
        let scale = bins as f32 / width;
        let last = bins as u32 - 1;
        table.offsets.clear();
        table
            .offsets
            .extend(values.iter().map(|&v| bin_of(v, low, scale, last)));
        // Counted as whole values from 0: bin numbers.
        match counting {
            Counting::Whole => self.scan_whole_offsets(0.0, bins, atom, table, best),
            Counting::Counted => self.scan_counted_offsets(0.0, bins, atom, table, left, best),
        }
        if let Some((_, candidate)) = best.as_mut() {
            if candidate.atom == atom {
                // The scan above offered a threshold between bin numbers.
                candidate.threshold =
                    threshold_between_bins(values, &table.offsets, candidate.threshold);
            }
        }
    }
}

/// A threshold on `values` that parts them as `bin_threshold` parts their bins
/// (`binned`, in the same order): every value whose bin is at most `bin_threshold`
/// lies at or below it, every other value above. Bins never decrease as values
/// grow, so the largest value on the left is below the smallest on the right.
fn threshold_between_bins(values: &[f32], binned: &[u32], bin_threshold: f32) -> f32 {
    let (mut below, mut above) = (f32::NEG_INFINITY, f32::INFINITY);
    for (&value, &bin) in values.iter().zip(binned) {
        if bin as f32 <= bin_threshold {
            below = below.max(value);
        } else {
            above = above.min(value);
        }
    }
    midpoint(below, above)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_never_decrease_and_stay_in_range() {
        let (low, width) = (-3.25f32, 1000.5f32);
        let bins = 32;
        let scale = bins as f32 / width;
        let mut previous = 0;
        for step in 0..=100_000 {
            let value = low + width * step as f32 / 100_000.0;
            let bin = bin_of(value, low, scale, bins - 1);
            assert!(bin >= previous && bin < bins, "value {value}: bin {bin}");
            previous = bin;
        }
        assert_eq!(previous, bins - 1);
        assert_eq!(bin_of(low, low, scale, bins - 1), 0);
    }

    #[test]
    fn the_threshold_parts_the_values_as_their_bins() {
        let values = [5.0f32, 1.0, 9.5, 3.0, 7.25, 1.0];
        let binned = [2, 0, 3, 1, 3, 0];
        let threshold = threshold_between_bins(&values, &binned, 1.5);
        assert_eq!(threshold, 4.0);
        for (value, bin) in values.iter().zip(binned) {
            assert_eq!(*value <= threshold, bin <= 1);
        }
    }
}
