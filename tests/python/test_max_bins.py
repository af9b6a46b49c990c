"""Split search between bins (``max_bins``): thresholds between a node's bins, the
exact forest where the bins cover every value, and the same forest for any number
of threads."""

import numpy as np
import pytest

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
)


def stump(forest_class, X, y, max_bins):
    """One tree of one split on all of X (no bootstrap) and its root threshold."""
    forest = forest_class(
        n_estimators=1,
        bootstrap=False,
        max_features=None,
        max_depth=1,
        max_bins=max_bins,
        random_state=0,
    ).fit(X, y)
    return forest.tree_structure(0).threshold[0]


@pytest.mark.parametrize("step", [1.0, 0.37])
@pytest.mark.parametrize(
    "forest_class", [RandomForestClassifier, RandomForestRegressor]
)
def test_a_node_splits_between_two_of_its_bins(forest_class, step):
    # The best split lies at 80 of 100 evenly spread values; two bins over the range
    # hold 0..49 and 50..99, so the binned split lies between 49 and 50.
    X = (np.arange(100) * step).astype(np.float32).reshape(-1, 1)
    y = (np.arange(100) >= 80).astype(int)
    exact = stump(forest_class, X, y, None)
    binned = stump(forest_class, X, y, 2)
    assert X[79, 0] < exact < X[80, 0]
    assert X[49, 0] < binned < X[50, 0]
    # Three bins: 0..32, 33..65, 66..99; the best boundary is the upper one.
    assert X[65, 0] < stump(forest_class, X, y, 3) < X[66, 0]


@pytest.mark.parametrize(
    ("forest_class", "max_bins"),
    # Single pixels span at most 256 values; patch sums of up to 4 x 4 bytes 4,081.
    [(RandomForestClassifier, 256), (ManifoldObliqueForestClassifier, 4_081)],
)
def test_bins_covering_every_value_grow_the_exact_forest(forest_class, max_bins):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(300, 64)).astype(np.uint8)
    y = (X[:, 10].astype(int) + X[:, 27] > 250).astype(int) + (X[:, 40] > 200)
    params = dict(n_estimators=5, random_state=0)
    if forest_class is ManifoldObliqueForestClassifier:
        params.update(image_shape=(8, 8), patch_max=4)
    exact = forest_class(**params).fit(X, y)
    binned = forest_class(max_bins=max_bins, **params).fit(X, y)
    np.testing.assert_array_equal(binned.predict_proba(X), exact.predict_proba(X))
    # Fewer bins than a pixel's values: another forest.
    coarse = forest_class(max_bins=16, **params).fit(X, y)
    assert not np.array_equal(coarse.apply(X), exact.apply(X))


@pytest.mark.parametrize(
    "forest_class",
    [
        ManifoldObliqueForestClassifier,
        ManifoldObliqueForestRegressor,
        SparseObliqueForestClassifier,
    ],
)
def test_binned_forests_are_the_same_for_any_thread_count(forest_class):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 36)).astype(np.float32)
    y = (X[:, 7] + X[:, 8] - X[:, 20] > 0).astype(int)
    params = dict(n_estimators=8, max_bins=8, random_state=3)
    if "Manifold" in forest_class.__name__:
        params["image_shape"] = (6, 6)
    one = forest_class(n_jobs=1, **params).fit(X, y)
    two = forest_class(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(one.apply(X), two.apply(X))
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    # Each split parts its node's samples where their bins part: thresholds read in
    # bin numbers instead would leave the forest far from its training data.
    assert one.score(X, y) > 0.8
