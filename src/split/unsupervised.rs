//! Unsupervised split criteria: with no targets, a split is judged by the projected
//! values themselves, as two clusters on either side of the threshold (treeple's
//! `TwoMeans` and `FastBIC`). They read only the first two moments of each side, so one
//! sorted scan per atom, moving a sample at a time to the left, ranks every threshold.

use super::projection::NodeProjector;
use super::scan::midpoint;
use super::search::SplitCandidate;
use super::sort::sort_by_value;
use super::sort::{key_value, sort_key};
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

/// The weight, weighted sum and weighted sum of squares of a set of projected values,
/// taken about the node's mean so that the sums of squares lose no digits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    /// Total weight (a sample drawn twice by the bootstrap counts twice).
    pub weight: f64,
    /// Weighted sum of the values.
    pub sum: f64,
    /// Weighted sum of their squares.
    pub sum_squares: f64,
}

impl Moments {
    /// Adds `value` with weight `weight`.
    #[inline(always)]
    fn add(&mut self, value: f64, weight: f64) {
        self.weight += weight;
        self.sum += weight * value;
        self.sum_squares += weight * value * value;
    }

    /// `self` less `part`.
    #[inline(always)]
    fn minus(&self, part: &Moments) -> Moments {
        Moments {
            weight: self.weight - part.weight,
            sum: self.sum - part.sum,
            sum_squares: self.sum_squares - part.sum_squares,
        }
    }

    /// Weighted sum of squared deviations from the weighted mean (0 when empty; never
    /// below 0, which rounding could otherwise reach).
    #[inline(always)]
    pub fn squared_deviations(&self) -> f64 {
        if self.weight > 0.0 {
            (self.sum_squares - self.sum * self.sum / self.weight).max(0.0)
        } else {
            0.0
        }
    }
}

/// A split criterion that needs no labels: the cost of a node's projected values kept
/// together, and of the two sides of a threshold. A split's decrease is the node's cost
/// less its children's, and split search keeps the split of largest decrease: the
/// node's cost is that of its values on one atom, so children's costs alone do not
/// compare atoms (an atom on which the node is nearly constant has nearly no cost
/// however it is cut, and ranking by it peeled a sample or two off per split).
pub trait UnsupervisedCriterion: Copy + Send + Sync + 'static {
    /// Cost of the node's values as one cluster.
    fn node_cost(&self, node: &Moments) -> f64;

    /// Cost of the two sides of a threshold as two clusters; `node` is their union.
    fn children_cost(&self, left: &Moments, right: &Moments, node: &Moments) -> f64;
}

/// Two-means (treeple's `"twomeans"`): the weighted sum of squared deviations of each
/// side's values from that side's mean, the one-dimensional 2-means objective.
#[derive(Debug, Clone, Copy, Default)]
pub struct TwoMeans;

impl UnsupervisedCriterion for TwoMeans {
    #[inline(always)]
    fn node_cost(&self, node: &Moments) -> f64 {
        node.squared_deviations()
    }

    #[inline(always)]
    fn children_cost(&self, left: &Moments, right: &Moments, _node: &Moments) -> f64 {
        left.squared_deviations() + right.squared_deviations()
    }
}

/// Fast-BIC (treeple's `"fastbic"`, after Fast-BIC of arXiv:1907.02844): the Bayesian
/// information criterion of a two-component Gaussian mixture fitted by hard assignment,
/// the values below the threshold to one component and the others to the other, ranked
/// as treeple ranks it. With `n_j` the weight of side `j` and `N` the node's, a side's
/// BIC with variance `v` is
///
/// ```text
/// BIC_j(v) = -2 (n_j ln(n_j / N) + n_j / 2 ln(2 pi v + eps))
/// ```
///
/// taken either with each side's own maximum-likelihood variance `v_j` or with the
/// node's variance `v` for both sides; the own variances are kept when
/// `BIC_L(v_L) - BIC_R(v_R) < BIC_L(v) - BIC_R(v)`. The children's cost is
/// `-(n_L BIC_L + n_R BIC_R)`, and the node's `N^2 ln(2 pi v + eps)` (its
/// `-N BIC_N(v)`).
///
/// This is what treeple 0.10's code computes, not what its docstring writes (which
/// has `-n_j / 2 ln(...)` and compares the models by the sum of the sides' BICs): the
/// clusterings of its forests come from this ranking, and on digits it gave clusters
/// several times closer to the classes (adjusted Rand index 0.58 against 0.27) than
/// the textbook BIC did. Two changes make it independent of the units and origin of
/// X: the values are taken about the node's mean (treeple uses their raw second moment
/// as the node's variance), and `eps`, which keeps a side of equal values from an
/// infinite likelihood, is `1e-7` times the node's variance (treeple adds `1e-7`).
#[derive(Debug, Clone, Copy, Default)]
pub struct FastBic;

impl FastBic {
    /// Variance floor relative to the node's variance.
    const RELATIVE_EPS: f64 = 1e-7;

