"""Boosted models held to the forests' standard (issue 21): bytes that would load and
lie, parameters that would give non-finite models, sizes that would abort, threads
fitting one estimator at once, and what the forests' pickles and fits still owed.
"""

import pickle
import struct
import threading
import zlib

import numpy as np
import pytest
from test_robustness import run_isolated

from morf_rs import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
)


def blobs(n=120, n_features=6, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, n_features)) + y[:, None]
    return X, y


def with_leaf_values(data, leaf_values, value):
    """Saved booster bytes with every occurrence of `leaf_values` (as little-endian
    float64, how the body stores them) set to `value`, resealed with a valid CRC-32."""
    framed = bytearray(data[:-4])
    replaced = 0
    for leaf in leaf_values:
        pattern = struct.pack("<d", leaf)
        start = framed.find(pattern, 6)
        while start != -1:
            framed[start : start + 8] = struct.pack("<d", value)
            replaced += 1
            start = framed.find(pattern, start + 8)
    assert replaced >= 2
    framed = bytes(framed)
    return framed + zlib.crc32(framed).to_bytes(4, "little")


@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_leaf_values_whose_sum_overflows_are_refused_when_a_pickle_loads(n_classes):
    """Item 1: leaf values of 1.7e308 loaded and predicted inf (or NaN through
    softmax)."""
    X, y = blobs(n_classes=max(n_classes, 2))
    if n_classes == 0:
        model = GradientBoostingRegressor(n_estimators=2, early_stopping=False)
        model.fit(X, y.astype(float))
    else:
        model = GradientBoostingClassifier(n_estimators=2, early_stopping=False)
        model.fit(X, y)
    booster = model._booster
    leaves = [np.unique(booster.predict_raw_rounds(X, r, r + 1, 1)) for r in range(2)]
    leaves = {v for round_leaves in leaves for v in round_leaves if v != 0.0}
    state = model.__getstate__()
    state["_booster"] = with_leaf_values(state["_booster"], leaves, 1.7e308)
    restored = type(model).__new__(type(model))
    with pytest.raises(ValueError, match="overflows"):
        restored.__setstate__(state)


def test_a_pickled_state_loads_only_into_an_estimator_of_its_task():
    """Item 1: a classifier's state loaded into a regressor predicted numbers; the
    reverse failed later with AttributeError."""
    X, y = blobs()
    models = {
        GradientBoostingClassifier: GradientBoostingClassifier(n_estimators=3),
        GradientBoostingRegressor: GradientBoostingRegressor(n_estimators=3),
        RandomForestClassifier: RandomForestClassifier(n_estimators=3),
        RandomForestRegressor: RandomForestRegressor(n_estimators=3),
    }
    for model in models.values():
        model.fit(X, y)
    for source, model in models.items():
        state = model.__getstate__()
        for target in models:
            restored = target.__new__(target)
            if target is source:
                restored.__setstate__(state)
                np.testing.assert_array_equal(restored.predict(X), model.predict(X))
                continue
            with pytest.raises((ValueError, TypeError)) as caught:
                restored.__setstate__(state)
            assert "cannot load" in str(caught.value), (source, target)


@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_a_learning_rate_that_runs_away_is_refused_at_fit(n_classes):
    """Item 2: learning_rate=1e308 trained and predicted inf or NaN."""
    X, y = blobs(n_classes=max(n_classes, 2))
    if n_classes == 0:
        model = GradientBoostingRegressor(learning_rate=1e308, n_estimators=5)
        y = y.astype(float)
    else:
        model = GradientBoostingClassifier(learning_rate=1e308, n_estimators=5)
    with pytest.raises(ValueError, match="smaller learning_rate"):
        model.fit(X, y)
    assert not hasattr(model, "_booster")


