//! Bindings of the boosted model, `morf_rs._core.Booster`.

use ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;

use super::atoms::{parse_atoms, AtomInput, DICTIONARY_KEY};
use super::interrupt::run_interruptible;
use super::mapping::{from_dict, present, UnknownKeys};
use super::params::{count_or_fraction, max_features, CountOrFraction};
use super::{guarded, inspect, score_rows, stats_dict, value_error, Samples};
use crate::error::try_filled;
use crate::{
    BoostParams, BoostTargets, Booster, EarlyStopping, FitControl, Inspect, Loss, MaxFeatures,
    Progress, ScoreOptions, ValidationSize,
};

/// A trained boosted model.
#[pyclass(name = "Booster", module = "morf_rs._core", frozen)]
pub struct PyBooster {
    model: Booster,
}

impl PyBooster {
    #[allow(clippy::too_many_arguments)]
    fn fit_unguarded(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        n_classes: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        progress: Option<Bound<'_, PyAny>>,
        previous: Option<PyRef<'_, PyBooster>>,
    ) -> PyResult<PyBooster> {
        let mut params = parse_boost_params(params)?;
        params.n_threads = n_threads;
        let samples = Samples::borrow(x)?;
        let weights = sample_weight.as_ref().map(|w| w.as_slice()).transpose()?;
        let labels;
        let values;
        let targets = if n_classes == 0 {
            values = y.extract::<PyReadonlyArray1<'_, f64>>()?;
            BoostTargets::Values(values.as_slice()?)
        } else {
            labels = y.extract::<PyReadonlyArray1<'_, u32>>()?;
            BoostTargets::Classes {
                labels: labels.as_slice()?,
                n_classes,
            }
        };
        let cancel = AtomicBool::new(false);
        let progress_now = Mutex::new((0, 0));
        let record = |p: Progress| {
            *progress_now.lock().unwrap_or_else(|e| e.into_inner()) = (p.trees_done, p.n_trees);
        };
        let control = FitControl::new()
            .with_progress(&record)
            .with_cancel(&cancel);
        let previous_model = previous.as_ref().map(|p| &p.model);
        let mut reported = 0;
        let report = || {
            let (done, total) = *progress_now.lock().unwrap_or_else(|e| e.into_inner());
            match &progress {
                Some(callback) if done != reported => {
                    reported = done;
                    callback.call1((done, total)).map(drop)
                }
                _ => Ok(()),
            }
        };
        let model = with_view!(samples, |view| run_interruptible(
            py,
            &cancel,
            || match previous_model {
                Some(previous) => previous.fit_more(&params, view, targets, weights, &control),
                None => Booster::fit_with(&params, view, targets, weights, &control),
            },
            report
        ))?
        .map_err(value_error)?;
        Ok(PyBooster { model })
    }

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
impl PyBooster {
    /// Trains a model: classes when `n_classes >= 1` (y holds uint32 class indices),
    /// regression when `n_classes == 0` (y holds float64 values). `progress(trees_done,
    /// n_trees)`, if given, is called on this thread as trees are grown; Ctrl-C (or an
    /// exception from `progress`) stops the fit. With `previous`, the model fitted on the
    /// same data with the same parameters and fewer rounds, only the rounds it lacks
    /// are trained.
    #[staticmethod]
    #[pyo3(signature = (x, y, n_classes, sample_weight, params, n_threads, progress=None, previous=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        n_classes: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        progress: Option<Bound<'_, PyAny>>,
        previous: Option<PyRef<'_, PyBooster>>,
    ) -> PyResult<PyBooster> {
        guarded(|| {
            Self::fit_unguarded(
                py,
                x,
                y,
                n_classes,
                sample_weight,
                params,
                n_threads,
                progress,
                previous,
            )
        })
    }

