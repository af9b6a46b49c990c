//! Long engine calls that Ctrl-C can stop: the engine runs without the GIL on a helper
//! thread while the calling thread wakes every [`POLL`] to run Python's signal
//! handlers (where Ctrl-C raises KeyboardInterrupt) and report progress.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often the calling thread looks for signals while the engine works: often enough
/// that Ctrl-C takes effect at once to a person, rarely enough to cost nothing.
const POLL: Duration = Duration::from_millis(50);

/// Scoring work below this many row-tree walks (tens of milliseconds at most) runs on
/// the calling thread: a helper thread would cost more than the call itself.
pub(crate) const INLINE_WALKS: usize = 1 << 20;

/// Runs `work` without the GIL on a helper thread and returns its result. Meanwhile
/// the calling thread, every [`POLL`], takes the GIL to run the signal handlers and
/// then `tick` (which reports progress), and once more after `work` ends. If either
/// raises, `cancel` is set, `work` is waited for (it must return soon after `cancel`
/// is set) and the error is returned. A panic in `work` resumes on the calling thread.
pub(crate) fn run_interruptible<R: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    work: impl FnOnce() -> R + Send,
    mut tick: impl FnMut() -> PyResult<()>,
) -> PyResult<R> {
    let slot: Mutex<Option<thread::Result<R>>> = Mutex::new(None);
    let finished = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    let caller = thread::current();
    thread::scope(|scope| {
        thread::Builder::new()
            .name("morf_rs engine".into())
            .spawn_scoped(scope, || {
                let result = panic::catch_unwind(AssertUnwindSafe(work));
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                caller.unpark();
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
        loop {
            // Wakes early when the helper finishes; a spurious wake just polls sooner.
            py.detach(|| thread::park_timeout(POLL));
            if let Some(result) = finished() {
                let value = result.unwrap_or_else(|payload| panic::resume_unwind(payload));
                tick()?;
                return Ok(value);
            }
            if let Err(error) = py.check_signals().and_then(|()| tick()) {
                cancel.store(true, Ordering::Relaxed);
                py.detach(|| {
                    while finished().is_none() {
                        thread::park_timeout(POLL);
                    }
                });
                return Err(error);
            }
        }
    })
}
