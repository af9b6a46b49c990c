//! Isolation forests over atoms: unsupervised trees that cut the data at random until
//! every sample stands alone, so that anomalies, which random cuts isolate early, have
//! short paths (Liu, Ting and Zhou, 2008). Each split draws one atom of the forest's
//! dictionary ([`AtomKind`]: single features as scikit-learn's `IsolationForest`,
//! sparse oblique combinations as treeple's `ExtendedIsolationForest`, or MORF patches
//! and the other image families) and a threshold uniform between the node's extreme
//! projections.
//!
//! Each tree grows on a subsample of the rows ([`subsample`], in proportion to sample
//! weights when given) and may see a subset of the features ([`features`]). Trees are
//! grown ([`grow`]) in the crate's tree layout, so scoring ([`score`]) and inspection
//! ([`inspect`]) go through the one scoring engine; each leaf stores its depth plus
//! the expected path length of the samples it still holds. Saved bytes use the
//! crate's framing ([`format`](mod@format)).

mod features;
mod fit;
mod format;
mod grow;
mod inspect;
mod score;
mod subsample;

use serde::{Deserialize, Serialize};

use crate::atoms::AtomKind;
use crate::scoring::Derived;
use crate::tree::{Tree, TreeStats};

pub use format::ISOLATION_FORMAT_VERSION;
use score::IsolationScoring;

/// Most trees an isolation forest may have, as for other forests.
pub const MAX_ISOLATION_TREES: usize = crate::MAX_ESTIMATORS;

/// Rows each tree grows on when [`IsolationParams::max_samples`] is `None`
/// (scikit-learn's `max_samples="auto"`: at most this many).
pub const AUTO_MAX_SAMPLES: usize = 256;

/// The settings of an isolation forest.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationParams {
    /// Number of trees (scikit-learn's `n_estimators`).
    pub n_estimators: usize,
    /// Rows drawn without replacement for each tree; `None` takes
    /// `min(256, n_samples)` (scikit-learn's `"auto"`), and a count above `n_samples`
    /// takes them all.
    pub max_samples: Option<usize>,
    /// Features each tree sees, drawn at random without replacement per tree
    /// (scikit-learn's `max_features` as a count); `None` sees them all. Atoms of
    /// interchangeable features (single features, sparse oblique combinations) are
    /// drawn over a tree's features only; atoms with a structure (patches, graph
    /// neighbourhoods) keep the cells of the tree's features, a patch wholly outside
    /// them being drawn again. Pooled atoms read shifted cells and take no subset.
    pub max_features: Option<usize>,
    /// The dictionary split directions come from.
    pub atoms: AtomKind,
    /// Seed of the trees: tree `i` draws only from streams of (`random_state`, `i`).
    pub random_state: u64,
    /// Threads to grow trees on (0: every core); the forest does not depend on it.
    pub n_threads: usize,
}

impl Default for IsolationParams {
    fn default() -> Self {
        IsolationParams {
            n_estimators: 100,
            max_samples: None,
            max_features: None,
            atoms: AtomKind::AxisAligned,
            random_state: 0,
            n_threads: 1,
        }
    }
}

/// A trained isolation forest.
///
/// A row's anomaly score is `2^(-E[h(x)] / c(psi))`: `h` its path length in a tree
/// (the depth of its leaf plus [`average_path_length`] of the training rows the leaf
/// held), `psi` the rows each tree grew on. Scores near 1 are anomalies, scores well
/// under 0.5 ordinary rows.
///
/// A projection touching missing values (NaN) sums the present ones, rescaled
/// ([`MissingCells`](crate::atoms::MissingCells)); a row whose projection at a split
/// is missing (every cell of the atom is) follows the larger child, the one more of the tree's training rows went to: it is scored as an
/// ordinary row would be there, the rule scikit-learn's trees apply to splits that
/// saw no missing value.
///
/// ```
/// use ndarray::Array2;
/// use morf_rs::{IsolationForest, IsolationParams, ScoreOptions};
///
/// // Rows on a line, and one far away.
/// let mut x = Array2::<f32>::from_shape_fn((200, 2), |(i, j)| (i as f32 / 10.0) * (j as f32 + 1.0));
/// x[[0, 0]] = 100.0;
/// let forest = IsolationForest::fit(&IsolationParams::default(), x.view())?;
/// let scores = forest.anomaly_scores(x.view(), &ScoreOptions::default())?;
/// assert!(scores.iter().skip(1).all(|&s| s < scores[0]));
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IsolationForest {
    n_features: usize,
    /// Rows each tree grew on (psi).
    max_samples: usize,
    trees: Vec<Tree>,
    /// The trees laid out for scoring, derived from them when first needed; not saved.
    #[serde(skip)]
    scoring: Derived<IsolationScoring>,
}

impl IsolationForest {
    /// Number of features of the rows the forest was trained on.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Rows each tree grew on (scikit-learn's `max_samples_`).
    pub fn max_samples(&self) -> usize {
        self.max_samples
    }

    /// The trees; each leaf's value ([`Tree::leaf_values`]) is its path length: its
    /// depth plus [`average_path_length`] of the rows it held.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// Depth, leaf count and mean leaf depth of every tree.
    pub fn tree_stats(&self) -> Vec<TreeStats> {
        self.trees.iter().map(Tree::stats).collect()
    }
}

/// The average path length of an unsuccessful search in a binary search tree of `n`
/// keys, `c(n) = 2 H(n - 1) - 2 (n - 1) / n` with the harmonic number `H(i)` taken as
/// `ln(i) + 0.5772156649` (Euler's constant): the expected depth a leaf of `n` rows
/// would add had its tree grown on. 0 for `n <= 1` and 1 for `n = 2`, as scikit-learn's.
pub fn average_path_length(n: usize) -> f64 {
    const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;
    match n {
        0 | 1 => 0.0,
        2 => 1.0,
        _ => {
            let n = n as f64;
            2.0 * ((n - 1.0).ln() + EULER_GAMMA) - 2.0 * (n - 1.0) / n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_path_length_matches_scikit_learn() {
        // sklearn.ensemble._iforest._average_path_length([0, 1, 2, 3, 256]).
        let expected = [0.0, 0.0, 1.0, 1.207_392_357_589_623, 10.244_770_920_119_917];
        for (n, want) in [0, 1, 2, 3, 256].into_iter().zip(expected) {
            assert!((average_path_length(n) - want).abs() < 1e-12, "c({n})");
        }
    }
}
