//! Bindings of the forests, `morf_rs._core.Forest`: training (classification and
//! regression), scoring, inspection and saved bytes.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::params::parse_params;
use super::train::train;
use super::{explain, guarded, inspect, score_rows, stats_dict, value_error, Samples};
use crate::{Forest, Inspect, ScoreOptions, Targets};

/// A trained forest.
#[pyclass(name = "Forest", module = "morf_rs._core", frozen)]
pub struct PyForest {
    pub(super) forest: Forest,
}

#[pymethods]
impl PyForest {
    /// Trains a classification forest on class indices `y` in `[0, n_classes)`; see the
    /// package's estimators for the meaning of `params`. `progress(trees_done,
    /// n_trees)`, if given, is called on this thread as trees are grown; Ctrl-C (or an
    /// exception from `progress`) stops the fit. `trees`, `(start, stop)`, grows only
    /// those trees of the forest `params` describes (default: all `n_estimators`), for
    /// merging with the others later.
    #[staticmethod]
    #[pyo3(signature = (x, y, n_classes, sample_weight, params, n_threads, progress=None, trees=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, u32>,
        n_classes: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        progress: Option<Bound<'_, PyAny>>,
        trees: Option<(usize, usize)>,
    ) -> PyResult<PyForest> {
        guarded(|| {
            let targets = Targets::Classes {
                labels: y.as_slice()?,
                n_classes,
            };
            train(
                py,
                x,
                targets,
                sample_weight,
                params,
                n_threads,
                progress,
                trees,
            )
        })
    }

    /// Trains a regression forest on float64 targets `y` of shape (n_samples,
    /// n_outputs), as `fit` does.
    #[staticmethod]
    #[pyo3(signature = (x, y, sample_weight, params, n_threads, progress=None, trees=None))]
    #[allow(clippy::too_many_arguments)]
    fn fit_regression(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray2<'_, f64>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        params: &Bound<'_, PyDict>,
        n_threads: usize,
        progress: Option<Bound<'_, PyAny>>,
        trees: Option<(usize, usize)>,
    ) -> PyResult<PyForest> {
        guarded(|| {
            let targets = Targets::Values(y.as_array());
            train(
                py,
                x,
                targets,
                sample_weight,
                params,
                n_threads,
                progress,
                trees,
            )
        })
    }

    /// Mean leaf values of the trees, shape (n_samples, n_outputs), written into `out`
    /// when given.
    #[pyo3(signature = (x, n_threads, out=None))]
    fn predict_values<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| {
            let samples = Samples::borrow(x)?;
            let Some(out) = out else {
                let values = with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| { self.forest.predict_values(view, options) }
                ))?;
                return Ok(values.into_pyarray(py));
            };
            {
                let mut write = out.try_readwrite()?;
                let target = write.as_array_mut();
                with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| { self.forest.predict_values_into(view, target, options) }
                ))?;
            }
            Ok(out)
        })
    }

    /// Mean class distribution of the trees, shape (n_samples, n_classes), written
    /// into `out` when given.
    #[pyo3(signature = (x, n_threads, out=None))]
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| {
            let samples = Samples::borrow(x)?;
            let Some(out) = out else {
                let proba = with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| { self.forest.predict_proba(view, options) }
                ))?;
                return Ok(proba.into_pyarray(py));
            };
            {
                let mut write = out.try_readwrite()?;
                let target = write.as_array_mut();
                with_view!(samples, |view| self.score(
                    py,
                    view.nrows(),
                    n_threads,
                    |options| { self.forest.predict_proba_into(view, target, options) }
                ))?;
            }
            Ok(out)
        })
    }

    /// Index of the most probable class per sample.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        guarded(|| {
            let samples = Samples::borrow(x)?;
            let classes = with_view!(samples, |view| self.score(
                py,
                view.nrows(),
                n_threads,
                |options| { self.forest.predict(view, options) }
            ))?;
            Ok(classes.into_pyarray(py))
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
        let n_trees = self.forest.trees().len();
        guarded(|| inspect::apply(py, &self.forest, n_trees, x, n_threads, out))
    }

    /// Out-of-bag predictions for `x`, the training set of this forest grown by
    /// `params` (Forest::oob_predict): per row, the mean leaf values of the trees that
    /// never saw it, and their number.
    #[allow(clippy::type_complexity)]
    fn oob_predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        params: &Bound<'py, PyDict>,
        n_threads: usize,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<u32>>)> {
        guarded(|| {
            let params = parse_params(params)?;
            let samples = Samples::borrow(x)?;
            let oob = with_view!(samples, |view| self.score(
                py,
                view.nrows(),
                n_threads,
                |options| { self.forest.oob_predict(&params, view, options) }
            ))?;
            Ok((
                oob.predictions.into_pyarray(py),
                oob.n_votes.into_pyarray(py),
            ))
        })
    }

    /// How many times tree `tree` of the forest `params` grow on `n_samples` rows
    /// holds each row (ForestParams::tree_sample_counts).
    #[staticmethod]
    fn tree_sample_counts<'py>(
        py: Python<'py>,
        params: &Bound<'py, PyDict>,
        n_samples: usize,
        tree: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        guarded(|| {
            let params = parse_params(params)?;
            let counts = params
                .tree_sample_counts(n_samples, tree)
                .map_err(value_error)?;
            Ok(counts.into_pyarray(py))
        })
    }

    /// Per tree, the columns of its block in `decision_paths`: its depth + 1.
    fn path_widths(&self) -> Vec<usize> {
        self.forest.path_widths()
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
        let n_trees = self.forest.trees().len();
        guarded(|| inspect::decision_paths(py, &self.forest, n_trees, x, n_threads, out))
    }

    /// Per row, feature and output, TreeSHAP contributions over the split atoms
    /// shared among their features, the expected value last: written into `out`,
    /// shape (n_samples, (n_features + 1) * n_outputs).
    fn contributions<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
        out: Bound<'py, PyArray2<f64>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guarded(|| explain::contributions(py, &self.forest, x, n_threads, out))
    }

    /// The exact per-atom contributions as a dict of arrays (explain::atom_contributions).
    fn atom_contributions<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| explain::atom_contributions(py, &self.forest, x, n_threads))
    }

    /// Tree `index` as a dict of arrays indexed by node id; pooled windows are given
    /// over the last `n_axes` image axes.
    fn tree_arrays<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        n_axes: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let trees = self.forest.trees();
            inspect::tree_arrays_at(py, trees, "forest", index, n_axes)
        })
    }

    /// The seeds' importance: normalised counts of features in chosen split atoms.
    fn split_count_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        guarded(|| {
            let importances = self.forest.split_count_importances();
            Ok(importances.map_err(value_error)?.into_pyarray(py))
        })
    }

    /// Impurity-weighted importance.
    fn impurity_importances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        guarded(|| {
            let importances = self.forest.impurity_importances();
            Ok(importances.map_err(value_error)?.into_pyarray(py))
        })
    }

    /// Per-tree statistics as a dict of arrays.
    fn tree_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| self.tree_stats_dict(py))
    }

    /// The forest as versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        guarded(|| {
            let bytes = py.detach(|| self.forest.to_bytes());
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// One forest holding the trees of `forests`, in order (Forest::merge).
    #[staticmethod]
    fn merge(forests: Vec<PyRef<'_, PyForest>>) -> PyResult<PyForest> {
        guarded(|| {
            let forests = forests.iter().map(|f| f.forest.clone());
            let forest = Forest::merge(forests).map_err(value_error)?;
            Ok(PyForest { forest })
        })
    }

    /// Reads bytes written by `to_bytes`.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PyForest> {
        guarded(|| {
            let forest = py
                .detach(|| Forest::from_bytes(data))
                .map_err(value_error)?;
            Ok(PyForest { forest })
        })
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.forest.n_features()
    }

    /// Number of classes; None for a regression forest.
    #[getter]
    fn n_classes(&self) -> Option<usize> {
        self.forest.n_classes()
    }

    /// Numbers per prediction: classes or outputs.
    #[getter]
    fn n_outputs(&self) -> usize {
        self.forest.task().width()
    }

    #[getter]
    fn n_estimators(&self) -> usize {
        self.forest.trees().len()
    }
}

impl PyForest {
    fn tree_stats_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.forest.tree_stats())
    }

    /// [`score_rows`] on this model's trees.
    fn score<R: Send>(
        &self,
        py: Python<'_>,
        n_rows: usize,
        n_threads: usize,
        work: impl FnOnce(&ScoreOptions<'_>) -> crate::Result<R> + Send,
    ) -> PyResult<R> {
        score_rows(py, n_rows, self.forest.trees().len(), n_threads, work)
    }
}