    /// `BIC_j(v)` of a side of weight `weight` from `ln(n_j / N)` and `ln(2 pi v + eps)`.
    #[inline(always)]
    fn side_bic(weight: f64, log_share: f64, log_variance: f64) -> f64 {
        -2.0 * weight * (log_share + 0.5 * log_variance)
    }

    /// The node's variance and the floor `eps` taken from it.
    #[inline(always)]
    fn variance_and_eps(node: &Moments) -> (f64, f64) {
        let variance = node.squared_deviations() / node.weight;
        // A constant node is never split; any positive floor serves.
        (
            variance,
            (Self::RELATIVE_EPS * variance).max(f64::MIN_POSITIVE),
        )
    }
}

impl UnsupervisedCriterion for FastBic {
    fn node_cost(&self, node: &Moments) -> f64 {
        let (variance, eps) = Self::variance_and_eps(node);
        let n = node.weight;
        n * n * (std::f64::consts::TAU * variance + eps).ln()
    }

    #[inline(always)]
    fn children_cost(&self, left: &Moments, right: &Moments, node: &Moments) -> f64 {
        let n = node.weight;
        let (variance, eps) = Self::variance_and_eps(node);
        let (wl, wr) = (left.weight, right.weight);
        // Five logarithms per threshold: the sides' shares and the three variances.
        let log_variance = |v: f64| (std::f64::consts::TAU * v + eps).ln();
        let (share_left, share_right) = ((wl / n).ln(), (wr / n).ln());
        let log_shared = log_variance(variance);
        let own = (
            Self::side_bic(wl, share_left, log_variance(left.squared_deviations() / wl)),
            Self::side_bic(
                wr,
                share_right,
                log_variance(right.squared_deviations() / wr),
            ),
        );
        let shared = (
            Self::side_bic(wl, share_left, log_shared),
            Self::side_bic(wr, share_right, log_shared),
        );
        let (bic_left, bic_right) = if own.0 - own.1 < shared.0 - shared.1 {
            own
        } else {
            shared
        };
        -(wl * bic_left + wr * bic_right)
    }
}

/// Buffers reused across nodes so that the search allocates nothing once warm.
#[derive(Debug, Default)]
pub struct UnsupervisedScratch {
    projector: NodeProjector,
    values: Vec<f32>,
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
}

