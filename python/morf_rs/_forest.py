"""scikit-learn classifiers over the Rust forest engine in ``morf_rs._core``.

The three public classes differ only in the dictionary their trees draw split
directions ("atoms") from; everything else lives in :class:`BaseObliqueForest`.
Inputs are normalised here, once, so the engine can stay strict: X reaches it
as a C-contiguous float32 or float64 array (no copy when it already is one),
y as class indices, weights as float64.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from morf_rs._core import Forest
from morf_rs._validation import (
    check_bool,
    check_choice,
    check_int,
    check_real,
    is_int,
    per_axis_bools,
    per_axis_ints,
    resolve_fraction_or_count,
    resolve_n_threads,
    validate_X,
    validate_X_y,
)

__all__ = [
    "BaseObliqueForest",
    "ManifoldObliqueForestClassifier",
    "RandomForestClassifier",
    "SparseObliqueForestClassifier",
]

# Tree seeds come from random_state the way scikit-learn draws them.
_MAX_SEED = np.iinfo(np.int32).max


class BaseObliqueForest(ClassifierMixin, BaseEstimator):
    """Shared fit/predict machinery; subclasses choose the atom dictionary.

    Not meant to be used directly: see :class:`ManifoldObliqueForestClassifier`,
    :class:`SparseObliqueForestClassifier` and :class:`RandomForestClassifier`.
    """

    # Name of the engine's atom dictionary ("axis", "oblique" or "patch").
    _atoms = "axis"
    # Whether a split may use more candidate atoms than there are features.
    _max_features_above_n = True

    def __init__(
        self,
        n_estimators=100,
        *,
        max_features="sqrt",
        criterion="gini",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_impurity_decrease=0.0,
        bootstrap=True,
        max_samples=None,
        honest_fraction=0.0,
        honest_prior="empirical",
        class_weight=None,
        n_jobs=None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.honest_fraction = honest_fraction
        self.honest_prior = honest_prior
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _atom_params(self, n_features):
        """Engine parameters specific to the atom dictionary, validated."""
        return {}

    def fit(self, X, y, sample_weight=None):
        """Build a forest of trees from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, one per row. float32 and float64 C-contiguous
            arrays are used without a copy; anything else is converted once.
        y : array-like of shape (n_samples,)
            Class labels of any type (ints, strings, ...).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a sample of weight 0 is treated as absent.

        Returns
        -------
        self : object
            The fitted forest.
        """
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        n_threads = resolve_n_threads(self.n_jobs)
        params = self._engine_params(*X.shape)

        classes, y_index = np.unique(y, return_inverse=True)
        y_index = np.ascontiguousarray(y_index.reshape(-1), dtype=np.uint32)
        sample_weight = self._resolve_sample_weight(sample_weight, X, y)
        if sample_weight is not None and not np.all(sample_weight > 0):
            # Dropping zero-weight samples makes weight 0 exactly equivalent to
            # leaving the sample out (bootstrap draws included).
            keep = sample_weight > 0
            X, y_index, sample_weight = X[keep], y_index[keep], sample_weight[keep]

        self._forest = Forest.fit(
            X, y_index, len(classes), sample_weight, params, n_threads
        )
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return self

    def _engine_params(self, n_samples, n_features):
        params = {
            "n_estimators": check_int("n_estimators", self.n_estimators, 1),
            "atoms": self._atoms,
            "max_features": self._check_max_features(n_features),
            "criterion": self._check_criterion(),
            "max_depth": None
            if self.max_depth is None
            else check_int("max_depth", self.max_depth, 1),
            "min_samples_split": resolve_fraction_or_count(
                "min_samples_split", self.min_samples_split, n_samples, 2, False
            ),
            "min_samples_leaf": resolve_fraction_or_count(
                "min_samples_leaf", self.min_samples_leaf, n_samples, 1, True
            ),
            "min_impurity_decrease": check_real(
                "min_impurity_decrease", self.min_impurity_decrease, 0.0
            ),
            "bootstrap": check_bool("bootstrap", self.bootstrap),
            "max_samples": self._check_max_samples(n_samples),
            "honest_fraction": check_real(
                "honest_fraction", self.honest_fraction, 0.0, 1.0, high_open=True
            ),
            "honest_prior": check_choice(
                "honest_prior", self.honest_prior, ("ignore", "uniform", "empirical")
            ),
        }
        self._check_class_weight()
        params.update(self._atom_params(n_features))
        # Drawn last so that a bad parameter does not consume a RandomState.
        params["random_state"] = int(
            check_random_state(self.random_state).randint(_MAX_SEED)
        )
        return params

    def _check_criterion(self):
        criterion = check_choice(
            "criterion", self.criterion, ("gini", "entropy", "log_loss")
        )
        # scikit-learn treats "log_loss" and "entropy" as the same criterion.
        return "entropy" if criterion == "log_loss" else criterion

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

    def _check_class_weight(self):
        value = self.class_weight
        if (
            value is None
            or (isinstance(value, str) and value == "balanced")
            or isinstance(value, dict)
        ):
            return
        raise ValueError(
            "class_weight must be None, 'balanced' or a dict {label: weight}; got "
            f"{value!r}."
        )

    def _resolve_sample_weight(self, sample_weight, X, y):
        """Combine sample_weight and class_weight; None when all weights are 1."""
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
            if np.any(sample_weight < 0):
                raise ValueError(
                    "sample_weight must be non-negative; found "
                    f"{int(np.sum(sample_weight < 0))} negative value(s). Give "
                    "those samples weight 0 or remove them."
                )
        if self.class_weight is not None:
            class_weight = compute_sample_weight(self.class_weight, y)
            sample_weight = (
                class_weight if sample_weight is None else sample_weight * class_weight
            )
        if sample_weight is not None and not np.any(sample_weight > 0):
            raise ValueError(
                "Every sample has weight 0 (sample_weight times class_weight); give "
                "at least one sample a positive weight."
            )
        return sample_weight

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_forest")

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        return validate_X(self, X, reset=False)

    def predict_proba(self, X):
        """Class probabilities: the mean of the trees' leaf class distributions.

        Returns an array of shape (n_samples, n_classes) whose columns follow
        ``classes_``.
        """
        X = self._validate_X_predict(X)
        return self._forest.predict_proba(X, resolve_n_threads(self.n_jobs))

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (-inf where it is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the highest mean probability for each sample."""
        proba = self.predict_proba(X)
        return self.classes_.take(np.argmax(proba, axis=1))

    def apply(self, X):
        """Leaf index reached in every tree: int64 array (n_samples, n_estimators)."""
        X = self._validate_X_predict(X)
        return self._forest.apply(X, resolve_n_threads(self.n_jobs))

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

    def __getstate__(self):
        # object.__getstate__ returns the live __dict__ on Python >= 3.11.
        state = dict(super().__getstate__())
        if "_forest" in state:
            state["_forest"] = state["_forest"].to_bytes()
        return state

    def __setstate__(self, state):
        state = dict(state)
        if "_forest" in state:
            state["_forest"] = Forest.from_bytes(state["_forest"])
        super().__setstate__(state)


