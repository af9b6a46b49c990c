//! The trained model: its trees round after round, raw scores and predictions,
//! importances.

use std::ops::Range;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use serde::{Deserialize, Serialize};

use super::loss::Loss;
use super::score::BoostScoring;
use crate::data::Feature;
use crate::error::{invalid, try_filled, Result};
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks};
use crate::scoring::Derived;
use crate::tree::{normalised, Leaves, Tree, TreeStats};

/// A gradient-boosted model: a starting score, then per round one tree per output
/// (per class for three classes or more, one otherwise), each adding its leaf value.
///
/// ```
/// use ndarray::array;
/// use morf_rs::{AtomKind, BoostParams, Booster, Patches, BoostTargets, ScoreOptions};
///
/// // 1-D signals of 6 samples; class 1 has its bump on the right.
/// let x = array![
///     [1.0f32, 1.0, 0.0, 0.0, 0.0, 0.0],
///     [0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
///     [0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
///     [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
/// ];
/// let y = [0, 0, 1, 1];
/// let params = BoostParams {
///     n_estimators: 20,
///     min_samples_leaf: 1,
///     atoms: AtomKind::Patches(Patches::new(vec![6], vec![1], vec![3])),
///     ..BoostParams::default()
/// };
/// let targets = BoostTargets::Classes { labels: &y, n_classes: 2 };
/// let model = Booster::fit(&params, x.view(), targets, None)?;
/// let options = ScoreOptions::default();
/// let proba = model.predict(x.view(), &options)?;
/// assert_eq!(proba.dim(), (4, 2));
/// assert!(proba[[3, 1]] > 0.5);
/// let restored = Booster::from_bytes(&model.to_bytes())?;
/// assert_eq!(restored.predict(x.view(), &options)?, proba);
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Booster {
    pub(super) n_features: usize,
    pub(super) loss: Loss,
    /// Raw scores before any tree, one per output.
    pub(super) baseline: Vec<f64>,
    /// Round after round, one tree per output.
    pub(super) trees: Vec<Tree>,
    /// Mean training loss before the first round and after each.
    pub(super) train_loss: Vec<f64>,
    /// Mean loss on the held-out samples, likewise; empty without early stopping.
    pub(super) validation_loss: Vec<f64>,
    /// The trees laid out for scoring, derived from them when first needed; not saved.
    #[serde(skip)]
    pub(super) scoring: Derived<BoostScoring>,
}

impl Booster {
    /// Number of features the model was trained on.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The loss it minimised, which says what it predicts.
    pub fn loss(&self) -> Loss {
        self.loss
    }

    /// Rounds trained (scikit-learn's `n_iter_`).
    pub fn n_rounds(&self) -> usize {
        self.trees.len() / self.loss.n_outputs()
    }

    /// Raw scores before any tree, one per output.
    pub fn baseline(&self) -> &[f64] {
        &self.baseline
    }

    /// The trees, round after round, one per output; leaf `id`'s value is
    /// `tree.leaf_values(id).unwrap()[0]`.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// Depth, leaf and node counts of every tree.
    pub fn tree_stats(&self) -> Vec<TreeStats> {
        self.trees.iter().map(Tree::stats).collect()
    }

    /// Mean weighted training loss before the first round and after each.
    pub fn train_loss(&self) -> &[f64] {
        &self.train_loss
    }

    /// Mean weighted loss on the held-out samples before the first round and after
    /// each; empty when trained without early stopping.
    pub fn validation_loss(&self) -> &[f64] {
        &self.validation_loss
    }

    /// Raw scores of each row, shape (samples, outputs): the baseline plus every
    /// tree's leaf value. Rows are scored on the threads of `options`, which may also
    /// cancel the call; X may have any memory layout, as for [`Forest`](crate::Forest)
    /// scoring.
    pub fn predict_raw<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<f64>> {
        let mut raw = new_output(x.nrows(), self.loss.n_outputs(), "the raw scores")?;
        self.predict_raw_rounds_into(x, 0..self.n_rounds(), raw.view_mut(), options)?;
        for mut row in raw.rows_mut() {
            for (r, &b) in row.iter_mut().zip(&self.baseline) {
                *r += b;
            }
        }
        Ok(raw)
    }