/// Finds the (atom, threshold) of largest decrease by `criterion` over all `atoms`,
/// between distinct projected values, leaving at least `min_samples_leaf`
/// samples on each side. `samples` are the node's local samples (rows
/// `row_of[sample]` of `rows`, weights `weight_of[sample]`). Ties keep the earliest atom
/// and the leftmost threshold. `None` when no atom separates the samples. The
/// projections must not be missing (NaN).
#[allow(clippy::too_many_arguments)]
pub fn best_unsupervised_split<C: UnsupervisedCriterion, T: Feature>(
    criterion: &C,
    rows: &Rows<'_, T>,
    row_of: &[u32],
    weight_of: &[f64],
    samples: &[u32],
    atoms: &AtomSet,
    min_samples_leaf: usize,
    scratch: &mut UnsupervisedScratch,
) -> Option<SplitCandidate> {
    let n = samples.len();
    let min_leaf = min_samples_leaf.max(1);
    if n < 2 * min_leaf {
        return None;
    }
    let values = &mut scratch.values;
    scratch
        .projector
        .project(rows, row_of, samples, atoms, values);
    let mut best: Option<(f64, SplitCandidate)> = None;
    for atom in 0..atoms.len() {
        let values = &values[atom * n..(atom + 1) * n];
        let keys = &mut scratch.keys;
        keys.clear();
        keys.extend(
            values
                .iter()
                .enumerate()
                .map(|(position, &value)| (sort_key(value) as u64) << 32 | position as u64),
        );
        sort_by_value(keys, &mut scratch.sort_buffer);
        if keys[0] >> 32 == keys[n - 1] >> 32 {
            continue; // constant along this atom
        }
        // The node's moments about its mean, then each threshold's left side.
        let weight_at = |key: u64| weight_of[samples[key as u32 as usize] as usize];
        let mut total = Moments::default();
        let mut mean = 0.0;
        for pass in 0..2 {
            total = Moments::default();
            for &key in keys.iter() {
                total.add(values[key as u32 as usize] as f64 - mean, weight_at(key));
            }
            if pass == 0 {
                mean = total.sum / total.weight;
            }
        }
        let node_cost = criterion.node_cost(&total);
        let mut left = Moments::default();
        for i in 0..n - 1 {
            let key = keys[i];
            left.add(values[key as u32 as usize] as f64 - mean, weight_at(key));
            let (here, next) = ((key >> 32) as u32, (keys[i + 1] >> 32) as u32);
            if here == next || i + 1 < min_leaf || n - (i + 1) < min_leaf {
                continue;
            }
            let right = total.minus(&left);
            let decrease = node_cost - criterion.children_cost(&left, &right, &total);
            if best.is_none_or(|(best_decrease, _)| decrease > best_decrease) {
                best = Some((
                    decrease,
                    SplitCandidate {
                        atom,
                        threshold: midpoint(key_value(here), key_value(next)),
                        impurity_decrease: decrease,
                        missing_left: None,
                    },
                ));
            }
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::atoms::AtomKind;
    use crate::rng::Rng;

    /// The best split of one feature's values, every sample weighing 1.
    fn split_of<C: UnsupervisedCriterion>(criterion: C, column: &[f32]) -> Option<SplitCandidate> {
        let x = Array2::from_shape_vec((column.len(), 1), column.to_vec()).unwrap();
        let rows = Rows::from_view(x.view()).unwrap();
        let mut atoms = AtomSet::default();
        AtomKind::AxisAligned
            .sampler(1)
            .sample_node(&mut Rng::new(0, 0), 1, &mut atoms);
        let n = column.len() as u32;
        best_unsupervised_split(
            &criterion,
            &rows,
            &(0..n).collect::<Vec<_>>(),
            &vec![1.0; column.len()],
            &(0..n).collect::<Vec<_>>(),
            &atoms,
            1,
            &mut UnsupervisedScratch::default(),
        )
    }

    /// Two modes, at 0 and 10, of 40 and 60 draws spread by up to 1.
    fn bimodal() -> Vec<f32> {
        let mut rng = Rng::new(7, 0);
        (0..100)
            .map(|i| {
                let centre = if i < 40 { 0.0 } else { 10.0 };
                centre + (rng.below(1000) as f32 / 500.0 - 1.0)
            })
            .collect()
    }

    #[test]
    fn both_criteria_split_a_bimodal_sample_between_its_modes() {
        let column = bimodal();
        for split in [split_of(TwoMeans, &column), split_of(FastBic, &column)] {
            let threshold = split.unwrap().threshold;
            assert!(threshold > 1.0 && threshold < 9.0, "threshold {threshold}");
        }
    }

    #[test]
    fn two_means_cuts_the_atom_of_largest_decrease_not_a_nearly_constant_one() {
        // Feature 0 is bimodal; feature 1 is 0 but for one sample, so cutting that
        // sample off leaves two constant sides, of no cost, but decreases little.
        let column = bimodal();
        let n = column.len();
        let x = Array2::from_shape_fn((n, 2), |(i, j)| match j {
            0 => column[i],
            _ => (i == 5) as u8 as f32,
        });
        let rows = Rows::from_view(x.view()).unwrap();
        let mut atoms = AtomSet::default();
        AtomKind::AxisAligned
            .sampler(2)
            .sample_node(&mut Rng::new(0, 0), 2, &mut atoms);
        let all: Vec<u32> = (0..n as u32).collect();
        let split = best_unsupervised_split(
            &TwoMeans,
            &rows,
            &all,
            &vec![1.0; n],
            &all,
            &atoms,
            1,
            &mut UnsupervisedScratch::default(),
        )
        .unwrap();
        assert_eq!(atoms.get(split.atom).indices, [0]);
        assert!(split.threshold > 1.0 && split.threshold < 9.0);
    }

    #[test]
    fn a_constant_feature_has_no_split() {
        assert!(split_of(TwoMeans, &[3.0; 10]).is_none());
    }

    /// The Fast-BIC children's cost of the split of `column` at `threshold`, from its
    /// definition.
    fn fast_bic_directly(column: &[f64], threshold: f64) -> f64 {
        let n = column.len() as f64;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let variance = |v: &[f64]| {
            let m = mean(v);
            v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64
        };
        let eps = 1e-7 * variance(column);
        let (left, right): (Vec<f64>, Vec<f64>) = column.iter().partition(|&&x| x <= threshold);
        let bic = |side: &[f64], var: f64| {
            let k = side.len() as f64;
            -2.0 * (k * (k / n).ln() + k / 2.0 * (std::f64::consts::TAU * var + eps).ln())
        };
        let own = (bic(&left, variance(&left)), bic(&right, variance(&right)));
        let shared = (bic(&left, variance(column)), bic(&right, variance(column)));
        let chosen = if own.0 - own.1 < shared.0 - shared.1 {
            own
        } else {
            shared
        };
        -(left.len() as f64 * chosen.0 + right.len() as f64 * chosen.1)
    }

    #[test]
    fn fast_bic_matches_its_definition_at_the_split_it_chooses() {
        let column = bimodal();
        let split = split_of(FastBic, &column).unwrap();
        let values: Vec<f64> = column.iter().map(|&v| v as f64).collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        let node = n * n * (std::f64::consts::TAU * variance + 1e-7 * variance).ln();
        let expected = node - fast_bic_directly(&values, split.threshold as f64);
        assert!((split.impurity_decrease - expected).abs() < 1e-8 * expected.abs());
        // And no other threshold costs less.
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let chosen = fast_bic_directly(&values, split.threshold as f64);
        for pair in sorted.windows(2).filter(|p| p[0] < p[1]) {
            assert!(fast_bic_directly(&values, (pair[0] + pair[1]) / 2.0) >= chosen - 1e-9);
        }
    }
}