_SHARED_PARAMS_DOC = """
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Impurity measure of a split ("log_loss" is "entropy").
    max_depth : int, default=None
        Maximum depth of a tree; None grows until leaves are pure.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a float is a fraction of
        n_samples).
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    min_impurity_decrease : float, default=0.0
        A node is split only if the weighted impurity decreases at least this much.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample instead of the whole training set.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    honest_fraction : float in [0, 1), default=0.0
        Fraction of each tree's sample set aside to fill the leaves (honest
        trees); the rest grows the splits. 0 disables honesty.
    honest_prior : {"ignore", "uniform", "empirical"}, default="empirical"
        What a leaf that got no honest sample predicts: nothing (the tree does not
        vote), the uniform distribution, or the tree's class frequencies.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into sample_weight.
    n_jobs : int, default=None
        Threads for fit and predict: None is 1, -1 all cores, -2 all but one.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_classes_ : int
        Number of classes.
    n_features_in_ : int
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


def _document_shared_params(extra_attributes=""):
    """Append the shared parameters and attributes to a class docstring."""

    def document(cls):
        if cls.__doc__ is not None:  # docstrings are stripped under python -OO
            cls.__doc__ = cls.__doc__.rstrip() + _SHARED_PARAMS_DOC + extra_attributes
        return cls

    return document


@_document_shared_params(
    """    image_shape_ : tuple of int
        The resolved image shape.
