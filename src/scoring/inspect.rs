//! Which leaf, and which nodes, each row reaches in each tree: the inspection of any
//! model made of trees (forests and boosted models alike).

use ndarray::{ArrayView2, ArrayViewMut2};

use super::ScoringTrees;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::control::is_cancelled;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{output_rows, score_row_chunks};
use crate::tree::Tree;

/// Padding after a path in the decision paths
/// ([`Forest::decision_paths`](crate::Forest::decision_paths),
/// [`Booster::decision_paths`](crate::Booster::decision_paths)): no node.
pub const NO_NODE: u32 = u32::MAX;

/// Writes into `out` (samples x `n_trees`, any type that holds a `u32`) the id of the
/// leaf each row of `x` reaches in each of the `n_trees` trees of `layout`, whose
/// splits read `n_features` features, through the scoring engine run as `options` say.
pub(crate) fn apply_into<T: Feature, O: From<u32> + Send>(
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
pub(crate) fn path_widths(trees: &[Tree]) -> Vec<usize> {
    trees
        .iter()
        .map(|tree| tree.stats().max_depth + 1)
        .collect()
}

/// Writes into `out`, of shape (samples, sum of [`path_widths`]), the nodes each row
/// of `x` passes through, root to leaf, tree after tree: row `i` holds, in tree `t`'s
/// block of `path_widths(trees)[t]` columns, the ids (in tree `t`) of the nodes on
/// its path, then [`NO_NODE`]s. Rows are walked as `options` say.
pub(crate) fn decision_paths_into<T: Feature>(
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
