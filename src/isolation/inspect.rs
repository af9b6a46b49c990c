//! The path of each row through the isolation trees, for inspection, by the
//! machinery forests and boosted models share ([`crate::scoring`]).

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::IsolationForest;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::new_output;
use crate::scoring;

impl IsolationForest {
    /// Per tree, the number of columns of its block in
    /// [`decision_paths`](Self::decision_paths): its depth + 1.
    pub fn path_widths(&self) -> Vec<usize> {
        scoring::path_widths(&self.trees)
    }

    /// The nodes each row of `x` passes through, root to leaf, tree after tree: row
    /// `i` holds, in tree `t`'s block of [`path_widths`](Self::path_widths)`[t]`
    /// columns, the ids (in tree `t`) of the nodes on its path, then
    /// [`NO_NODE`](crate::NO_NODE)s; the number of ids less one is the depth of the
    /// row's leaf, on the threads `options` gives.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use morf_rs::{IsolationForest, IsolationParams, ScoreOptions, NO_NODE};
    ///
    /// let x = Array2::<f32>::from_shape_fn((64, 2), |(i, j)| (i * (j + 1)) as f32);
    /// let forest = IsolationForest::fit(&IsolationParams::default(), x.view())?;
    /// let options = ScoreOptions::default();
    /// let paths = forest.decision_paths(x.view(), &options)?;
    /// let leaves = forest.apply(x.view(), &options)?;
    /// let first_tree = &paths.row(0).to_vec()[..forest.path_widths()[0]];
    /// let path: Vec<u32> = first_tree.iter().copied().filter(|&id| id != NO_NODE).collect();
    /// assert_eq!((path[0], path.last()), (0, Some(&leaves[[0, 0]])));
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
    /// sum of [`path_widths`](Self::path_widths)); returns
    /// [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after the options'
    /// cancel flag is set.
    pub fn decision_paths_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, u32>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        scoring::decision_paths_into(&self.trees, self.n_features, x, out, options)
    }
}
