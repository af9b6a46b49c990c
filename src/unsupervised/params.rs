//! The settings of an unsupervised forest, with treeple's names and meanings.

use serde::{Deserialize, Serialize};

use crate::atoms::{AtomKind, MaxFeatures};
use crate::forest::{ForestParams, MaxSamples};

/// How an unsupervised tree judges a split of its node's projected values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClusteringCriterion {
    /// Least within-side sum of squared deviations ([`TwoMeans`](crate::TwoMeans)).
    TwoMeans,
    /// Least BIC of a two-component Gaussian mixture ([`FastBic`](crate::FastBic)).
    FastBic,
}

/// Everything that shapes an unsupervised forest. `Default` gives treeple's defaults
/// (`UnsupervisedRandomForest`) with axis-aligned atoms, except `min_samples_split`,
/// which treeple sets to the square root of the number of features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupervisedParams {
    /// Number of trees (`n_estimators`).
    pub n_estimators: usize,
    /// The atom dictionary: axis-aligned, sparse oblique or patches.
    pub atoms: AtomKind,
    /// Candidate atoms per node (`max_features`).
    pub max_features: MaxFeatures,
    /// The split criterion (`criterion`).
    pub criterion: ClusteringCriterion,
    /// Deepest a leaf may be; `None` grows until another rule stops (`max_depth`).
    pub max_depth: Option<usize>,
    /// Fewest samples a node needs to be split (`min_samples_split`, at least 2).
    pub min_samples_split: usize,
    /// Fewest samples each child must keep (`min_samples_leaf`, at least 1).
    pub min_samples_leaf: usize,
    /// Draw each tree's sample with replacement (`bootstrap`); otherwise without.
    pub bootstrap: bool,
    /// Size of each tree's sample; `None` means all samples (`max_samples`).
    pub max_samples: Option<MaxSamples>,
    /// Seed; tree `t` draws from streams derived from (`random_state`, `t`).
    pub random_state: u64,
    /// Worker threads for training; 0 uses every core.
    pub n_threads: usize,
}

impl Default for UnsupervisedParams {
    fn default() -> Self {
        UnsupervisedParams {
            n_estimators: 100,
            atoms: AtomKind::AxisAligned,
            max_features: MaxFeatures::Sqrt,
            criterion: ClusteringCriterion::TwoMeans,
            max_depth: None,
            min_samples_split: 2,
            min_samples_leaf: 1,
            bootstrap: false,
            max_samples: None,
            random_state: 0,
            n_threads: 1,
        }
    }
}

impl UnsupervisedParams {
    /// The supervised forest's parameters that say the same: they check the shared
    /// settings and draw each tree's rows exactly as a supervised forest would.
    pub(crate) fn as_forest_params(&self) -> ForestParams {
        ForestParams {
            n_estimators: self.n_estimators,
            atoms: self.atoms.clone(),
            max_features: self.max_features,
            max_depth: self.max_depth,
            min_samples_split: self.min_samples_split,
            min_samples_leaf: self.min_samples_leaf,
            bootstrap: self.bootstrap,
            max_samples: self.max_samples,
            random_state: self.random_state,
            n_threads: self.n_threads,
            ..ForestParams::default()
        }
    }
}
