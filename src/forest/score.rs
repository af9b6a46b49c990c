//! Scoring: rows walked down every tree in parallel chunks.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use super::control::{check_cancel, is_cancelled, NEVER_CANCELLED};
use super::{with_threads, Forest};
use crate::data::{Feature, Rows};
use crate::error::{try_filled, MorfError, Result};

/// Rows scored together: enough to amortise walking each tree, few enough to keep the
/// rows in cache.
const SCORE_CHUNK: usize = 128;

impl Forest {
    /// Mean of the trees' leaf class distributions, one row per sample. Honest trees
    /// whose leaf casts no vote are left out of the mean; a sample no tree votes for
    /// gets the uniform distribution. Rows are scored in parallel on `n_threads`
    /// threads (0: every core).
    pub fn predict_proba<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array2<f64>> {
        self.predict_proba_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`predict_proba`](Forest::predict_proba) that returns [`MorfError::Cancelled`]
    /// soon after `cancel` is set: it is looked at before each tree walks each block of
    /// rows, a few milliseconds of work at most.
    pub fn predict_proba_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Array2<f64>> {
        let rows = self.scoring_rows(x)?;
        let n_classes = self.n_classes;
        let mut proba = try_filled(rows.n_samples, n_classes, 0.0f64, "the probabilities")?;
        let score_chunk = |(chunk, out): (usize, &mut [f64])| {
            let first = chunk * SCORE_CHUNK;
            let n_rows = out.len() / n_classes;
            let mut votes = [0u32; SCORE_CHUNK];
            let mut leaves = [0u32; SCORE_CHUNK];
            for tree in &self.trees {
                if is_cancelled(cancel) {
                    return;
                }
                tree.leaves_of_rows(&rows, first, &mut leaves[..n_rows]);
                for ((row_out, &leaf), row_votes) in
                    out.chunks_exact_mut(n_classes).zip(&leaves).zip(&mut votes)
                {
                    if let Some(posterior) = tree.posterior(leaf as usize) {
                        *row_votes += 1;
                        for (acc, &p) in row_out.iter_mut().zip(posterior) {
                            *acc += p as f64;
                        }
                    }
                }
            }
            for (row_out, &count) in out.chunks_exact_mut(n_classes).zip(&votes[..n_rows]) {
                if count == 0 {
                    row_out.fill(1.0 / n_classes as f64);
                } else {
                    // The sum of `count` stored distributions, not `count` itself: leaf
                    // values are float32, and rows should sum to 1 in float64.
                    let total: f64 = row_out.iter().sum();
                    row_out.iter_mut().for_each(|p| *p /= total);
                }
            }
        };
        let chunks = proba.chunks_mut(SCORE_CHUNK * n_classes).enumerate();
        if n_threads == 1 || rows.n_samples <= SCORE_CHUNK {
            chunks.for_each(score_chunk);
        } else {
            with_threads(n_threads, || {
                proba
                    .par_chunks_mut(SCORE_CHUNK * n_classes)
                    .enumerate()
                    .for_each(score_chunk);
                Ok(())
            })?;
        }
        check_cancel(cancel)?;
        Ok(Array2::from_shape_vec((rows.n_samples, n_classes), proba)
            .expect("one probability per sample and class"))
    }

    /// The most probable class per sample (the lowest index among ties).
    pub fn predict<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Vec<u32>> {
        let proba = self.predict_proba(x, n_threads)?;
        Ok(proba
            .rows()
            .into_iter()
            .map(|row| {
                let mut best = 0;
                for (k, &p) in row.iter().enumerate() {
                    if p > row[best] {
                        best = k;
                    }
                }
                best as u32
            })
            .collect())
    }

    /// The id of the leaf each sample reaches in each tree, shape (samples, trees).
    pub fn apply<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Array2<u32>> {
        self.apply_cancellable(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`apply`](Forest::apply) that returns [`MorfError::Cancelled`] soon after
    /// `cancel` is set, as [`predict_proba_cancellable`](Forest::predict_proba_cancellable).
    pub fn apply_cancellable<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<Array2<u32>> {
        let rows = self.scoring_rows(x)?;
        let n_trees = self.trees.len();
        let mut leaves = try_filled(rows.n_samples, n_trees, 0u32, "the leaf ids")?;
        let fill = |(chunk, out): (usize, &mut [u32])| {
            let first = chunk * SCORE_CHUNK;
            let n_rows = out.len() / n_trees;
            let mut tree_leaves = [0u32; SCORE_CHUNK];
            for (t, tree) in self.trees.iter().enumerate() {
                if is_cancelled(cancel) {
                    return;
                }
                tree.leaves_of_rows(&rows, first, &mut tree_leaves[..n_rows]);
                for (row_out, &leaf) in out.chunks_exact_mut(n_trees).zip(&tree_leaves) {
                    row_out[t] = leaf;
                }
            }
        };
        if n_threads == 1 || rows.n_samples <= SCORE_CHUNK {
            leaves
                .chunks_mut(SCORE_CHUNK * n_trees)
                .enumerate()
                .for_each(fill);
        } else {
            with_threads(n_threads, || {
                leaves
                    .par_chunks_mut(SCORE_CHUNK * n_trees)
                    .enumerate()
                    .for_each(fill);
                Ok(())
            })?;
        }
        check_cancel(cancel)?;
        Ok(Array2::from_shape_vec((rows.n_samples, n_trees), leaves)
            .expect("one leaf per sample and tree"))
    }

    fn scoring_rows<'a, T: Feature>(&self, x: ArrayView2<'a, T>) -> Result<Rows<'a, T>> {
        let rows = Rows::from_view(x)?;
        if rows.n_features != self.n_features {
            return Err(MorfError::ShapeMismatch {
                what: "number of features in X (as at fit time)",
                expected: self.n_features,
                got: rows.n_features,
            });
        }
        rows.check_finite()?;
        Ok(rows)
    }
}
