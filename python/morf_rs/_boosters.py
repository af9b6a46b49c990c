"""The public gradient-boosting estimators: an atom family times a task.

The atom families are the forests' (:mod:`morf_rs._atoms`), so a family's
parameters mean the same in a forest and in a booster.
"""

from __future__ import annotations

from morf_rs._atoms import AxisAtoms, ObliqueAtoms, PatchAtoms
from morf_rs._boosting import BoostingClassifier, BoostingRegressor

__all__ = [
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "ManifoldObliqueGradientBoostingClassifier",
    "ManifoldObliqueGradientBoostingRegressor",
    "SparseObliqueGradientBoostingClassifier",
    "SparseObliqueGradientBoostingRegressor",
]


class ManifoldObliqueGradientBoostingClassifier(PatchAtoms, BoostingClassifier):
    """Gradient-boosted trees whose splits are patches of an image or signal.

    Each round draws ``max_features`` atoms from the patch dictionary of each
    row reshaped to ``image_shape`` (as :class:`ManifoldObliqueForestClassifier`
    does at every node), bins every sample's projection on them once, and grows
    one tree per class (one for two classes) best first on the gradients and
    hessians of the log loss, as LightGBM and scikit-learn's
    ``HistGradientBoostingClassifier`` do over single features.

    Examples
    --------
    >>> from morf_rs import ManifoldObliqueGradientBoostingClassifier
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(400, random_state=0)
    >>> clf = ManifoldObliqueGradientBoostingClassifier(
    ...     n_estimators=30, image_shape=(28, 28), patch_max=(2, 9), random_state=0
    ... ).fit(X, y)
    >>> X_test, y_test = make_bars(500, random_state=1)
    >>> clf.score(X_test, y_test) > 0.9
    True
    >>> accuracy_by_round = [(p.argmax(1) == y_test).mean()
    ...                      for p in clf.staged_predict_proba(X_test)]
    >>> len(accuracy_by_round) == clf.n_iter_
    True
    """


class ManifoldObliqueGradientBoostingRegressor(PatchAtoms, BoostingRegressor):
    """Gradient-boosted regression trees whose splits are patches of an image or
    signal (squared error).

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import ManifoldObliqueGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 30))
    >>> y = X[:, 10:15].sum(axis=1)  # the sum of a window of the signal
    >>> reg = ManifoldObliqueGradientBoostingRegressor(
    ...     n_estimators=100, patch_max=8, random_state=0
    ... ).fit(X[:500], y[:500])
    >>> reg.score(X[500:], y[500:]) > 0.8
    True
    """


class SparseObliqueGradientBoostingClassifier(ObliqueAtoms, BoostingClassifier):
    """Gradient-boosted trees whose splits are sparse ±1 combinations of features
    (SPORF's atoms), drawn afresh each round.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import SparseObliqueGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 4))
    >>> y = (X[:, 0] > X[:, 1]).astype(int)  # one oblique boundary
    >>> clf = SparseObliqueGradientBoostingClassifier(
    ...     n_estimators=50, feature_combinations=2.0, max_features=20, random_state=0
    ... ).fit(X[:500], y[:500])
    >>> clf.score(X[500:], y[500:]) > 0.9
    True
    """


class SparseObliqueGradientBoostingRegressor(ObliqueAtoms, BoostingRegressor):
    """Gradient-boosted regression trees whose splits are sparse ±1 combinations
    of features (squared error).

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import SparseObliqueGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 4))
    >>> y = X[:, 0] - X[:, 1]
    >>> reg = SparseObliqueGradientBoostingRegressor(
    ...     n_estimators=100, max_features=20, random_state=0
    ... ).fit(X[:500], y[:500])
    >>> reg.score(X[500:], y[500:]) > 0.9
    True
    """


class GradientBoostingClassifier(AxisAtoms, BoostingClassifier):
    """Gradient-boosted trees on single features, as scikit-learn's
    ``HistGradientBoostingClassifier`` (without missing values or categorical
    features).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from morf_rs import GradientBoostingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """


class GradientBoostingRegressor(AxisAtoms, BoostingRegressor):
    """Gradient-boosted regression trees on single features (squared error), as
    scikit-learn's ``HistGradientBoostingRegressor``.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from morf_rs import GradientBoostingRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = GradientBoostingRegressor(n_estimators=50, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """
