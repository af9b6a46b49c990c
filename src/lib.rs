//! # morf_rs
//!
//! Manifold Oblique Random Forests (MORF): random forests whose candidate split
//! directions respect the shape of the data. Where a random forest splits on one
//! pixel or one time point, MORF splits on the sum of a random patch of an image or a
//! window of a signal (optionally wrapping around a cycle), so trees learn images and
//! time series with far fewer samples. Axis-aligned forests (RF) and sparse oblique
//! forests (SPORF) are the same engine with other atom dictionaries.
//!
//! The crate has no Python dependency; the `python` feature builds the bindings of the
//! `morf_rs` Python package.
//!
//! Start at [`Forest::fit`] with a [`ForestParams`]; choose the dictionary with
//! [`AtomKind`] and, for MORF, [`Patches`]. [`Forest::fit_with`] takes any targets and
//! range of trees, and reports progress and stops on request through a [`FitControl`].
//! Gradient boosting over the same atoms starts at [`Booster::fit`] with a
//! [`BoostParams`]. Isolation forests over the same atoms, for anomaly detection, start
//! at [`IsolationForest::fit`] with an [`IsolationParams`].

#![warn(missing_docs)]

pub mod atoms;
mod boost;
mod data;
mod error;
pub mod explain;
mod forest;
mod isolation;
// Public for the tests, examples and fuzz seeds that draw their data with it; no part
// of the API.
#[doc(hidden)]
pub mod rng;
mod runtime;
mod scoring;
mod split;
pub mod stats;
mod tree;
mod unsupervised;

/// The internals `benches/kernels.rs` times (projection, split search, sorting),
/// public only with the `bench-internals` feature: no part of the API.
#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::data::{Rows, RunningSums};
    pub use crate::split::{
        best_split, position_key, sort_by_value, Gini, LocalSamples, NodeProjector, NodeTargets,
        Poisson, SplitCriterion, SplitRule, SplitScratch, SquaredError,
    };
}

#[cfg(feature = "python")]
mod python;

/// The Rust program of README.md, compiled and run by `cargo test` so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use atoms::{AtomKind, Patches};
pub use atoms::{MaxFeatures, MAX_NODE_PROJECTIONS};
pub use boost::{
    BoostParams, BoostTargets, Booster, EarlyStopping, Loss, ValidationSize,
    BOOSTER_FORMAT_VERSION, MAX_BOOSTED_TREES,
};
pub use data::Feature;
pub use error::{MorfError, Result};
pub use explain::{AtomContributions, Explain};
pub use forest::{Forest, OutOfBag, Targets, FORMAT_VERSION, MAX_CLASSES, MAX_FEATURES};
pub use forest::{ForestParams, MaxSamples, MAX_BINS, MAX_ESTIMATORS};
pub use isolation::{
    average_path_length, IsolationForest, IsolationParams, AUTO_MAX_SAMPLES,
    ISOLATION_FORMAT_VERSION, MAX_ISOLATION_TREES,
};
pub use runtime::{available_cores, FitControl, Progress, ProgressCallback, ScoreOptions};
pub use scoring::{Inspect, NO_NODE};
pub use split::Criterion;
pub use split::{FastBic, Moments, TwoMeans, UnsupervisedCriterion};
pub use tree::{HonestPrior, Leaves, Node, Task, Tree, TreeStats};
pub use unsupervised::{
    similarity_from_leaves, ClusteringCriterion, Linkage, UnsupervisedForest, UnsupervisedParams,
};
