"""Boosted models follow the forests' rules for one class and one sample: a
constant model that predicts the only class (probability 1) or the only value."""

import pickle

import numpy as np
import pytest

import morf_rs
from morf_rs import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    ManifoldObliqueGradientBoostingClassifier,
    ManifoldObliqueGradientBoostingRegressor,
    RandomForestClassifier,
    SparseObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingRegressor,
)

CLASSIFIERS = [
    ManifoldObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingClassifier,
    GradientBoostingClassifier,
]
REGRESSORS = [
    ManifoldObliqueGradientBoostingRegressor,
    SparseObliqueGradientBoostingRegressor,
    GradientBoostingRegressor,
]

rng = np.random.default_rng(0)
X = rng.standard_normal((60, 9))
X_TEST = rng.standard_normal((7, 9))


@pytest.fixture(params=CLASSIFIERS, ids=lambda cls: cls.__name__)
def classifier(request):
    return request.param


@pytest.fixture(params=REGRESSORS, ids=lambda cls: cls.__name__)
def regressor(request):
    return request.param


def assert_predicts_only(model, label):
    n = len(X_TEST)
    np.testing.assert_array_equal(model.predict(X_TEST), [label] * n)
    np.testing.assert_array_equal(model.predict_proba(X_TEST), np.ones((n, 1)))
    np.testing.assert_array_equal(model.predict_log_proba(X_TEST), np.zeros((n, 1)))
    np.testing.assert_array_equal(model.decision_function(X_TEST), np.zeros(n))


def test_one_class_predicts_it_with_probability_one(classifier):
    model = classifier(n_estimators=4, random_state=0).fit(X, ["only"] * len(X))
    np.testing.assert_array_equal(model.classes_, ["only"])
    assert model.n_classes_ == 1
    assert model.n_iter_ == 4
    assert_predicts_only(model, "only")
    # As the forests do.
    forest = RandomForestClassifier(n_estimators=3, random_state=0)
    forest.fit(X, ["only"] * len(X))
    np.testing.assert_array_equal(
        model.predict_proba(X_TEST), forest.predict_proba(X_TEST)
    )


def test_one_class_stages_predict_the_class_every_round(classifier):
    model = classifier(n_estimators=3, random_state=0).fit(X, np.full(len(X), 7))
    staged = list(model.staged_predict(X_TEST))
    assert len(staged) == 3
    for predicted in staged:
        np.testing.assert_array_equal(predicted, np.full(len(X_TEST), 7))
    for proba in model.staged_predict_proba(X_TEST):
        np.testing.assert_array_equal(proba, np.ones((len(X_TEST), 1)))
    for raw in model.staged_decision_function(X_TEST):
        np.testing.assert_array_equal(raw, np.zeros(len(X_TEST)))


def test_one_class_model_saves_loads_and_pickles(classifier, tmp_path):
    model = classifier(n_estimators=3, random_state=0).fit(X, ["cat"] * len(X))
    morf_rs.save(model, tmp_path / "model.morf")
    loaded = morf_rs.load(tmp_path / "model.morf")
    for copy in (loaded, pickle.loads(pickle.dumps(model))):
        assert_predicts_only(copy, "cat")
        assert copy._booster.to_bytes() == model._booster.to_bytes()


def test_one_class_model_warm_starts_and_applies(classifier):
    model = classifier(n_estimators=2, warm_start=True, random_state=0)
    y = ["cat"] * len(X)
    model.fit(X, y)
    model.set_params(n_estimators=5).fit(X, y)
    assert model.n_iter_ == 5
    assert_predicts_only(model, "cat")
    fresh = classifier(n_estimators=5, random_state=0).fit(X, y)
    assert model._booster.to_bytes() == fresh._booster.to_bytes()
    # Each tree is its root alone.
    np.testing.assert_array_equal(model.apply(X_TEST), 0)


def test_one_sample_fits_a_constant_model(classifier, regressor):
    model = classifier(n_estimators=3, random_state=0).fit(X[:1], ["only"])
    assert_predicts_only(model, "only")
    model = regressor(n_estimators=3, random_state=0).fit(X[:1], [2.5])
    np.testing.assert_array_equal(model.predict(X_TEST), np.full(len(X_TEST), 2.5))


def test_early_stopping_needs_a_sample_to_hold_out(classifier, regressor):
    # One class still holds samples out; one sample leaves none to train on.
    model = classifier(n_estimators=3, early_stopping=True, random_state=0)
    assert_predicts_only(model.fit(X, ["only"] * len(X)), "only")
    for model, y in ((classifier, ["only"]), (regressor, [2.5])):
        with pytest.raises(ValueError, match="validation_fraction"):
            model(n_estimators=3, early_stopping=True).fit(X[:1], y)


def test_two_classes_with_one_weighted_is_still_two_classes(classifier):
    # Classes come from y, as in the forests; a class of zero weight keeps its column.
    y = np.arange(len(X)) % 2
    weights = (y == 0).astype(float)
    model = classifier(n_estimators=2, random_state=0).fit(X, y, sample_weight=weights)
    assert model.predict_proba(X_TEST).shape == (len(X_TEST), 2)
    np.testing.assert_array_equal(model.predict(X_TEST), np.zeros(len(X_TEST)))
