//! Split criteria: the impurity a split search decreases, behind one small trait
//! ([`SplitCriterion`]), and the targets it reads: class weights (Gini, entropy: in
//! `class_criteria`), target values (squared error, Poisson deviance), or gradients and
//! hessians (the second-order loss of gradient boosting, [`GradientHessian`]).

use std::ops::{Add, Div, Mul, Neg, Sub};

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::best_split;

/// The samples a tree learns from, by local id: the row of X each stands for, its
/// weight (sample weight times bootstrap count) and its target.
#[derive(Debug, Default, Clone)]
pub struct LocalSamples {
    /// Row of X of each local sample.
    pub row_of: Vec<u32>,
    /// Weight of each local sample.
    pub weight_of: Vec<f64>,
    /// Class index of each local sample (classification; empty otherwise).
    pub class_of: Vec<u32>,
    /// Target values of each local sample, `n_outputs` per sample one after the
    /// other (regression; empty otherwise).
    pub values_of: Vec<f64>,
}

/// The targets of one node's samples in node order (the order of its `samples`), as
/// the scans read them, with their totals. Filled by [`SplitCriterion::gather`].
#[derive(Debug, Default)]
pub struct NodeTargets {
    /// Weight of each node sample.
    pub weights: Vec<f64>,
    /// Class of each node sample (classification).
    pub classes: Vec<u32>,
    /// Per node sample, its `n_outputs` weighted target values, taken relative to
    /// the node's mean: the decreases do not change, and the sums stay small
    /// (regression).
    pub values: Vec<f64>,
    /// Per entry, its sum over the node.
    pub sums: Vec<f64>,
    /// Total weight of the node.
    pub weight: f64,
    /// Whether every node sample has the same target, so that no split helps.
    pub pure: bool,
}

/// The floating-point types a criterion's terms and costs are computed in: `f64` in
/// the scans of samples, `f32` where a histogram scan ranks many boundaries at once
/// (four lanes wide) before the winner's decrease is recomputed in `f64`.
pub trait Float:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// The nearest value to `value`.
    fn from_f64(value: f64) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
}

macro_rules! float {
    ($t:ty) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn from_f64(value: f64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
        }
    };
}

float!(f32);
float!(f64);

