//! Unsupervised forests (treeple's `UnsupervisedRandomForest` and
//! `UnsupervisedObliqueRandomForest`, over any of our atom dictionaries): trees grown
//! without labels, each split chosen where the node's projected values fall best into
//! two groups ([`TwoMeans`](crate::TwoMeans) or [`FastBic`](crate::FastBic)). Two samples
//! that share many leaves are alike: [`UnsupervisedForest::similarity`] is the share of
//! trees in which they do, the input of clustering or of an embedding.

mod fit;
mod grow;
mod linkage;
mod pair_distances;
mod params;
mod similarity;

use ndarray::{Array2, ArrayView2};

use crate::data::Feature;
use crate::error::Result;
use crate::forest::Forest;
use crate::runtime::options::ScoreOptions;
use crate::scoring::{Inspect, Inspected, ScoringTrees};
use crate::tree::Tree;

pub(crate) use linkage::clusters_from_leaves;
pub use linkage::Linkage;
pub use params::{ClusteringCriterion, UnsupervisedParams};
pub use similarity::similarity_from_leaves;

/// A trained unsupervised forest.
///
/// Its trees are held as a [`Forest`] of one value per leaf (the share of the tree's
/// sample weight that reached the leaf), so that it is scored, inspected and saved as
/// any forest: [`UnsupervisedForest::forest`].
///
/// ```
/// use ndarray::Array2;
/// use morf_rs::{Linkage, ScoreOptions, UnsupervisedForest, UnsupervisedParams};
///
/// // Two groups of rows, around 0 and around 10.
/// let x = Array2::from_shape_fn((20, 3), |(i, j)| (i / 10 * 10 + (i * 7 + j) % 3) as f32);
/// let params = UnsupervisedParams {
///     n_estimators: 20,
///     // Nodes of fewer samples stay leaves: trees grown down to single samples
///     // would leave every row alike to no other.
///     min_samples_split: 8,
///     ..UnsupervisedParams::default()
/// };
/// let forest = UnsupervisedForest::fit(&params, x.view())?;
/// let similarity = forest.similarity(x.view(), &ScoreOptions::default())?;
/// // Rows of the same group share more leaves than rows of different groups.
/// assert!(similarity[[0, 1]] > similarity[[0, 15]]);
/// // And fall in one cluster each.
/// let clusters = forest.cluster(x.view(), 2, Linkage::Average, &ScoreOptions::default())?;
/// assert!(clusters[..10].iter().all(|&c| c == clusters[0]));
/// assert!(clusters[10..].iter().all(|&c| c == clusters[10] && c != clusters[0]));
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct UnsupervisedForest {
    forest: Forest,
}

impl UnsupervisedForest {
    /// The forest of one value per leaf that holds the trees.
    pub fn forest(&self) -> &Forest {
        &self.forest
    }

    /// The forest that holds the trees, taken out.
    pub fn into_forest(self) -> Forest {
        self.forest
    }

    /// The trees.
    pub fn trees(&self) -> &[Tree] {
        self.forest.trees()
    }

    /// The share of trees in which each pair of rows of `x` reach the same leaf, shape
    /// (samples, samples): symmetric, 1 on the diagonal (treeple's
    /// `compute_similarity_matrix`). Takes `8 n^2` bytes; for many samples, take the
    /// leaves of [`Inspect::apply`] into a sparse product instead. Both the
    /// leaves and their comparison run on the threads of `options`.
    pub fn similarity<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<f64>> {
        let leaves = self.apply(x, options)?;
        similarity_from_leaves(leaves.view(), options.n_threads())
    }

    /// The rows of `x` in `n_clusters` clusters (one per row where there are fewer
    /// rows) by agglomerative clustering at distance `1 - similarity`, with
    /// `linkage`: each row's cluster, from 0. The clusters and their numbers are
    /// those of scikit-learn's `AgglomerativeClustering(metric="precomputed")` of
    /// these distances, found from one matrix of them: `8 n^2` bytes up to 1 GiB, half
    /// that beyond (the pairs `i < j` only, slower to read). Both the leaves and the
    /// clustering's distances run on the threads of `options`.
    pub fn cluster<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_clusters: usize,
        linkage: Linkage,
        options: &ScoreOptions<'_>,
    ) -> Result<Vec<usize>> {
        let leaves = self.apply(x, options)?;
        clusters_from_leaves(leaves.view(), n_clusters, linkage, options.n_threads())
    }
}

impl Inspected for UnsupervisedForest {
    fn inspected_trees(&self) -> &[Tree] {
        self.forest.inspected_trees()
    }

    fn inspected_layout(&self) -> &ScoringTrees {
        self.forest.inspected_layout()
    }

    fn inspected_features(&self) -> usize {
        self.forest.n_features()
    }
}
