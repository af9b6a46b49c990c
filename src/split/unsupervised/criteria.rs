//! The unsupervised split criteria: with no targets, a split is judged by the projected
//! values themselves, as two clusters on either side of the threshold (treeple's
//! `TwoMeans` and `FastBIC`). They read only the first two moments of each side.

use super::fast_bic::FastBicLogs;

/// The weight, weighted sum and weighted sum of squares of a set of projected values,
/// taken about a centre near the node's mean so that the sums of squares lose no
/// digits.
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
    /// Adds `value` with weight `weight` (several samples of one value at once, when
    /// `weight` is their total).
    #[inline(always)]
    pub(super) fn add(&mut self, value: f64, weight: f64) {
        self.weight += weight;
        self.sum += weight * value;
        self.sum_squares += weight * value * value;
    }

    /// Weighted sum of squared deviations from the weighted mean (0 when empty; never
    /// below 0, which rounding could otherwise reach).
    #[inline(always)]
    pub fn squared_deviations(&self) -> f64 {
        squared_deviations(self.weight, self.sum, self.sum_squares)
    }
}

/// [`Moments::squared_deviations`] of moments given one by one.
#[inline(always)]
fn squared_deviations(weight: f64, sum: f64, sum_squares: f64) -> f64 {
    if weight > 0.0 {
        (sum_squares - sum * sum / weight).max(0.0)
    } else {
        0.0
    }
}

/// The left sides of an atom's thresholds, in order: their moments, one array per
/// moment so that the costs of all thresholds can be worked out in vector lanes, and
/// their numbers of samples.
#[derive(Debug, Clone, Default)]
pub(crate) struct LeftSides {
    pub(super) weight: Vec<f64>,
    pub(super) sum: Vec<f64>,
    pub(super) sum_squares: Vec<f64>,
    /// Samples on each left side (counted only where a leaf's size needs it).
    pub(crate) n_samples: Vec<usize>,
}

impl LeftSides {
    pub(crate) fn clear(&mut self) {
        self.weight.clear();
        self.sum.clear();
        self.sum_squares.clear();
        self.n_samples.clear();
    }

    /// Adds the next threshold's left side, of moments `left` and `n_samples` samples.
    #[inline(always)]
    pub(crate) fn push(&mut self, left: &Moments, n_samples: usize) {
        self.weight.push(left.weight);
        self.sum.push(left.sum);
        self.sum_squares.push(left.sum_squares);
        self.n_samples.push(n_samples);
    }

    pub(super) fn len(&self) -> usize {
        self.weight.len()
    }

    /// Room for `len` thresholds, written through [`LeftSides::columns_mut`]: a scan
    /// that knows its number of thresholds writes them in place rather than pushing
    /// four vectors' worth at each.
    pub(crate) fn resize(&mut self, len: usize) {
        self.weight.resize(len, 0.0);
        self.sum.resize(len, 0.0);
        self.sum_squares.resize(len, 0.0);
        self.n_samples.resize(len, 0);
    }

    /// Each threshold's (weight, sum, sum of squares, samples) on its left, per moment.
    #[allow(clippy::type_complexity)]
    pub(crate) fn columns_mut(&mut self) -> (&mut [f64], &mut [f64], &mut [f64], &mut [usize]) {
        (
            &mut self.weight,
            &mut self.sum,
            &mut self.sum_squares,
            &mut self.n_samples,
        )
    }