@pytest.mark.parametrize(
    ("binary", "learning_rate", "subsample"),
    [(False, 1.0, 1.0), (False, 0.5, 0.5), (True, 1.0, 0.5)],
)
def test_leaf_values_that_run_away_are_an_error_not_a_chance_level_model(
    binary, learning_rate, subsample
):
    """A large learning rate or subsample on digits drove log-odds to 1e27 within a
    few rounds: leaves of samples the model was sure of (hessians near 0) took Newton
    steps of thousands, and the fit returned a model no better than chance."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    if binary:
        y = y % 2
    settings = dict(
        n_estimators=30,
        image_shape=(8, 8),
        max_features=50,
        learning_rate=learning_rate,
        subsample=subsample,
        early_stopping=False,
        random_state=0,
    )
    model = ManifoldObliqueGradientBoostingClassifier(**settings)
    with pytest.raises(
        ValueError, match=r"learning_rate: round \d+ ran away"
    ) as caught:
        model.fit(X, y)
    assert ("subsample=1.0" in str(caught.value)) == (subsample < 1.0)
    assert not hasattr(model, "_booster")
    # The advice works: with l2_regularization=1 the scores stay where probabilities
    # still differ and the model learns the training images.
    model.set_params(l2_regularization=1.0).fit(X, y)
    scores = model.decision_function(X)
    assert np.abs(scores).max() < 100
    assert model.score(X, y) > 0.95


def test_targets_too_wide_for_float32_gradients_are_refused():
    """Item 2: |y| >= 1e39, finite in float64, gave all-NaN predictions silently."""
    X, y = blobs()
    huge = (y - 1.0) * 1e39
    with pytest.raises(ValueError, match="divide y by a constant"):
        GradientBoostingRegressor(n_estimators=3).fit(X, huge)
    # The forest regressor learns them as they are; a booster on y scaled down too.
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, huge)
    assert np.all(np.isfinite(forest.predict(X)))
    scaled = GradientBoostingRegressor(n_estimators=3).fit(X, huge / 1e39)
    assert np.all(np.isfinite(scaled.predict(X)))


def test_a_hundred_thousand_classes_are_an_error_not_an_abort():
    """Item 3: 'memory allocation of 80000000000 bytes failed' killed the process."""
    output = run_isolated(
        """
        import resource
        limit = 4 << 30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        import numpy as np
        from morf_rs import GradientBoostingClassifier
        X = np.random.default_rng(0).random((100_000, 4), dtype=np.float32)
        y = np.arange(100_000)
        try:
            GradientBoostingClassifier(n_estimators=2).fit(X, y)
        except MemoryError as error:
            print("MemoryError", error)
        """,
        timeout=300,
    )
    assert output.startswith("MemoryError"), output
    assert "raw scores" in output, output


def test_two_threads_fitting_one_estimator_leave_one_fit_whole():
    """Item 5: attributes of one fit beside the model of the other ('expected 36
    features, got 20')."""
    wide, y_wide = blobs(n=600, n_features=36, seed=1)
    narrow, y_narrow = blobs(n=60, n_features=20, n_classes=2, seed=2)
    for model in [
        GradientBoostingClassifier(n_estimators=20, early_stopping=False),
        RandomForestClassifier(n_estimators=20),
    ]:
        for _ in range(8):
            start = threading.Barrier(2)

            def fit(X, y, model=model, start=start):
                start.wait()
                model.fit(X, y)

            threads = [
                threading.Thread(target=fit, args=(wide, y_wide)),
                threading.Thread(target=fit, args=(narrow, y_narrow)),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            X, y = (wide, y_wide) if model.n_features_in_ == 36 else (narrow, y_narrow)
            assert set(model.classes_) == set(y)
            assert model.predict(X).shape == (len(X),)


def test_absurd_feature_combinations_are_refused():
    """Item 8: the Poisson draw saturates near 745 and atoms of that many features
    took time quadratic in their size."""
    X, y = blobs()
    with pytest.raises(
        ValueError, match=r"feature_combinations.*\[1(\.0)?, 700(\.0)?\]"
    ):
        SparseObliqueForestClassifier(feature_combinations=1e6).fit(X, y)
    SparseObliqueForestClassifier(n_estimators=2, feature_combinations=700).fit(X, y)


def test_projections_that_overflow_never_give_a_threshold_that_cannot_load():
    """Item 8: a non-finite threshold (X written during the fit, or patch sums that
    overflow float32) made a forest that fitted but could not be loaded."""
    rng = np.random.default_rng(3)
    X = rng.random((200, 16), dtype=np.float32)
    y = np.arange(200) % 2
    X[y == 0, :8] = -3e38  # finite, but patches of them sum to -inf
    for seed in range(3):
        for model_class in [
            ManifoldObliqueForestClassifier,
            ManifoldObliqueGradientBoostingClassifier,
        ]:
            model = model_class(
                n_estimators=5, patch_min=2, patch_max=4, random_state=seed
            ).fit(X, y)
            restored = pickle.loads(pickle.dumps(model))
            np.testing.assert_array_equal(
                restored.predict_proba(X), model.predict_proba(X)
            )


def test_pickles_keep_no_row_indices_when_no_row_was_dropped():
    """Item 8: every training row index went into each pickle."""
    X, y = blobs(n=2000)
    forest = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    state = forest.__getstate__()
    assert np.ndim(state["_fit_rows_"]) == 0
    samples = forest.estimators_samples_
    assert all(s.min() >= 0 and s.max() < 2000 for s in samples)
    # A pickle of an older version holds the indices themselves, and still works.
    state["_fit_rows_"] = np.arange(2000)
    old = RandomForestClassifier.__new__(RandomForestClassifier)
    old.__setstate__(state)
    for new_rows, old_rows in zip(samples, old.estimators_samples_):
        np.testing.assert_array_equal(new_rows, old_rows)
    weights = np.ones(2000)
    weights[::2] = 0
    dropped = RandomForestClassifier(n_estimators=2, random_state=0)
    dropped.fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(dropped._fit_rows_, np.arange(1, 2000, 2))
