//! Bindings of the hypothesis tests (`crate::stats`), used by `morf_rs.stats`.

use numpy::{IntoPyArray, PyArray3, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::forest::PyForest;
use super::{guarded, parse_params, score_rows, value_error, Samples};
use crate::stats::{Metric, Truth};

/// The targets a metric scores: class indices (1-D uint32) or values (2-D float64).
enum PyTruth<'py> {
    Classes(PyReadonlyArray1<'py, u32>),
    Values(PyReadonlyArray2<'py, f64>),
}

impl<'py> PyTruth<'py> {
    fn borrow(y: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(classes) = y.extract::<PyReadonlyArray1<'py, u32>>() {
            Ok(PyTruth::Classes(classes))
        } else if let Ok(values) = y.extract::<PyReadonlyArray2<'py, f64>>() {
            Ok(PyTruth::Values(values))
        } else {
            Err(PyTypeError::new_err(
                "y must be a 1-D uint32 array of class indices or a 2-D float64 array of \
                 values",
            ))
        }
    }

    fn view(&self) -> Truth<'_> {
        match self {
            PyTruth::Classes(y) => Truth::Classes(y.as_array()),
            PyTruth::Values(y) => Truth::Values(y.as_array()),
        }
    }
}

/// Per tree and row of the training set `x`, the tree's posterior where the tree's
/// sample left the row out, NaN elsewhere (Forest::oob_tree_posteriors); the forest
/// holds trees `first_tree..` of the forest `params` describe.
#[pyfunction]
fn oob_tree_posteriors<'py>(
    py: Python<'py>,
    forest: PyRef<'py, PyForest>,
    x: &Bound<'py, PyAny>,
    params: &Bound<'py, PyDict>,
    first_tree: usize,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    guarded(|| {
        let params = parse_params(params)?;
        let samples = Samples::borrow(x)?;
        let forest = &forest.forest;
        let n_trees = forest.trees().len();
        let posteriors = with_view!(samples, |view| score_rows(
            py,
            view.nrows(),
            n_trees,
            n_threads,
            |options| forest.oob_tree_posteriors(&params, view, first_tree, options)
        ))?;
        Ok(posteriors.into_pyarray(py))
    })
}

/// The metric `metric` of `posteriors` (rows × classes or outputs) against `y`.
#[pyfunction]
fn score_metric(
    metric: &str,
    y: &Bound<'_, PyAny>,
    posteriors: PyReadonlyArray2<'_, f64>,
) -> PyResult<f64> {
    guarded(|| {
        let metric = Metric::from_name(metric).map_err(value_error)?;
        let truth = PyTruth::borrow(y)?;
        metric
            .score(&truth.view(), posteriors.as_array())
            .map_err(value_error)
    })
}

/// The Coleman test of two forests' per-tree out-of-bag posteriors
/// (stats::coleman_test): the statistic, the p-value and the null distribution.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn coleman_test<'py>(
    py: Python<'py>,
    y: &Bound<'py, PyAny>,
    original: PyReadonlyArray3<'py, f64>,
    permuted: PyReadonlyArray3<'py, f64>,
    metric: &str,
    n_repeats: usize,
    seed: u64,
    n_threads: usize,
) -> PyResult<(f64, f64, Bound<'py, numpy::PyArray1<f64>>)> {
    guarded(|| {
        let metric = Metric::from_name(metric).map_err(value_error)?;
        let truth = PyTruth::borrow(y)?;
        let (original, permuted) = (original.as_array(), permuted.as_array());
        let truth = truth.view();
        let test = py
            .detach(|| {
                crate::stats::coleman_test(
                    &truth, original, permuted, metric, n_repeats, seed, n_threads,
                )
            })
            .map_err(value_error)?;
        Ok((
            test.statistic,
            test.pvalue,
            test.null_distribution.into_pyarray(py),
        ))
    })
}

/// Adds the test functions to the extension module.
pub(super) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(oob_tree_posteriors, module)?)?;
    module.add_function(wrap_pyfunction!(score_metric, module)?)?;
    module.add_function(wrap_pyfunction!(coleman_test, module)?)?;
    Ok(())
}
