//! Scoring: X's rows cut into chunks that threads take in turn; each chunk is checked,
//! walked down every tree and written straight into its rows of the output.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, ArrayView2, ArrayViewMut2, CowArray, Ix2};

use super::{Forest, NO_VOTE};
use crate::data::{Feature, Rows};
use crate::error::{invalid, try_filled, Result};
use crate::runtime::control::NEVER_CANCELLED;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks, SCORE_CHUNK};
use crate::runtime::workers::Workers;
use crate::scoring::LeafRows;
use crate::tree::Leaves;
use crate::tree::Task;

impl Forest {
    /// Mean of the trees' leaf class distributions, one row per sample, for a
    /// classification forest. Honest trees whose leaf casts no vote are left out of
    /// the mean; a sample no tree votes for gets the uniform distribution. Rows are
    /// scored in parallel on `n_threads` threads (0: every core); X may have any memory
    /// layout (rows that do not lie contiguous are copied a chunk at a time).
    pub fn predict_proba<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array2<f64>> {
        self.predict_proba_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`predict_proba`](Forest::predict_proba) that returns [`MorfError::Cancelled`](crate::MorfError::Cancelled)
    /// soon after `cancel` is set: it is looked at before each tree walks each block of
    /// rows, a few milliseconds of work at most.
    pub fn predict_proba_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Array2<f64>> {
        let mut proba = new_output(x.nrows(), self.classes()?, "the probabilities")?;
        self.predict_proba_into(x, proba.view_mut(), n_threads, cancel)?;
        Ok(proba)
    }

