//! The threads a fit or a scoring call runs on.

use crate::error::{invalid, Result};

/// Cores this process may run on; 1 when that cannot be told.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
