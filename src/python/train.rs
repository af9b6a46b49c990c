//! Training from Python: the GIL released, progress reported, Ctrl-C heard.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::forest::PyForest;
use super::interrupt::run_interruptible;
use super::{parse_params, value_error, Samples};
use crate::{FitControl, Forest, Progress, Targets};

/// Trains a forest on `x` and `targets` with the engine parameters `params`, reporting
/// to `progress` on this thread; Ctrl-C (or an exception from `progress`) stops it.
/// `trees`, `(start, stop)`, grows only those trees (default: all `n_estimators`).
#[allow(clippy::too_many_arguments)]
pub(super) fn train(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    targets: Targets<'_>,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    params: &Bound<'_, PyDict>,
    n_threads: usize,
    progress: Option<Bound<'_, PyAny>>,
    trees: Option<(usize, usize)>,
) -> PyResult<PyForest> {
    let mut params = parse_params(params)?;
    params.n_threads = n_threads;
    let trees = trees.map_or(0..params.n_estimators, |(start, stop)| start..stop);
    let n_trees = trees.len();
    let samples = Samples::borrow(x)?;
    let weights = sample_weight.as_ref().map(|w| w.as_slice()).transpose()?;

    let cancel = AtomicBool::new(false);
    let trees_done = AtomicUsize::new(0);
    let count = |p: Progress| trees_done.store(p.trees_done, Ordering::Relaxed);
    let control = FitControl::new().with_progress(&count).with_cancel(&cancel);
    let mut reported = 0;
    let report = || {
        let done = trees_done.load(Ordering::Relaxed);
        match &progress {
            Some(callback) if done != reported => {
                reported = done;
                callback.call1((done, n_trees)).map(drop)
            }
            _ => Ok(()),
        }
    };
    let forest = with_view!(samples, |view| run_interruptible(
        py,
        &cancel,
        || Forest::fit_with(&params, view, targets, weights, trees, &control),
        report
    ))?
    .map_err(value_error)?;
    Ok(PyForest { forest })
}
