//! Unsupervised forests from Python: trained into a [`PyForest`] (its leaves hold the
//! share of each tree's sample that reached them), and the similarity of samples from
//! their leaves and their agglomerative clustering.

use std::sync::atomic::AtomicBool;

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::forest::PyForest;
use super::interrupt::run_interruptible;
use super::{bad_choice, guarded, parse_params, value_error, Samples};
use crate::unsupervised::clusters_from_leaves;
use crate::{
    similarity_from_leaves, ClusteringCriterion, FitControl, Linkage, UnsupervisedForest,
    UnsupervisedParams,
};

/// Trains an unsupervised forest on `x` with `criterion` ("twomeans" or "fastbic") and
/// the forest parameters `params` (those an unsupervised forest has); Ctrl-C stops it.
/// `trees` `(start, stop)` grows only those trees of the forest (a warm start's new
/// ones), None all of them. The forest, and the leaf id each row of `x` reaches in
/// each of its trees, shape (n_samples, n_trees).
#[pyfunction]
#[pyo3(signature = (x, criterion, params, n_threads, trees=None))]
pub(super) fn fit_unsupervised<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    criterion: &str,
    params: &Bound<'py, PyDict>,
    n_threads: usize,
    trees: Option<(usize, usize)>,
) -> PyResult<(PyForest, Bound<'py, PyArray2<i64>>)> {
    guarded(|| {
        let forest = parse_params(params)?;
        let params = UnsupervisedParams {
            n_estimators: forest.n_estimators,
            atoms: forest.atoms,
            max_features: forest.max_features,
            criterion: match criterion {
                "twomeans" => ClusteringCriterion::TwoMeans,
                "fastbic" => ClusteringCriterion::FastBic,
                other => return Err(bad_choice("criterion", other, "'twomeans' or 'fastbic'")),
            },
            max_depth: forest.max_depth,
            min_samples_split: forest.min_samples_split,
            min_samples_leaf: forest.min_samples_leaf,
            bootstrap: forest.bootstrap,
            max_samples: forest.max_samples,
            random_state: forest.random_state,
            n_threads,
        };
        let samples = Samples::borrow(x)?;
        let cancel = AtomicBool::new(false);
        let control = FitControl::new().with_cancel(&cancel);
        let (fitted, leaves) = with_view!(samples, |view| run_interruptible(
            py,
            &cancel,
            || {
                let (start, stop) = trees.unwrap_or((0, params.n_estimators));
                UnsupervisedForest::fit_trees_with_leaves(&params, view, start..stop, &control)
            },
            || Ok(())
        ))?
        .map_err(value_error)?;
        let forest = PyForest {
            forest: fitted.into_forest(),
        };
        Ok((forest, leaves.mapv(i64::from).into_pyarray(py)))
    })
}

/// The share of trees in which each pair of samples share a leaf, from their leaf ids
/// of shape (n_samples, n_trees).
#[pyfunction]
pub(super) fn similarity_matrix<'py>(
    py: Python<'py>,
    leaves: PyReadonlyArray2<'py, i64>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    guarded(|| {
        let leaves = leaves.as_array();
        let similarity = py
            .detach(|| similarity_from_leaves(leaves, n_threads))
            .map_err(value_error)?;
        Ok(similarity.into_pyarray(py))
    })
}

/// The clusters of the agglomerative clustering of samples at distance 1 -
/// similarity, from their leaf ids of shape (n_samples, n_trees), into `n_clusters`
/// clusters with `linkage` ("average", "complete" or "single"): scikit-learn's
/// `AgglomerativeClustering` labels for these distances.
#[pyfunction]
pub(super) fn agglomerative_clusters<'py>(
    py: Python<'py>,
    leaves: PyReadonlyArray2<'py, i64>,
    n_clusters: usize,
    linkage: &str,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    guarded(|| {
        let linkage = Linkage::from_name(linkage).map_err(value_error)?;
        let leaves = leaves.as_array();
        let clusters = py
            .detach(|| clusters_from_leaves(leaves, n_clusters, linkage, n_threads))
            .map_err(value_error)?;
        let clusters: Vec<i64> = clusters.into_iter().map(|c| c as i64).collect();
        Ok(clusters.into_pyarray(py))
    })
}
