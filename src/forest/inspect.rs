//! The path of each row through the trees, for inspection, by the machinery
//! boosted models share ([`crate::scoring`]).

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::Forest;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::new_output;
use crate::scoring;

impl Forest {
    /// Per tree, the number of columns of its block in [`Forest::decision_paths`]: the
    /// nodes of its longest path, its depth + 1.
    pub fn path_widths(&self) -> Vec<usize> {
        scoring::path_widths(&self.trees)
    }

    /// The nodes each row of `x` passes through, root to leaf, tree after tree: row
    /// `i` holds, in tree `t`'s block of [`path_widths`](Self::path_widths)`[t]`
    /// columns, the ids (in tree `t`) of the nodes on its path, then [`NO_NODE`](crate::NO_NODE)s.
    /// Rows are walked on the threads of `options`.
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{Forest, ForestParams, ScoreOptions};
    /// use morf_rs::NO_NODE;
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
    pub fn decision_paths<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<u32>> {
        let width = self.path_widths().iter().sum();
        let mut paths = new_output(x.nrows(), width, "the decision paths")?;
        self.decision_paths_into(x, paths.view_mut(), options)?;
        Ok(paths)
    }

    /// [`decision_paths`](Self::decision_paths) written into `out`, of shape (samples,
    /// sum of [`path_widths`](Self::path_widths)).
    pub fn decision_paths_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, u32>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        scoring::decision_paths_into(&self.trees, self.n_features, x, out, options)
    }
}
