"""The three regressors: scikit-learn's regression API over the same engine."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import r2_score
from sklearn.model_selection import cross_val_score

from morf_rs import (
    ManifoldObliqueForestRegressor,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
)

REGRESSORS = [
    ManifoldObliqueForestRegressor,
    SparseObliqueForestRegressor,
    RandomForestRegressor,
]


@pytest.fixture(params=REGRESSORS, ids=lambda cls: cls.__name__)
def regressor_class(request):
    return request.param


def linear_data(n_samples=300, n_features=8, random_state=0):
    """y = 2 x0 + x1 + noise."""
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    y = 2 * X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=n_samples)
    return X, y


def test_fitted_attributes_and_predictions(regressor_class):
    X, y = linear_data()
    forest = regressor_class(n_estimators=20, random_state=0).fit(X[:200], y[:200])
    assert forest.n_outputs_ == 1
    assert forest.n_features_in_ == X.shape[1]
    assert not hasattr(forest, "classes_")
    predicted = forest.predict(X[200:])
    assert predicted.shape == (100,)
    assert predicted.dtype == np.float64
    assert forest.score(X[200:], y[200:]) == pytest.approx(r2_score(y[200:], predicted))
    assert forest.score(X[200:], y[200:]) > 0.7
    assert forest.apply(X).shape == (len(X), 20)
    for importances in (forest.feature_importances_, forest.impurity_importances_):
        assert importances.sum() == pytest.approx(1.0)
    assert np.argmax(forest.impurity_importances_) == 0
    assert not hasattr(forest, "predict_proba")


def test_a_tree_on_all_samples_predicts_the_weighted_mean_of_each_leaf():
    X, y = linear_data(200)
    weight = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    forest = RandomForestRegressor(
        n_estimators=1, bootstrap=False, min_samples_leaf=4, random_state=0
    ).fit(X, y, sample_weight=weight)
    leaves = forest.apply(X)[:, 0]
    expected = np.empty(len(y))
    for leaf in np.unique(leaves):
        members = leaves == leaf
        expected[members] = np.average(y[members], weights=weight[members])
    np.testing.assert_allclose(forest.predict(X), expected, rtol=1e-12)


def test_multi_output_leaves_average_each_output(regressor_class):
    X, y = linear_data(250)
    # A linear map of one output: leaf means commute with it exactly (up to
    # rounding), so a joint tree must predict it from the same leaves.
    Y = np.column_stack([y, 3 * y - 1, X[:, 2]])
    forest = regressor_class(n_estimators=10, random_state=0).fit(X, Y)
    assert forest.n_outputs_ == 3
    predicted = forest.predict(X)
    assert predicted.shape == (len(X), 3)
    np.testing.assert_allclose(predicted[:, 1], 3 * predicted[:, 0] - 1, atol=1e-9)
    assert forest.score(X, Y) > 0.5


def test_column_vector_y_warns_and_predicts_1d():
    X, y = linear_data(100)
    with pytest.warns(DataConversionWarning, match="column-vector"):
        forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(
            X, y[:, None]
        )
    assert forest.n_outputs_ == 1
    assert forest.predict(X).shape == (100,)


def test_same_random_state_gives_the_same_forest_for_any_n_jobs(regressor_class):
    X, y = linear_data(200)
    predictions = [
        regressor_class(n_estimators=8, random_state=3, n_jobs=n_jobs)
        .fit(X, y)
        .predict(X)
        for n_jobs in (1, 2, -1)
    ]
    np.testing.assert_array_equal(predictions[0], predictions[1])
    np.testing.assert_array_equal(predictions[0], predictions[2])


@pytest.mark.parametrize("prior", ["ignore", "empirical"])
def test_honest_regression(regressor_class, prior):
    X, y = linear_data(300)
    honest = regressor_class(
        n_estimators=20, honest_fraction=0.5, honest_prior=prior, random_state=0
    ).fit(X[:200], y[:200])
    predicted = honest.predict(X[200:])
    assert np.all(np.isfinite(predicted))
    assert honest.score(X[200:], y[200:]) > 0.5


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"criterion": "gini"}, "criterion"),
        ({"honest_fraction": 0.5, "honest_prior": "uniform"}, "honest_prior"),
        ({"min_weight_fraction_leaf": 0.6}, "min_weight_fraction_leaf"),
    ],
)
def test_bad_parameters_are_value_errors(params, match):
    X, y = linear_data(50)
    with pytest.raises(ValueError, match=match):
        RandomForestRegressor(n_estimators=2, **params).fit(X, y)


def test_bad_targets_say_what_to_fix():
    X, y = linear_data(50)
    with pytest.raises(ValueError, match="must hold numbers"):
        RandomForestRegressor(n_estimators=2).fit(X, ["a"] * 50)
    bad = y.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomForestRegressor(n_estimators=2).fit(X, bad)
    with pytest.raises(ValueError, match="49 targets but X has 50"):
        RandomForestRegressor(n_estimators=2).fit(X, y[:49])
    with pytest.raises(ValueError, match="dim 3"):
        RandomForestRegressor(n_estimators=2).fit(X, y.reshape(50, 1, 1))


def test_min_weight_fraction_leaf_keeps_heavy_leaves():
    X, y = linear_data(400)
    forest = RandomForestRegressor(
        n_estimators=5, bootstrap=False, min_weight_fraction_leaf=0.1, random_state=0
    ).fit(X, y)
    leaves = forest.apply(X)
    for tree in range(5):
        _, counts = np.unique(leaves[:, tree], return_counts=True)
        assert counts.min() >= 40
    assert forest.tree_stats_["n_leaves"].max() <= 10
    free = RandomForestRegressor(n_estimators=5, bootstrap=False, random_state=0)
    assert free.fit(X, y).tree_stats_["n_leaves"].min() > 10


def test_pickle_and_clone(regressor_class):
    X, y = linear_data(100)
    forest = regressor_class(n_estimators=4, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(restored.predict(X), forest.predict(X))
    assert clone(forest).get_params() == forest.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = cross_val_score(clone(forest), X, y, cv=3)
    assert scores.mean() > 0.5


def test_morf_regression_sees_a_patch_that_single_pixels_do_not():
    # The target is the mean brightness of a 4x4 patch of noisy 12x12 images:
    # one patch atom reads it, single pixels each carry 1/16 of it.
    rng = np.random.default_rng(0)
    images = rng.normal(size=(900, 12, 12))
    y = images[:, 4:8, 3:7].mean(axis=(1, 2))
    X = images.reshape(len(images), -1)
    X_train, y_train, X_test, y_test = X[:600], y[:600], X[600:], y[600:]
    morf = ManifoldObliqueForestRegressor(
        n_estimators=40,
        image_shape=(12, 12),
        patch_min=3,
        patch_max=5,
        max_features=40,
        random_state=0,
    ).fit(X_train, y_train)
    rf = RandomForestRegressor(n_estimators=40, random_state=0).fit(X_train, y_train)
    assert morf.score(X_test, y_test) > rf.score(X_test, y_test) + 0.2


def test_a_pickle_whose_outputs_disagree_with_its_forest_is_refused():
    X, y = linear_data(60)
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    state = forest.__getstate__()
    state["n_outputs_"] = 2
    restored = RandomForestRegressor.__new__(RandomForestRegressor)
    with pytest.raises(ValueError, match="altered or damaged"):
        restored.__setstate__(state)
