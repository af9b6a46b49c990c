"""Inspecting the trees of forests and boosted models: tree_structure's arrays and
decision_path, against apply and a walk of the arrays in Python."""

import doctest

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError

from morf_rs import (
    GradientBoostingClassifier,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
    SparseObliqueGradientBoostingClassifier,
    TreeStructure,
)
from morf_rs._base import BaseObliqueForest
from morf_rs._boosting import BaseGradientBoosting


def data(n_samples=200, random_state=0):
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 3
    X = (rng.standard_normal((n_samples, 36)) + 0.7 * y[:, None]).astype(np.float32)
    return X, y


def walk(tree, row):
    """Node ids from the root to the leaf of ``row``, from the arrays alone."""
    node, path = 0, [0]
    while not tree.is_leaf[node]:
        features, weights = tree.atom(node)
        projection = np.float32(0.0)
        for feature, weight in zip(features, weights):
            projection = np.float32(projection + weight * row[feature])
        go_left = projection <= np.float32(tree.threshold[node])
        node = tree.children_left[node] if go_left else tree.children_right[node]
        path.append(int(node))
    return path


MODELS = [
    RandomForestClassifier(n_estimators=4, random_state=0),
    ManifoldObliqueForestClassifier(
        n_estimators=4, image_shape=(6, 6), patch_max=3, random_state=0
    ),
    SparseObliqueForestRegressor(n_estimators=4, honest_fraction=0.3, random_state=0),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_decision_paths_follow_the_tree_arrays_to_the_leaves_of_apply(model):
    X, y = data()
    model.fit(X, y)
    indicator, n_nodes_ptr = model.decision_path(X)
    leaves = model.apply(X)
    assert indicator.shape == (len(X), n_nodes_ptr[-1])
    np.testing.assert_array_equal(np.diff(n_nodes_ptr), model.tree_stats_["n_nodes"])
    agree = 0
    for t in range(model.n_estimators):
        tree = model.tree_structure(t)
        assert isinstance(tree, TreeStructure)
        assert tree.node_count == n_nodes_ptr[t + 1] - n_nodes_ptr[t]
        block = indicator[:, n_nodes_ptr[t] : n_nodes_ptr[t + 1]]
        for i in range(len(X)):
            path = list(block[i].indices)
            assert path[0] == 0
            assert path[-1] == leaves[i, t]
            for parent, child in zip(path, path[1:]):
                assert child in (
                    tree.children_left[parent],
                    tree.children_right[parent],
                )
            agree += path == walk(tree, X[i])
    # Projections are float32 sums, as the engine forms them: every path is found
    # again (oblique sums may round differently at a rare tie).
    assert agree >= 0.99 * len(X) * model.n_estimators


def test_tree_arrays_hold_the_leaf_values_and_counts():
    X, y = data()
    forest = RandomForestClassifier(n_estimators=3, random_state=1).fit(X, y)
    proba = np.zeros((len(X), 3))
    leaves = forest.apply(X)
    for t in range(3):
        tree = forest.tree_structure(t)
        leaf = tree.is_leaf
        assert tree.votes[leaf].all()
        assert not tree.votes[~leaf].any()
        np.testing.assert_allclose(tree.value[leaf].sum(axis=1), 1.0, atol=1e-6)
        assert (tree.threshold[leaf] == -2).all()
        assert (np.diff(tree.atom_ptr)[leaf] == 0).all()
        assert (np.diff(tree.atom_ptr)[~leaf] == 1).all()
        left, right = tree.children_left[~leaf], tree.children_right[~leaf]
        np.testing.assert_array_equal(
            tree.n_node_samples[~leaf],
            tree.n_node_samples[left] + tree.n_node_samples[right],
        )
        assert tree.n_node_samples[0] == len(np.unique(forest.estimators_samples_[t]))
        proba += tree.value[leaves[:, t]]
    np.testing.assert_allclose(proba / 3, forest.predict_proba(X), atol=1e-6)

    regressor = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y * 2.0)
    leaves = regressor.apply(X)
    mean = (
        regressor.tree_structure(0).value[leaves[:, 0], 0]
        + regressor.tree_structure(1).value[leaves[:, 1], 0]
    ) / 2
    np.testing.assert_allclose(mean, regressor.predict(X))


