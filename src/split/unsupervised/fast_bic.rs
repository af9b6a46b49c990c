//! Fast-BIC, the unsupervised criterion of a two-component Gaussian mixture, and the
//! logarithms it takes (two per threshold), worked out in vector lanes.

use super::criteria::{AtomCosts, LeftSides, Moments, UnsupervisedCriterion};
use super::logarithm::{ln, ln_in_place};

/// The logarithms Fast-BIC takes: of each side's share of its node's weight,
/// `ln(k / N)`, kept per whole weight `k` of a node of whole weights (worked out once
/// per node, in vector lanes, instead of once per threshold of each atom), and one
/// atom's thresholds' logarithms, side by side for vector lanes.
#[derive(Debug, Clone, Default)]
pub(crate) struct FastBicLogs {
    node_weight: f64,
    /// `ln(k / N)` at index `k` for `k` in `0..=N` (NaN at 0, which no side weighs)
    /// where every weight of the node is whole (a bootstrap's counts), else empty.
    shares: Vec<f64>,
    /// Per threshold, the logarithm of each side's spread ([`FastBicTerms::spread`]).
    left_spreads: Vec<f64>,
    right_spreads: Vec<f64>,
    /// Per threshold, the logarithm of each side's share.
    left_shares: Vec<f64>,
    right_shares: Vec<f64>,
}

impl FastBicLogs {
    /// Logarithms of shares of a node of total weight `node_weight`, each computed
    /// when asked for.
    pub(super) fn uncached(node_weight: f64) -> Self {
        Self {
            node_weight,
            ..Self::default()
        }
    }

    /// Whole shares kept per node sample, at most.
    const MAX_SHARES_PER_SAMPLE: usize = 8;

    /// Starts a node of samples of weights `weights`, of total `node_weight`,
    /// forgetting the last node's. The table is kept where the weights are whole and
    /// their total at most a few times the samples, as a bootstrap's counts are;
    /// other shares are worked out threshold by threshold.
    pub(crate) fn start_node(&mut self, node_weight: f64, weights: &[f64]) {
        self.node_weight = node_weight;
        self.shares.clear();
        let kept = node_weight >= 1.0
            && node_weight <= (Self::MAX_SHARES_PER_SAMPLE * weights.len()) as f64
            && weights.iter().all(|weight| weight.fract() == 0.0);
        if kept {
            let n = node_weight as usize;
            self.shares.push(f64::NAN);
            self.shares.extend((1..=n).map(|k| k as f64 / node_weight));
            ln_in_place(&mut self.shares[1..]);
        }
    }

    /// `ln(weight / N)` for a side of weight `weight` of the node.
    #[inline(always)]
    fn log_share(&self, weight: f64) -> f64 {
        let index = weight as usize;
        match self.shares.get(index) {
            Some(&log) if index as f64 == weight => log,
            _ => ln(weight / self.node_weight),
        }
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
///
/// Values recorded as whole numbers are known only to their rounding: a side of equal
/// whole values is not a cluster of no spread, yet with `eps` alone its likelihood is
/// so large that cutting off a block of equal values (sparse oblique combinations of
/// a few pixels are often all 0) wins, and trees grow as chains of small leaves.
/// [`FastBic::whole_valued`] takes the values as rounded to whole numbers, an error
/// uniform over a unit step, of variance `1/12`, and adds that to every variance:
/// `eps = 2 pi / 12` unless `1e-7` times the node's variance is larger. The values
/// cannot resolve a smaller spread, so no side is credited with less; above it the
/// ranking is treeple's. Projections of whole X on whole weights are whole numbers of
/// this rounding; on other weights they are known no finer. Rounding each feature of
/// X instead (Sheppard's correction, `sum(w^2) / 12` for `w . x`) assumes independent
/// errors in neighbouring pixels, and clustered digits no better (ARI 0.747 against
/// 0.758 for sparse oblique atoms, 0.727 against 0.737 for MORF patches, two seeds)
/// and Fashion-MNIST alike. Measured values keep `eps` alone ([`FastBic::new`], the
/// `Default`).
#[derive(Debug, Clone, Copy, Default)]
pub struct FastBic {
    /// The rounding variance of the values: `1/12` for whole numbers, 0 for measured
    /// (float) values.
    rounding_variance: f64,
}

/// What Fast-BIC's thresholds of one atom share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FastBicTerms {
    /// The node's weight `N`.
    weight: f64,
    /// The variance floor `eps`.
    eps: f64,
    /// `ln(2 pi v + eps)` of the node's variance `v`.
    log_variance: f64,
}

impl FastBic {
    /// Variance floor relative to the node's variance.
    const RELATIVE_EPS: f64 = 1e-7;

    /// The rounding variance of a whole number: that of an error uniform over a unit
    /// step.
    const WHOLE_ROUNDING_VARIANCE: f64 = 1.0 / 12.0;

