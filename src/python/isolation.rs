//! Bindings of the isolation forest, `morf_rs._core.IsolationForest`.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use std::sync::atomic::AtomicBool;

use serde::Deserialize;

use super::atoms::{parse_atoms, AtomInput, DICTIONARY_KEY};
use super::interrupt::run_interruptible;
use super::mapping::{from_dict, UnknownKeys};
use super::{guarded, inspect, score_rows, stats_dict, value_error, Samples};
use crate::{FitControl, Inspect, IsolationForest, IsolationParams, ScoreOptions};

/// A trained isolation forest.
#[pyclass(name = "IsolationForest", module = "morf_rs._core", frozen)]
pub struct PyIsolationForest {
    model: IsolationForest,
}

impl PyIsolationForest {
    /// [`score_rows`] on this model's trees.
    fn score<R: Send>(
        &self,
        py: Python<'_>,
        n_rows: usize,
        n_threads: usize,
        work: impl FnOnce(&ScoreOptions<'_>) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        score_rows(py, n_rows, self.model.trees().len(), n_threads, work)
    }
}

#[pymethods]
impl PyIsolationForest {
    /// Trains an isolation forest on `x` (rows drawn in proportion to
    /// `sample_weight` when given) on `n_threads` threads (0: every core); Ctrl-C
    /// stops the fit.
    #[staticmethod]
    #[pyo3(signature = (x, params, n_threads, sample_weight=None))]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<PyIsolationForest> {
        guarded(|| {
            let model = train(py, x, params, n_threads, sample_weight, None)?;
            Ok(PyIsolationForest { model })
        })
    }

    /// This forest with trees added up to `params`' n_estimators, grown on `x` as a
    /// fit of that many would grow them (IsolationForest::with_more_trees).
    #[pyo3(signature = (x, params, n_threads, sample_weight=None))]
    fn with_more_trees(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<PyIsolationForest> {
        guarded(|| {
            let model = train(py, x, params, n_threads, sample_weight, Some(&self.model))?;
            Ok(PyIsolationForest { model })
        })
    }

    /// Anomaly scores `2^(-E[h] / c(max_samples))` of the rows of `x`, written into
    /// `out` (IsolationForest::anomaly_scores_into).
    fn anomaly_scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Bound<'py, PyArray1<f64>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        guarded(|| {
            let samples = Samples::borrow(x)?;
            {
                let mut write = out.try_readwrite()?;
                let target = write.as_array_mut();
                with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| { self.model.anomaly_scores_into(view, target, options) }
                ))?;
            }
            Ok(out)
        })
    }

    /// Leaf node id per sample and tree, written into `out` when given
    /// (Inspect::apply_into).
    #[pyo3(signature = (x, n_threads, out=None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Option<Bound<'py, PyArray2<i64>>>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let n_trees = self.model.trees().len();
        guarded(|| inspect::apply(py, &self.model, n_trees, x, n_threads, out))
    }

    /// Per tree, the path length each node's leaf stores (NaN at splits), as a list
    /// of arrays indexed by node id.
    fn leaf_path_lengths<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyArray1<f64>>> {
        self.model
            .trees()
            .iter()
            .map(|tree| {
                let lengths: Vec<f64> = (0..tree.nodes().len())
                    .map(|id| tree.leaf_values(id).map_or(f64::NAN, |v| v[0]))
                    .collect();
                PyArray1::from_vec(py, lengths)
            })
            .collect()
    }

    /// Per tree, the columns of its block in `decision_paths`: its depth + 1.
    fn path_widths(&self) -> Vec<usize> {
        self.model.path_widths()
    }

    /// The nodes each row of `x` passes through, tree after tree, written into `out`
    /// (Inspect::decision_paths_into).
    fn decision_paths<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Bound<'py, PyArray2<u32>>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let n_trees = self.model.trees().len();
        guarded(|| inspect::decision_paths(py, &self.model, n_trees, x, n_threads, out))
    }

    /// Tree `index` as a dict of arrays indexed by node id (each leaf's `value` its
    /// path length); pooled windows are given over the last `n_axes` image axes.
    fn tree_arrays<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_axes: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let trees = self.model.trees();
            inspect::tree_arrays_at(py, trees, "isolation forest", index, n_axes)
        })
    }

    /// Per-tree statistics as a dict of arrays.
    fn tree_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| stats_dict(py, &self.model.tree_stats()))
    }

    /// The model as versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guarded(|| {
            let bytes = py.detach(|| self.model.to_bytes());
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// Reads bytes written by `to_bytes`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PyIsolationForest> {
        guarded(|| {
            let model = py
                .detach(|| IsolationForest::from_bytes(data))
                .map_err(value_error)?;
            Ok(PyIsolationForest { model })
        })
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features()
    }

    /// Rows each tree grew on.
    #[getter]
    fn max_samples(&self) -> usize {
        self.model.max_samples()
    }

    #[getter]
    fn n_estimators(&self) -> usize {
        self.model.trees().len()
    }
}

/// Fits an isolation forest on `x`, or adds trees to `grown` when given, without
/// the GIL; Ctrl-C stops it.
fn train(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    params: &Bound<'_, PyDict>,
    n_threads: usize,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    grown: Option<&IsolationForest>,
) -> PyResult<IsolationForest> {
    let mut params = parse_isolation_params(params)?;
    params.n_threads = n_threads;
    let weights = sample_weight.as_ref().map(|w| w.as_slice()).transpose()?;
    let samples = Samples::borrow(x)?;
    let cancel = AtomicBool::new(false);
    let control = FitControl::new().with_cancel(&cancel);
    let model = with_view!(samples, |view| run_interruptible(
        py,
        &cancel,
        || match grown {
            Some(forest) => forest.with_more_trees(&params, view, weights, &control),
            None => IsolationForest::fit_with(&params, view, weights, &control),
        },
        || Ok(())
    ))?
    .map_err(value_error)?;
    Ok(model)
}

/// An isolation forest's parameters, by their scikit-learn names; absent or None
/// means the engine's default (`max_samples`: scikit-learn's "auto"; `max_features`:
/// every feature).
#[derive(Deserialize)]
struct IsolationInput {
    n_estimators: Option<usize>,
    max_samples: Option<usize>,
    max_features: Option<usize>,
    random_state: Option<u64>,
    #[serde(flatten)]
    atoms: AtomInput,
    #[serde(flatten)]
    unknown: UnknownKeys,
}

fn parse_isolation_params(params: &Bound<'_, PyDict>) -> PyResult<IsolationParams> {
    let input: IsolationInput = from_dict(params, &[DICTIONARY_KEY], |input: &IsolationInput| {
        &input.unknown
    })?;
    let defaults = IsolationParams::default();
    Ok(IsolationParams {
        n_estimators: input.n_estimators.unwrap_or(defaults.n_estimators),
        max_samples: input.max_samples,
        max_features: input.max_features,
        atoms: parse_atoms(&input.atoms, params.get_item(DICTIONARY_KEY)?)?,
        random_state: input.random_state.unwrap_or(defaults.random_state),
        n_threads: 1,
    })
}
