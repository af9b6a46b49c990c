//! Which leaf, and which nodes, each row reaches in each tree: the inspection of every
//! model made of trees, written once through the [`Inspect`] trait.

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::ScoringTrees;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::control::is_cancelled;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks};
use crate::tree::Tree;

/// What inspection needs of a model; implemented by the crate's models only, so that
/// [`Inspect`] can grow without breaking anyone.
pub(crate) mod sealed {
    use crate::scoring::ScoringTrees;
    use crate::tree::Tree;

    /// A model made of trees that the scoring engine walks.
    pub trait Inspected {
        /// Its trees, in the order of its outputs' columns.
        fn inspected_trees(&self) -> &[Tree];
        /// Its trees laid out for scoring.
        fn inspected_layout(&self) -> &ScoringTrees;
        /// The number of features of the rows it was trained on.
        fn inspected_features(&self) -> usize;
    }
}

/// Which leaf, and which nodes, each row reaches in each tree of a model: for every
/// model made of trees ([`Forest`](crate::Forest), [`Booster`](crate::Booster),
/// [`IsolationForest`](crate::IsolationForest),
/// [`UnsupervisedForest`](crate::UnsupervisedForest)), through the one scoring engine.
///
/// Trees come in the model's order ([`Forest::trees`](crate::Forest::trees),
/// [`Booster::trees`](crate::Booster::trees): a boosted model's round after round, one
/// tree per output within a round). A boosted model's baseline plus the values of the
/// leaves a row reaches is its raw score:
///
/// ```
/// use ndarray::array;
/// use morf_rs::{BoostParams, BoostTargets, Booster, Inspect, ScoreOptions};
///
/// let x = array![[0.0f32, 3.0], [1.0, 2.0], [2.0, 1.0], [3.0, 0.0]];
/// let y = [0.5, 1.0, 4.0, 4.5];
/// let params = BoostParams { n_estimators: 5, min_samples_leaf: 1, ..BoostParams::default() };
/// let model = Booster::fit(&params, x.view(), BoostTargets::Values(&y), None)?;
/// let options = ScoreOptions::default();
/// let leaves = model.apply(x.view(), &options)?;
/// assert_eq!(leaves.dim(), (4, model.trees().len()));
/// let raw = model.predict_raw(x.view(), &options)?;
/// for (row, leaves) in leaves.rows().into_iter().enumerate() {
///     let mut sum = 0.0;
///     for (tree, &leaf) in model.trees().iter().zip(leaves) {
///         sum += tree.leaf_values(leaf as usize).unwrap()[0];
///     }
///     assert_eq!(sum + model.baseline()[0], raw[[row, 0]]);
/// }
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
///
/// A row's decision path ends at the leaf [`apply`](Self::apply) gives:
///
/// ```
/// use ndarray::array;
/// use morf_rs::{Forest, ForestParams, Inspect, ScoreOptions, NO_NODE};
///
/// let x = array![[0.0f32], [1.0], [2.0], [3.0]];
/// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 0, 1, 1], 2, None)?;
/// let options = ScoreOptions::default();
/// let paths = forest.decision_paths(x.view(), &options)?;
/// let leaves = forest.apply(x.view(), &options)?;
/// let first_tree = &paths.row(0).to_vec()[..forest.path_widths()[0]];
/// assert_eq!(first_tree[0], 0); // every path starts at the root
/// let path: Vec<u32> = first_tree.iter().copied().filter(|&id| id != NO_NODE).collect();
/// assert_eq!(path.last(), Some(&leaves[[0, 0]]));
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
pub trait Inspect: sealed::Inspected {
    /// The id of the leaf each row of `x` reaches in each tree, shape (samples,
    /// trees). Rows are walked on the threads of `options`, which may also cancel the
    /// call.
    fn apply<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<u32>> {
        let n_trees = self.inspected_trees().len();
        let mut leaves = new_output(x.nrows(), n_trees, "the leaf ids")?;
        self.apply_into(x, leaves.view_mut(), options)?;
        Ok(leaves)
    }