/// An impurity split search decreases.
///
/// A criterion sees each sample as a few additive statistics, its *entries*: the
/// sample's weight in the entry of its class (Gini, entropy), or its weighted target
/// values, one entry per output (squared error, Poisson). The weighted impurity `W * I`
/// of a set of samples of total weight `W` depends only on `W` and the sums `S_e` of
/// its entries, through a sum of one term per entry:
///
/// ```text
/// W * I = cost(W, sum_e term(S_e, W))    (up to a part that adds up over samples)
/// ```
///
/// So when a scan moves one sample from the right side of a threshold to the left,
/// each side's sum of terms changes only in the entries that sample has: one for a
/// class, one per output for values. A term may depend on `W` (Poisson); then the
/// sorted scan computes the terms afresh at each threshold
/// ([`SplitCriterion::TERMS_DEPEND_ON_WEIGHT`]). The scans of [`best_split`] are written once over
/// this trait and compiled once per criterion, without a branch on the task inside.
/// A new criterion implements these methods, as [`GradientHessian`] does for
/// boosting (its entry a gradient, its weight a hessian), so that the booster's
/// histogram scan and the exact scans of samples rank splits by the same formulas.
/// Missing values need nothing of a criterion: a scan moves the samples whose
/// projection is missing to one side as a group.
///
/// The implementations are small `Copy` values; split search and tree growth are
/// generic over them, so each criterion gets its own compiled scans.
pub trait SplitCriterion: Copy + Send + Sync + 'static {
    /// Whether each sample's entries add up to its weight (class weights), so that
    /// counting by value need not count weights apart.
    const ENTRIES_SUM_TO_WEIGHT: bool;

    /// Whether [`SplitCriterion::term`] depends on the side's weight. Every term then
    /// changes with each sample a scan moves, so the sorted scan works the sides'
    /// terms out from their sums at each threshold it tries instead of keeping them
    /// up to date one move at a time (which would take twice the terms).
    const TERMS_DEPEND_ON_WEIGHT: bool = false;

    /// Whether a split's cost is cheap enough (a division a side) that the sorted scan
    /// works it out at every position and keeps the best without branching on which
    /// positions may split: whether two neighbouring values tie is as good as random,
    /// and a mispredicted branch costs more than the division.
    const COST_AT_EVERY_POSITION: bool = false;

    /// Whether each term is the square of its sum, whatever the weight (Gini). Where
    /// every entry is a whole number and a node weighs at most 2^26, every term and
    /// every sum of terms is then an exact whole number (below 2^53), so a split's
    /// cost is the same bit for bit whatever order its samples were summed in, and
    /// split search may count entries by value in integers instead of sorting.
    const SQUARED_TERMS: bool = false;

    /// Whether each sample's one entry is its class ([`NodeTargets::classes`]), of
    /// its weight: the scans then read both arrays directly rather than through
    /// [`SplitCriterion::entries`].
    const CLASS_ENTRIES: bool = false;

    /// Number of entries: classes or outputs.
    fn n_entries(&self) -> usize;

    /// Copies the targets of the local samples `samples` into `node`, in that order,
    /// with their sums, total weight and purity.
    fn gather(&self, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets);

    /// Calls `add(entry, amount)` for every entry of the node sample at `position`.
    fn entries(&self, node: &NodeTargets, position: usize, add: impl FnMut(usize, f64));

    /// One entry's part of a side's sum of terms, given the entry's sum on that side
    /// and the side's weight.
    fn term<F: Float>(&self, sum: F, weight: F) -> F;

    /// Whether a side of `node` whose entries sum to `sums` may be a child (beside
    /// the weight and sample counts every criterion requires). Every side may, unless
    /// the criterion says otherwise, as [`Poisson`] does.
    #[inline(always)]
    fn allows_side(&self, node: &NodeTargets, sums: impl Iterator<Item = f64>) -> bool {
        let _ = (node, sums);
        true
    }

    /// Weighted impurity `W * I` of a side of weight `weight` whose entries' terms add
    /// up to `terms`, up to a part that adds up over samples (and so cancels out of
    /// every decrease).
    fn cost<F: Float>(&self, weight: F, terms: F) -> F;

    /// Calls `add(entry, amount)` for the entries of local sample `sample` from which
    /// leaf values are made: a leaf predicts the sums of these entries over its
    /// samples divided by their weight (class frequencies, or mean values).
    fn leaf_entries(&self, local: &LocalSamples, sample: usize, add: impl FnMut(usize, f64));
}

/// Squared error of target values about their weighted mean, averaged over outputs
/// (scikit-learn's `"squared_error"`): `W * I = (sum_i w_i |y_i|^2 - |S|^2 / W) / K`
/// with `S = sum_i w_i y_i`. The first part adds up over samples; entries are the
/// weighted values and their terms `S_k^2`.
#[derive(Debug, Clone, Copy)]
pub struct SquaredError {
    /// Number of outputs (columns of y).
    pub n_outputs: usize,
}

impl SplitCriterion for SquaredError {
    const ENTRIES_SUM_TO_WEIGHT: bool = false;
    const COST_AT_EVERY_POSITION: bool = true;

    fn n_entries(&self) -> usize {
        self.n_outputs
    }

    fn gather(&self, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets) {
        let k = self.n_outputs;
        node.weights.clear();
        node.values.clear();
        node.sums.clear();
        node.sums.resize(k, 0.0);
        // First the weighted means, and whether every value equals the first: their
        // sums of squares need not come out exactly 0 in floating point.
        let first = &local.values_of[samples[0] as usize * k..][..k];
        let mut pure = true;
        let mut weight = 0.0;
        for &sample in samples {
            let w = local.weight_of[sample as usize];
            let values = &local.values_of[sample as usize * k..][..k];
            for ((sum, &v), &f) in node.sums.iter_mut().zip(values).zip(first) {
                *sum += w * v;
                pure &= v == f;
            }
            node.weights.push(w);
            weight += w;
        }
        node.sums.iter_mut().for_each(|s| *s /= weight);
        // Then the weighted values relative to the means: a split's decrease does not
        // depend on the origin of y, and near it the sums of squares lose no digits.
        let means = &mut node.sums;
        for &sample in samples {
            let w = local.weight_of[sample as usize];
            let values = &local.values_of[sample as usize * k..][..k];
            node.values
                .extend(values.iter().zip(means.iter()).map(|(&v, &m)| w * (v - m)));
        }
        means.fill(0.0);
        for values in node.values.chunks_exact(k) {
            for (sum, &v) in node.sums.iter_mut().zip(values) {
                *sum += v;
            }
        }
        node.weight = weight;
        node.pure = pure;
    }

