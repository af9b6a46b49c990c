"""The scikit-learn API of the three classifiers, beyond scikit-learn's checks."""

import pickle
import threading
import time

import joblib
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from conftest import make_blobs_data
from morf_rs import (
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    _validation,
)
from morf_rs._validation import resolve_n_threads, validate_X_y
from morf_rs.datasets import make_circle, make_impulse


def test_fitted_attributes(forest_class, data):
    X, y = data
    forest = forest_class(n_estimators=7, random_state=0).fit(X, y)
    assert forest.n_features_in_ == X.shape[1]
    assert forest.n_classes_ == 3
    np.testing.assert_array_equal(forest.classes_, [0, 1, 2])
    assert not hasattr(forest, "feature_names_in_")

    proba = forest.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(forest.predict(X), proba.argmax(axis=1))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(forest.predict_log_proba(X), np.log(proba))
    assert forest.score(X, y) > 0.9

    leaves = forest.apply(X)
    assert leaves.shape == (len(X), 7)
    assert leaves.dtype == np.int64

    for importances in (forest.feature_importances_, forest.impurity_importances_):
        assert importances.shape == (X.shape[1],)
        assert np.all(importances >= 0)
        assert importances.sum() == pytest.approx(1.0)

    stats = forest.tree_stats_
    assert set(stats) == {"max_depth", "n_leaves", "n_nodes", "mean_leaf_depth"}
    assert all(len(values) == 7 for values in stats.values())
    np.testing.assert_array_equal(stats["n_nodes"], 2 * stats["n_leaves"] - 1)
    assert np.all(stats["mean_leaf_depth"] <= stats["max_depth"])


def test_unfitted_forest_has_no_importances(forest_class):
    assert not hasattr(forest_class(), "feature_importances_")
    assert not hasattr(forest_class(), "tree_stats_")


def test_morf_importances_reshape_to_the_image():
    X, y = make_circle(200, random_state=0)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=5, image_shape=(10, 10), patch_max=(2, 3), random_state=0
    ).fit(X, y)
    assert forest.image_shape_ == (10, 10)
    assert forest.feature_importances_.reshape(forest.image_shape_).shape == (10, 10)


@pytest.mark.parametrize(
    ("image_shape", "expected"),
    [
        ((2, 50), (2, 50)),
        ([2, 50], (2, 50)),
        (np.array([2, 50]), (2, 50)),
        ((100,), (100,)),
        (100, (100,)),
        (None, (100,)),
    ],
)
def test_image_shape_spellings(image_shape, expected):
    X, y = make_circle(60, random_state=0)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=2, image_shape=image_shape, patch_max=2, random_state=0
    ).fit(X, y)
    assert forest.image_shape_ == expected


def test_string_labels(forest_class, data):
    X, y = data
    names = np.array(["cat", "dog", "emu"])[y]
    forest = forest_class(n_estimators=5, random_state=0).fit(X, list(names))
    np.testing.assert_array_equal(forest.classes_, ["cat", "dog", "emu"])
    predicted = forest.predict(X)
    assert predicted.dtype.kind == "U"
    assert np.mean(predicted == names) > 0.9


def test_one_class_trains_and_predicts_that_class(forest_class, data):
    X, _ = data
    forest = forest_class(n_estimators=3, random_state=0).fit(X, ["only"] * len(X))
    np.testing.assert_array_equal(forest.predict(X[:5]), ["only"] * 5)
    np.testing.assert_array_equal(forest.predict_proba(X[:5]), np.ones((5, 1)))


def test_input_types_give_the_same_forest(forest_class, data):
    X, y = data
    X = X.astype(np.float32)  # exactly representable in float64 too
    expected = forest_class(n_estimators=5, random_state=0).fit(X, y).predict_proba(X)
    for variant in (X.astype(np.float64), np.asfortranarray(X), X.tolist()):
        forest = forest_class(n_estimators=5, random_state=0).fit(variant, y)
        np.testing.assert_array_equal(forest.predict_proba(variant), expected)


