"""The private extension rejects what it cannot use with an exception, never a crash.

The estimators never pass such input; these tests guard the boundary itself.
"""

import numpy as np
import pytest

from morf_rs._core import Booster, Forest

X = np.random.default_rng(0).random((20, 4))
Y = (np.arange(20) % 2).astype(np.uint32)


@pytest.fixture(scope="module")
def forest():
    return Forest.fit(X, Y, 2, None, {"n_estimators": 3, "random_state": 0}, 1)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((X.astype(np.int64), Y, 2, None, {}, 1), TypeError, "float64 or uint8"),
        ((X, Y + 5, 2, None, {}, 1), ValueError, "out of range"),
        ((X, Y[:-1], 2, None, {}, 1), ValueError, "expected 20, got 19"),
        ((X, Y, 2, -np.ones(20), {}, 1), ValueError, "weights must be finite"),
        ((np.full((3, 4), np.inf), Y[:3], 2, None, {}, 1), ValueError, "infinity"),
        ((X, Y, 2, None, {"n_estimators": "3"}, 1), TypeError, "n_estimators"),
        ((X, Y, 2, None, {"atoms": "patch"}, 1), ValueError, "image_shape"),
        ((X[:0], Y[:0], 2, None, {}, 1), ValueError, "empty"),
        ((X, Y, 2, None, {"n_estimatorz": 3}, 1), ValueError, "unknown engine"),
    ],
    ids=[
        "int-X",
        "label",
        "y-length",
        "weight",
        "inf",
        "param-type",
        "patch-shape",
        "empty",
        "unknown-key",
    ],
)
def test_fit_raises(args, error, match):
    with pytest.raises(error, match=match):
        Forest.fit(*args)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"max_depth": -1}, ValueError, "parameter max_depth is invalid: .*-1"),
        ({"max_depth": 2**64}, ValueError, "max_depth is too large"),
        ({"max_depth": 2.5}, TypeError, "parameter max_depth has the wrong type"),
        ({"bootstrap": "yes"}, TypeError, "parameter bootstrap has the wrong type"),
        ({"ccp_alpha": float("nan")}, ValueError, "ccp_alpha must be finite"),
        ({"max_features": -2}, ValueError, "max_features must not be negative"),
        ({"max_features": "all"}, ValueError, "max_features must be 'sqrt' or 'log2'"),
        ({"max_features": [1]}, TypeError, "max_features must be"),
        ({"max_samples": "half"}, TypeError, "max_samples must be"),
        ({"image_shape": [4, "a"]}, TypeError, "image_shape has the wrong type"),
        ({"criterion": "gin"}, ValueError, "criterion must be"),
        (
            {"learning_rate": 0.1},
            ValueError,
            'unknown engine parameter "learning_rate"',
        ),
        ({"n_jobs": 2}, ValueError, 'unknown engine parameter "n_jobs"'),
    ],
)
def test_forest_params_are_read_by_name_and_refused_with_the_name(params, error, match):
    with pytest.raises(error, match=match):
        Forest.fit(X, Y, 2, None, params, 1)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"max_bins": "8"}, TypeError, "parameter max_bins has the wrong type"),
        ({"n_estimatorz": 3}, ValueError, 'unknown engine parameter "n_estimatorz"'),
        ({"bootstrap": True}, ValueError, 'unknown engine parameter "bootstrap"'),
        (
            {"early_stopping": True, "validation_fraction": "a"},
            TypeError,
            "validation_fraction must be",
        ),
        ({"atoms": "oblique", "feature_combinations": "2"}, TypeError, "feature_comb"),
    ],
)
def test_booster_params_are_read_by_name_and_refused_with_the_name(
    params, error, match
):
    with pytest.raises(error, match=match):
        Booster.fit(X, Y, 2, None, params, 1)


def test_booster_max_leaf_nodes_none_is_no_limit_and_absent_the_default():
    rng = np.random.default_rng(1)
    X_many = rng.random((2000, 3))
    y = (rng.random(2000) * 4).astype(np.uint32)
    base = {"n_estimators": 1, "min_samples_leaf": 1, "random_state": 0}

    def most_leaves(params):
        booster = Booster.fit(X_many, y, 4, None, {**base, **params}, 1)
        return booster.tree_stats()["n_leaves"].max()

    assert most_leaves({}) == 31
    assert most_leaves({"max_leaf_nodes": None}) > 31
    assert most_leaves({"max_leaf_nodes": 5}) == 5