"""
)
class ManifoldObliqueForestClassifier(BaseObliqueForest):
    """Manifold Oblique Random Forest (MORF) classifier.

    Each row of X is read as a row-major array of shape ``image_shape`` (a
    signal, an image, sensors x time, ...). Split directions are sums over random
    patches of that array, so a split can look at neighbouring cells together.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    image_shape : tuple of int, default=None
        Shape each row of X is reshaped to (row-major); its product must be
        n_features. None means one axis of length n_features.
    patch_min : int or tuple of int, default=1
        Smallest patch extent, per axis or one value for all axes.
    patch_max : int or tuple of int, default=None
        Largest patch extent, per axis or one value for all axes; None is the
        whole axis.
    wrap : bool or tuple of bool, default=False
        Whether an axis is cyclic, so that patches wrap around its end.
    contiguous : bool or tuple of bool, default=True
        Whether patches are runs of adjacent cells along an axis; False takes
        random distinct positions instead (e.g. for unordered sensors).
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidate atoms per split: a count, a fraction of n_features, sqrt or
        log2 of n_features, or n_features. May exceed n_features.
    """

    _atoms = "patch"

    def __init__(
        self,
        n_estimators=100,
        *,
        image_shape=None,
        patch_min=1,
        patch_max=None,
        wrap=False,
        contiguous=True,
        max_features="sqrt",
        criterion="gini",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_impurity_decrease=0.0,
        bootstrap=True,
        max_samples=None,
        honest_fraction=0.0,
        honest_prior="empirical",
        class_weight=None,
        n_jobs=None,
        random_state=None,
    ):
        super().__init__(
            n_estimators,
            max_features=max_features,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            max_samples=max_samples,
            honest_fraction=honest_fraction,
            honest_prior=honest_prior,
            class_weight=class_weight,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        self.image_shape = image_shape
        self.patch_min = patch_min
        self.patch_max = patch_max
        self.wrap = wrap
        self.contiguous = contiguous

    def _atom_params(self, n_features):
        shape = self._check_image_shape(n_features)
        ndim = len(shape)
        patch_min = per_axis_ints("patch_min", self.patch_min, shape)
        patch_max = (
            list(shape)
            if self.patch_max is None
            else per_axis_ints("patch_max", self.patch_max, shape)
        )
        for axis, (low, high, length) in enumerate(zip(patch_min, patch_max, shape)):
            if low > high:
                raise ValueError(
                    f"patch_min[{axis}]={low} is larger than patch_max[{axis}]={high}"
                    "; patch_min must be <= patch_max on every axis."
                )
            if high > length:
                raise ValueError(
                    f"patch_max[{axis}]={high} is larger than image_shape[{axis}]="
                    f"{length}; patches must fit inside the image."
                )
        self.image_shape_ = shape
        return {
            "image_shape": list(shape),
            "patch_min": patch_min,
            "patch_max": patch_max,
            "wrap": per_axis_bools("wrap", self.wrap, ndim),
            "contiguous": per_axis_bools("contiguous", self.contiguous, ndim),
        }

    def _check_image_shape(self, n_features):
        value = self.image_shape
        if value is None:
            return (n_features,)
        if is_int(value):
            value = (value,)
        if isinstance(value, str) or not hasattr(value, "__len__") or len(value) == 0:
            raise TypeError(
                f"image_shape must be a tuple of ints such as (28, 28), got {value!r}."
            )
        shape = tuple(
            check_int(f"image_shape[{axis}]", length, 1)
            for axis, length in enumerate(value)
        )
        if math.prod(shape) != n_features:
            raise ValueError(
                f"image_shape {shape} holds {math.prod(shape)} values but X has "
                f"{n_features} features; give an image_shape whose product is "
                "n_features (or None for one axis of length n_features)."
            )
        return shape


@_document_shared_params()
class SparseObliqueForestClassifier(BaseObliqueForest):
    """Sparse oblique random forest (SPORF) classifier.

    Split directions are sparse random combinations of features with weights +1
    or -1, on average ``feature_combinations`` features each.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    feature_combinations : float, default=1.5
        Mean number of features in an atom (at least 1).
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidate atoms per split: a count, a fraction of n_features, sqrt or
        log2 of n_features, or n_features. May exceed n_features.
    """

    _atoms = "oblique"

    def __init__(
        self,
        n_estimators=100,
        *,
        feature_combinations=1.5,
        max_features="sqrt",
        criterion="gini",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_impurity_decrease=0.0,
        bootstrap=True,
        max_samples=None,
        honest_fraction=0.0,
        honest_prior="empirical",
        class_weight=None,
        n_jobs=None,
        random_state=None,
    ):
        super().__init__(
            n_estimators,
            max_features=max_features,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            max_samples=max_samples,
            honest_fraction=honest_fraction,
            honest_prior=honest_prior,
            class_weight=class_weight,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        self.feature_combinations = feature_combinations

    def _atom_params(self, n_features):
        return {
            "feature_combinations": check_real(
                "feature_combinations", self.feature_combinations, 1.0
            )
        }


@_document_shared_params()
class RandomForestClassifier(BaseObliqueForest):
    """Axis-aligned random forest classifier (Breiman's random forest).

    Each split thresholds a single feature, as in
    :class:`sklearn.ensemble.RandomForestClassifier`.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Features tried per split: a count (<= n_features), a fraction in (0, 1]
        of n_features, sqrt or log2 of n_features, or n_features.
    """

    _atoms = "axis"
    _max_features_above_n = False
