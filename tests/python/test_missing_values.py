"""Missing values (NaN) in fit and predict: axis-aligned trees agree with
scikit-learn's, which learn per split whether missing values go left or right and
send them to the larger child where none were seen at training."""

import numpy as np
import pytest
import sklearn
from sklearn.ensemble import RandomForestClassifier as SklearnForest
from sklearn.utils.fixes import parse_version

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
)


def data(n, missing, seed, n_features=5):
    """Classes from thresholds on three features; a fraction `missing` of the cells
    NaN, feature 3 more often in class 1 (so that where missing values go matters)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] + 0.5 * X[:, 2] > 0)).astype(np.int64)
    X[rng.random((n, n_features)) < missing] = np.nan
    X[(y == 1) & (rng.random(n) < 2 * missing), 3] = np.nan
    return X, y


def same_partition(a, b):
    """Whether two labellings of the same rows group them alike."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def one_tree(forest_class, **params):
    """A single tree on every sample and feature: scikit-learn's forest and ours then
    search the same splits."""
    return forest_class(
        n_estimators=1, bootstrap=False, max_features=None, random_state=0, **params
    )


def assert_same_trees(ours, theirs, X_seen, X_new):
    """Node by node (both number nodes depth-first, left first): the same children,
    sample counts, features, thresholds and sides for missing values; and the same
    leaves and probabilities for seen and new rows."""
    tree = theirs.estimators_[0].tree_
    structure = ours.tree_structure(0)
    np.testing.assert_array_equal(structure.children_left, tree.children_left)
    np.testing.assert_array_equal(structure.children_right, tree.children_right)
    np.testing.assert_array_equal(structure.n_node_samples, tree.n_node_samples)
    splits = np.flatnonzero(tree.children_left >= 0)
    features = [structure.atom(node)[0].tolist() for node in splits]
    assert features == [[feature] for feature in tree.feature[splits]]
    np.testing.assert_array_equal(
        structure.missing_go_to_left[splits], tree.missing_go_to_left[splits] == 1
    )
    # Present apart from missing: scikit-learn's threshold is infinite, ours the
    # largest float32.
    thresholds = np.minimum(tree.threshold[splits], np.finfo(np.float32).max)
    np.testing.assert_allclose(structure.threshold[splits], thresholds, rtol=1e-6)
    for X in (X_seen, X_new):
        assert same_partition(ours.apply(X)[:, 0], theirs.apply(X)[:, 0])
        np.testing.assert_allclose(
            ours.predict_proba(X), theirs.predict_proba(X), atol=1e-6
        )


@pytest.mark.skipif(
    parse_version(sklearn.__version__) < parse_version("1.8"),
    reason="scikit-learn before 1.8 splits some nodes with missing values otherwise "
    "(sample counts one apart); the trees are compared with 1.8's",
)
@pytest.mark.parametrize("missing", [0.05, 0.2, 0.4])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("min_samples_leaf", [1, 5])
def test_trees_with_missing_values_are_scikit_learns(
    missing, criterion, min_samples_leaf
):
    X, y = data(1000, missing, seed=1)
    X_new, _ = data(2000, missing, seed=2)
    params = {
        "criterion": criterion,
        "max_depth": 4,
        "min_samples_leaf": min_samples_leaf,
    }
    ours = one_tree(RandomForestClassifier, **params).fit(X, y)
    theirs = one_tree(SklearnForest, **params).fit(X, y)
    # Where missing values went decides the trees: some split sent them left.
    assert np.any(theirs.estimators_[0].tree_.missing_go_to_left[:-1])
    assert_same_trees(ours, theirs, X, X_new)


def test_missing_values_seen_only_at_predict_go_to_the_larger_child():
    X, y = data(1000, 0.0, seed=3)
    X_new, _ = data(2000, 0.3, seed=4)
    ours = one_tree(RandomForestClassifier, max_depth=4).fit(X, y)
    theirs = one_tree(SklearnForest, max_depth=4).fit(X, y)
    assert_same_trees(ours, theirs, X, X_new)
    # Every row missing everywhere follows the larger child down to one leaf.
    everywhere = np.full((3, X.shape[1]), np.nan, dtype=np.float32)
    assert len(set(ours.apply(everywhere)[:, 0].tolist())) == 1
    np.testing.assert_allclose(
        ours.predict_proba(everywhere), theirs.predict_proba(everywhere), atol=1e-6
    )


@pytest.mark.parametrize(
    "forest",
    [
        RandomForestClassifier(n_estimators=20, random_state=0),
        SparseObliqueForestClassifier(n_estimators=20, random_state=0),
        ManifoldObliqueForestClassifier(
            n_estimators=20, image_shape=(4, 4), patch_max=2, random_state=0
        ),
    ],
    ids=["rf", "sporf", "morf"],
)
def test_every_forest_learns_from_missingness(forest):
    # The class is whether pixel 5 is missing; nothing else tells.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 16))
    y = rng.integers(0, 2, 600)
    X[y == 1, 5] = np.nan
    forest.fit(X[:400], y[:400])
    assert np.mean(forest.predict(X[400:]) == y[400:]) > 0.95


@pytest.mark.parametrize(
    "forest_class", [RandomForestRegressor, ManifoldObliqueForestRegressor]
)
def test_regressors_take_missing_values(forest_class):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 9))
    y = X[:, 0] * 2.0
    missing = rng.random(400) < 0.3
    y[missing] = 10.0
    X[missing, 0] = np.nan
    params = (
        {"image_shape": (3, 3)}
        if forest_class is ManifoldObliqueForestRegressor
        else {}
    )
    forest = forest_class(n_estimators=20, random_state=0, **params)
    forest.fit(X[:300], y[:300])
    prediction = forest.predict(X[300:])
    assert np.all(np.isfinite(prediction))
    assert np.abs(prediction[missing[300:]] - 10.0).max() < 1.0


def test_infinity_is_still_refused_and_says_what_to_do():
    X, y = data(50, 0.1, seed=7)
    X[4, 2] = np.inf
    with pytest.raises(ValueError, match="(?s)infinity.*NaN to mark them missing"):
        RandomForestClassifier(n_estimators=2).fit(X, y)
    forest = RandomForestClassifier(n_estimators=2).fit(np.nan_to_num(X, posinf=0), y)
    with pytest.raises(ValueError, match=r"infinity \(first at row 4, column 2\)"):
        forest.predict(X)
