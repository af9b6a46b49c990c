//! Watching and stopping long work: progress reports of a fit and a cancel flag that
//! fit and scoring check often enough to stop within a small fraction of a second.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{MorfError, Result};

/// How far a fit has got, as reported to [`FitControl::with_progress`]'s callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Trees fully grown so far.
    pub trees_done: usize,
    /// Trees the fit grows in all.
    pub n_trees: usize,
}

/// The callback type of [`FitControl::with_progress`].
pub type ProgressCallback<'a> = &'a (dyn Fn(Progress) + Sync);

/// Progress reports and cancellation for [`Forest::fit_with`](crate::Forest::fit_with).
///
/// Neither changes the forest: a fit that is not cancelled gives the same trees with
/// or without a control.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use morf_rs::{FitControl, Forest, ForestParams, MorfError, Progress, Targets};
/// use ndarray::array;
///
/// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
/// let targets = Targets::Classes { labels: &[0, 1, 0, 1], n_classes: 2 };
/// let params = ForestParams { n_estimators: 20, ..ForestParams::default() };
///
/// // Report every tree; the callback may run on any worker thread.
/// let report = |p: Progress| eprintln!("{}/{} trees", p.trees_done, p.n_trees);
/// let control = FitControl::new().with_progress(&report);
/// let forest = Forest::fit_with(&params, x.view(), targets, None, 0..20, &control)?;
/// assert_eq!(forest.trees().len(), 20);
///
/// // Setting the flag (from any thread, e.g. a Ctrl-C handler) stops the fit.
/// let cancel = AtomicBool::new(false);
/// let stop_after_5 = |p: Progress| {
///     if p.trees_done == 5 {
///         cancel.store(true, Ordering::Relaxed);
///     }
/// };
/// let control = FitControl::new().with_progress(&stop_after_5).with_cancel(&cancel);
/// let stopped = Forest::fit_with(&params, x.view(), targets, None, 0..20, &control);
/// assert_eq!(stopped, Err(MorfError::Cancelled));
/// # Ok::<(), MorfError>(())
/// ```
#[derive(Clone, Copy, Default)]
pub struct FitControl<'a> {
    progress: Option<ProgressCallback<'a>>,
    cancel: Option<&'a AtomicBool>,
}

impl<'a> FitControl<'a> {
    /// No progress reports and no cancellation (what [`Forest::fit`](crate::Forest::fit)
    /// uses).
    pub fn new() -> Self {
        FitControl::default()
    }

    /// Calls `callback` once per grown tree, with `trees_done` counting up from 1 to
    /// `n_trees`, the number of trees in the range being grown. Calls come from the worker threads, one at a time and in order; the
    /// workers wait for each, so keep it cheap (store the count, send it on a channel).
    pub fn with_progress(self, callback: ProgressCallback<'a>) -> Self {
        FitControl {
            progress: Some(callback),
            ..self
        }
    }

    /// Stops the fit once `cancel` is true: the workers look at it before every tree
    /// and every node, and the fit returns [`MorfError::Cancelled`].
    pub fn with_cancel(self, cancel: &'a AtomicBool) -> Self {
        FitControl {
            cancel: Some(cancel),
            ..self
        }
    }

    /// The cancel flag, or one that is never set.
    pub(crate) fn cancel_flag(&self) -> &'a AtomicBool {
        self.cancel.unwrap_or(&NEVER_CANCELLED)
    }
}

impl fmt::Debug for FitControl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FitControl")
            .field("progress", &self.progress.map(|_| "callback"))
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// The flag of work that nobody can cancel.
pub(crate) static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Whether `cancel` is set. Relaxed: the flag guards no other data, and a worker that
/// sees it one node late loses nothing.
pub(crate) fn is_cancelled(cancel: &AtomicBool) -> bool {
    cancel.load(Ordering::Relaxed)
}

/// `Err(Cancelled)` once `cancel` is set.
pub(crate) fn check_cancel(cancel: &AtomicBool) -> Result<()> {
    if is_cancelled(cancel) {
        Err(MorfError::Cancelled)
    } else {
        Ok(())
    }
}

/// Counts the trees of one fit and reports each to the control's callback.
pub(crate) struct TreeCounter<'a> {
    callback: Option<ProgressCallback<'a>>,
    n_trees: usize,
    /// Trees done; the lock also keeps the callback's calls in order, one at a time.
    done: Mutex<usize>,
}

impl<'a> TreeCounter<'a> {
    pub fn new(control: &FitControl<'a>, n_trees: usize) -> Self {
        TreeCounter {
            callback: control.progress,
            n_trees,
            done: Mutex::new(0),
        }
    }

    /// Records one more grown tree.
    pub fn tree_done(&self) {
        if let Some(callback) = self.callback {
            let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
            *done += 1;
            callback(Progress {
                trees_done: *done,
                n_trees: self.n_trees,
            });
        }
    }
}