    /// Fast-BIC of values measured as floats: no rounding is assumed.
    pub const fn new() -> Self {
        FastBic {
            rounding_variance: 0.0,
        }
    }

    /// Fast-BIC of values recorded as whole numbers (projections of pixels, counts):
    /// each carries a rounding variance of `1/12`.
    pub const fn whole_valued() -> Self {
        FastBic {
            rounding_variance: Self::WHOLE_ROUNDING_VARIANCE,
        }
    }

    /// `BIC_j(v)` of a side of weight `weight` from `ln(n_j / N)` and `ln(2 pi v + eps)`.
    #[inline(always)]
    fn side_bic(weight: f64, log_share: f64, log_variance: f64) -> f64 {
        -2.0 * weight * (log_share + 0.5 * log_variance)
    }
}

impl UnsupervisedCriterion for FastBic {
    fn node_cost(&self, node: &Moments) -> f64 {
        self.node_cost_of(&self.atom_terms(node))
    }

    fn children_cost(&self, left: &Moments, right: &Moments, node: &Moments) -> f64 {
        let terms = self.atom_terms(node);
        self.children_cost_of(left, right, &terms, &FastBicLogs::uncached(node.weight))
    }
}

impl AtomCosts for FastBic {
    type AtomTerms = FastBicTerms;

    fn start_node(&self, logs: &mut FastBicLogs, node_weight: f64, weights: &[f64]) {
        logs.start_node(node_weight, weights);
    }

    fn atom_terms(&self, node: &Moments) -> FastBicTerms {
        let variance = node.squared_deviations() / node.weight;
        // A constant node is never split; any positive floor serves. Measured values
        // add no rounding (`max` with 0 leaves the floor as it was).
        let eps = (Self::RELATIVE_EPS * variance)
            .max(f64::MIN_POSITIVE)
            .max(std::f64::consts::TAU * self.rounding_variance);
        FastBicTerms {
            weight: node.weight,
            eps,
            log_variance: ln(std::f64::consts::TAU * variance + eps),
        }
    }

    #[inline(always)]
    fn node_cost_of(&self, terms: &FastBicTerms) -> f64 {
        terms.weight * terms.weight * terms.log_variance
    }

    #[inline(always)]
    fn children_cost_of(
        &self,
        left: &Moments,
        right: &Moments,
        terms: &FastBicTerms,
        shares: &FastBicLogs,
    ) -> f64 {
        let log_spreads = (
            ln(terms.spread(left.squared_deviations() / left.weight)),
            ln(terms.spread(right.squared_deviations() / right.weight)),
        );
        let log_shares = (
            shares.log_share(left.weight),
            shares.log_share(right.weight),
        );
        Self::cost_of_logs((left.weight, right.weight), log_spreads, log_shares, terms)
    }

    /// The same costs as [`children_cost_of`](Self::children_cost_of): first every
    /// threshold's two spreads from [`LeftSides::sides`] and their logarithms in
    /// vector lanes, then the choice of variances.
    fn children_costs(
        &self,
        lefts: &LeftSides,
        node: &Moments,
        terms: &FastBicTerms,
        logs: &mut FastBicLogs,
        costs: &mut Vec<f64>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if crate::scoring::has_avx2() {
            // SAFETY: the processor has AVX2.
            return unsafe { fast_bic_costs_avx2(lefts, node, terms, logs, costs) };
        }
        fast_bic_costs(lefts, node, terms, logs, costs);
    }
}

/// [`FastBic::children_costs`]: each pass a loop over the thresholds that the compiler
/// runs in vector lanes, but for the reading of the sides' shares from the node's table.
#[inline(always)]
fn fast_bic_costs(
    lefts: &LeftSides,
    node: &Moments,
    terms: &FastBicTerms,
    logs: &mut FastBicLogs,
    costs: &mut Vec<f64>,
) {
    let n = lefts.len();
    let FastBicLogs {
        node_weight,
        shares,
        left_spreads,
        right_spreads,
        left_shares,
        right_shares,
    } = logs;
    for buffer in [
        &mut *left_spreads,
        right_spreads,
        left_shares,
        right_shares,
        costs,
    ] {
        buffer.clear();
        buffer.resize(n, 0.0);
    }
    let spreads = left_spreads.iter_mut().zip(right_spreads.iter_mut());
    for ((left, right), [wl, dl, wr, dr]) in spreads.zip(lefts.sides(node)) {
        *left = ln(terms.spread(dl / wl));
        *right = ln(terms.spread(dr / wr));
    }
    let node_shares = left_shares.iter_mut().zip(right_shares.iter_mut());
    if let Some(last) = shares.len().checked_sub(1) {
        // Every side's weight is a whole number in 1..N, the table's index: read
        // without a test of it.
        for ((left, right), &wl) in node_shares.zip(&lefts.weight) {
            *left = shares[(wl as usize).min(last)];
            *right = shares[((node.weight - wl) as usize).min(last)];
        }
    } else {
        for ((left, right), &wl) in node_shares.zip(&lefts.weight) {
            *left = ln(wl / *node_weight);
            *right = ln((node.weight - wl) / *node_weight);
        }
    }
    let sides = lefts
        .weight
        .iter()
        .zip(left_spreads.iter().zip(&*right_spreads));
    let sides = sides.zip(left_shares.iter().zip(&*right_shares));
    for (cost, ((&wl, (&ll, &lr)), (&sl, &sr))) in costs.iter_mut().zip(sides) {
        let weights = (wl, node.weight - wl);
        *cost = FastBic::cost_of_logs(weights, (ll, lr), (sl, sr), terms);
    }
}

/// [`fast_bic_costs`] compiled for AVX2: the same operations, so the same values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fast_bic_costs_avx2(
    lefts: &LeftSides,
    node: &Moments,
    terms: &FastBicTerms,
    logs: &mut FastBicLogs,
    costs: &mut Vec<f64>,
) {
    fast_bic_costs(lefts, node, terms, logs, costs);
}