    /// What rounds `start..end` add to the raw scores, without the baseline, shape
    /// (n_samples, n_outputs); written into `out` when given.
    #[pyo3(signature = (x, start, end, n_threads, out=None))]
    fn predict_raw_rounds<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        start: usize,
        end: usize,
        n_threads: usize,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| {
            let samples = Samples::borrow(x)?;
            let out = match out {
                Some(out) => out,
                None => {
                    let k_out = self.model.loss().n_outputs();
                    let zeros = try_filled(x.len()?, k_out, 0.0f64, "the raw scores")
                        .map_err(value_error)?;
                    Array2::from_shape_vec((x.len()?, k_out), zeros)
                        .expect("one value per sample and output")
                        .into_pyarray(py)
                }
            };
            {
                let mut write = out.try_readwrite()?;
                let target = write.as_array_mut();
                with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| {
                        let rounds = start..end;
                        self.model
                            .predict_raw_rounds_into(view, rounds, target, options)
                    }
                ))?;
            }
            Ok(out)
        })
    }

    /// Predictions from raw scores: class probabilities, or values (one column).
    fn transform<'py>(
        &self,
        py: Python<'py>,
        raw: numpy::PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| {
            let raw = raw.as_array();
            if raw.ncols() != self.model.loss().n_outputs() {
                return Err(PyValueError::new_err(format!(
                    "raw scores need {} columns, got {}",
                    self.model.loss().n_outputs(),
                    raw.ncols()
                )));
            }
            Ok(self.model.transform(raw).into_pyarray(py))
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

    /// Tree `index` (in round order) as a dict of arrays indexed by node id; pooled
    /// windows are given over the last `n_axes` image axes.
    fn tree_arrays<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_axes: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let trees = self.model.trees();
            inspect::tree_arrays_at(py, trees, "boosted model", index, n_axes)
        })
    }

    /// Per row, feature and output, TreeSHAP contributions to the raw scores over the
    /// split atoms shared among their features, the expected value last: written into
    /// `out`, shape (n_samples, (n_features + 1) * n_outputs), n_outputs 2 for two
    /// classes (the raw score in output 1).
    fn contributions<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Bound<'py, PyArray2<f64>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| super::explain::contributions(py, &self.model, x, n_threads, out))
    }

    /// The exact per-atom contributions as a dict of arrays.
    fn atom_contributions<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| super::explain::atom_contributions(py, &self.model, x, n_threads))
    }

    /// Normalised counts of features in split atoms.
    fn split_count_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        guarded(|| {
            let importances = self.model.split_count_importances();
            Ok(importances.map_err(value_error)?.into_pyarray(py))
        })
    }

    /// Normalised split gains shared among their atoms' features.
    fn gain_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        guarded(|| {
            let importances = self.model.gain_importances();
            Ok(importances.map_err(value_error)?.into_pyarray(py))
        })
    }

    /// Per-tree statistics as a dict of arrays.
    fn tree_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| stats_dict(py, &self.model.tree_stats()))
    }

    /// Raw scores before any tree, one per output.
    fn baseline<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.baseline().to_vec().into_pyarray(py)
    }

    /// Mean training loss before the first round and after each.
    fn train_loss<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.train_loss().to_vec().into_pyarray(py)
    }

    /// Mean held-out loss before the first round and after each (early stopping).
    fn validation_loss<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.validation_loss().to_vec().into_pyarray(py)
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
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PyBooster> {
        guarded(|| {
            let model = py
                .detach(|| Booster::from_bytes(data))
                .map_err(value_error)?;
            Ok(PyBooster { model })
        })
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.model.n_features()
    }

    #[getter]
    fn n_rounds(&self) -> usize {
        self.model.n_rounds()
    }

    #[getter]
    fn n_outputs(&self) -> usize {
        self.model.loss().n_outputs()
    }

    /// Number of classes, or 0 for regression.
    #[getter]
    fn n_classes(&self) -> usize {
        match self.model.loss() {
            Loss::SquaredError => 0,
            loss => loss.n_predicted(),
        }
    }
}

/// A boosted model's parameters, by their scikit-learn names; absent or None means the
/// engine's default, except `max_leaf_nodes=None` (no limit) and `max_features=None`
/// (every feature). `validation_fraction`, `n_iter_no_change` and `tol` matter only
/// with `early_stopping`.
#[derive(Deserialize)]
struct BoostInput {
    n_estimators: Option<usize>,
    learning_rate: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    max_leaf_nodes: Option<Option<usize>>,
    max_depth: Option<usize>,
    min_samples_leaf: Option<usize>,
    l2_regularization: Option<f64>,
    max_bins: Option<usize>,
    subsample: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    max_features: Option<Option<Value>>,
    early_stopping: Option<bool>,
    validation_fraction: Option<Value>,
    n_iter_no_change: Option<usize>,
    tol: Option<f64>,
    random_state: Option<u64>,
    #[serde(flatten)]
    atoms: AtomInput,
    #[serde(flatten)]
    unknown: UnknownKeys,
}

fn parse_boost_params(params: &Bound<'_, PyDict>) -> PyResult<BoostParams> {
    let input: BoostInput = from_dict(params, &[DICTIONARY_KEY], |input: &BoostInput| {
        &input.unknown
    })?;
    let defaults = BoostParams::default();
    let early_stopping = if input.early_stopping.unwrap_or(false) {
        let stopping = EarlyStopping::default();
        Some(EarlyStopping {
            validation_size: match input.validation_fraction {
                None => stopping.validation_size,
                Some(value) => match count_or_fraction("validation_fraction", value)? {
                    CountOrFraction::Count(count) => ValidationSize::Count(count),
                    CountOrFraction::Fraction(fraction) => ValidationSize::Fraction(fraction),
                },
            },
            n_iter_no_change: input.n_iter_no_change.unwrap_or(stopping.n_iter_no_change),
            tol: input.tol.unwrap_or(stopping.tol),
        })
    } else {
        None
    };
    Ok(BoostParams {
        n_estimators: input.n_estimators.unwrap_or(defaults.n_estimators),
        learning_rate: input.learning_rate.unwrap_or(defaults.learning_rate),
        max_leaf_nodes: input.max_leaf_nodes.unwrap_or(defaults.max_leaf_nodes),
        max_depth: input.max_depth,
        min_samples_leaf: input.min_samples_leaf.unwrap_or(defaults.min_samples_leaf),
        l2_regularization: input
            .l2_regularization
            .unwrap_or(defaults.l2_regularization),
        max_bins: input.max_bins.unwrap_or(defaults.max_bins),
        subsample: input.subsample.unwrap_or(defaults.subsample),
        atoms: parse_atoms(&input.atoms, params.get_item(DICTIONARY_KEY)?)?,
        max_features: max_features(input.max_features, MaxFeatures::All)?,
        early_stopping,
        random_state: input.random_state.unwrap_or(defaults.random_state),
        n_threads: 1,
    })
}
