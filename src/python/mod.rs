//! Bindings of the private extension `morf_rs._core`; the scikit-learn classes in
//! `python/morf_rs/` wrap them. Python normalises the inputs; here they are checked
//! strictly, borrowed without copying, and the GIL is released while the engine runs.

mod atoms;

use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod interrupt;
mod mapping;
mod params;

use params::{bad_choice, parse_params};

use std::sync::atomic::AtomicBool;

use interrupt::{run_interruptible, INLINE_WALKS};

use crate::{MorfError, ScoreOptions};

/// The Python exception for an engine error: MemoryError when memory ran out,
/// ValueError for everything the caller can fix.
fn value_error(error: MorfError) -> PyErr {
    match error {
        MorfError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// Runs the body of a binding, turning a panic into a RuntimeError. A panic is a bug
/// of this package, never the caller's fault: pyo3 would raise PanicException, which
/// derives from BaseException and so escapes `except Exception`.
fn guarded<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Err(PyRuntimeError::new_err(format!(
            "internal error in morf_rs: {message}. This is a bug in morf_rs, not a \
             problem with your data or parameters; please report it on the morf_rs \
             issue tracker with the morf_rs version and a script that reproduces it."
        )))
    })
}

/// A 2-D float32, float64 or uint8 array in any memory layout, borrowed.
enum Samples<'py> {
    F32(numpy::PyReadonlyArray2<'py, f32>),
    F64(numpy::PyReadonlyArray2<'py, f64>),
    U8(numpy::PyReadonlyArray2<'py, u8>),
}

impl<'py> Samples<'py> {
    fn borrow(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(array) = x.cast::<PyArray2<f32>>() {
            Ok(Samples::F32(array.try_readonly()?))
        } else if let Ok(array) = x.cast::<PyArray2<f64>>() {
            Ok(Samples::F64(array.try_readonly()?))
        } else if let Ok(array) = x.cast::<PyArray2<u8>>() {
            Ok(Samples::U8(array.try_readonly()?))
        } else {
            Err(PyTypeError::new_err(
                "X must be a 2-D numpy array of dtype float32, float64 or uint8",
            ))
        }
    }
}

/// Evaluates `$body` with `$view` bound to the array view of whichever dtype X has.
macro_rules! with_view {
    ($samples:expr, |$view:ident| $body:expr) => {
        match &$samples {
            Samples::F32(array) => {
                let $view = array.as_array();
                $body
            }
            Samples::F64(array) => {
                let $view = array.as_array();
                $body
            }
            Samples::U8(array) => {
                let $view = array.as_array();
                $body
            }
        }
    };
}

mod boost;
mod explain;
mod forest;
mod inspect;
mod isolation;
mod stats;
mod train;
mod unsupervised;

/// Scores `n_rows` rows on `n_trees` trees through `work` without the GIL; Ctrl-C
/// stops it unless it is short enough to run on the calling thread.
fn score_rows<R: Send>(
    py: Python<'_>,
    n_rows: usize,
    n_trees: usize,
    n_threads: usize,
    work: impl FnOnce(&ScoreOptions<'_>) -> crate::Result<R> + Send,
) -> PyResult<R> {
    let cancel = AtomicBool::new(false);
    let options = ScoreOptions::new()
        .with_threads(n_threads)
        .with_cancel(&cancel);
    let result = if n_rows.saturating_mul(n_trees) < INLINE_WALKS {
        py.detach(|| work(&options))
    } else {
        run_interruptible(py, &cancel, || work(&options), || Ok(()))?
    };
    result.map_err(value_error)
}

/// Per-tree statistics as a dict of arrays.
fn stats_dict<'py>(py: Python<'py>, stats: &[crate::TreeStats]) -> PyResult<Bound<'py, PyDict>> {
    let column = |f: fn(&crate::TreeStats) -> i64| stats.iter().map(f).collect::<Vec<_>>();
    let dict = PyDict::new(py);
    dict.set_item("max_depth", column(|s| s.max_depth as i64).into_pyarray(py))?;
    dict.set_item("n_leaves", column(|s| s.n_leaves as i64).into_pyarray(py))?;
    dict.set_item("n_nodes", column(|s| s.n_nodes as i64).into_pyarray(py))?;
    let mean_depth: Vec<f64> = stats.iter().map(|s| s.mean_leaf_depth).collect();
    dict.set_item("mean_leaf_depth", mean_depth.into_pyarray(py))?;
    Ok(dict)
}

/// Panics inside a guarded binding, so that tests can check what a bug turns into.
#[pyfunction]
fn _panic_in_engine(py: Python<'_>) -> PyResult<()> {
    guarded(|| py.detach(|| panic!("a deliberate panic")))
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<forest::PyForest>()?;
    module.add_class::<boost::PyBooster>()?;
    module.add_class::<isolation::PyIsolationForest>()?;
    module.add_function(wrap_pyfunction!(_panic_in_engine, module)?)?;
    module.add_function(wrap_pyfunction!(unsupervised::fit_unsupervised, module)?)?;
    module.add_function(wrap_pyfunction!(unsupervised::similarity_matrix, module)?)?;
    module.add_function(wrap_pyfunction!(
        unsupervised::agglomerative_clusters,
        module
    )?)?;
    stats::register(module)?;
    module.add("FORMAT_VERSION", crate::FORMAT_VERSION)?;
    module.add("BOOSTER_FORMAT_VERSION", crate::BOOSTER_FORMAT_VERSION)?;
    module.add("MAX_ESTIMATORS", crate::MAX_ESTIMATORS)?;
    Ok(())
}
