//! Scoring: X's rows cut into chunks that threads take in turn; each chunk is checked,
//! walked down every tree and written straight into its rows of the output.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::{Forest, NO_VOTE};
use crate::data::{Feature, Rows};
use crate::error::{invalid, try_filled, Result};
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks, SCORE_CHUNK};
use crate::tree::Leaves;
use crate::tree::Task;

impl Forest {
    /// Mean of the trees' leaf class distributions, one row per sample, for a
    /// classification forest. Honest trees whose leaf casts no vote are left out of
    /// the mean; a sample no tree votes for gets the uniform distribution. Rows are
    /// scored on the threads of `options`, which may also cancel the call; X may have
    /// any memory layout (rows that do not lie contiguous are copied a chunk at a time).
    pub fn predict_proba<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<f64>> {
        let mut proba = new_output(x.nrows(), self.classes()?, "the probabilities")?;
        self.predict_proba_into(x, proba.view_mut(), options)?;
        Ok(proba)
    }

    /// [`predict_proba`](Forest::predict_proba) written into `out`, a row-major array
    /// of shape (samples, classes), each thread filling the rows it scores.
    pub fn predict_proba_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let n_classes = self.classes()?;
        let out = output_rows(out, x.nrows(), n_classes, "classes")?;
        let cancel = options.cancel_flag();
        options.install(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                n_classes,
                self.chunk_rows(),
                threads,
                cancel,
                |_, rows, out| self.proba_of_rows(rows, out, cancel),
            )
        })?
    }

    /// Mean of the trees' leaf values, shape (samples, outputs), for a regression
    /// forest. Honest trees whose leaf casts no vote are left out of the mean; a sample
    /// no tree votes for gets the mean of the trees' priors (the mean target of each
    /// tree's sample). Rows are scored as by [`predict_proba`](Self::predict_proba).
    pub fn predict_values<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array2<f64>> {
        let mut values = new_output(x.nrows(), self.outputs()?, "the predicted values")?;
        self.predict_values_into(x, values.view_mut(), options)?;
        Ok(values)
    }

    /// [`predict_values`](Forest::predict_values) written into `out`, a row-major array
    /// of shape (samples, outputs), each thread filling the rows it scores.
    pub fn predict_values_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let n_outputs = self.outputs()?;
        let out = output_rows(out, x.nrows(), n_outputs, "outputs")?;
        let prior = self.mean_prior();
        let cancel = options.cancel_flag();
        options.install(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                n_outputs,
                self.chunk_rows(),
                threads,
                cancel,
                |_, rows, out| {
                    let votes = self.sum_leaves(rows, out, cancel, |_, _| false);
                    for (row_out, &count) in out.chunks_exact_mut(n_outputs).zip(&votes) {
                        if count == 0 {
                            row_out.copy_from_slice(&prior);
                        } else {
                            row_out.iter_mut().for_each(|v| *v /= count as f64);
                        }
                    }
                },
            )
        })?
    }

    /// The most probable class per sample (the lowest index among ties), for a
    /// classification forest: the argmax of [`predict_proba`](Self::predict_proba),
    /// computed chunk by chunk so that no probability array is kept.
    pub fn predict<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Vec<u32>> {
        let n_classes = self.classes()?;
        let mut classes = try_filled(x.nrows(), 1, 0u32, "the classes")?;
        let cancel = options.cancel_flag();
        options.install(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                &mut classes,
                1,
                self.chunk_rows(),
                threads,
                cancel,
                |_, rows, out| {
                    let mut proba = vec![0.0; rows.n_samples * n_classes];
                    self.proba_of_rows(rows, &mut proba, cancel);
                    for (class, row) in out.iter_mut().zip(proba.chunks_exact(n_classes)) {
                        let mut best = 0;
                        for (k, &p) in row.iter().enumerate() {
                            if p > row[best] {
                                best = k;
                            }
                        }
                        *class = best as u32;
                    }
                },
            )
        })??;
        Ok(classes)
    }

    /// Number of classes, or an error for a regression forest.
    fn classes(&self) -> Result<usize> {
        match self.task {
            Task::Classification { n_classes } => Ok(n_classes),
            Task::Regression { .. } => Err(invalid(
                "task",
                "a regression forest predicts values (predict_values), not classes",
            )),
        }
    }

    /// Number of outputs, or an error for a classification forest.
    fn outputs(&self) -> Result<usize> {
        match self.task {
            Task::Regression { n_outputs } => Ok(n_outputs),
            Task::Classification { .. } => Err(invalid(
                "task",
                "a classification forest predicts classes (predict_proba), not values",
            )),
        }
    }

    /// The mean of the trees' priors (each the mean target of its tree's sample): what
    /// a regression forest predicts for a row no tree votes for.
    fn mean_prior(&self) -> Vec<f64> {
        let mut prior = vec![0.0; self.task.width()];
        for tree in &self.trees {
            if let Leaves::Values {
                prior: tree_prior, ..
            } = tree.leaves()
            {
                prior.iter_mut().zip(tree_prior).for_each(|(p, &v)| *p += v);
            }
        }
        prior.iter_mut().for_each(|p| *p /= self.trees.len() as f64);
        prior
    }

    /// Writes the mean of the trees' votes for every row of `rows` into `out`
    /// (`n_classes` values per row), unless `cancel` is set first.
    fn proba_of_rows<T: Feature>(&self, rows: &Rows<'_, T>, out: &mut [f64], cancel: &AtomicBool) {
        let n_classes = self.task.width();
        let votes = self.sum_leaves(rows, out, cancel, |_, _| false);
        for (row_out, &count) in out.chunks_exact_mut(n_classes).zip(&votes) {
            if count == 0 {
                row_out.fill(1.0 / n_classes as f64);
            } else {
                // The sum of `count` stored distributions, not `count` itself: leaf
                // values are float32, and rows should sum to 1 in float64.
                let total: f64 = row_out.iter().sum();
                row_out.iter_mut().for_each(|p| *p /= total);
            }
        }
    }

    /// Writes into `out` (`width` values per row) the sum over trees of the values
    /// of the leaf each row of `rows` reaches, leaving out leaves that cast no vote
    /// and the trees `skip(tree, row)` names; returns each row's number of votes.
    /// Stops early once `cancel` is set.
    pub(super) fn sum_leaves<T: Feature>(
        &self,
        rows: &Rows<'_, T>,
        out: &mut [f64],
        cancel: &AtomicBool,
        skip: impl Fn(usize, usize) -> bool,
    ) -> [u32; SCORE_CHUNK] {
        out.fill(0.0);
        let mut votes = [0u32; SCORE_CHUNK];
        let width = self.task.width();
        let scoring = self.scoring();
        let trees = 0..self.trees.len();
        match self.task {
            Task::Classification { .. } => {
                scoring.layout.visit_leaves(trees, rows, cancel, |leaf| {
                    if leaf.slot == NO_VOTE {
                        return;
                    }
                    leaf.for_each_row(|row| {
                        if skip(leaf.tree, row) {
                            return;
                        }
                        votes[row] += 1;
                        scoring.add_classes(leaf.slot, &mut out[row * width..][..width]);
                    });
                })
            }
            Task::Regression { .. } => scoring.layout.visit_leaves(trees, rows, cancel, |leaf| {
                if leaf.slot == NO_VOTE {
                    return;
                }
                let Leaves::Values { means, .. } = self.trees[leaf.tree].leaves() else {
                    unreachable!("a regression forest's trees hold values");
                };
                let values = &means[scoring.offset(leaf.slot)..][..width];
                leaf.for_each_row(|row| {
                    if skip(leaf.tree, row) {
                        return;
                    }
                    votes[row] += 1;
                    let row_out = &mut out[row * width..][..width];
                    row_out.iter_mut().zip(values).for_each(|(o, &v)| *o += v);
                });
            }),
        }
        votes
    }
}
