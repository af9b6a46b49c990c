"""Hypothesis tests with forests: does a set of features carry information about y?

:func:`coleman_test` is the MIGHT / CoMIGHT test of treeple's
``build_coleman_forest``: a forest grown on X beside one grown on X whose
``covariate_index`` columns were permuted, compared by a metric of their
out-of-bag posteriors; its null distribution shuffles the two forests' pooled
trees into two halves ``n_repeats`` times, in Rust and without growing any tree
again. :func:`permutation_test` is the plain permutation test, which grows a
forest per repeat. :func:`oob_posteriors` gives each tree's out-of-bag
posteriors. Every forest classifier and regressor of morf_rs works, whatever its
atoms: the tested columns may be a patch of an image.

The metrics are treeple's: ``"s@98"`` (the largest true-positive rate at a
false-positive rate of at most 0.02), ``"auc"`` (both for two classes, scoring
the probability of the second class), ``"mi"`` (entropy of the classes minus
the mean entropy of the posteriors, in nats), ``"cond_entropy"`` (the mean
entropy of the posteriors), ``"balanced_accuracy"`` (of the most probable
classes) for classifiers; ``"mse"`` and ``"mae"`` for regressors.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

from morf_rs import _core
from morf_rs._base import BaseObliqueForest
from morf_rs._classifier import ForestClassifier

__all__ = [
    "METRICS",
    "HypothesisTestResult",
    "coleman_test",
    "oob_posteriors",
    "permutation_test",
]

#: The metrics the tests accept, classification's first.
METRICS = ("s@98", "auc", "mi", "cond_entropy", "balanced_accuracy", "mse", "mae")
_CLASS_METRICS = METRICS[:5]
_BINARY_METRICS = ("s@98", "auc")
_LOWER_IS_BETTER = ("cond_entropy", "mse", "mae")
_MAX_SEED = np.iinfo(np.int32).max


@dataclass(frozen=True)
class HypothesisTestResult:
    """The outcome of a test.

    Attributes
    ----------
    statistic : float
        The observed statistic (see the test's documentation).
    pvalue : float
        ``(1 + k) / (1 + n_repeats)``, ``k`` the number of null values at least
        as extreme as ``statistic``.
    null_distribution : ndarray of shape (n_repeats,)
        The statistic under the null hypothesis, once per repeat.
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray


def oob_posteriors(estimator, X, y):
    """Each tree's out-of-bag posteriors of a clone of ``estimator`` fitted on (X, y).

    Parameters
    ----------
    estimator : morf_rs forest classifier or regressor
        Left unfitted: a clone is fitted, with the estimator's own random_state.
        Needs out-of-bag samples: ``bootstrap=True`` (or ``max_samples`` below
        the number of samples).
    X : array-like of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets.

    Returns
    -------
    posteriors : ndarray of shape (n_estimators, n_samples, n_outputs)
        Per tree and sample, the tree's class distribution (classifiers, one
        column per class of ``classes_``) or predicted values (regressors) for
        the sample, NaN where the tree learnt from the sample (its bootstrap
        draws and, for honest trees, its estimation rows) or where the sample
        reached a leaf that no estimation row filled. Their mean over the
        trees, NaN left out, is the fitted forest's ``oob_decision_function_``.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs.stats import oob_posteriors
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 4))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> posteriors = oob_posteriors(
    ...     RandomForestClassifier(n_estimators=10, random_state=0), X, y
    ... )
    >>> posteriors.shape
    (10, 100, 2)
    >>> bool(np.isnan(posteriors).any())
    True
    """
    _check_estimator(estimator)
    model = clone(estimator)
    X, y = model._validate_training_data(X, y)
    model.fit(X, y)
    return _core.oob_tree_posteriors(
        model._forest, X, model._engine_params_, 0, _n_threads(model, X)
    )


def coleman_test(
    estimator,
    X,
    y,
    covariate_index,
    metric="s@98",
    n_repeats=10_000,
    permute_per_tree=False,
    random_state=None,
):
    """Test whether the columns ``covariate_index`` of X carry information about y
    beyond the other columns (the Coleman, MIGHT / CoMIGHT, test).

    Two clones of ``estimator`` are fitted: one on X, one on X whose tested
    columns were permuted (the same shuffle of the rows for all of them). Each
    forest's posterior for a sample is the mean of its trees' out-of-bag
    posteriors (:func:`oob_posteriors`; samples no tree left out are left out),
    and the statistic is how much better the first scores than the second by
    ``metric``: its value for the first minus that for the second (the reverse
    for ``cond_entropy``, ``mse`` and ``mae``, where lower is better). The null
    distribution pools the two forests' trees and splits them into two halves at
    random ``n_repeats`` times, each giving the same difference between the
    halves; no tree is grown again, so thousands of repeats take seconds.

    Parameters
    ----------
    estimator : morf_rs forest classifier or regressor
        The forest to grow (cloned; its random_state is replaced by seeds drawn
        from ``random_state``). Honest forests (``honest_fraction=0.5``) are
        the MIGHT setting. Needs out-of-bag samples: ``bootstrap=True`` (or
        ``max_samples`` below the number of samples).
    X : array-like of shape (n_samples, n_features)
        Samples.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets: two classes for ``"s@98"`` and ``"auc"``.
    covariate_index : array-like of int or of bool
        The tested columns of X: their indices, or a mask of ``n_features``
        booleans. For images stored as rows, the pixels of a region, e.g.
        ``np.ravel_multi_index(np.mgrid[0:4, 0:4].reshape(2, -1), (28, 28))``.
    metric : {"s@98", "auc", "mi", "cond_entropy", "balanced_accuracy", "mse", \
"mae"}, default="s@98"
        The score of the posteriors: the last two for regressors, the others
        for classifiers.
    n_repeats : int, default=10_000
        Number of shuffles of the pooled trees.
    permute_per_tree : bool, default=False
        Permute the tested columns anew for each tree of the second forest
        (each tree then scores its out-of-bag samples on its own permutation).
        Grows that forest one tree at a time, which is slower.
    random_state : int, RandomState instance or None, default=None
        Seeds the two forests, the permutations and the shuffles. The null
        distribution is the same for any ``n_jobs``.

    Returns
    -------
    result : HypothesisTestResult
        ``statistic``, ``pvalue`` ``(1 + #(null >= statistic)) / (1 +
        n_repeats)`` and ``null_distribution``.

    Notes
    -----
    treeple splits the pooled trees into a quarter and three quarters of them;
    here both halves hold as many trees as each forest, as the observed
    statistic compares two forests of that size.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs.stats import coleman_test
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 6))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=50, max_features=0.5)
    >>> signal = coleman_test(forest, X, y, [0], n_repeats=500, random_state=0)
    >>> bool(signal.pvalue < 0.05)
    True
    >>> noise = coleman_test(forest, X, y, [5], n_repeats=500, random_state=0)
    >>> bool(noise.pvalue > 0.05)
    True
    """
    _check_estimator(estimator)
    model = clone(estimator)
    X, y = model._validate_training_data(X, y)
    covariates = _covariates(covariate_index, X.shape[1])
    _check_metric(model, metric, y)
    n_repeats = _check_repeats(n_repeats)
    if not isinstance(permute_per_tree, (bool, np.bool_)):
        raise TypeError(
            f"permute_per_tree must be True or False, got {permute_per_tree!r}"
        )
    rng = check_random_state(random_state)
    seed_original, seed_permuted = (int(s) for s in rng.randint(_MAX_SEED, size=2))
    truth, original = _fitted_posteriors(model, X, y, seed_original)
    if permute_per_tree:
        permuted = _per_tree_permuted_posteriors(model, X, y, covariates, rng)
    else:
        X_permuted = _permute(X, covariates, rng)
        _, permuted = _fitted_posteriors(model, X_permuted, y, seed_permuted)
    null_seed = int(rng.randint(_MAX_SEED))
    statistic, pvalue, null = _core.coleman_test(
        truth, original, permuted, metric, n_repeats, null_seed, _n_threads(model, X)
    )
    return HypothesisTestResult(statistic, pvalue, null)


def permutation_test(
    estimator,
    X,
    y,
    covariate_index,
    metric="s@98",
    n_repeats=100,
    random_state=None,
):
    """Test whether the columns ``covariate_index`` of X carry information about y
    by permuting them and growing a forest anew for each permutation.

    The statistic is ``metric`` of the out-of-bag posteriors (the mean over the
    trees that left a sample out; samples no tree left out are left out) of a
    clone of ``estimator`` fitted on X. Each repeat permutes the rows of the
    tested columns (all together), fits the same forest (same seed) on the
    result and scores it the same way. This grows ``n_repeats + 1`` forests:
    keep ``n_repeats`` small, or use :func:`coleman_test`, which grows two.

    Parameters
    ----------
    estimator : morf_rs forest classifier or regressor
        The forest to grow (cloned; its random_state is replaced by a seed drawn
        from ``random_state``). Needs out-of-bag samples: ``bootstrap=True``
        (or ``max_samples`` below the number of samples).
    X : array-like of shape (n_samples, n_features)
        Samples.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets: two classes for ``"s@98"`` and ``"auc"``.
    covariate_index : array-like of int or of bool
        The tested columns of X: their indices, or a mask of ``n_features``
        booleans.
    metric : {"s@98", "auc", "mi", "cond_entropy", "balanced_accuracy", "mse", \
"mae"}, default="s@98"
        The score of the posteriors: the last two for regressors, the others
        for classifiers.
    n_repeats : int, default=100
        Number of permutations, each a forest fit.
    random_state : int, RandomState instance or None, default=None
        Seeds the forest and the permutations.

    Returns
    -------
    result : HypothesisTestResult
        ``statistic`` (the metric on X), ``pvalue`` ``(1 + #(null >=
        statistic)) / (1 + n_repeats)`` (``null <= statistic`` for
        ``cond_entropy``, ``mse`` and ``mae``, where lower is better) and
        ``null_distribution`` (the metric of each permuted fit).

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import RandomForestRegressor
    >>> from morf_rs.stats import permutation_test
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(150, 4))
    >>> y = X[:, 0] + 0.3 * rng.normal(size=150)
    >>> forest = RandomForestRegressor(n_estimators=20)
    >>> result = permutation_test(
    ...     forest, X, y, [0], metric="mse", n_repeats=9, random_state=0
    ... )
    >>> result.pvalue
    0.1
    """
    _check_estimator(estimator)
    model = clone(estimator)
    X, y = model._validate_training_data(X, y)
    covariates = _covariates(covariate_index, X.shape[1])
    _check_metric(model, metric, y)
    n_repeats = _check_repeats(n_repeats)
    rng = check_random_state(random_state)
    seed = int(rng.randint(_MAX_SEED))
    statistic = _oob_metric(model, X, y, seed, metric)
    null = np.array(
        [
            _oob_metric(model, _permute(X, covariates, rng), y, seed, metric)
            for _ in range(n_repeats)
        ]
    )
    if metric in _LOWER_IS_BETTER:
        as_extreme = np.count_nonzero(null <= statistic)
    else:
        as_extreme = np.count_nonzero(null >= statistic)
    pvalue = (1 + int(as_extreme)) / (1 + n_repeats)
    return HypothesisTestResult(float(statistic), pvalue, null)


def _check_estimator(estimator):
    if not isinstance(estimator, BaseObliqueForest):
        raise TypeError(
            "estimator must be a morf_rs forest classifier or regressor (such as "
            "RandomForestClassifier or ManifoldObliqueForestClassifier), got "
            f"{type(estimator).__name__}; gradient-boosted models have no "
            "out-of-bag samples."
        )
    if not estimator.bootstrap and estimator.max_samples is None:
        raise ValueError(
            "the tests score each sample by the trees that did not learn from it, "
            "but with bootstrap=False and max_samples=None every tree learns from "
            "every sample: set bootstrap=True (or max_samples below the number of "
            "samples)."
        )


def _check_metric(model, metric, y):
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    classifier = isinstance(model, ForestClassifier)
    if classifier and metric not in _CLASS_METRICS:
        raise ValueError(
            f"metric={metric!r} scores regression values; a classifier takes one of "
            f"{_CLASS_METRICS}."
        )
    if not classifier and metric in _CLASS_METRICS:
        raise ValueError(
            f"metric={metric!r} scores class probabilities; a regressor takes "
            "'mse' or 'mae'."
        )
    if metric in _BINARY_METRICS:
        n_classes = len(np.unique(y))
        if n_classes != 2:
            raise ValueError(
                f"metric={metric!r} needs two classes, y has {n_classes}; use 'mi', "
                "'cond_entropy' or 'balanced_accuracy'."
            )


def _check_repeats(n_repeats):
    if (
        not isinstance(n_repeats, numbers.Integral)
        or isinstance(n_repeats, bool)
        or n_repeats < 1
    ):
        raise ValueError(f"n_repeats must be a positive integer, got {n_repeats!r}")
    return int(n_repeats)


def _covariates(covariate_index, n_features):
    """The tested columns as sorted unique indices."""
    index = np.asarray(covariate_index)
    if index.size == 0:
        raise ValueError("covariate_index names no column; name at least one.")
    if index.dtype == bool:
        if index.shape != (n_features,):
            raise ValueError(
                f"a boolean covariate_index must have one entry per feature "
                f"({n_features}), got shape {index.shape}"
            )
        index = np.flatnonzero(index)
    elif index.ndim != 1 or not np.issubdtype(index.dtype, np.integer):
        raise TypeError(
            "covariate_index must be a 1-D sequence of column indices (int) or a "
            f"mask of {n_features} booleans, got {covariate_index!r}"
        )
    if index.min() < 0 or index.max() >= n_features:
        raise ValueError(
            f"covariate_index must hold columns in [0, {n_features}), got "
            f"{index.min()} to {index.max()}"
        )
    if len(np.unique(index)) != len(index):
        raise ValueError("covariate_index names a column twice; name each once.")
    return np.sort(index)


def _permute(X, covariates, rng):
    """X with the rows of the columns ``covariates`` shuffled together."""
    permuted = X.copy()
    permuted[:, covariates] = X[rng.permutation(len(X))][:, covariates]
    return permuted


def _n_threads(model, X):
    return model._validate_params(*X.shape)["n_jobs"]


def _fitted_posteriors(model, X, y, seed):
    """The task's targets (class indices or values) and the per-tree out-of-bag
    posteriors of ``model`` fitted on (X, y) with ``seed``."""
    model.set_params(random_state=seed, warm_start=False, oob_score=False)
    model.fit(X, y)
    truth = model._prepare_targets(y)[0]
    posteriors = _core.oob_tree_posteriors(
        model._forest, X, model._engine_params_, 0, _n_threads(model, X)
    )
    return truth, posteriors


def _per_tree_permuted_posteriors(model, X, y, covariates, rng):
    """Per-tree out-of-bag posteriors of a forest whose every tree grew, and scores
    its out-of-bag samples, on its own permutation of the columns ``covariates``:
    tree ``t`` grown alone as tree ``t`` of one forest, so with that tree's sample."""
    model.set_params(warm_start=False, oob_score=False)
    seed = int(rng.randint(_MAX_SEED))
    n_threads = _n_threads(model, X)
    posteriors = []
    for tree in range(model.n_estimators):
        X_tree = _permute(X, covariates, rng)
        model._fit(X_tree, y, None, seed=seed, trees=(tree, tree + 1))
        posteriors.append(
            _core.oob_tree_posteriors(
                model._forest, X_tree, model._engine_params_, tree, n_threads
            )
        )
    return np.concatenate(posteriors)


def _oob_metric(model, X, y, seed, metric):
    """``metric`` of the out-of-bag posteriors of ``model`` fitted on (X, y)."""
    truth, posteriors = _fitted_posteriors(model, X, y, seed)
    scored = ~np.isnan(posteriors).any(axis=2)
    votes = scored.sum(axis=0)
    rows = votes > 0
    sums = np.where(scored[:, :, None], posteriors, 0.0).sum(axis=0)
    means = np.ascontiguousarray(sums[rows] / votes[rows, None])
    return _core.score_metric(metric, truth[rows], means)
