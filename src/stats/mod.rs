//! Hypothesis tests with forests: does a set of features (a patch of an image, a
//! gene set) carry information about the targets? The trees of a fitted forest
//! score the training rows they never saw ([`Forest::oob_tree_posteriors`]); the
//! Coleman (MIGHT / CoMIGHT) test ([`coleman_test`]) compares a forest grown on X
//! with one grown on X whose chosen columns were permuted, by a [`Metric`] of their
//! averaged out-of-bag posteriors, and draws its null distribution by shuffling the
//! two forests' pooled trees into two halves, without growing any tree again.
//!
//! [`Forest::oob_tree_posteriors`]: crate::Forest::oob_tree_posteriors

mod coleman;
mod metric;
mod posteriors;

pub use coleman::{coleman_test, ColemanTest, MAX_REPEATS};
pub use metric::{Metric, Truth};
