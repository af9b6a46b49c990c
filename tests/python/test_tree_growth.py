"""Best-first growth (max_leaf_nodes) and cost-complexity pruning (ccp_alpha):
single axis-aligned trees on data without ties agree with scikit-learn's decision
trees node by node."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueForestRegressor,
)

CLASSIFIERS = (RandomForestClassifier, DecisionTreeClassifier)
REGRESSORS = (RandomForestRegressor, DecisionTreeRegressor)


def data(n=400, seed=0):
    """Continuous features (a 4 x 4 image), a noisy continuous target and three
    classes from it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 16)).astype(np.float32)
    y = (
        X[:, 0]
        + np.sin(2 * X[:, 1])
        + 0.5 * X[:, 5] * X[:, 9]
        + 0.3 * rng.normal(size=n)
    )
    classes = np.digitize(y, [-0.5, 0.7])
    return X, y, classes


def counts_of(y, seed=5):
    """Counts whose log-rate follows y: more than half of them 0."""
    return np.random.default_rng(seed).poisson(np.exp(y - 0.5)).astype(np.float64)


def task_data(task):
    """The (ours, scikit-learn's) estimator classes and the target for a criterion."""
    X, y, classes = data()
    if task == "poisson":
        return REGRESSORS, counts_of(y)
    return (REGRESSORS, y) if task == "squared_error" else (CLASSIFIERS, classes)


# Sample weights of many values: two different splits, of one node or of two, do not
# decrease the impurity equally (with whole counts of classes they often do), so
# that the best-first order and the trees are unique; and of few bits, so that sums
# of weights are exact and the impurity of a pure node is exactly 0 (scikit-learn
# splits nodes whose impurity rounds above its epsilon).
WEIGHTS = 1 + np.random.default_rng(1).integers(0, 1024, size=400) / 1024


