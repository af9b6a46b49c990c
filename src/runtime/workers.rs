//! The threads a fit or a scoring call runs on.

use super::rows::SCORE_CHUNK;
use crate::error::{invalid, Result};

/// Cores this process may run on; 1 when that cannot be told.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The threads scoring runs on: the caller's alone, or a pool built once per call or
/// per stream of blocks.
pub(crate) enum Workers {
    Caller,
    Pool(rayon::ThreadPool),
}

impl Workers {
    /// The caller's thread for `n_threads == 1` or for too few rows to share; otherwise
    /// a pool of `n_threads` threads, at most one per available core (0: one per core).
    pub(crate) fn for_rows(n_threads: usize, n_rows: usize) -> Result<Workers> {
        if n_threads == 1 || n_rows <= SCORE_CHUNK {
            return Ok(Workers::Caller);
        }
        thread_pool(n_threads).map(Workers::Pool)
    }

    /// Runs `job` on these threads, telling it how many there are.
    pub(crate) fn install<R: Send>(&self, job: impl FnOnce(usize) -> R + Send) -> R {
        match self {
            Workers::Caller => job(1),
            Workers::Pool(pool) => pool.install(|| job(rayon::current_num_threads())),
        }
    }
}

/// Runs `job` in a rayon pool of `n_threads` threads, as [`thread_pool`] builds it.
pub(crate) fn with_threads<R: Send>(
    n_threads: usize,
    job: impl FnOnce() -> Result<R> + Send,
) -> Result<R> {
    thread_pool(n_threads)?.install(job)
}

/// A rayon pool of `n_threads` threads, at most one per available core (0: one per
/// core). More threads than cores would only add start-up time and contention
/// (scikit-learn's joblib backend has the same effect).
pub(crate) fn thread_pool(n_threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads.min(available_cores()))
        .build()
        .map_err(|e| invalid("n_threads", format!("cannot start worker threads: {e}")))
}
