"""What every forest estimator shares, whatever its task and atom family.

A concrete class combines an atom family (:mod:`morf_rs._atoms`) with a task
base (classification or regression); :class:`BaseObliqueForest` builds its
``__init__`` and its parameter docs from the parameter groups of both
(:mod:`morf_rs._params`). Inputs are normalised here, once, so the engine can
stay strict: X reaches it as a float32, float64 or uint8 array (no copy when it
already is one: C-contiguous for fit, any layout for scoring), targets as class
indices or float64 values, weights as float64.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from morf_rs._core import MAX_ESTIMATORS, Forest
from morf_rs._inspect import InspectTrees
from morf_rs._oob import out_of_bag
from morf_rs._params import (
    FOREST_PARAMS,
    MAX_FEATURES_OBLIQUE,
    N_ESTIMATORS,
    RUN_PARAMS,
    TREE_PARAMS,
    complete_estimator_class,
)
from morf_rs._persist import PersistThroughBytes
from morf_rs._progress import fit_progress
from morf_rs._swap import fit_and_swap
from morf_rs._validation import (
    check_bool,
    check_int,
    check_real,
    check_verbose,
    is_int,
    resolve_fraction_or_count,
    resolve_n_threads,
    resolve_sample_weight,
    score_blocks,
)

__all__ = ["BaseObliqueForest"]

# Tree seeds come from random_state the way scikit-learn draws them.
_MAX_SEED = np.iinfo(np.int32).max


_SHARED_ATTRIBUTES_DOC = """    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Normalised split-atom counts (see the property's documentation).
    impurity_importances_ : ndarray of shape (n_features_in_,)
        Impurity-weighted importances.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.
"""


class BaseObliqueForest(InspectTrees, PersistThroughBytes, BaseEstimator):
    """Shared fit/apply machinery of every forest; not meant to be used directly.

    Subclasses choose an atom family (``_atoms``, ``_atom_parameters``,
    ``_atom_params``) and a task (``_task_parameters``, ``_prepare_targets``,
    ``_fit_engine``).
    """

    _model_attribute = "_forest"
    _model_type = Forest
    _model_noun = "forest"
    # Defaults for the atom family and the task, which subclasses replace.
    _atoms = "axis"
    _max_features_above_n = True
    _atom_parameters = ()
    _max_features_param = MAX_FEATURES_OBLIQUE
    _atom_attributes_doc = ""
    _max_features_default = "sqrt"
    _criterion_param = None
    _task_parameters = ()
    _task_attributes_doc = ""
    _oob_attributes = ()

    @classmethod
    def _parameters(cls):
        """Every constructor parameter, in signature order."""
        return (
            N_ESTIMATORS,
            *cls._atom_parameters,
            cls._max_features_param.with_default(cls._max_features_default),
            *((cls._criterion_param,) if cls._criterion_param else ()),
            *TREE_PARAMS,
            *FOREST_PARAMS,
            *cls._task_parameters,
            *RUN_PARAMS,
        )

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        complete_estimator_class(cls, _SHARED_ATTRIBUTES_DOC)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    def _atom_params(self, n_features):
        """Engine parameters specific to the atom dictionary, validated."""
        return {}

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
        return fit_and_swap(self, type(self)._fit, X, y, sample_weight)

    def _fit(self, X, y, sample_weight, *, seed=None, trees=None, **fixed_targets):
        """Fit as :meth:`fit` does. Distributed fits (:mod:`morf_rs.dask`) grow one
        share of a forest on each worker through it: ``seed`` is the engine seed
        the driver drew once (:meth:`_draw_seed`), ``trees`` the range ``(start,
        stop)`` of trees to grow, and ``fixed_targets`` what the task fixes for
        the whole training set (a classifier's ``classes``)."""
        warm = trees is None and check_bool("warm_start", self.warm_start)
        previous = self._warm_start_forest() if warm else None
        if previous is not None:
            # The same forest, more trees: its seed, classes and features.
            seed = self._engine_params_["random_state"]
            fixed_targets = self._warm_start_targets()
            n_features = self.n_features_in_
        X, y = self._validate_training_data(X, y)
        n_threads = resolve_n_threads(self.n_jobs)
        oob_score = self._check_oob_score()
        params = self._engine_params(*X.shape, seed=seed)
        grow = trees
        if previous is not None:
            grow = self._trees_to_add(previous, params["n_estimators"], n_features)
        targets, fitted_attributes = self._prepare_targets(y, **fixed_targets)
        sample_weight = resolve_sample_weight(
            sample_weight, X, y, self._task_sample_weight
        )
        X_fit, targets_fit, rows = X, targets, None
        if sample_weight is not None and not np.all(sample_weight > 0):
            # Dropping zero-weight samples makes weight 0 exactly equivalent to
            # leaving the sample out (bootstrap draws included).
            rows = np.flatnonzero(sample_weight > 0)
            X_fit, targets_fit = X[rows], targets[rows]
            sample_weight = sample_weight[rows]
        if grow is None or grow[0] < grow[1]:
            verbose = check_verbose(self.verbose)
            n_trees = params["n_estimators"] if grow is None else grow[1] - grow[0]
            label = type(self).__name__
            with fit_progress(verbose, label, n_trees, n_threads) as progress:
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
        if oob_score and trees is None:
            oob = out_of_bag(self, X, X_fit, rows, n_threads)
            self._set_oob_attributes(oob, targets, oob_score)
        return self

    def _warm_start_forest(self):
        """The fitted forest that warm_start adds trees to, if any."""
        if not hasattr(self, "_forest"):
            return None
        if not hasattr(self, "_engine_params_"):
            raise ValueError(
                "this forest was fitted by an older version of morf_rs and cannot "
                "take more trees; fit it with warm_start=False."
            )
        return self._forest

    def _warm_start_targets(self):
        """What the fitted forest fixes of the targets (a classifier's classes)."""
        return {}

    def _trees_to_add(self, previous, n_estimators, n_features):
        """The range of trees warm_start grows on top of ``previous``."""
        if self.n_features_in_ != n_features:
            raise ValueError(
                f"warm_start adds trees to a forest of {n_features} features, but X "
                f"has {self.n_features_in_}; fit with warm_start=False for new data."
            )
        n_fitted = previous.n_estimators
        if n_estimators < n_fitted:
            raise ValueError(
                f"n_estimators={n_estimators} must be at least the {n_fitted} trees "
                "already fitted when warm_start=True; set warm_start=False to fit "
                "a new forest."
            )
        if n_estimators == n_fitted:
            warnings.warn(
                "Warm-start fitting without increasing n_estimators does not fit "
                "new trees.",
                UserWarning,
                stacklevel=4,
            )
        return (n_fitted, n_estimators)

    def _check_oob_score(self):
        value = self.oob_score
        if not (callable(value) or isinstance(value, (bool, np.bool_))):
            raise TypeError(
                f"oob_score must be True, False or a callable, got {value!r}."
            )
        if value is not False and not self.bootstrap:
            raise ValueError(
                "Out of bag estimation only available if bootstrap=True: without "
                "bootstrap every tree sees every sample."
            )
        return value if callable(value) else bool(value)

    def _engine_params(self, n_samples, n_features, seed=None):
        params = {
            "n_estimators": check_int(
                "n_estimators", self.n_estimators, 1, MAX_ESTIMATORS
            ),
            "atoms": self._atoms,
            "max_features": self._check_max_features(n_features),
            "max_depth": None
            if self.max_depth is None
            else check_int("max_depth", self.max_depth, 1),
            "min_samples_split": resolve_fraction_or_count(
                "min_samples_split", self.min_samples_split, n_samples, 2, False
            ),
            "min_samples_leaf": resolve_fraction_or_count(
                "min_samples_leaf", self.min_samples_leaf, n_samples, 1, True
            ),
            "min_weight_fraction_leaf": check_real(
                "min_weight_fraction_leaf", self.min_weight_fraction_leaf, 0.0, 0.5
            ),
            "min_impurity_decrease": check_real(
                "min_impurity_decrease", self.min_impurity_decrease, 0.0
            ),
            "max_leaf_nodes": None
            if self.max_leaf_nodes is None
            else check_int("max_leaf_nodes", self.max_leaf_nodes, 2),
            "ccp_alpha": check_real("ccp_alpha", self.ccp_alpha, 0.0),
            "bootstrap": check_bool("bootstrap", self.bootstrap),
            "max_samples": self._check_max_samples(n_samples),
            "honest_fraction": check_real(
                "honest_fraction", self.honest_fraction, 0.0, 1.0, high_open=True
            ),
        }
        params.update(self._task_params())
        params.update(self._atom_params(n_features))
        # Drawn last so that a bad parameter does not consume a RandomState.
        params["random_state"] = self._draw_seed() if seed is None else seed
        return params

    def _draw_seed(self):
        """The engine's seed, drawn from random_state as scikit-learn draws the
        seeds of its trees."""
        return int(check_random_state(self.random_state).randint(_MAX_SEED))

    def _check_max_features(self, n_features):
        value = self.max_features
        if value is None or value in ("sqrt", "log2"):
            return value
        if isinstance(value, str):
            raise ValueError(
                "max_features must be 'sqrt', 'log2', None, an int count or a float "
                f"fraction of n_features; got {value!r}."
            )
        limit = None if self._max_features_above_n else n_features
        if is_int(value):
            return check_int("max_features", value, 1, limit)
        high = math.inf if self._max_features_above_n else 1.0
        return check_real("max_features", value, 0.0, high, low_open=True)

    def _check_max_samples(self, n_samples):
        value = self.max_samples
        if value is None:
            return None
        if is_int(value):
            return check_int("max_samples", value, 1, n_samples)
        return check_real("max_samples", value, 0.0, 1.0, low_open=True)

    def _task_sample_weight(self, sample_weight, y):
        """sample_weight with the task's own weights folded in."""
        return sample_weight

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_forest")

    def _score(self, X, kernel, width, dtype, n_threads=None):
        """Run an engine scoring ``kernel(x, n_threads, out)`` over X, which fills
        one output array of ``width`` columns (None: one value per row) in place.

        X of a dtype the engine reads (float32, float64, uint8) goes to it as it
        is, memory-mapped or not, in any layout; other dtypes go a bounded block
        of rows at a time.
        """
        if n_threads is None:
            n_threads = resolve_n_threads(self.n_jobs)
        return score_blocks(self, X, kernel, width, dtype, n_threads)

    def _apply(self, X, n_threads=None):
        check_is_fitted(self)
        return self._score(
            X,
            lambda x, n, out: self._forest.apply(x, n, out),
            self._forest.n_estimators,
            np.int64,
            n_threads,
        )

    def apply(self, X):
        """Leaf index reached in every tree: int64 array (n_samples, n_estimators)."""
        return self._apply(X)

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