    /// [`predict_proba_cancellable`](Forest::predict_proba_cancellable) written into
    /// `out`, a row-major array of shape (samples, classes), each thread filling the
    /// rows it scores.
    pub fn predict_proba_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let n_classes = self.classes()?;
        let out = output_rows(out, x.nrows(), n_classes, "classes")?;
        let workers = Workers::for_rows(n_threads, x.nrows())?;
        workers.install(|threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                n_classes,
                threads,
                cancel,
                |_, rows, out| self.proba_of_rows(rows, out, cancel),
            )
        })
    }

    /// Probabilities of a stream of row blocks, block after block: each block is
    /// scored in parallel on one pool of `n_threads` threads (0: every core) when the
    /// iterator reaches it, so memory holds one block and its output at a time,
    /// whatever the length of the stream. Blocks may be views or owned arrays; a block
    /// with a bad value gives its error and the stream goes on.
    ///
    /// ```
    /// use ndarray::{array, Array2};
    /// use morf_rs::{Forest, ForestParams};
    ///
    /// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
    /// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 1, 0, 1], 2, None)?;
    /// // Blocks as a reader of a large file would produce them, one at a time.
    /// let blocks = (0..3).map(|_| Array2::<f32>::zeros((1000, 2)));
    /// for proba in forest.predict_proba_blocks(blocks, 0)? {
    ///     assert_eq!(proba?.dim(), (1000, 2));
    /// }
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn predict_proba_blocks<'f, 'a, T, B, I>(
        &'f self,
        blocks: I,
        n_threads: usize,
    ) -> Result<impl Iterator<Item = Result<Array2<f64>>> + 'f>
    where
        T: Feature,
        B: Into<CowArray<'a, T, Ix2>>,
        I: IntoIterator<Item = B>,
        I::IntoIter: 'f,
    {
        let n_classes = self.classes()?;
        let workers = Workers::for_rows(n_threads, usize::MAX)?;
        Ok(blocks.into_iter().map(move |block| {
            let block = block.into();
            let mut proba = new_output(block.nrows(), n_classes, "the probabilities")?;
            let out = proba
                .as_slice_mut()
                .expect("a new array is in standard layout");
            let never = &NEVER_CANCELLED;
            workers.install(|threads| {
                score_row_chunks(
                    self.n_features,
                    block.view(),
                    out,
                    n_classes,
                    threads,
                    never,
                    |_, rows, out| self.proba_of_rows(rows, out, never),
                )
            })?;
            Ok(proba)
        }))
    }

    /// Mean of the trees' leaf values, shape (samples, outputs), for a regression
    /// forest. Honest trees whose leaf casts no vote are left out of the mean; a sample
    /// no tree votes for gets the mean of the trees' priors (the mean target of each
    /// tree's sample). Rows are scored in parallel on `n_threads` threads (0: every
    /// core), as [`predict_proba`](Self::predict_proba).
    pub fn predict_values<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array2<f64>> {
        self.predict_values_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`predict_values`](Forest::predict_values) that returns
    /// [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after `cancel` is set, as
    /// [`predict_proba_cancellable`](Forest::predict_proba_cancellable).
    pub fn predict_values_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Array2<f64>> {
        let mut values = new_output(x.nrows(), self.outputs()?, "the predicted values")?;
        self.predict_values_into(x, values.view_mut(), n_threads, cancel)?;
        Ok(values)
    }

    /// [`predict_values_cancellable`](Forest::predict_values_cancellable) written into
    /// `out`, a row-major array of shape (samples, outputs), each thread filling the
    /// rows it scores.
    pub fn predict_values_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let n_outputs = self.outputs()?;
        let out = output_rows(out, x.nrows(), n_outputs, "outputs")?;
        let prior = self.mean_prior();
        let workers = Workers::for_rows(n_threads, x.nrows())?;
        workers.install(|threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                n_outputs,
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
        })
    }

    /// The most probable class per sample (the lowest index among ties), for a
    /// classification forest: the argmax of [`predict_proba`](Self::predict_proba),
    /// computed chunk by chunk so that no probability array is kept.
    pub fn predict<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Vec<u32>> {
        self.predict_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`predict`](Forest::predict) that returns [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after
    /// `cancel` is set, as [`predict_proba_cancellable`](Forest::predict_proba_cancellable).
    pub fn predict_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Vec<u32>> {
        let n_classes = self.classes()?;
        let mut classes = try_filled(x.nrows(), 1, 0u32, "the classes")?;
        let workers = Workers::for_rows(n_threads, x.nrows())?;
        workers.install(|threads| {
            score_row_chunks(
                self.n_features,
                x,
                &mut classes,
                1,
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
        })?;
        Ok(classes)
    }

    /// The id of the leaf each sample reaches in each tree, shape (samples, trees).
    pub fn apply<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Array2<u32>> {
        self.apply_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`apply`](Forest::apply) that returns [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after
    /// `cancel` is set, as [`predict_proba_cancellable`](Forest::predict_proba_cancellable).
    pub fn apply_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Array2<u32>> {
        let mut leaves = new_output(x.nrows(), self.trees.len(), "the leaf ids")?;
        self.apply_into(x, leaves.view_mut(), n_threads, cancel)?;
        Ok(leaves)
    }

    /// [`apply_cancellable`](Forest::apply_cancellable) written into `out`, a row-major
    /// array of shape (samples, trees) of any type that holds a `u32` (`i64` for
    /// numpy's default integers).
    pub fn apply_into<T: Feature, O: From<u32> + Send>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, O>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let n_trees = self.trees.len();
        let out = output_rows(out, x.nrows(), n_trees, "trees")?;
        let workers = Workers::for_rows(n_threads, x.nrows())?;
        workers.install(|threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                n_trees,
                threads,
                cancel,
                |_, rows, out| {
                    let layout = self.scoring_layout();
                    layout.visit_leaves(0..n_trees, rows, cancel, |leaf| {
                        leaf.for_each_row(|row| {
                            out[row * n_trees + leaf.tree] = O::from(leaf.node);
                        })
                    });
                },
            )
        })
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
        let layout = self.scoring_layout();
        let trees = 0..self.trees.len();
        layout.visit_leaves(trees, rows, cancel, |leaf| {
            if leaf.slot == NO_VOTE {
                return;
            }
            let offset = leaf.slot as usize;
            match self.trees[leaf.tree].leaves() {
                Leaves::Classes { distributions, .. } => {
                    let values = &distributions[offset..][..width];
                    add_votes(values, &leaf, out, &mut votes, |row| skip(leaf.tree, row));
                }
                Leaves::Values { means, .. } => {
                    let values = &means[offset..][..width];
                    add_votes(values, &leaf, out, &mut votes, |row| skip(leaf.tree, row));
                }
            }
        });
        votes
    }
}

/// Adds `values` (a leaf's) into the row of `out` of each row that reached the leaf
/// and `skip` does not name, with a vote.
#[inline]
fn add_votes<V: Copy + Into<f64>>(
    values: &[V],
    leaf: &LeafRows,
    out: &mut [f64],
    votes: &mut [u32],
    skip: impl Fn(usize) -> bool,
) {
    let width = values.len();
    leaf.for_each_row(|row| {
        if skip(row) {
            return;
        }
        votes[row] += 1;
        for (acc, &v) in out[row * width..][..width].iter_mut().zip(values) {
            *acc += v.into();
        }
    });
}