    /// [`apply`](Self::apply) written into `out`, a row-major array of shape
    /// (samples, trees) of any type that holds a `u32` (`i64` for numpy's default
    /// integers).
    fn apply_into<T: Feature, O: From<u32> + Send>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, O>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let n_trees = self.inspected_trees().len();
        let (layout, n_features) = (self.inspected_layout(), self.inspected_features());
        apply_into(layout, n_trees, n_features, x, out, options)
    }

    /// Per tree, the number of columns of its block in
    /// [`decision_paths`](Self::decision_paths): the nodes of its longest path, its
    /// depth + 1.
    fn path_widths(&self) -> Vec<usize> {
        path_widths(self.inspected_trees())
    }

    /// The nodes each row of `x` passes through, root to leaf, tree after tree: row
    /// `i` holds, in tree `t`'s block of [`path_widths`](Self::path_widths)`[t]`
    /// columns, the ids (in tree `t`) of the nodes on its path, then
    /// [`NO_NODE`]s; the number of ids less one is the depth of the row's leaf.
    /// Rows are walked on the threads of `options`, which may also cancel the call.
    fn decision_paths<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<u32>> {
        let width = self.path_widths().iter().sum();
        let mut paths = new_output(x.nrows(), width, "the decision paths")?;
        self.decision_paths_into(x, paths.view_mut(), options)?;
        Ok(paths)
    }

    /// [`decision_paths`](Self::decision_paths) written into `out`, of shape
    /// (samples, sum of [`path_widths`](Self::path_widths)).
    fn decision_paths_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, u32>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let (trees, n_features) = (self.inspected_trees(), self.inspected_features());
        decision_paths_into(trees, n_features, x, out, options)
    }
}

impl<M: sealed::Inspected> Inspect for M {}

/// Padding after a path in the decision paths ([`Inspect::decision_paths`]): no node.
pub const NO_NODE: u32 = u32::MAX;

/// Writes into `out` (samples x `n_trees`, any type that holds a `u32`) the id of the
/// leaf each row of `x` reaches in each of the `n_trees` trees of `layout`, whose
/// splits read `n_features` features, through the scoring engine run as `options` say.
fn apply_into<T: Feature, O: From<u32> + Send>(
    layout: &ScoringTrees,
    n_trees: usize,
    n_features: usize,
    x: ArrayView2<'_, T>,
    out: ArrayViewMut2<'_, O>,
    options: &ScoreOptions<'_>,
) -> Result<()> {
    let out = output_rows(out, x.nrows(), n_trees, "trees")?;
    let cancel = options.cancel_flag();
    options.install(x.nrows(), |threads| {
        score_row_chunks(
            n_features,
            x,
            out,
            n_trees,
            layout.chunk_rows(),
            threads,
            cancel,
            |_, rows, out| {
                layout.visit_leaves(0..n_trees, rows, cancel, |leaf| {
                    leaf.for_each_row(|row| out[row * n_trees + leaf.tree] = O::from(leaf.node))
                });
            },
        )
    })?
}

/// Rows whose paths are walked together: enough to share the trees' top nodes.
const PATH_CHUNK: usize = 128;

/// Per tree, the number of columns of its block in the decision paths: the nodes of
/// its longest path, its depth + 1.
fn path_widths(trees: &[Tree]) -> Vec<usize> {
    trees
        .iter()
        .map(|tree| tree.stats().max_depth + 1)
        .collect()
}

/// Writes into `out`, of shape (samples, sum of [`path_widths`]), the nodes each row
/// of `x` passes through, root to leaf, tree after tree: row `i` holds, in tree `t`'s
/// block of `path_widths(trees)[t]` columns, the ids (in tree `t`) of the nodes on
/// its path, then [`NO_NODE`]s. Rows are walked as `options` say.
fn decision_paths_into<T: Feature>(
    trees: &[Tree],
    n_features: usize,
    x: ArrayView2<'_, T>,
    out: ArrayViewMut2<'_, u32>,
    options: &ScoreOptions<'_>,
) -> Result<()> {
    let widths = path_widths(trees);
    let width = widths.iter().sum();
    let out = output_rows(out, x.nrows(), width, "node of the trees' paths")?;
    let cancel = options.cancel_flag();
    options.install(x.nrows(), |threads| {
        score_row_chunks(
            n_features,
            x,
            out,
            width,
            PATH_CHUNK,
            threads,
            cancel,
            |_, rows, out| {
                for (i, row_out) in out.chunks_exact_mut(width).enumerate() {
                    if is_cancelled(cancel) {
                        return;
                    }
                    let row = rows.row(i);
                    let mut blocks = row_out.iter_mut();
                    for (tree, &tree_width) in trees.iter().zip(&widths) {
                        let mut block = blocks.by_ref().take(tree_width);
                        tree.path_of(row, |id| {
                            *block.next().expect("a path fits its tree's depth") = id
                        });
                        block.for_each(|cell| *cell = NO_NODE);
                    }
                }
            },
        )
    })?
}