def test_tree_index_is_checked():
    X, y = data()
    forest = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="index"):
        forest.tree_structure(2)
    with pytest.raises(TypeError, match="index"):
        forest.tree_structure(0.5)


@pytest.mark.parametrize(
    "method", [BaseObliqueForest.tree_structure, BaseGradientBoosting.apply]
)
def test_the_documented_examples_run(method):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner()
    for test in finder.find(method, method.__name__):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0


BOOSTERS = [
    GradientBoostingClassifier(n_estimators=6, random_state=0),
    SparseObliqueGradientBoostingClassifier(n_estimators=5, random_state=1),
    ManifoldObliqueGradientBoostingRegressor(
        n_estimators=5, image_shape=(6, 6), patch_max=3, random_state=2
    ),
]


def booster_targets(booster, y, n_classes):
    if is_classifier(booster):
        return y % n_classes
    return y * 1.5


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("booster", BOOSTERS, ids=lambda m: type(m).__name__)
def test_booster_leaves_add_up_to_the_raw_scores(booster, n_classes):
    X, y = data()
    booster = clone(booster).fit(X, booster_targets(booster, y, n_classes))
    leaves = booster.apply(X)
    k = booster.n_trees_per_iteration_
    assert leaves.shape == (len(X), booster.n_iter_, k)
    assert leaves.dtype == np.int64
    raw = np.zeros((len(X), k))
    for r in range(booster.n_iter_):
        for output in range(k):
            tree = booster.tree_structure(r * k + output)
            reached = leaves[:, r, output]
            assert tree.is_leaf[reached].all()
            raw[:, output] += tree.value[reached, 0]
    raw += booster._booster.baseline()
    if is_classifier(booster):
        expected = booster.decision_function(X).reshape(len(X), k)
    else:
        expected = booster.predict(X)[:, None]
    np.testing.assert_array_equal(raw, expected)


@pytest.mark.parametrize("booster", BOOSTERS, ids=lambda m: type(m).__name__)
def test_booster_decision_paths_follow_the_tree_arrays_to_the_leaves_of_apply(
    booster,
):
    X, y = data()
    booster = clone(booster).fit(X, booster_targets(booster, y, 3))
    indicator, n_nodes_ptr = booster.decision_path(X)
    leaves = booster.apply(X).reshape(len(X), -1)
    n_trees = booster.n_iter_ * booster.n_trees_per_iteration_
    assert len(n_nodes_ptr) == n_trees + 1
    assert indicator.shape == (len(X), n_nodes_ptr[-1])
    np.testing.assert_array_equal(np.diff(n_nodes_ptr), booster.tree_stats_["n_nodes"])
    agree = 0
    for t in range(n_trees):
        tree = booster.tree_structure(t)
        assert tree.node_count == n_nodes_ptr[t + 1] - n_nodes_ptr[t]
        block = indicator[:, n_nodes_ptr[t] : n_nodes_ptr[t + 1]]
        for i in range(len(X)):
            path = list(block[i].indices)
            assert path[-1] == leaves[i, t]
            agree += path == walk(tree, X[i])
    # As for the forests: oblique float32 sums may round differently at a rare tie.
    assert agree >= 0.99 * len(X) * n_trees


def test_booster_inspection_refuses_bad_input():
    X, y = data()
    booster = GradientBoostingClassifier(n_estimators=3, random_state=0)
    for method in (booster.apply, booster.decision_path):
        with pytest.raises(NotFittedError):
            method(X)
    with pytest.raises(NotFittedError):
        booster.tree_structure(0)
    booster.fit(X, y)
    n_trees = booster.n_iter_ * booster.n_trees_per_iteration_
    with pytest.raises(ValueError, match="index"):
        booster.tree_structure(n_trees)
    with pytest.raises(ValueError, match="index"):
        booster.tree_structure(-1)
    with pytest.raises(TypeError, match="index"):
        booster.tree_structure(1.0)
    for method in (booster.apply, booster.decision_path):
        with pytest.raises(ValueError, match="features"):
            method(X[:, :-1])
        with pytest.raises(ValueError, match="infinity"):
            method(np.full_like(X, np.inf))