def preorder(tree):
    """scikit-learn's tree arrays with the nodes numbered depth first, left first,
    as ours are (best-first trees number them as they grow)."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if tree.children_left[node] >= 0:
            stack += [tree.children_right[node], tree.children_left[node]]
    order = np.array(order)
    new_id = np.empty(len(order), np.int64)
    new_id[order] = np.arange(len(order))

    def renumbered(children):
        children = children[order]
        return np.where(children >= 0, new_id[children], -1)

    return {
        "children_left": renumbered(tree.children_left),
        "children_right": renumbered(tree.children_right),
        "feature": tree.feature[order],
        "threshold": tree.threshold[order],
        "n_node_samples": tree.n_node_samples[order],
    }


def assert_same_tree(ours, theirs, X):
    """The same nodes, sample counts, features and thresholds, and the same
    predictions."""
    structure = ours.tree_structure(0)
    expected = preorder(theirs.tree_)
    for key in ("children_left", "children_right", "n_node_samples"):
        np.testing.assert_array_equal(getattr(structure, key), expected[key], key)
    splits = np.flatnonzero(expected["children_left"] >= 0)
    features = [structure.atom(node)[0].tolist() for node in splits]
    assert features == [[feature] for feature in expected["feature"][splits]]
    np.testing.assert_allclose(
        structure.threshold[splits], expected["threshold"][splits], rtol=1e-6
    )
    if hasattr(theirs, "predict_proba"):
        np.testing.assert_allclose(
            ours.predict_proba(X), theirs.predict_proba(X), atol=1e-6
        )
    else:
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-9)


def fit_both(classes, target, **params):
    ours, theirs = classes
    one_tree = {"n_estimators": 1, "bootstrap": False, "max_features": None}
    X, _, _ = data()
    return (
        ours(**one_tree, random_state=0, **params).fit(X, target, WEIGHTS),
        theirs(random_state=0, **params).fit(X, target, WEIGHTS),
    )


@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 8, 25, 60])
@pytest.mark.parametrize(
    "task", ["gini", "entropy", "squared_error", "poisson"], ids=lambda task: task
)
@pytest.mark.parametrize("max_depth", [None, 4])
# Leaves of 5 samples or more: no two features split a node into the same parts.
@pytest.mark.parametrize("min_samples_leaf", [5, 12])
def test_best_first_trees_are_scikit_learns(
    max_leaf_nodes, task, max_depth, min_samples_leaf
):
    X, _, _ = data()
    both, target = task_data(task)
    ours, theirs = fit_both(
        both,
        target,
        criterion=task,
        max_leaf_nodes=max_leaf_nodes,
        max_depth=max_depth,
        min_samples_leaf=min_samples_leaf,
    )
    assert_same_tree(ours, theirs, X)


@pytest.mark.parametrize(
    "task", ["gini", "entropy", "squared_error", "poisson"], ids=lambda task: task
)
@pytest.mark.parametrize("max_leaf_nodes", [None, 40])
def test_pruned_trees_are_scikit_learns(task, max_leaf_nodes):
    X, _, _ = data()
    both, target = task_data(task)
    params = {
        "criterion": task,
        "min_samples_leaf": 5,
        "max_leaf_nodes": max_leaf_nodes,
    }
    path = both[1](**params).cost_complexity_pruning_path(X, target, WEIGHTS).ccp_alphas
    # Halfway between the alphas at which the pruned tree changes, away from
    # rounding; from lightly pruned to a few leaves. (The smallest nodes of the
    # whole tree may be split equally well by two features, in either tree.)
    middles = (path[1:] + path[:-1]) / 2
    n_leaves = []
    for ccp_alpha in middles[[len(middles) // 6, len(middles) // 2, -3]]:
        ours, theirs = fit_both(both, target, ccp_alpha=ccp_alpha, **params)
        assert_same_tree(ours, theirs, X)
        n_leaves.append(theirs.get_n_leaves())
    assert n_leaves == sorted(n_leaves, reverse=True)
    assert n_leaves[-1] < n_leaves[0]


FORESTS = [
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    ManifoldObliqueForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
    ManifoldObliqueForestRegressor,
]


def target_for(forest_class):
    _, y, classes = data()
    return classes if forest_class.__name__.endswith("Classifier") else y


@pytest.mark.parametrize("forest_class", FORESTS)
@pytest.mark.parametrize("honest_fraction", [0.0, 0.3])
def test_every_tree_has_max_leaf_nodes_leaves(forest_class, honest_fraction):
    X, _, _ = data()
    forest = forest_class(
        n_estimators=5,
        max_leaf_nodes=13,
        honest_fraction=honest_fraction,
        random_state=0,
    ).fit(X, target_for(forest_class))
    np.testing.assert_array_equal(forest.tree_stats_["n_leaves"], 13)


@pytest.mark.parametrize("forest_class", FORESTS)
def test_ccp_alpha_prunes_every_tree(forest_class):
    X, _, _ = data()
    target = target_for(forest_class)
    grown = forest_class(n_estimators=5, random_state=0).fit(X, target)
    pruned = forest_class(n_estimators=5, random_state=0, ccp_alpha=0.01).fit(X, target)
    grown_leaves = grown.tree_stats_["n_leaves"]
    pruned_leaves = pruned.tree_stats_["n_leaves"]
    assert np.all(pruned_leaves < grown_leaves / 2)
    assert np.all(pruned_leaves >= 2)


@pytest.mark.parametrize("forest_class", FORESTS)
def test_same_forest_for_any_n_jobs(forest_class):
    X, _, _ = data()
    target = target_for(forest_class)
    params = {
        "n_estimators": 6,
        "max_leaf_nodes": 20,
        "ccp_alpha": 0.01 if forest_class.__name__.endswith("Classifier") else 0.03,
        "honest_fraction": 0.2,
        "random_state": 3,
    }
    one = forest_class(**params, n_jobs=1).fit(X, target)
    two = forest_class(**params, n_jobs=2).fit(X, target)
    assert np.any(one.tree_stats_["n_leaves"] < params["max_leaf_nodes"])
    np.testing.assert_array_equal(one.apply(X), two.apply(X))
    for t in range(params["n_estimators"]):
        a, b = one.tree_structure(t), two.tree_structure(t)
        np.testing.assert_array_equal(a.threshold, b.threshold)
        np.testing.assert_array_equal(a.atom_features, b.atom_features)
        np.testing.assert_array_equal(a.value, b.value)


def test_defaults_grow_depth_first_without_pruning():
    """max_leaf_nodes=None and ccp_alpha=0.0 are today's trees: passing them
    changes nothing."""
    X, y, _ = data()
    default = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    explicit = RandomForestRegressor(
        n_estimators=3, random_state=0, max_leaf_nodes=None, ccp_alpha=0.0
    ).fit(X, y)
    assert default._forest.to_bytes() == explicit._forest.to_bytes()
