//! The forest: trees trained in parallel ([`fit`](Forest::fit)), averaged posteriors
//! (scoring), importances and saving, one file each.

pub(crate) mod bag;
pub(crate) mod fit;
pub(crate) mod format;
mod importance;
mod inspect;
mod merge;
mod oob;
mod params;
mod score;
mod scoring;
mod targets;

use serde::{Deserialize, Serialize};

use crate::scoring::{Derived, ScoringTrees};
use crate::tree::{Task, Tree, TreeStats};

pub(crate) use bag::{sampling_sizes, TreeSample};
pub use format::FORMAT_VERSION;
pub use oob::OutOfBag;
pub use params::{ForestParams, MaxSamples, MAX_BINS, MAX_ESTIMATORS};
use scoring::ForestScoring;
pub use targets::Targets;

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
/// use morf_rs::{AtomKind, Forest, ForestParams, Patches, ScoreOptions};
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
/// let options = ScoreOptions::default();
/// let proba = forest.predict_proba(x.view(), &options)?;
/// assert_eq!(proba.dim(), (4, 2));
/// let restored = Forest::from_bytes(&forest.to_bytes())?;
/// assert_eq!(restored.predict(x.view(), &options)?, forest.predict(x.view(), &options)?);
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forest {
    n_features: usize,
    task: Task,
    trees: Vec<Tree>,
    /// The trees laid out for scoring, derived from them when first needed; not saved.
    #[serde(skip)]
    scoring: Derived<ForestScoring>,
}

/// The slot of a leaf that casts no vote (an honest leaf no sample filled).
pub(crate) const NO_VOTE: u32 = u32::MAX;

impl Forest {
    /// A forest of `trees`, for `n_features` features and `task`.
    pub(crate) fn from_trees(n_features: usize, task: Task, trees: Vec<Tree>) -> Forest {
        Forest {
            n_features,
            task,
            trees,
            scoring: Derived::default(),
        }
    }

    /// The trees laid out for scoring with their leaves by slot ([`NO_VOTE`] for a
    /// leaf that casts no vote); built on first use.
    pub(crate) fn scoring(&self) -> &ForestScoring {
        self.scoring
            .get_or_init(|| ForestScoring::new(&self.trees, self.n_features))
    }

    /// The trees laid out for scoring (see [`Forest::scoring`]).
    pub(crate) fn scoring_layout(&self) -> &ScoringTrees {
        &self.scoring().layout
    }

    /// Most rows to score together.
    pub(crate) fn chunk_rows(&self) -> usize {
        self.scoring_layout().chunk_rows()
    }

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