def test_byte_images_grow_the_forest_their_float_copy_grows(forest_class):
    rng = np.random.default_rng(0)
    y = np.arange(300) % 3
    X = rng.integers(0, 200, size=(300, 36)).astype(np.uint8)
    X[:, 10:14] += (18 * y[:, None]).astype(np.uint8)
    params = {"n_estimators": 6, "random_state": 0, "honest_fraction": 0.2}
    if forest_class is ManifoldObliqueForestClassifier:
        params.update(image_shape=(6, 6), patch_max=(3, 5))
    from_bytes = forest_class(**params).fit(X, y)
    from_floats = forest_class(**params).fit(X.astype(np.float32), y)
    assert from_bytes._forest.to_bytes() == from_floats._forest.to_bytes()


def test_float_and_byte_input_in_c_order_is_not_copied_for_fit():
    forest = RandomForestClassifier()
    y = np.arange(4) % 2
    for dtype in (np.float32, np.float64, np.uint8):
        X = np.ones((4, 3), dtype=dtype)
        assert validate_X_y(forest, X, y)[0] is X
    converted = validate_X_y(forest, np.ones((4, 3), dtype=np.int64), y)[0]
    assert converted.dtype == np.float32
    assert converted.flags.c_contiguous


def test_dataframe_feature_names(forest_class, data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    forest = forest_class(n_estimators=3, random_state=0).fit(frame, y)
    np.testing.assert_array_equal(forest.feature_names_in_, frame.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        from_array = forest.predict(X)
    np.testing.assert_array_equal(forest.predict(frame), from_array)
    with pytest.raises(ValueError, match="feature names should match"):
        forest.predict(frame[frame.columns[::-1]])


@pytest.mark.parametrize("dump", ["pickle", "joblib"])
def test_pickle_round_trip_predicts_identically(forest_class, data, dump, tmp_path):
    X, y = data
    forest = forest_class(n_estimators=6, random_state=0).fit(X, y)
    if dump == "pickle":
        restored = pickle.loads(pickle.dumps(forest))
    else:
        joblib.dump(forest, tmp_path / "forest.joblib")
        restored = joblib.load(tmp_path / "forest.joblib")
    np.testing.assert_array_equal(restored.predict_proba(X), forest.predict_proba(X))
    np.testing.assert_array_equal(restored.apply(X), forest.apply(X))
    np.testing.assert_array_equal(
        restored.feature_importances_, forest.feature_importances_
    )
    assert restored.get_params() == forest.get_params()
    # The estimator itself is untouched by pickling.
    forest.predict(X)


def test_unfitted_forest_pickles(forest_class):
    forest = forest_class(n_estimators=3, max_depth=4)
    restored = pickle.loads(pickle.dumps(forest))
    assert restored.get_params() == forest.get_params()


def test_pickle_stores_the_engine_bytes_not_a_python_tree(data):
    X, y = data
    forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    state = forest.__getstate__()
    assert isinstance(state["_forest"], bytes)
    assert state["_forest"] == forest._forest.to_bytes()


def test_clone_pipeline_grid_search_cross_val(forest_class, data):
    X, y = data
    forest = forest_class(n_estimators=5, random_state=0)
    cloned = clone(forest)
    assert cloned.get_params() == forest.get_params()

    pipeline = make_pipeline(StandardScaler(), forest).fit(X, y)
    assert pipeline.score(X, y) > 0.9

    search = GridSearchCV(forest, {"max_depth": [1, None]}, cv=3).fit(X, y)
    assert search.best_params_["max_depth"] in (1, None)
    assert search.best_estimator_.n_features_in_ == X.shape[1]

    scores = cross_val_score(forest, X, y, cv=3)
    assert scores.shape == (3,)
    assert scores.mean() > 0.6


def test_same_random_state_gives_the_same_forest_for_any_n_jobs(forest_class, data):
    X, y = data
    probas = [
        forest_class(n_estimators=8, random_state=42, n_jobs=n_jobs)
        .fit(X, y)
        .predict_proba(X)
        for n_jobs in (1, 2, -1)
    ]
    np.testing.assert_array_equal(probas[0], probas[1])
    np.testing.assert_array_equal(probas[0], probas[2])
    other = forest_class(n_estimators=8, random_state=43).fit(X, y).predict_proba(X)
    assert not np.array_equal(probas[0], other)


def test_random_state_instance_is_consumed_like_scikit_learn(data):
    X, y = data
    rng = np.random.RandomState(0)
    first = RandomForestClassifier(n_estimators=3, random_state=rng).fit(X, y)
    second = RandomForestClassifier(n_estimators=3, random_state=rng).fit(X, y)
    assert not np.array_equal(first.apply(X), second.apply(X))


def test_n_jobs_means_what_it_means_in_scikit_learn(monkeypatch):
    monkeypatch.setattr(_validation, "cpu_count", lambda: 8)
    monkeypatch.setattr(_validation, "_cores_by_affinity", {})
    assert resolve_n_threads(None) == 1
    assert resolve_n_threads(3) == 3
    assert resolve_n_threads(-1) == 8
    assert resolve_n_threads(-2) == 7
    assert resolve_n_threads(-20) == 1


def test_cores_are_read_once_until_the_processors_change(monkeypatch):
    # Reading the cgroup's quota on every call cost a third of a one-row prediction.
    reads, processors = [], [{0, 1, 2}]
    monkeypatch.setattr(_validation, "cpu_count", lambda: reads.append(1) or 3)
    monkeypatch.setattr(_validation, "_cores_by_affinity", {})
    monkeypatch.setattr(
        _validation.os, "sched_getaffinity", lambda pid: processors[0], raising=False
    )
    assert [resolve_n_threads(-1) for _ in range(4)] == [3] * 4
    assert len(reads) == 1
    processors[0] = {0}
    monkeypatch.setattr(_validation, "cpu_count", lambda: reads.append(1) or 1)
    assert resolve_n_threads(-1) == 1
    assert resolve_n_threads(8) == 1
    assert len(reads) == 2


def test_n_jobs_minus_one_works(forest_class, data):
    X, y = data
    forest = forest_class(n_estimators=4, n_jobs=-1, random_state=0).fit(X, y)
    assert forest.score(X, y) > 0.9


@pytest.mark.parametrize("prior", ["ignore", "uniform", "empirical"])
def test_honest_fraction(forest_class, data, prior):
    X, y = data
    honest = forest_class(
        n_estimators=10, honest_fraction=0.5, honest_prior=prior, random_state=0
    ).fit(X, y)
    dishonest = forest_class(n_estimators=10, random_state=0).fit(X, y)
    proba = honest.predict_proba(X)
    assert np.all((proba >= 0) & (proba <= 1))
    # Half of each tree's sample fills the leaves, so the trees are smaller and the
    # leaves are no longer pure.
    assert (
        honest.tree_stats_["n_leaves"].sum() < dishonest.tree_stats_["n_leaves"].sum()
    )
    assert not np.array_equal(proba, dishonest.predict_proba(X))
    assert honest.score(X, y) > 0.8


def test_zero_sample_weight_equals_leaving_the_sample_out(forest_class, data):
    X, y = data
    weight = np.ones(len(X))
    weight[::4] = 0
    kept = weight > 0
    weighted = forest_class(n_estimators=5, random_state=0).fit(X, y, weight)
    subset = forest_class(n_estimators=5, random_state=0).fit(X[kept], y[kept])
    np.testing.assert_array_equal(weighted.predict_proba(X), subset.predict_proba(X))


def test_class_weight_reweights_the_classes(forest_class):
    X, y = make_blobs_data(n_samples=200, n_features=4, n_classes=2)
    X = X + np.random.default_rng(1).normal(scale=3.0, size=X.shape)  # overlap

    def share_of_zero(class_weight):
        forest = forest_class(
            n_estimators=10, max_depth=2, class_weight=class_weight, random_state=0
        ).fit(X, y)
        return np.mean(forest.predict(X) == 0)

    assert share_of_zero({0: 100.0, 1: 1.0}) > 0.9
    assert share_of_zero({0: 1.0, 1: 100.0}) < 0.1
    assert 0.2 < share_of_zero("balanced") < 0.8


def test_balanced_subsample_balances_each_trees_bootstrap_sample(forest_class):
    # scikit-learn's rule: a tree weighs class k by n / (c n_k) over the n rows its
    # bootstrap drew (each as often as drawn), n_k of class k, c classes drawn; so
    # its leaves hold as much weight of every class, n / c each.
    X, y = make_blobs_data(n_samples=300, n_features=4, n_classes=2)
    y = np.where(np.arange(300) % 7 == 0, 2, y)  # a rare third class
    params = {"n_estimators": 6, "random_state": 0, "min_samples_leaf": 3}
    forest = forest_class(class_weight="balanced_subsample", **params).fit(X, y)
    for t, drawn in enumerate(forest.estimators_samples_):
        tree = forest.tree_structure(t)
        leaves = tree.children_left < 0
        totals = tree.value[leaves].T @ tree.weighted_n_node_samples[leaves]
        np.testing.assert_allclose(totals, len(drawn) / 3, rtol=1e-5)
        counts = np.bincount(y[drawn], minlength=3)
        assert counts.max() > 2 * counts.min()  # the sample itself is unbalanced
    # Without bootstrap every tree's sample is all of them: "balanced".
    whole = {**params, "bootstrap": False}
    subsample = forest_class(class_weight="balanced_subsample", **whole).fit(X, y)
    balanced = forest_class(class_weight="balanced", **whole).fit(X, y)
    assert subsample._forest.to_bytes() == balanced._forest.to_bytes()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    n_samples=st.integers(1, 40),
    n_features=st.integers(1, 6),
    n_classes=st.integers(1, 4),
    seed=st.integers(0, 2**31 - 2),
    bootstrap=st.booleans(),
)
def test_probabilities_are_distributions(
    forest_class, n_samples, n_features, n_classes, seed, bootstrap
):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    y = rng.integers(0, n_classes, size=n_samples)
    forest = forest_class(n_estimators=3, bootstrap=bootstrap, random_state=seed)
    proba = forest.fit(X, y).predict_proba(X)
    assert proba.shape == (n_samples, len(np.unique(y)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    if not bootstrap:
        # Every tree sees every sample, so a sample with a unique point is fitted.
        unique_rows = np.unique(X, axis=0, return_counts=True)[1].max() == 1
        if unique_rows:
            np.testing.assert_array_equal(forest.predict(X), y)


def test_morf_beats_the_axis_aligned_forest_on_the_circle():
    X, y = make_circle(1400, random_state=0)
    X_train, y_train, X_test, y_test = X[:400], y[:400], X[400:], y[400:]
    morf = ManifoldObliqueForestClassifier(
        n_estimators=50,
        image_shape=(100,),
        patch_min=3,
        patch_max=12,
        wrap=True,
        max_features=0.5,
        random_state=0,
    ).fit(X_train, y_train)
    rf = RandomForestClassifier(n_estimators=50, random_state=0).fit(X_train, y_train)
    morf_error = 1 - morf.score(X_test, y_test)
    rf_error = 1 - rf.score(X_test, y_test)
    # The papers' figure 2(A): the axis-aligned forest stays near chance.
    assert rf_error > 0.35
    assert morf_error < rf_error - 0.25


def test_sparse_oblique_atoms_combine_features():
    # The class is the sign of x0 - x1: one oblique split, a staircase for RF.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    sporf = SparseObliqueForestClassifier(
        n_estimators=20, feature_combinations=2.0, max_features=8, random_state=0
    ).fit(X[:300], y[:300])
    rf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X[:300], y[:300])
    assert np.mean(sporf.tree_stats_["n_leaves"]) < np.mean(rf.tree_stats_["n_leaves"])


def _ticks_during(call):
    """Run ``call`` while another thread ticks; return the ticks inside the call."""
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        start = time.perf_counter()
        call()
        end = time.perf_counter()
    finally:
        stop.set()
        ticker.join()
    # Leave out the edges, where the ticker may run before the engine takes over.
    margin = 0.1 * (end - start)
    return sum(start + margin < t < end - margin for t in ticks), end - start


@pytest.mark.parametrize("method", ["fit", "predict_proba"])
def test_gil_is_released_while_the_engine_runs(method):
    X, y = make_impulse(20_000, random_state=0)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=4, patch_min=2, patch_max=12, max_features=0.3, random_state=0
    )
    if method == "fit":
        ticks, seconds = _ticks_during(lambda: forest.fit(X, y))
    else:
        forest.fit(X, y)
        X_large = np.repeat(X, 20, axis=0)
        ticks, seconds = _ticks_during(lambda: forest.predict_proba(X_large))
    # A thread that holds the GIL for the whole call would allow no tick at all.
    assert ticks >= 10, f"{ticks} ticks during a {seconds:.2f} s {method}"