    #[inline(always)]
    fn entries(&self, node: &NodeTargets, position: usize, add: impl FnMut(usize, f64)) {
        output_entries(node, self.n_outputs, position, add);
    }

    #[inline(always)]
    fn term<F: Float>(&self, sum: F, _weight: F) -> F {
        sum * sum
    }

    #[inline(always)]
    fn cost<F: Float>(&self, weight: F, terms: F) -> F {
        -terms / (weight * F::from_f64(self.n_outputs as f64))
    }

    fn leaf_entries(&self, local: &LocalSamples, sample: usize, add: impl FnMut(usize, f64)) {
        weighted_outputs(local, self.n_outputs, sample, add);
    }
}

/// The entries of node sample `position` when they are its `k` (weighted) values, one
/// entry per output (squared error, Poisson).
#[inline(always)]
fn output_entries(node: &NodeTargets, k: usize, position: usize, mut add: impl FnMut(usize, f64)) {
    for (entry, &value) in node.values[position * k..][..k].iter().enumerate() {
        add(entry, value);
    }
}

/// A local sample's `k` target values times its weight, one entry per output: what a
/// leaf of values averages.
#[inline(always)]
fn weighted_outputs(
    local: &LocalSamples,
    k: usize,
    sample: usize,
    mut add: impl FnMut(usize, f64),
) {
    let w = local.weight_of[sample];
    for (entry, &value) in local.values_of[sample * k..][..k].iter().enumerate() {
        add(entry, w * value);
    }
}

/// Half Poisson deviance of non-negative target values about their weighted mean,
/// averaged over outputs (scikit-learn's `"poisson"`): with `S_k` the weighted sum of
/// output `k` and `W` the weight, `W * I = sum_k sum_i w_i y_ik ln(y_ik W / S_k) / K`,
/// which is `-sum_k S_k ln(S_k / W) / K` up to a part that adds up over samples.
/// Entries are the weighted values, and the term of one `-S_k ln(S_k / W)`.
///
/// As in scikit-learn, no side may have an output whose sum is 0 (up to rounding,
/// [`SplitCriterion::allows_side`]): its mean would be 0, and a Poisson model of mean 0
/// gives any positive count a probability of 0.
#[derive(Debug, Clone, Copy)]
pub struct Poisson {
    /// Number of outputs (columns of y).
    pub n_outputs: usize,
}

impl SplitCriterion for Poisson {
    const ENTRIES_SUM_TO_WEIGHT: bool = false;
    const TERMS_DEPEND_ON_WEIGHT: bool = true;

    fn n_entries(&self) -> usize {
        self.n_outputs
    }

    /// The weighted values as they are: unlike squared error, the deviance is not
    /// the same about another origin.
    fn gather(&self, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets) {
        let k = self.n_outputs;
        node.weights.clear();
        node.values.clear();
        node.sums.clear();
        node.sums.resize(k, 0.0);
        let first = &local.values_of[samples[0] as usize * k..][..k];
        let (mut pure, mut weight) = (true, 0.0);
        for &sample in samples {
            let w = local.weight_of[sample as usize];
            let values = &local.values_of[sample as usize * k..][..k];
            for ((sum, &v), &f) in node.sums.iter_mut().zip(values).zip(first) {
                node.values.push(w * v);
                *sum += w * v;
                pure &= v == f;
            }
            node.weights.push(w);
            weight += w;
        }
        node.weight = weight;
        node.pure = pure;
    }

    #[inline(always)]
    fn entries(&self, node: &NodeTargets, position: usize, add: impl FnMut(usize, f64)) {
        output_entries(node, self.n_outputs, position, add);
    }

    /// `-S ln(S / W)`, and 0 for an empty side (or one a rounding left with a sum or
    /// weight not above 0, which [`SplitCriterion::allows_side`] turns down).
    #[inline(always)]
    fn term<F: Float>(&self, sum: F, weight: F) -> F {
        if sum > F::ZERO && weight > F::ZERO {
            -(sum * (sum / weight).ln())
        } else {
            F::ZERO
        }
    }

    #[inline(always)]
    fn cost<F: Float>(&self, _weight: F, terms: F) -> F {
        terms / F::from_f64(self.n_outputs as f64)
    }

