"""What every forest estimator shares, whatever its task and atom family.

A concrete class combines an atom family (:mod:`morf_rs._atoms`) with a task
base (classification or regression), writes out its constructor and declares its
``_parameter_constraints`` from theirs. Inputs are normalised here, once, so the
engine can stay strict: X reaches it as a float32, float64 or uint8 array (no copy
when it already is one: C-contiguous for fit, any layout for scoring), targets as
class indices or float64 values, weights as float64.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from morf_rs._constraints import (
    Bool,
    BoolOrCallable,
    Constraint,
    CountOrFraction,
    Int,
    NJobs,
    RandomState,
    Real,
    SamplesCountOrFraction,
    Verbose,
)
from morf_rs._contributions import ExplainContributions
from morf_rs._core import MAX_ESTIMATORS, Forest
from morf_rs._estimator import BaseTreeEnsemble
from morf_rs._inspect import InspectTrees
from morf_rs._oob import out_of_bag
from morf_rs._validation import is_int

__all__ = ["BaseObliqueForest"]

# The checked parameters the engine grows trees with, besides the atoms' and the
# task's (criterion, honest_prior).
_ENGINE_PARAMS = (
    "n_estimators",
    "max_features",
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "min_impurity_decrease",
    "max_leaf_nodes",
    "ccp_alpha",
    "max_bins",
    "bootstrap",
    "max_samples",
    "honest_fraction",
)


class BaseObliqueForest(ExplainContributions, InspectTrees, BaseTreeEnsemble):
    """Shared fit/apply machinery of every forest; not meant to be used directly.

    Subclasses choose an atom family (``_atoms``, ``_atom_params``) and a task
    (``_prepare_targets``, ``_fit_engine``, ``criterion`` and ``honest_prior`` in
    their ``_parameter_constraints``).
    """

    _model_attribute = "_forest"
    _model_type = Forest
    _model_noun = "forest"
    _atoms = "axis"
    _oob_attributes: ClassVar[tuple[str, ...]] = ()
    # The parameters every forest takes, whatever its atoms and task.
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_estimators": Int(1, MAX_ESTIMATORS),
        "max_depth": Int(1, none=True),
        "min_samples_split": SamplesCountOrFraction(2, high_open=False),
        "min_samples_leaf": SamplesCountOrFraction(1, high_open=True),
        "min_weight_fraction_leaf": Real(0.0, 0.5),
        "max_leaf_nodes": Int(2, none=True),
        "min_impurity_decrease": Real(0.0),
        "ccp_alpha": Real(0.0),
        "max_bins": Int(2, 65536, none=True),
        "bootstrap": Bool(),
        "oob_score": BoolOrCallable(requires="bootstrap"),
        "max_samples": CountOrFraction(count_high="n_samples", none=True),
        "honest_fraction": Real(0.0, 1.0, high_open=True),
        "n_jobs": NJobs(),
        "random_state": RandomState(),
        "verbose": Verbose(),
        "warm_start": Bool(),
    }

    def fit(self, X, y, sample_weight=None):
        """Build a forest of trees from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, one per row. float32, float64 and uint8
            C-contiguous arrays are used without a copy (images stored as bytes
            need no float copy); anything else is converted once to float32.
            NaN marks a missing value (infinity is refused): a projection that
            touches one is missing, and each split learns whether missing
            projections go left or right, as scikit-learn's trees do.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets: class labels of any type for classifiers, numbers for
            regressors.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a sample of weight 0 is treated as absent.

        Returns
        -------
        self : object
            The fitted forest.

        Notes
        -----
        Ctrl-C (KeyboardInterrupt) stops the fit within a fraction of a second.
        A fit that raises, interrupted or not, leaves the forest as it was
        before: a fitted forest keeps its previous model. Two threads fitting
        the same forest at once leave it with the complete result of one of the
        fits.
        """
        return self._fit_keeping_state_on_error(X, y, sample_weight)

    def _fit(self, X, y, sample_weight, *, seed=None, trees=None, **fixed_targets):
        """Fit as :meth:`fit` does. Distributed fits (:mod:`morf_rs.dask`) grow one
        share of a forest on each worker through it: ``seed`` is the engine seed
        the driver drew once (:meth:`_draw_seed`), ``trees`` the range ``(start,
        stop)`` of trees to grow, and ``fixed_targets`` what the task fixes for
        the whole training set (a classifier's ``classes``)."""
        # The features a warm start adds trees for (validating X resets them).
        n_features = getattr(self, "n_features_in_", None)
        X, y = self._validate_training_data(X, y)
        checked = self._validate_params(*X.shape)
        warm = trees is None and checked["warm_start"]
        previous = self._warm_start_forest() if warm else None
        if previous is not None:
            # The same forest, more trees: its seed, classes and features.
            seed = self._engine_params_["random_state"]
            fixed_targets = self._warm_start_targets()
        n_threads = checked["n_jobs"]
        params = self._engine_params(checked, X.shape[1], seed)
        grow = trees
        if previous is not None:
            grow = self._trees_to_add(previous, params["n_estimators"], n_features)
        targets, fitted_attributes = self._prepare_targets(y, **fixed_targets)
        sample_weight, rows = self._fit_weights(sample_weight, X, y)
        X_fit, targets_fit = (X, targets) if rows is None else (X[rows], targets[rows])
        if grow is None or grow[0] < grow[1]:
            n_trees = params["n_estimators"] if grow is None else grow[1] - grow[0]
            fit_progress = self._fit_progress(checked["verbose"], n_trees, n_threads)
            with fit_progress as progress:
                forest = self._fit_engine(
                    X_fit,
                    targets_fit,
                    sample_weight,
                    params,
                    n_threads,
                    progress,
                    fitted_attributes,
                    grow,
                )
            if previous is not None:
                forest = Forest.merge([previous, forest])
            self._forest = forest
        for name, value in fitted_attributes.items():
            setattr(self, name, value)
        # What grew the trees, for the samples each tree saw (estimators_samples_).
        self._engine_params_ = params
        # Their indices only when some were dropped: the count says "all of them".
        self._fit_rows_ = len(X) if rows is None else rows
        for name in self._oob_attributes:
            self.__dict__.pop(name, None)
        oob_score = checked["oob_score"]
        if oob_score and trees is None:
            oob = out_of_bag(self, X, X_fit, rows, n_threads)
            self._set_oob_attributes(oob, targets, oob_score)
        return self

    def _warm_start_targets(self):
        """What the fitted forest fixes of the targets (a classifier's classes)."""
        return {}

    def _engine_params(self, checked, n_features, seed=None):
        """What the engine grows the forest with, from the ``checked`` parameters;
        ``seed`` None draws one from random_state."""
        params = {name: checked[name] for name in _ENGINE_PARAMS}
        params["atoms"] = self._atoms
        params["criterion"] = checked["criterion"]
        params["honest_prior"] = checked["honest_prior"]
        params.update(self._atom_params(n_features))
        # Drawn last so that a bad parameter does not consume a RandomState.
        params["random_state"] = self._draw_seed() if seed is None else seed
        return params

    def _n_trees(self):
        return self._forest.n_estimators

    def apply(self, X):
        """Leaf index reached in every tree: int64 array (n_samples, n_estimators)."""
        return self._leaves(X)

    @property
    def estimators_samples_(self):
        """The samples each tree learnt from: a list with, per tree, the indices
        of the rows of X in its sample, a row drawn k times by the bootstrap
        appearing k times (the estimation rows of honest trees once). Rows of
        weight 0 are in no tree's sample; the rows in none of a tree's sample are
        its out-of-bag rows."""
        check_is_fitted(self)
        rows = getattr(self, "_fit_rows_", None)
        if rows is None:
            raise AttributeError(
                "estimators_samples_ is unknown for a forest grown on partitions "
                "(morf_rs.dask.fit, training_data='partitions'): each tree drew its "
                "sample from the rows its worker held."
            )
        if is_int(rows):
            rows = np.arange(rows)
        return [
            rows.repeat(Forest.tree_sample_counts(self._engine_params_, len(rows), t))
            for t in range(self._forest.n_estimators)
        ]

    @property
    def feature_importances_(self):
        """How often each feature takes part in a chosen split atom, summing to 1.

        The importance of the MORF papers (section 3.3). All zeros when no tree
        split. For images, ``feature_importances_.reshape(image_shape_)`` is the
        importance picture.
        """
        check_is_fitted(self)
        return self._forest.split_count_importances()

    @property
    def impurity_importances_(self):
        """Impurity-weighted importances, summing to 1.

        Each split's weighted impurity decrease is shared among the features of
        its atom (the analogue of scikit-learn's ``feature_importances_``).
        """
        check_is_fitted(self)
        return self._forest.impurity_importances()

    @property
    def tree_stats_(self):
        """Per-tree shape: dict of arrays with one entry per tree.

        Keys: ``"max_depth"``, ``"n_leaves"``, ``"n_nodes"``, ``"mean_leaf_depth"``.
        """
        check_is_fitted(self)
        return self._forest.tree_stats()
