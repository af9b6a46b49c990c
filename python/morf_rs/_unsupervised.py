"""Unsupervised forests: trees grown without labels, and what their leaves say of
how alike samples are.

Each split is chosen where the node's projected values fall best into two groups
(two-means or fast-BIC, as treeple's unsupervised forests). Two samples alike for
the forest share a leaf in many trees: the similarity of two samples is the share of
trees in which they do (treeple's ``compute_similarity_matrix``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from morf_rs._constraints import (
    Bool,
    Constraint,
    CountOrFraction,
    Int,
    NJobs,
    Options,
    RandomState,
    SamplesCountFractionOrRoot,
    SamplesCountOrFraction,
)
from morf_rs._core import (
    MAX_ESTIMATORS,
    Forest,
    agglomerative_clusters,
    fit_unsupervised,
    similarity_matrix,
)
from morf_rs._estimator import BaseTreeEnsemble
from morf_rs._validation import (
    _X_CHECKS,
    raise_with_hint,
    refuse_text,
    resolve_n_threads,
    validate_data,
    validate_X_scoring,
)

__all__ = ["UnsupervisedForest"]

# The checked parameters the engine grows trees with, besides the atoms'.
_ENGINE_PARAMS = (
    "n_estimators",
    "max_features",
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "bootstrap",
    "max_samples",
)


class UnsupervisedForest(TransformerMixin, ClusterMixin, BaseTreeEnsemble):
    """Shared machinery of the unsupervised forests; not meant to be used directly.

    Subclasses choose an atom family (``_atoms``, ``_atom_params``) as the
    supervised forests do.
    """

    _model_attribute = "_forest"
    _model_type = Forest
    _model_noun = "forest"
    _atoms = "axis"
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_estimators": Int(1, MAX_ESTIMATORS),
        "criterion": Options(("twomeans", "fastbic")),
        "max_depth": Int(1, none=True),
        "min_samples_split": SamplesCountFractionOrRoot(2, high_open=False),
        "min_samples_leaf": SamplesCountOrFraction(1, high_open=True),
        "bootstrap": Bool(),
        "max_samples": CountOrFraction(count_high="n_samples", none=True),
        "n_clusters": Int(1),
        "linkage": Options(("average", "complete", "single")),
        "n_jobs": NJobs(),
        "random_state": RandomState(),
        "warm_start": Bool(),
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": False}

    def fit(self, X, y=None):
        """Grow the trees on X, then cluster X by its similarity.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, one per row, without missing values. float32,
            float64 and uint8 C-contiguous arrays are used without a copy.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self : object
            The fitted forest, with ``labels_`` the clusters of X (see
            :meth:`fit_predict`).
        """
        return self._fit_keeping_state_on_error(X, y, None)

    def _fit(self, X, y, sample_weight):
        refuse_text(X)
        # The features a warm start adds trees for (validating X resets them).
        n_features = getattr(self, "n_features_in_", None)
        try:
            X = validate_data(self, X, **_X_CHECKS)
        except (ValueError, TypeError) as error:
            raise_with_hint(error, X)
        checked = self._validate_params(*X.shape)
        params = {name: checked[name] for name in _ENGINE_PARAMS}
        params["atoms"] = self._atoms
        params.update(self._atom_params(X.shape[1]))
        previous = self._warm_start_forest() if checked["warm_start"] else None
        trees = None
        if previous is not None:
            # The same forest, more trees: the trees already grown keep their seed.
            params["random_state"] = self._engine_params_["random_state"]
            trees = self._trees_to_add(previous, params["n_estimators"], n_features)
        else:
            params["random_state"] = self._draw_seed()
        n_threads = checked["n_jobs"]
        if trees is None or trees[0] < trees[1]:
            forest, leaves = fit_unsupervised(
                X, checked["criterion"], params, n_threads, trees
            )
            self._forest = (
                forest if previous is None else Forest.merge([previous, forest])
            )
        if previous is not None:
            leaves = self._leaves(X, n_threads)
        self._engine_params_ = params
        self.labels_ = self._cluster(leaves, checked)
        return self

    def _cluster(self, leaves, checked):
        """Agglomerative clusters of the samples of ``leaves`` at distance
        1 - similarity: scikit-learn's ``AgglomerativeClustering`` of those
        distances, the same clusters numbered the same way, found in the engine
        without the n x n matrices."""
        return agglomerative_clusters(
            leaves, checked["n_clusters"], checked["linkage"], checked["n_jobs"]
        ).astype(np.intp)

    def fit_predict(self, X, y=None):
        """Fit the forest on X and return the cluster of each sample.

        The clusters are scikit-learn's ``AgglomerativeClustering`` of X with
        ``n_clusters`` clusters and ``linkage``, at the precomputed distance
        ``1 - similarity_matrix(X)``: the share of trees in which two samples do
        not share a leaf.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster index of each sample.
        """
        return self.fit(X).labels_

    def _n_trees(self):
        return self._forest.n_estimators

    def apply(self, X):
        """Leaf index reached in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_estimators)
            int64 node id of the leaf each sample reaches in each tree.
        """
        return self._leaves(X)

    def _leaves(self, X, n_threads=None):
        check_is_fitted(self)
        X = validate_X_scoring(self, X)
        if X.dtype.kind == "f" and not np.isfinite(X).all():
            raise ValueError(
                "X holds NaN or infinity; unsupervised forests learn no side for "
                "missing values, so impute them first."
            )
        return self._score(
            X,
            lambda x, n, out: self._forest.apply(x, n, out),
            self._n_trees(),
            np.int64,
            n_threads,
        )

    def similarity_matrix(self, X):
        """The share of trees in which each pair of samples share a leaf.

        As treeple's ``compute_similarity_matrix``: symmetric, 1 on the diagonal,
        in [0, 1]. It takes ``8 * n_samples**2`` bytes; for many samples, take
        the sparse :meth:`transform` ``E`` instead: ``E @ E.T`` is this matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        similarity : ndarray of shape (n_samples, n_samples)
            float64 shares.
        """
        leaves = self._leaves(X)
        return similarity_matrix(leaves, resolve_n_threads(self.n_jobs))

    def transform(self, X):
        """The one-hot leaf embedding of X, scaled so that it reproduces the
        similarity.

        Each tree contributes one column per node; a sample has
        ``1 / sqrt(n_estimators)`` in the column of the leaf it reaches in each
        tree, so that for two embeddings ``E1 = transform(X1)`` and
        ``E2 = transform(X2)``, ``E1 @ E2.T`` is the share of trees in which
        their samples share a leaf (``similarity_matrix`` when X1 is X2), kept
        sparse.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        embedding : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            ``n_nodes`` is the total number of nodes of the trees.
        """
        leaves = self._leaves(X)
        n_nodes = np.asarray(self._forest.tree_stats()["n_nodes"], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(n_nodes)[:-1]])
        n, n_trees = leaves.shape
        columns = (leaves + offsets).ravel()
        rows = np.repeat(np.arange(n), n_trees)
        values = np.full(n * n_trees, 1.0 / np.sqrt(n_trees))
        return sp.csr_matrix((values, (rows, columns)), shape=(n, int(n_nodes.sum())))

    @staticmethod
    def _engine_shape(forest):
        return {}

    @staticmethod
    def _state_shape(state):
        return {}