    /// Only sides whose every output sums to more than 0 beyond rounding: a side's
    /// sum is the node's less the other side's, one sample at a time, and may miss 0
    /// by up to `2 n f64::EPSILON` times the node's sum (`n` samples), so a side must
    /// hold more than that (and more than `f64::EPSILON`, scikit-learn's bound).
    #[inline(always)]
    fn allows_side(&self, node: &NodeTargets, sums: impl Iterator<Item = f64>) -> bool {
        let rounding = 2.0 * node.weights.len() as f64 * f64::EPSILON;
        sums.zip(&node.sums)
            .all(|(sum, &total)| sum > f64::EPSILON && sum > rounding * total)
    }

    fn leaf_entries(&self, local: &LocalSamples, sample: usize, add: impl FnMut(usize, f64)) {
        weighted_outputs(local, self.n_outputs, sample, add);
    }
}

/// The second-order loss of gradient boosting (XGBoost, LightGBM, scikit-learn's
/// histogram boosting): giving a side with gradient sum `G` and hessian sum `H` its
/// Newton step `-G / (H + lambda)` lowers the loss by `G^2 / (2 (H + lambda))`, so a
/// side's cost is `-G^2 / (H + lambda)` (twice the loss, up to a part that adds up
/// over samples), and a split's decrease is the gain `G_L^2 / (H_L + lambda) +
/// G_R^2 / (H_R + lambda) - G^2 / (H + lambda)`.
///
/// A sample's one entry is its gradient and its weight its hessian: in
/// [`LocalSamples`], `values_of` holds gradients and `weight_of` hessians. A side's
/// least weight is then its least hessian sum ([`GradientHessian::MIN_CHILD_HESSIAN`]
/// in boosting).
#[derive(Debug, Clone, Copy)]
pub struct GradientHessian {
    /// L2 penalty `lambda` on leaf values.
    pub l2_regularization: f64,
}

impl GradientHessian {
    /// Smallest hessian sum a child must keep (scikit-learn's `min_hessian_to_split`).
    pub const MIN_CHILD_HESSIAN: f64 = 1e-3;

    /// The Newton step of a leaf with gradient sum `g` and hessian sum `h`, before
    /// shrinkage: `-g / (h + lambda)`, or 0 where that is undefined.
    pub fn leaf_value(&self, g: f64, h: f64) -> f64 {
        let denominator = h + self.l2_regularization;
        if denominator > 0.0 {
            -g / denominator
        } else {
            0.0
        }
    }
}

impl SplitCriterion for GradientHessian {
    const ENTRIES_SUM_TO_WEIGHT: bool = false;

    fn n_entries(&self) -> usize {
        1
    }

    /// Gradients and hessians as they are: unlike squared error, the cost is not
    /// the same about another origin. No split helps when every gradient is 0.
    fn gather(&self, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets) {
        node.weights.clear();
        node.values.clear();
        node.sums.clear();
        let (mut g, mut h) = (0.0, 0.0);
        for &sample in samples {
            let sample = sample as usize;
            node.values.push(local.values_of[sample]);
            node.weights.push(local.weight_of[sample]);
            g += local.values_of[sample];
            h += local.weight_of[sample];
        }
        node.sums.push(g);
        node.weight = h;
        node.pure = node.values.iter().all(|&v| v == 0.0);
    }

    #[inline(always)]
    fn entries(&self, node: &NodeTargets, position: usize, mut add: impl FnMut(usize, f64)) {
        add(0, node.values[position]);
    }

    #[inline(always)]
    fn term<F: Float>(&self, sum: F, _weight: F) -> F {
        sum * sum
    }

    #[inline(always)]
    fn cost<F: Float>(&self, weight: F, terms: F) -> F {
        -(terms / (weight + F::from_f64(self.l2_regularization)))
    }

    /// Minus the gradient: a leaf's sum of it over its hessian sum is the Newton step
    /// without the penalty ([`GradientHessian::leaf_value`] has it).
    fn leaf_entries(&self, local: &LocalSamples, sample: usize, mut add: impl FnMut(usize, f64)) {
        add(0, -local.values_of[sample]);
    }
}

/// The impurity a split decreases, as a forest parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Criterion {
    /// Gini impurity, `sum_k p_k (1 - p_k)` (classification).
    Gini,
    /// Shannon entropy in bits (classification).
    Entropy,
    /// Mean squared error (regression).
    SquaredError,
    /// Half Poisson deviance (regression of non-negative targets such as counts).
    Poisson,
}

impl Criterion {
    /// Whether the criterion grows regression trees.
    pub fn is_regression(self) -> bool {
        matches!(self, Criterion::SquaredError | Criterion::Poisson)
    }
}
