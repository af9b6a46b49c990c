"""Random shapes, dtypes, labels, weights and parameters: fit and predict either work
or raise ValueError/TypeError, never anything else (issue 14)."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from morf_rs import (
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
)

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8, np.bool_]

# Odd values among ordinary ones: what a parameter must either accept or refuse.
ODD = st.sampled_from([0, -1, 2**64, 1.5, float("nan"), float("inf"), "3", None, True])


def mostly(strategy, odd):
    """``strategy`` eleven times in twelve, else ``odd``: many fits get far enough
    to predict, and every parameter still meets bad values."""
    return st.integers(0, 11).flatmap(lambda k: odd if k == 11 else strategy)


def small_or_odd(strategy):
    return mostly(strategy, ODD)


@st.composite
def data(draw):
    n = draw(st.integers(1, 24))
    p = draw(st.integers(1, 9))
    dtype = draw(st.sampled_from(DTYPES))
    if np.issubdtype(dtype, np.floating):
        width = np.dtype(dtype).itemsize * 8
        elements = mostly(
            st.floats(-1e4, 1e4, width=width),
            st.floats(width=width),  # NaN, infinity, huge values
        )
    else:
        elements = None
    X = draw(hnp.arrays(dtype, (n, p), elements=elements))
    labels = draw(
        st.sampled_from(
            [
                st.integers(-3, 3),
                st.sampled_from(["a", "b", "c"]),
                st.sampled_from([1.0, 2.0, -2.0]),
                st.booleans(),
            ]
        )
    )
    y = np.array(draw(st.lists(labels, min_size=n, max_size=n)))
    weights = draw(
        st.one_of(
            st.none(),
            hnp.arrays(
                np.float64,
                n,
                elements=mostly(
                    st.floats(0, 1e308),
                    st.sampled_from([0.0, -1.0, np.nan, np.inf, 1e-320]),
                ),
            ),
        )
    )
    return X, y, weights


@st.composite
def forests(draw, n_features):
    shared = {
        "n_estimators": draw(small_or_odd(st.integers(1, 4))),
        "max_depth": draw(small_or_odd(st.integers(1, 6))),
        "min_samples_split": draw(small_or_odd(st.sampled_from([2, 3, 0.3]))),
        "min_samples_leaf": draw(small_or_odd(st.sampled_from([1, 2, 0.2]))),
        "bootstrap": draw(mostly(st.booleans(), st.just(1))),
        "max_samples": draw(small_or_odd(st.sampled_from([None, 0.5, 3]))),
        "honest_fraction": draw(small_or_odd(st.sampled_from([0.0, 0.3, 0.9]))),
        "class_weight": draw(
            mostly(st.sampled_from([None, "balanced", {0: 1e308}]), st.just("x"))
        ),
        "criterion": draw(
            mostly(st.sampled_from(["gini", "entropy", "log_loss"]), st.just("mse"))
        ),
        "n_jobs": draw(st.sampled_from([None, 1, 2, -1, 10**6])),
        "random_state": draw(st.sampled_from([None, 0, 7])),
    }
    max_features = draw(
        mostly(
            st.sampled_from(["sqrt", "log2", None, 1, 3, 0.5, 2.0, 40]),
            st.sampled_from(["auto", 0, 1e9, 10**9, float("nan")]),
        )
    )
    kind = draw(st.sampled_from(["morf", "sporf", "rf"]))
    if kind == "rf":
        return RandomForestClassifier(max_features=max_features, **shared)
    if kind == "sporf":
        return SparseObliqueForestClassifier(
            max_features=max_features,
            feature_combinations=draw(small_or_odd(st.sampled_from([1.0, 2.5, 1e9]))),
            **shared,
        )
    image_shape = draw(
        mostly(
            st.sampled_from([None, (n_features,), (1, n_features)]),
            st.sampled_from([(2, 3), "x", (0,)]),
        )
    )
    return ManifoldObliqueForestClassifier(
        max_features=max_features,
        image_shape=image_shape,
        patch_min=draw(small_or_odd(st.sampled_from([1, 2]))),
        patch_max=draw(mostly(st.sampled_from([None, 1, 2, 3]), st.just(10**6))),
        wrap=draw(mostly(st.booleans(), st.sampled_from([(True, False), "no"]))),
        contiguous=draw(mostly(st.booleans(), st.just((False, True)))),
        **shared,
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_fit_and_predict_give_a_result_or_a_clean_error(drawn):
    X, y, weights = drawn.draw(data())
    clf = drawn.draw(forests(X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            clf.fit(X, y, sample_weight=weights)
        except (ValueError, TypeError) as error:
            event(f"refused: {type(error).__name__}")
            return
    event("fitted")
    # Rows of weight 0 (or of a weight negligible next to the largest) are left out
    # before X is checked, so fit may accept X with rows it cannot score.
    with np.errstate(over="ignore", invalid="ignore"):
        X = X[np.all(np.isfinite(X.astype(np.float32)), axis=1)]
    if len(X) == 0:
        return
    proba = clf.predict_proba(X.astype(np.float64))
    assert proba.shape == (len(X), len(clf.classes_))
    assert np.all(np.isfinite(proba))
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.apply(X).shape == (len(X), clf._forest.n_estimators)
    importances = clf.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert np.all(np.isfinite(importances))
    other = drawn.draw(hnp.arrays(np.float64, (2, X.shape[1] + 1)))
    with pytest.raises((ValueError, TypeError)):
        clf.predict(other)
