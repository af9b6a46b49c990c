//! The forest: trees trained in parallel ([`fit`](Forest::fit)), averaged posteriors
//! (scoring), importances and saving, one file each.

mod bag;
pub(crate) mod control;
pub(crate) mod fit;
pub(crate) mod format;
mod importance;
mod inspect;
mod merge;
mod oob;
pub(crate) mod score;
mod targets;

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};
use crate::tree::{Tree, TreeStats};

pub use control::{FitControl, Progress, ProgressCallback};
pub use format::FORMAT_VERSION;
pub use inspect::NO_NODE;
pub use oob::OutOfBag;
pub use targets::Targets;

/// Cores this process may run on; 1 when that cannot be told.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Most features a forest may have: atoms name features with `u32`.
pub const MAX_FEATURES: usize = u32::MAX as usize;

/// Most classes (or regression outputs) a forest may have: every leaf stores a
/// distribution over all classes (or a value per output), so 2^24 classes already take
/// 64 MiB per leaf.
pub const MAX_CLASSES: usize = 1 << 24;

/// A trained forest of classification or regression trees.
///
/// ```
/// use ndarray::array;
/// use morf_rs::{AtomKind, Forest, ForestParams, Patches};
///
/// // Four 1-D signals of 6 samples; class 1 has its bump on the right.
/// let x = array![
///     [1.0f32, 1.0, 0.0, 0.0, 0.0, 0.0],
///     [0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
///     [0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
///     [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
/// ];
/// let y = [0, 0, 1, 1];
/// let params = ForestParams {
///     n_estimators: 10,
///     atoms: AtomKind::Patches(Patches::new(vec![6], vec![1], vec![3])),
///     ..ForestParams::default()
/// };
/// let forest = Forest::fit(&params, x.view(), &y, 2, None)?;
/// let proba = forest.predict_proba(x.view(), 1)?;
/// assert_eq!(proba.dim(), (4, 2));
/// let restored = Forest::from_bytes(&forest.to_bytes())?;
/// assert_eq!(restored.predict(x.view(), 1)?, forest.predict(x.view(), 1)?);
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forest {
    n_features: usize,
    task: Task,
    trees: Vec<Tree>,
}

/// What a forest predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    /// Class probabilities ([`Forest::predict_proba`]).
    Classification {
        /// Number of classes.
        n_classes: usize,
    },
    /// Target values ([`Forest::predict_values`]).
    Regression {
        /// Number of values per sample (columns of y).
        n_outputs: usize,
    },
}

impl Task {
    /// Numbers per leaf and per prediction: classes or outputs.
    pub fn width(self) -> usize {
        match self {
            Task::Classification { n_classes } => n_classes,
            Task::Regression { n_outputs } => n_outputs,
        }
    }
}

impl Forest {
    /// Number of features the forest was trained on.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// What the forest predicts.
    pub fn task(&self) -> Task {
        self.task
    }

    /// Number of classes of a classification forest; `None` for regression.
    pub fn n_classes(&self) -> Option<usize> {
        match self.task {
            Task::Classification { n_classes } => Some(n_classes),
            Task::Regression { .. } => None,
        }
    }

    /// The trees.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// Depth, leaf and node counts of every tree.
    pub fn tree_stats(&self) -> Vec<TreeStats> {
        self.trees.iter().map(Tree::stats).collect()
    }
}

/// The threads scoring runs on: the caller's alone, or a pool built once per call or
/// per stream of blocks.
pub(crate) enum Workers {
    Caller,
    Pool(rayon::ThreadPool),
}

impl Workers {
    /// The caller's thread for `n_threads == 1` or for too few rows to share; otherwise
    /// a pool of `n_threads` threads, at most one per available core (0: one per core).
    pub(crate) fn for_rows(n_threads: usize, n_rows: usize) -> Result<Workers> {
        if n_threads == 1 || n_rows <= score::SCORE_CHUNK {
            return Ok(Workers::Caller);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n_threads.min(available_cores()))
            .build()
            .map(Workers::Pool)
            .map_err(|e| invalid("n_threads", format!("cannot start worker threads: {e}")))
    }

    /// Runs `job` on these threads, telling it how many there are.
    pub(crate) fn install<R: Send>(&self, job: impl FnOnce(usize) -> R + Send) -> R {
        match self {
            Workers::Caller => job(1),
            Workers::Pool(pool) => pool.install(|| job(rayon::current_num_threads())),
        }
    }
}

/// Runs `job` in a rayon pool of `n_threads` threads, at most one per available core
/// (0: one per core). More threads than cores would only add start-up time and
/// contention (scikit-learn's joblib backend has the same effect).
pub(crate) fn with_threads<R: Send>(
    n_threads: usize,
    job: impl FnOnce() -> Result<R> + Send,
) -> Result<R> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads.min(available_cores()))
        .build()
        .map_err(|e| invalid("n_threads", format!("cannot start worker threads: {e}")))?;
    pool.install(job)
}
