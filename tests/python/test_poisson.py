"""criterion="poisson" for the regressors: scikit-learn's half Poisson deviance,
node by node, with its importances, stopping rules and input checks."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor
from test_tree_growth import WEIGHTS, assert_same_tree, counts_of, data

from morf_rs import (
    ManifoldObliqueForestRegressor,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
)

ONE_TREE = {"n_estimators": 1, "bootstrap": False, "max_features": None}


def counts():
    X, y, _ = data()
    return X, counts_of(y)


def fit_both(X, target, **params):
    return (
        RandomForestRegressor(**ONE_TREE, random_state=0, **params).fit(
            X, target, WEIGHTS
        ),
        DecisionTreeRegressor(random_state=0, **params).fit(X, target, WEIGHTS),
    )


# Leaves of 5 samples or more: no two features split a node into the same parts.
@pytest.mark.parametrize("min_samples_leaf", [5, 8])
@pytest.mark.parametrize("max_depth", [None, 5])
def test_depth_first_trees_are_scikit_learns(min_samples_leaf, max_depth):
    X, target = counts()
    ours, theirs = fit_both(
        X,
        target,
        criterion="poisson",
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
    )
    assert_same_tree(ours, theirs, X)
    # Every leaf holds counts: no split leaves a child whose targets sum to 0.
    assert np.all(ours.tree_structure(0).value[ours.tree_structure(0).is_leaf] > 0)
    np.testing.assert_allclose(
        ours.impurity_importances_, theirs.feature_importances_, rtol=1e-5, atol=1e-9
    )


def test_importances_differ_from_squared_errors():
    """The importances are the Poisson decreases', not squared error's."""
    X, target = counts()
    poisson, _ = fit_both(X, target, criterion="poisson", min_samples_leaf=8)
    squared, theirs = fit_both(X, target, criterion="squared_error", min_samples_leaf=8)
    np.testing.assert_allclose(
        squared.impurity_importances_, theirs.feature_importances_, rtol=1e-5
    )
    assert (
        np.abs(poisson.impurity_importances_ - squared.impurity_importances_).max()
        > 0.01
    )


@pytest.mark.parametrize("min_impurity_decrease", [0.002, 0.01, 0.03])
def test_min_impurity_decrease_stops_where_scikit_learns_does(min_impurity_decrease):
    X, target = counts()
    ours, theirs = fit_both(
        X,
        target,
        criterion="poisson",
        min_samples_leaf=5,
        min_impurity_decrease=min_impurity_decrease,
    )
    assert_same_tree(ours, theirs, X)
    assert 3 < theirs.tree_.node_count < 150


@pytest.mark.parametrize("min_impurity_decrease", [0.0, 0.01])
def test_multi_output_trees_average_the_outputs_deviances(min_impurity_decrease):
    X, y, _ = data()
    target = np.column_stack([counts_of(y), counts_of(-y, seed=6)])
    ours, theirs = fit_both(
        X,
        target,
        criterion="poisson",
        min_samples_leaf=6,
        min_impurity_decrease=min_impurity_decrease,
    )
    assert_same_tree(ours, theirs, X)
    assert theirs.tree_.node_count > 3


@pytest.mark.parametrize(
    "forest_class", [SparseObliqueForestRegressor, ManifoldObliqueForestRegressor]
)
def test_same_oblique_poisson_forest_for_any_n_jobs(forest_class):
    X, target = counts()
    params = {
        "criterion": "poisson",
        "n_estimators": 6,
        "honest_fraction": 0.2,
        "max_features": 8,
        "random_state": 3,
    }
    if forest_class is ManifoldObliqueForestRegressor:
        params["image_shape"] = (4, 4)
    one = forest_class(**params, n_jobs=1).fit(X, target)
    two = forest_class(**params, n_jobs=2).fit(X, target)
    assert one._forest.to_bytes() == two._forest.to_bytes()
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    # Poisson trees differ from squared error's on counts.
    squared = forest_class(**{**params, "criterion": "squared_error"}).fit(X, target)
    assert squared._forest.to_bytes() != one._forest.to_bytes()


@pytest.mark.parametrize(
    "forest_class",
    [
        RandomForestRegressor,
        SparseObliqueForestRegressor,
        ManifoldObliqueForestRegressor,
    ],
)
def test_poisson_needs_counts(forest_class):
    X, target = counts()
    negative = target.copy()
    negative[11] = -1.0
    estimator = forest_class(criterion="poisson", n_estimators=2)
    with pytest.raises(ValueError, match="negative which is not allowed for Poisson"):
        estimator.fit(X, negative)
    with pytest.raises(ValueError, match="Sum of y is not strictly positive"):
        estimator.fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="poisson"):
        forest_class(criterion="possion").fit(X, target)
