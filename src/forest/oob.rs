//! Out-of-bag estimates: each training row scored by the trees that cancel saw it.

use ndarray::{Array2, ArrayView2};

use super::bag::{sampling_sizes, InBag};
use super::params::ForestParams;
use super::Forest;
use crate::data::Feature;
use crate::error::{invalid, MorfError, Result};
use crate::runtime::rows::{new_output, score_row_chunks};
use crate::runtime::ScoreOptions;

/// What the trees that cancel saw a training row predict for it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfBag {
    /// Per row, the mean of the out-of-bag trees' leaf values (class distributions or
    /// target values), shape (samples, classes or outputs); zeros for a row that no
    /// out-of-bag tree votes for.
    pub predictions: Array2<f64>,
    /// Per row, the number of trees that voted for it without having seen it.
    pub n_votes: Vec<u32>,
}

impl Forest {
    /// Out-of-bag predictions for the training set `x` of a forest grown by `params`
    /// on it (all `params.n_estimators` trees, in order, as [`Forest::fit_with`] on
    /// consecutive ranges and [`Forest::merge`] give them): each row is scored by the
    /// trees whose sample ([`ForestParams::tree_sample_counts`]) left it out, so by
    /// the trees neither grown nor filled (honest trees) with it. Rows are scored as
    /// `options` say (threads, cancellation), each summing its trees in tree order, so
    /// the result is the same for any number of threads.
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{Forest, ForestParams, ScoreOptions};
    ///
    /// let x = array![[0.0f32], [1.0], [2.0], [3.0], [4.0], [5.0]];
    /// let params = ForestParams { n_estimators: 20, ..ForestParams::default() };
    /// let forest = Forest::fit(&params, x.view(), &[0, 0, 0, 1, 1, 1], 2, None)?;
    /// let oob = forest.oob_predict(&params, x.view(), &ScoreOptions::default())?;
    /// assert_eq!(oob.predictions.dim(), (6, 2));
    /// assert!(oob.n_votes.iter().all(|&votes| votes < 20));
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn oob_predict<T: Feature>(
        &self,
        params: &ForestParams,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<OutOfBag> {
        params.validate()?;
        if self.trees.len() != params.n_estimators {
            return Err(invalid(
                "params",
                format!(
                    "describe {} trees but the forest holds {}: give the parameters that \
                     grew the forest",
                    params.n_estimators,
                    self.trees.len()
                ),
            ));
        }
        if x.ncols() != self.n_features {
            return Err(MorfError::ShapeMismatch {
                what: "number of features in X (as at fit time)",
                expected: self.n_features,
                got: x.ncols(),
            });
        }
        let n_samples = x.nrows();
        let n_estimation = sampling_sizes(params, n_samples)?;
        let width = self.task.width();
        // Column `width` of each row counts its votes.
        let mut out = new_output(n_samples, width + 1, "the out-of-bag predictions")?;
        let flat = out
            .as_slice_mut()
            .expect("a new array is in standard layout");
        options.install(n_samples, |threads| {
            let trees = 0..self.trees.len();
            let in_bag = InBag::new(params, n_samples, n_estimation, trees, threads);
            let cancel = options.cancel_flag();
            score_row_chunks(
                self.n_features,
                x,
                flat,
                width + 1,
                self.chunk_rows(),
                threads,
                cancel,
                |first, rows, out| {
                    let mut sums = vec![0.0; rows.n_samples * width];
                    let seen = |t: usize, row: usize| in_bag.holds(t, first + row);
                    let votes = self.sum_leaves(rows, &mut sums, cancel, seen);
                    for ((row_out, row_sums), &count) in out
                        .chunks_exact_mut(width + 1)
                        .zip(sums.chunks_exact(width))
                        .zip(&votes)
                    {
                        if count > 0 {
                            for (o, &s) in row_out.iter_mut().zip(row_sums) {
                                *o = s / count as f64;
                            }
                        }
                        row_out[width] = count as f64;
                    }
                },
            )
        })??;
        let n_votes = out.column(width).iter().map(|&c| c as u32).collect();
        let predictions = out.slice_move(ndarray::s![.., ..width]).to_owned();
        Ok(OutOfBag {
            predictions,
            n_votes,
        })
    }
}