    /// Per threshold, `[wl, dl, wr, dr]`: each side's weight and squared deviations
    /// ([`Moments::squared_deviations`]), the right side being the node (of moments
    /// `node`) less the left, moment by moment. Plain arithmetic over
    /// the moments' arrays, which the compiler turns into vector divisions.
    #[inline(always)]
    pub(super) fn sides<'a>(&'a self, node: &'a Moments) -> impl Iterator<Item = [f64; 4]> + 'a {
        // Indexed over slices of one length, so that the compiler sees no bounds to
        // check and takes four thresholds to a vector (three zipped iterators it did
        // not vectorise).
        let n = self.len();
        let (weights, sums, squares) = (&self.weight[..n], &self.sum[..n], &self.sum_squares[..n]);
        (0..n).map(move |k| {
            let (weight, sum, sum_squares) = (weights[k], sums[k], squares[k]);
            let right_weight = node.weight - weight;
            [
                weight,
                squared_deviations(weight, sum, sum_squares),
                right_weight,
                squared_deviations(right_weight, node.sum - sum, node.sum_squares - sum_squares),
            ]
        })
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

/// The costs of [`UnsupervisedCriterion`] as split search takes them: what the
/// thresholds of one atom share is computed once per atom, and the logarithms of the
/// sides' shares once per node. The same values as the criterion's own costs.
pub(crate) trait AtomCosts: UnsupervisedCriterion {
    /// What the costs of all thresholds of one atom share.
    type AtomTerms: Copy;

    /// Readies `logs` for a node of samples of weights `weights`, of total
    /// `node_weight`, where the criterion takes logarithms of the sides' shares.
    fn start_node(&self, _logs: &mut FastBicLogs, _node_weight: f64, _weights: &[f64]) {}

    /// The shared terms of an atom along which the node's values have moments `node`.
    fn atom_terms(&self, node: &Moments) -> Self::AtomTerms;

    /// Cost of the node's values as one cluster.
    fn node_cost_of(&self, terms: &Self::AtomTerms) -> f64;

    /// Cost of the two sides of a threshold as two clusters (their union is the node
    /// of `terms`); `shares` gives the logarithms of the sides' shares of the node.
    fn children_cost_of(
        &self,
        left: &Moments,
        right: &Moments,
        terms: &Self::AtomTerms,
        shares: &FastBicLogs,
    ) -> f64;

    /// [`children_cost_of`](Self::children_cost_of) of every threshold of `lefts`
    /// (the node's values have moments `node`, each right side the node less the
    /// left), into `costs`, the same values bit for bit; `logs` holds the node's
    /// shares and lends its buffers.
    fn children_costs(
        &self,
        lefts: &LeftSides,
        node: &Moments,
        terms: &Self::AtomTerms,
        logs: &mut FastBicLogs,
        costs: &mut Vec<f64>,
    );
}

/// Two-means (treeple's `"twomeans"`): the weighted sum of squared deviations of each
/// side's values from that side's mean, the one-dimensional 2-means objective.
#[derive(Debug, Clone, Copy, Default)]
pub struct TwoMeans;

impl UnsupervisedCriterion for TwoMeans {
    fn node_cost(&self, node: &Moments) -> f64 {
        self.node_cost_of(&self.atom_terms(node))
    }

    fn children_cost(&self, left: &Moments, right: &Moments, node: &Moments) -> f64 {
        let terms = self.atom_terms(node);
        self.children_cost_of(left, right, &terms, &FastBicLogs::uncached(node.weight))
    }
}

impl AtomCosts for TwoMeans {
    /// The node's own cost.
    type AtomTerms = f64;

    #[inline(always)]
    fn atom_terms(&self, node: &Moments) -> f64 {
        node.squared_deviations()
    }

    #[inline(always)]
    fn node_cost_of(&self, terms: &f64) -> f64 {
        *terms
    }

    #[inline(always)]
    fn children_cost_of(&self, left: &Moments, right: &Moments, _: &f64, _: &FastBicLogs) -> f64 {
        left.squared_deviations() + right.squared_deviations()
    }

    /// The same sums as [`children_cost_of`](Self::children_cost_of), from
    /// [`LeftSides::sides`] in vector lanes.
    fn children_costs(
        &self,
        lefts: &LeftSides,
        node: &Moments,
        _: &f64,
        _: &mut FastBicLogs,
        costs: &mut Vec<f64>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if crate::scoring::has_avx2() {
            // SAFETY: the processor has AVX2.
            return unsafe { two_means_costs_avx2(lefts, node, costs) };
        }
        two_means_costs(lefts, node, costs);
    }
}

/// [`TwoMeans::children_costs`].
#[inline(always)]
fn two_means_costs(lefts: &LeftSides, node: &Moments, costs: &mut Vec<f64>) {
    costs.clear();
    costs.resize(lefts.len(), 0.0);
    for (cost, [_, left, _, right]) in costs.iter_mut().zip(lefts.sides(node)) {
        *cost = left + right;
    }
}

/// [`two_means_costs`] compiled for AVX2: the same operations, so the same values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn two_means_costs_avx2(lefts: &LeftSides, node: &Moments, costs: &mut Vec<f64>) {
    two_means_costs(lefts, node, costs);
}
