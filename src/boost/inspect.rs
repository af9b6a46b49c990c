//! Which leaf, and which nodes, each row reaches in each boosted tree, through the
//! machinery forests share ([`crate::scoring`]).

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::Booster;
use crate::data::Feature;
use crate::error::Result;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::new_output;
use crate::scoring;

impl Booster {
    /// The id of the leaf each sample reaches in each tree, shape (samples, trees):
    /// trees in round order, one per output within a round (tree `r * k + o` is
    /// output `o`'s of round `r`, `k` the number of outputs), as
    /// [`trees`](Self::trees) holds them. Rows are walked by the scoring engine on the
    /// threads of `options`.
    ///
    /// The baseline plus the values of the leaves a row reaches is its raw score:
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{BoostParams, BoostTargets, Booster, ScoreOptions};
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
    pub fn apply<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<u32>> {
        let mut leaves = new_output(x.nrows(), self.trees.len(), "the leaf ids")?;
        self.apply_into(x, leaves.view_mut(), options)?;
        Ok(leaves)
    }

    /// [`apply`](Self::apply) written into `out`, a row-major array of shape
    /// (samples, trees) of any type that holds a `u32` (`i64` for numpy's default
    /// integers).
    pub fn apply_into<T: Feature, O: From<u32> + Send>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, O>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let layout = self.scoring_layout().layout();
        let n_trees = self.trees.len();
        scoring::apply_into(layout, n_trees, self.n_features, x, out, options)
    }

    /// Per tree, the number of columns of its block in
    /// [`decision_paths`](Self::decision_paths): the nodes of its longest path, its
    /// depth + 1.
    pub fn path_widths(&self) -> Vec<usize> {
        scoring::path_widths(&self.trees)
    }

    /// The nodes each row of `x` passes through, root to leaf, tree after tree (in
    /// the order of [`apply`](Self::apply)): row `i` holds, in tree `t`'s block of
    /// [`path_widths`](Self::path_widths)`[t]` columns, the ids (in tree `t`) of the
    /// nodes on its path, then [`NO_NODE`](crate::NO_NODE)s. Rows are walked on the
    /// threads of `options`.
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

    /// [`decision_paths`](Self::decision_paths) written into `out`, of shape
    /// (samples, sum of [`path_widths`](Self::path_widths)).
    pub fn decision_paths_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, u32>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        scoring::decision_paths_into(&self.trees, self.n_features, x, out, options)
    }
}
