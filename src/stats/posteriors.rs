//! Each tree's out-of-bag posteriors: what a tree predicts for the training rows it
//! neither grew from nor (honest trees) filled its leaves with.

use ndarray::{Array3, ArrayView2};

use crate::data::Feature;
use crate::error::{invalid, MorfError, Result};
use crate::forest::bag::{sampling_sizes, InBag};
use crate::forest::NO_VOTE;
use crate::runtime::rows::{new_output, score_row_chunks};
use crate::runtime::ScoreOptions;
use crate::{Forest, ForestParams, Leaves};

impl Forest {
    /// Per tree and training row, the tree's leaf values (class distribution or mean
    /// target values) for the row when the tree's sample
    /// ([`ForestParams::tree_sample_counts`]) left the row out, NaN when it held the
    /// row or the row reached a leaf that casts no vote (an honest leaf no estimation
    /// row filled); shape (trees, rows, classes or outputs).
    ///
    /// `x` is the training set; the forest holds trees `first_tree..` of the forest
    /// `params` grow on it (all of them from 0, or a range grown by
    /// [`Forest::fit_with`]), so that each tree's sample is known. The mean over the
    /// trees, NaN left out, is [`Forest::oob_predict`]'s. Rows are scored as `options`
    /// say (threads, cancellation); the result is the same for any number of threads.
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{Forest, ForestParams, ScoreOptions};
    ///
    /// let x = array![[0.0f32], [1.0], [2.0], [3.0], [4.0], [5.0]];
    /// let params = ForestParams { n_estimators: 20, ..ForestParams::default() };
    /// let forest = Forest::fit(&params, x.view(), &[0, 0, 0, 1, 1, 1], 2, None)?;
    /// let options = ScoreOptions::default();
    /// let posteriors = forest.oob_tree_posteriors(&params, x.view(), 0, &options)?;
    /// assert_eq!(posteriors.dim(), (20, 6, 2));
    /// let counts = params.tree_sample_counts(6, 0)?;
    /// for (row, &count) in counts.iter().enumerate() {
    ///     assert_eq!(posteriors[[0, row, 0]].is_nan(), count > 0);
    /// }
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn oob_tree_posteriors<T: Feature>(
        &self,
        params: &ForestParams,
        x: ArrayView2<'_, T>,
        first_tree: usize,
        options: &ScoreOptions<'_>,
    ) -> Result<Array3<f64>> {
        params.validate()?;
        let n_trees = self.trees().len();
        if first_tree.saturating_add(n_trees) > params.n_estimators {
            return Err(invalid(
                "first_tree",
                format!(
                    "trees {first_tree}..{} are not all among the {} trees `params` \
                     describe: give the parameters and the range that grew the forest",
                    first_tree.saturating_add(n_trees),
                    params.n_estimators
                ),
            ));
        }
        if x.ncols() != self.n_features() {
            return Err(MorfError::ShapeMismatch {
                what: "number of features in X (as at fit time)",
                expected: self.n_features(),
                got: x.ncols(),
            });
        }
        let n_samples = x.nrows();
        let n_estimation = sampling_sizes(params, n_samples)?;
        let width = self.task().width();
        // Row-major per training row: tree after tree, `width` values each.
        let row_width = n_trees * width;
        let mut out = new_output(n_samples, row_width, "the per-tree posteriors")?;
        out.fill(f64::NAN);
        let flat = out
            .as_slice_mut()
            .expect("a new array is in standard layout");
        let scoring = self.scoring();
        options.install(n_samples, |threads| {
            let trees = first_tree..first_tree + n_trees;
            let in_bag = InBag::new(params, n_samples, n_estimation, trees, threads);
            let cancel = options.cancel_flag();
            score_row_chunks(
                self.n_features(),
                x,
                flat,
                row_width,
                self.chunk_rows(),
                threads,
                cancel,
                |first, rows, out| {
                    scoring
                        .layout
                        .visit_leaves(0..n_trees, rows, cancel, |leaf| {
                            if leaf.slot == NO_VOTE {
                                return;
                            }
                            let offset = scoring.offset(leaf.slot);
                            leaf.for_each_row(|row| {
                                if in_bag.holds(leaf.tree, first + row) {
                                    return;
                                }
                                let target =
                                    &mut out[row * row_width + leaf.tree * width..][..width];
                                match self.trees()[leaf.tree].leaves() {
                                    Leaves::Classes { distributions, .. } => target
                                        .iter_mut()
                                        .zip(&distributions[offset..][..width])
                                        .for_each(|(t, &v)| *t = v.into()),
                                    Leaves::Values { means, .. } => {
                                        target.copy_from_slice(&means[offset..][..width])
                                    }
                                }
                            });
                        });
                },
            )
        })??;
        let by_row = out
            .into_shape_with_order((n_samples, n_trees, width))
            .expect("rows of trees of values");
        Ok(by_row
            .permuted_axes([1, 0, 2])
            .as_standard_layout()
            .into_owned())
    }
}
