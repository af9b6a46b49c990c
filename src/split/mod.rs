//! Split search: project a node's samples onto each candidate atom, order the values
//! (sort them, count whole values that take few distinct values, or count them in
//! bins), and scan for the threshold with the largest decrease of a
//! [`SplitCriterion`], or, without labels, of an [`UnsupervisedCriterion`] of the
//! projected values themselves.

mod binned;
mod bit_sums;
mod byte_runs;
mod cell_columns;
mod class_criteria;
mod counted_scan;
mod criterion;
mod missing_sums;
mod pair_counts;
mod pooled_columns;
mod projection;
mod rank_sort;
mod scan;
mod search;
mod sort;
mod unsupervised;
mod whole_counts;

pub use class_criteria::{Entropy, Gini};
pub(crate) use counted_scan::value_range;
pub use criterion::{
    Criterion, Float, GradientHessian, LocalSamples, NodeTargets, Poisson, SplitCriterion,
    SquaredError,
};
pub(crate) use projection::sums_exactly_in_integers;
pub use projection::NodeProjector;
pub(crate) use scan::midpoint;
#[cfg(feature = "bench-internals")]
pub use scan::position_key;
pub use search::{best_split, SplitRule, SplitScratch};
pub use sort::{key_value, sort_by_value, sort_key};
pub(crate) use unsupervised::AtomCosts;
pub use unsupervised::{
    best_unsupervised_split, FastBic, Moments, TwoMeans, UnsupervisedCriterion, UnsupervisedScratch,
};