impl FastBicTerms {
    /// `2 pi v + eps` of a side of variance `v`: what its logarithm is taken of.
    #[inline(always)]
    fn spread(&self, variance: f64) -> f64 {
        std::f64::consts::TAU * variance + self.eps
    }
}

impl FastBic {
    /// The children's cost of sides of weights `(wl, wr)` whose own variances give
    /// spreads ([`FastBicTerms::spread`]) of logarithms `(ll, lr)`, and whose shares
    /// of the node have logarithms `(share_left, share_right)`.
    #[inline(always)]
    fn cost_of_logs(
        (wl, wr): (f64, f64),
        (ll, lr): (f64, f64),
        (share_left, share_right): (f64, f64),
        terms: &FastBicTerms,
    ) -> f64 {
        let own = (
            Self::side_bic(wl, share_left, ll),
            Self::side_bic(wr, share_right, lr),
        );
        let shared = (
            Self::side_bic(wl, share_left, terms.log_variance),
            Self::side_bic(wr, share_right, terms.log_variance),
        );
        let (bic_left, bic_right) = if own.0 - own.1 < shared.0 - shared.1 {
            own
        } else {
            shared
        };
        -(wl * bic_left + wr * bic_right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn share_logs_equal_the_logarithm_they_stand_for() {
        let mut logs = FastBicLogs::default();
        // Kept in a table; past the table's bound; of weights that are not whole.
        let nodes = [
            (7.0, vec![1.0; 7]),
            (2000.0, [1.0, 3.0].repeat(750)),
            (2000.0, vec![20.0; 100]),
            (2.5, vec![0.5; 5]),
            (4.0, vec![0.5, 1.5, 2.0]),
        ];
        for (node_weight, weights) in nodes {
            logs.start_node(node_weight, &weights);
            for weight in [1.0, 3.0, 0.5, 2.0, 2.5, node_weight] {
                let expected = ln(weight / node_weight);
                assert_eq!(logs.log_share(weight).to_bits(), expected.to_bits());
            }
        }
    }

    #[test]
    fn the_costs_of_all_thresholds_are_each_thresholds_cost_bit_for_bit() {
        let mut rng = Rng::new(5, 0);
        for whole_weights in [true, false] {
            let values: Vec<f64> = (0..300).map(|_| (rng.normal() * 30.0).round()).collect();
            let weights: Vec<f64> = values
                .iter()
                .map(|_| match whole_weights {
                    true => (1 + rng.below(3)) as f64,
                    false => 0.25 + rng.unit(),
                })
                .collect();
            let mut node = Moments::default();
            let mut lefts = LeftSides::default();
            for (&value, &weight) in values.iter().zip(&weights) {
                if node.weight > 0.0 {
                    lefts.push(&node, 0); // each threshold's left side
                }
                node.add(value, weight);
            }
            for criterion in [FastBic::new(), FastBic::whole_valued()] {
                let terms = criterion.atom_terms(&node);
                let mut logs = FastBicLogs::default();
                logs.start_node(node.weight, &weights);
                assert_eq!(logs.shares.is_empty(), !whole_weights);
                let mut costs = Vec::new();
                criterion.children_costs(&lefts, &node, &terms, &mut logs, &mut costs);
                assert_eq!(costs.len(), values.len() - 1);
                for (k, &cost) in costs.iter().enumerate() {
                    let left = Moments {
                        weight: lefts.weight[k],
                        sum: lefts.sum[k],
                        sum_squares: lefts.sum_squares[k],
                    };
                    let right = Moments {
                        weight: node.weight - left.weight,
                        sum: node.sum - left.sum,
                        sum_squares: node.sum_squares - left.sum_squares,
                    };
                    let expected = criterion.children_cost_of(&left, &right, &terms, &logs);
                    assert_eq!(cost.to_bits(), expected.to_bits(), "threshold {k}");
                }
            }
        }
    }
}
