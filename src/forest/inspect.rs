//! The path of each row through the trees, for inspection.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::Forest;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::control::{is_cancelled, NEVER_CANCELLED};
use crate::runtime::rows::{new_output, output_rows, score_row_chunks};
use crate::runtime::workers::Workers;

/// Rows whose paths are walked together: enough to share the trees' top nodes.
const ROW_CHUNK: usize = 128;

/// Padding after a path in [`Forest::decision_paths`]: no node.
pub const NO_NODE: u32 = u32::MAX;

impl Forest {
    /// Per tree, the number of columns of its block in [`Forest::decision_paths`]: the
    /// nodes of its longest path, its depth + 1.
    pub fn path_widths(&self) -> Vec<usize> {
        self.trees
            .iter()
            .map(|tree| tree.stats().max_depth + 1)
            .collect()
    }

    /// The nodes each row of `x` passes through, root to leaf, tree after tree: row
    /// `i` holds, in tree `t`'s block of [`path_widths`](Self::path_widths)`[t]`
    /// columns, the ids (in tree `t`) of the nodes on its path, then [`NO_NODE`]s.
    /// Rows are walked in parallel on `n_threads` threads (0: every core).
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{Forest, ForestParams};
    /// use morf_rs::NO_NODE;
    ///
    /// let x = array![[0.0f32], [1.0], [2.0], [3.0]];
    /// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 0, 1, 1], 2, None)?;
    /// let paths = forest.decision_paths(x.view(), 1)?;
    /// let leaves = forest.apply(x.view(), 1)?;
    /// let first_tree = &paths.row(0).to_vec()[..forest.path_widths()[0]];
    /// assert_eq!(first_tree[0], 0); // every path starts at the root
    /// let path: Vec<u32> = first_tree.iter().copied().filter(|&id| id != NO_NODE).collect();
    /// assert_eq!(path.last(), Some(&leaves[[0, 0]]));
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn decision_paths<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array2<u32>> {
        let width = self.path_widths().iter().sum();
        let mut paths = new_output(x.nrows(), width, "the decision paths")?;
        self.decision_paths_into(x, paths.view_mut(), n_threads, &NEVER_CANCELLED)?;
        Ok(paths)
    }

    /// [`decision_paths`](Self::decision_paths) written into `out`, of shape (samples,
    /// sum of [`path_widths`](Self::path_widths)); returns
    /// [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after `cancel` is
    /// set.
    pub fn decision_paths_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, u32>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let widths = self.path_widths();
        let width = widths.iter().sum();
        let out = output_rows(out, x.nrows(), width, "node of the trees' paths")?;
        let workers = Workers::for_rows(n_threads, x.nrows())?;
        workers.install(|threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                width,
                ROW_CHUNK,
                threads,
                cancel,
                |_, rows, out| {
                    for (i, row_out) in out.chunks_exact_mut(width).enumerate() {
                        if is_cancelled(cancel) {
                            return;
                        }
                        let row = rows.row(i);
                        let mut blocks = row_out.iter_mut();
                        for (tree, &tree_width) in self.trees.iter().zip(&widths) {
                            let mut block = blocks.by_ref().take(tree_width);
                            tree.path_of(row, |id| {
                                *block.next().expect("a path fits its tree's depth") = id
                            });
                            block.for_each(|cell| *cell = NO_NODE);
                        }
                    }
                },
            )
        })
    }
}
