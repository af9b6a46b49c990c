//! How a scoring call runs: on how many threads, and whether someone may stop it.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use super::control::NEVER_CANCELLED;
use super::rows::SCORE_CHUNK;
use super::workers::thread_pool;
use crate::error::Result;

/// The options of every scoring call (`predict_proba`, `predict_values`, `predict`,
/// `apply`, `decision_paths`, contributions, anomaly scores, of every model type):
/// the threads rows are scored on and a cancel flag. Neither changes what a call
/// returns: the same values for any number of threads.
///
/// The default scores on the caller's thread alone (as Python's `n_jobs=None`), with
/// no cancellation. The thread pool is built by the first call that has rows enough
/// to share and kept for the later calls given the same options, so a stream of
/// blocks scored one after another (a file too large for memory) starts threads
/// once:
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use ndarray::{array, Array2};
/// use morf_rs::{Forest, ForestParams, MorfError, ScoreOptions};
///
/// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
/// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 1, 0, 1], 2, None)?;
/// let proba = forest.predict_proba(x.view(), &ScoreOptions::default())?;
///
/// // Blocks as a reader of a large file would produce them, one at a time, scored on
/// // every core by one pool; into an array the caller owns.
/// let every_core = ScoreOptions::new().with_threads(0);
/// let mut out = Array2::zeros((1000, 2));
/// for block in (0..3).map(|_| Array2::<f32>::zeros((1000, 2))) {
///     forest.predict_proba_into(block.view(), out.view_mut(), &every_core)?;
/// }
///
/// // Setting the flag (from any thread, e.g. a Ctrl-C handler) stops scoring.
/// let cancel = AtomicBool::new(true);
/// let stoppable = ScoreOptions::new().with_cancel(&cancel);
/// assert_eq!(forest.predict_proba(x.view(), &stoppable), Err(MorfError::Cancelled));
/// cancel.store(false, Ordering::Relaxed);
/// assert_eq!(forest.predict_proba(x.view(), &stoppable)?, proba);
/// # Ok::<(), MorfError>(())
/// ```
pub struct ScoreOptions<'a> {
    n_threads: usize,
    cancel: Option<&'a AtomicBool>,
    /// The threads of `n_threads`, started by the first call that shares its rows.
    pool: OnceLock<rayon::ThreadPool>,
}

impl Default for ScoreOptions<'_> {
    fn default() -> Self {
        ScoreOptions {
            n_threads: 1,
            cancel: None,
            pool: OnceLock::new(),
        }
    }
}

impl<'a> ScoreOptions<'a> {
    /// One thread, no cancellation: [`ScoreOptions::default`].
    pub fn new() -> Self {
        ScoreOptions::default()
    }

    /// Scores rows in parallel on `n_threads` threads (0: one per available core;
    /// never more threads than cores). Calls of few rows stay on the caller's thread.
    pub fn with_threads(self, n_threads: usize) -> Self {
        ScoreOptions {
            n_threads,
            pool: OnceLock::new(),
            ..self
        }
    }

    /// Stops scoring with [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon
    /// after `cancel` is set: it is looked at before each tree walks each block of rows
    /// (for contributions, before each tree explains each block of rows), a few
    /// milliseconds of work at most. What an output buffer holds after a cancelled call is unspecified.
    pub fn with_cancel(self, cancel: &'a AtomicBool) -> Self {
        ScoreOptions {
            cancel: Some(cancel),
            ..self
        }
    }

    /// The threads asked for (0: every core).
    pub fn n_threads(&self) -> usize {
        self.n_threads
    }

    /// The cancel flag, or one that is never set.
    pub(crate) fn cancel_flag(&self) -> &'a AtomicBool {
        self.cancel.unwrap_or(&NEVER_CANCELLED)
    }

    /// Runs `job` on the caller's thread for one thread or too few rows to share,
    /// otherwise on the pool; tells it how many threads it has.
    pub(crate) fn install<R: Send>(
        &self,
        n_rows: usize,
        job: impl FnOnce(usize) -> R + Send,
    ) -> Result<R> {
        self.install_when(n_rows > SCORE_CHUNK, job)
    }

    /// As [`install`](Self::install), for work so costly per row (contributions)
    /// that the pool pays for itself from two rows on.
    pub(crate) fn install_costly<R: Send>(
        &self,
        n_rows: usize,
        job: impl FnOnce(usize) -> R + Send,
    ) -> Result<R> {
        self.install_when(n_rows > 1, job)
    }

    fn install_when<R: Send>(&self, share: bool, job: impl FnOnce(usize) -> R + Send) -> Result<R> {
        if self.n_threads == 1 || !share {
            return Ok(job(1));
        }
        let pool = match self.pool.get() {
            Some(pool) => pool,
            None => {
                // Two calls racing here each build one; the first kept serves both.
                let _ = self.pool.set(thread_pool(self.n_threads)?);
                self.pool.get().expect("the pool was just set")
            }
        };
        Ok(pool.install(|| job(rayon::current_num_threads())))
    }
}

impl Clone for ScoreOptions<'_> {
    /// The same options; the copy starts threads of its own when it needs them.
    fn clone(&self) -> Self {
        ScoreOptions {
            n_threads: self.n_threads,
            cancel: self.cancel,
            pool: OnceLock::new(),
        }
    }
}

impl fmt::Debug for ScoreOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScoreOptions")
            .field("n_threads", &self.n_threads)
            .field("cancel", &self.cancel)
            .field("pool_started", &self.pool.get().is_some())
            .finish()
    }
}