def test_predict_raises(forest):
    with pytest.raises(ValueError, match="expected 4, got 3"):
        forest.predict_proba(np.ascontiguousarray(X[:, :3]), 1)
    with pytest.raises(ValueError, match="infinity"):
        forest.apply(np.full((2, 4), -np.inf), 1)


@pytest.mark.parametrize("cut", [0, 5, -5])
def test_damaged_bytes_raise(forest, cut):
    data = forest.to_bytes()
    damaged = b"junk" if cut == 0 else data[cut:] if cut > 0 else data[:cut]
    with pytest.raises(ValueError, match="cannot load forest"):
        Forest.from_bytes(damaged)


def test_bytes_round_trip(forest):
    restored = Forest.from_bytes(forest.to_bytes())
    assert (restored.n_features, restored.n_classes, restored.n_estimators) == (4, 2, 3)
    np.testing.assert_array_equal(restored.apply(X, 2), forest.apply(X, 1))


def test_every_layout_scores_the_same(forest):
    expected = forest.predict_proba(X, 1)
    doubled = np.zeros((40, 4))
    doubled[::2] = X
    for layout in (np.asfortranarray(X), doubled[::2], X[:, ::-1].copy()[:, ::-1]):
        np.testing.assert_array_equal(forest.predict_proba(layout, 2), expected)
        np.testing.assert_array_equal(forest.apply(layout, 2), forest.apply(X, 1))
    params = {"n_estimators": 3}
    fortran = Forest.fit(np.asfortranarray(X), Y, 2, None, params, 1)
    assert fortran.to_bytes() == Forest.fit(X, Y, 2, None, params, 1).to_bytes()


def test_output_is_written_in_place(forest):
    out = np.full((30, 2), -1.0)
    returned = forest.predict_proba(X, 2, out[10:])
    assert returned.base is out or np.shares_memory(returned, out)
    np.testing.assert_array_equal(out[10:], forest.predict_proba(X, 1))
    assert np.all(out[:10] == -1.0)
    leaves = np.zeros((20, 3), dtype=np.int64)
    forest.apply(X, 1, leaves)
    np.testing.assert_array_equal(leaves, forest.apply(X, 2))
    with pytest.raises(ValueError, match="must have shape \\(20, 2\\)"):
        forest.predict_proba(X, 1, np.zeros((20, 3)))
    with pytest.raises(ValueError, match="row-major"):
        forest.predict_proba(X, 1, np.zeros((20, 2), order="F"))
    with pytest.raises(TypeError):
        forest.apply(X, 1, np.zeros((20, 3), dtype=np.int32))


def test_predict_is_the_argmax_of_the_probabilities(forest):
    X_many = np.random.default_rng(1).random((500, 4))
    np.testing.assert_array_equal(
        forest.predict(X_many, 2), forest.predict_proba(X_many, 1).argmax(axis=1)
    )


def test_ranges_of_trees_merge_into_the_whole_forest():
    params = {"n_estimators": 7, "random_state": 3, "honest_fraction": 0.2}
    whole = Forest.fit(X, Y, 2, None, params, 1)
    parts = [
        Forest.fit(X, Y, 2, None, params, 2, trees=(start, stop))
        for start, stop in [(0, 3), (3, 4), (4, 7)]
    ]
    assert [part.n_estimators for part in parts] == [3, 1, 3]
    assert Forest.merge(parts).to_bytes() == whole.to_bytes()
    with pytest.raises(ValueError, match="empty"):
        Forest.fit(X, Y, 2, None, params, 1, trees=(4, 4))
    narrow = Forest.fit(X[:, :3], Y, 2, None, params, 1)
    with pytest.raises(ValueError, match="number of features"):
        Forest.merge([whole, narrow])
    with pytest.raises(ValueError, match="nothing to merge"):
        Forest.merge([])


def test_progress_counts_the_trees_of_the_range():
    calls = []
    params = {"n_estimators": 9}
    Forest.fit(X, Y, 2, None, params, 1, lambda *a: calls.append(a), trees=(2, 6))
    assert calls[-1] == (4, 4)