    /// What the trees of `rounds` add to each row's raw scores, without the baseline,
    /// written into `out`, a row-major array of shape (samples, outputs), each thread
    /// filling the rows it scores: staged predictions add one range of rounds at a
    /// time. Rows are scored as by [`predict_raw`](Self::predict_raw).
    ///
    /// ```
    /// use ndarray::{array, Array2};
    /// use morf_rs::{BoostParams, BoostTargets, Booster, ScoreOptions};
    ///
    /// let x = array![[0.0f32, 3.0], [1.0, 2.0], [2.0, 1.0], [3.0, 0.0]];
    /// let y = [0.5, 1.0, 4.0, 4.5];
    /// let params = BoostParams { n_estimators: 6, min_samples_leaf: 1, ..BoostParams::default() };
    /// let model = Booster::fit(&params, x.view(), BoostTargets::Values(&y), None)?;
    /// let options = ScoreOptions::default();
    /// let (mut first, mut last) = (Array2::zeros((4, 1)), Array2::zeros((4, 1)));
    /// model.predict_raw_rounds_into(x.view(), 0..3, first.view_mut(), &options)?;
    /// model.predict_raw_rounds_into(x.view(), 3..6, last.view_mut(), &options)?;
    /// let raw = model.predict_raw(x.view(), &options)?;
    /// let staged = &first + &last + model.baseline()[0];
    /// assert!((&staged - &raw).iter().all(|d| d.abs() < 1e-12));
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn predict_raw_rounds_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        rounds: Range<usize>,
        out: ArrayViewMut2<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        if rounds.start > rounds.end || rounds.end > self.n_rounds() {
            return Err(invalid(
                "rounds",
                format!(
                    "{rounds:?} is not within the model's {} rounds",
                    self.n_rounds()
                ),
            ));
        }
        let k_out = self.loss.n_outputs();
        let out = output_rows(out, x.nrows(), k_out, "outputs")?;
        let trees = rounds.start * k_out..rounds.end * k_out;
        let layout = self.scoring_layout();
        let cancel = options.cancel_flag();
        options.install(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                k_out,
                layout.chunk_rows(),
                threads,
                cancel,
                |_, rows, out| {
                    out.fill(0.0);
                    layout.add_leaf_values(trees.clone(), k_out, rows, out, cancel);
                },
            )
        })?
    }

    /// The trees laid out for scoring blocks of rows, built on first use.
    pub(super) fn scoring_layout(&self) -> &BoostScoring {
        self.scoring
            .get_or_init(|| BoostScoring::new(&self.trees, self.n_features))
    }

    /// Predictions, shape (samples, width): class probabilities (columns in class
    /// order) for classification, the value for regression (one column).
    pub fn predict<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<f64>> {
        let raw = self.predict_raw(x, options)?;
        Ok(self.transform(raw.view()))
    }

    /// Raw scores, shape (samples, outputs), turned into predictions as
    /// [`Booster::predict`] gives them.
    pub fn transform(&self, raw: ArrayView2<'_, f64>) -> Array2<f64> {
        let width = self.loss.n_predicted();
        let mut out = Array2::zeros((raw.nrows(), width));
        for (raw_row, mut out_row) in raw.rows().into_iter().zip(out.rows_mut()) {
            let raw_row = raw_row.to_vec();
            self.loss.transform(
                &raw_row,
                out_row.as_slice_mut().expect("rows are contiguous"),
            );
        }
        out
    }

    /// How often each feature takes part in a split atom, normalised to sum 1 (all
    /// zeros when no tree split). Fails only when the memory for one value per feature
    /// cannot be had.
    pub fn split_count_importances(&self) -> Result<Vec<f64>> {
        let (counts, _) = self.importance_sums()?;
        Ok(normalised(counts))
    }

    /// Each split's gain (the decrease of the training loss it brought) shared
    /// equally among its atom's features, summed and normalised to sum 1. Fails only
    /// when the memory for one value per feature cannot be had.
    pub fn gain_importances(&self) -> Result<Vec<f64>> {
        let (_, gains) = self.importance_sums()?;
        Ok(normalised(gains))
    }

    /// Per output, the largest raw score the model can give in absolute value: its
    /// baseline's plus, tree after tree, the tree's largest leaf value. When every
    /// bound is finite no partial sum of scoring overflows, and the links (identity,
    /// sigmoid, softmax shifted by the largest score) give finite predictions; NaN
    /// when a value is NaN.
    pub(super) fn raw_score_bounds(&self) -> Vec<f64> {
        let k_out = self.loss.n_outputs();
        let mut bounds: Vec<f64> = self.baseline.iter().map(|b| b.abs()).collect();
        for round in self.trees.chunks(k_out) {
            add_largest_leaf_values(&mut bounds, round);
        }
        bounds
    }

    fn importance_sums(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let per_feature = || try_filled(self.n_features, 1, 0.0, "one importance per feature");
        let (mut counts, mut gains) = (per_feature()?, per_feature()?);
        for tree in &self.trees {
            tree.add_importances(&mut counts, &mut gains);
        }
        Ok((counts, gains))
    }
}

/// The value of leaf `id` of a boosted tree.
#[inline(always)]
pub(super) fn tree_value(tree: &Tree, id: usize) -> f64 {
    tree.leaf_values(id).map_or(0.0, |values| values[0])
}

/// Adds to `bounds[k]` the largest leaf value, in absolute value, of `round[k]`, one
/// tree per output: NaN when a leaf value is NaN.
pub(super) fn add_largest_leaf_values(bounds: &mut [f64], round: &[Tree]) {
    for (bound, tree) in bounds.iter_mut().zip(round) {
        let largest = match tree.leaves() {
            Leaves::Values { means, .. } => {
                means
                    .iter()
                    .map(|v| v.abs())
                    .fold(0.0, |m, v| if v > m || v.is_nan() { v } else { m })
            }
            Leaves::Classes { .. } => 0.0,
        };
        *bound += largest;
    }
}
