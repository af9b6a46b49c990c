"""The public forests: an atom family (split directions) times a task.

Every class here is one line of behaviour: its atom family from
:mod:`morf_rs._atoms` and its task base. Their constructors and parameter docs
are built from the parameter groups of both (see :mod:`morf_rs._params`).
"""

from __future__ import annotations

from morf_rs._atoms import AxisAtoms, ObliqueAtoms, PatchAtoms
from morf_rs._base import BaseObliqueForest
from morf_rs._classifier import ForestClassifier
from morf_rs._regressor import ForestRegressor

__all__ = [
    "BaseObliqueForest",
    "ManifoldObliqueForestClassifier",
    "ManifoldObliqueForestRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "SparseObliqueForestClassifier",
    "SparseObliqueForestRegressor",
]


class ManifoldObliqueForestClassifier(PatchAtoms, ForestClassifier):
    """Manifold Oblique Random Forest (MORF) classifier.

    Each row of X is read as a row-major array of shape ``image_shape`` (a
    signal, an image, sensors x time, ...). Split directions are sums over random
    patches of that array, so a split can look at neighbouring cells together.

    Examples
    --------
    >>> from morf_rs import ManifoldObliqueForestClassifier
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(300, random_state=0)
    >>> clf = ManifoldObliqueForestClassifier(
    ...     n_estimators=20, image_shape=(28, 28), patch_max=(2, 9), random_state=0
    ... ).fit(X, y)
    >>> X_test, y_test = make_bars(500, random_state=1)
    >>> clf.score(X_test, y_test) > 0.9
    True
    >>> clf.feature_importances_.reshape(clf.image_shape_).shape
    (28, 28)
    """


class SparseObliqueForestClassifier(ObliqueAtoms, ForestClassifier):
    """Sparse oblique random forest (SPORF) classifier.

    Split directions are sparse random combinations of features with weights +1
    or -1, on average ``feature_combinations`` features each.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import SparseObliqueForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (X[:, 0] > X[:, 1]).astype(int)  # one oblique boundary
    >>> clf = SparseObliqueForestClassifier(
    ...     n_estimators=20, feature_combinations=2.0, random_state=0
    ... ).fit(X[:300], y[:300])
    >>> clf.score(X[300:], y[300:]) > 0.9
    True
    """


class RandomForestClassifier(AxisAtoms, ForestClassifier):
    """Axis-aligned random forest classifier (Breiman's random forest).

    Each split thresholds a single feature, as in
    :class:`sklearn.ensemble.RandomForestClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from morf_rs import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """


class ManifoldObliqueForestRegressor(PatchAtoms, ForestRegressor):
    """Manifold Oblique Random Forest (MORF) regressor.

    Each row of X is read as a row-major array of shape ``image_shape``; split
    directions are sums over random patches of that array, as in
    :class:`ManifoldObliqueForestClassifier`. Splits minimise the squared error
    and leaves predict the mean target of their samples (one or several
    outputs).

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import ManifoldObliqueForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> images = rng.normal(size=(400, 8, 8))
    >>> y = images[:, 2:5, 3:6].mean(axis=(1, 2))  # a patch's mean brightness
    >>> X = images.reshape(400, -1)
    >>> reg = ManifoldObliqueForestRegressor(
    ...     n_estimators=30, image_shape=(8, 8), patch_min=2, patch_max=4,
    ...     max_features=20, random_state=0,
    ... ).fit(X[:300], y[:300])
    >>> reg.score(X[300:], y[300:]) > 0.5
    True
    """


class SparseObliqueForestRegressor(ObliqueAtoms, ForestRegressor):
    """Sparse oblique random forest (SPORF) regressor.

    Split directions are sparse random combinations of features with weights +1
    or -1, on average ``feature_combinations`` features each. Splits minimise the
    squared error and leaves predict the mean target of their samples (one or
    several outputs).

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import SparseObliqueForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = X[:, 0] - X[:, 1]  # a function of one oblique direction
    >>> reg = SparseObliqueForestRegressor(
    ...     n_estimators=30, feature_combinations=2.0, random_state=0
    ... ).fit(X[:300], y[:300])
    >>> reg.score(X[300:], y[300:]) > 0.8
    True
    """


class RandomForestRegressor(AxisAtoms, ForestRegressor):
    """Axis-aligned random forest regressor (Breiman's random forest).

    Each split thresholds a single feature, as in
    :class:`sklearn.ensemble.RandomForestRegressor`; splits minimise the squared
    error and leaves predict the mean target of their samples (one or several
    outputs).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from morf_rs import RandomForestRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    >>> reg.score(X, y) > 0.8
    True
    """
