"""warm_start: more trees on a fitted forest, or more rounds on a boosted model,
the very model a fit at once makes."""

import numpy as np
import pytest
from sklearn.base import clone

from morf_rs import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    ManifoldObliqueGradientBoostingClassifier,
    ManifoldObliqueGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueForestRegressor,
    SparseObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingRegressor,
)
from morf_rs._core import Booster

ESTIMATORS = [
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    ManifoldObliqueForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
    ManifoldObliqueForestRegressor,
]


def data(n_samples=120, random_state=0):
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 3
    X = rng.standard_normal((n_samples, 16)) + 0.5 * y[:, None]
    return X, y


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fifty_and_fifty_more_is_the_forest_of_a_hundred(cls):
    X, y = data()
    params = dict(random_state=3, honest_fraction=0.25, oob_score=True)
    grown = cls(n_estimators=50, warm_start=True, n_jobs=1, **params).fit(X, y)
    assert grown._forest.n_estimators == 50
    grown.set_params(n_estimators=100, n_jobs=2).fit(X, y)
    at_once = cls(n_estimators=100, **params).fit(X, y)
    assert grown._forest.to_bytes() == at_once._forest.to_bytes()
    assert grown.oob_score_ == at_once.oob_score_
    np.testing.assert_array_equal(grown.predict(X), at_once.predict(X))


def test_a_seedless_forest_keeps_its_seed_when_it_grows():
    X, y = data()
    model = RandomForestClassifier(n_estimators=5, warm_start=True).fit(X, y)
    first = model.apply(X)
    model.set_params(n_estimators=8).fit(X, y)
    np.testing.assert_array_equal(model.apply(X)[:, :5], first)
    # All 8 trees come from the seed drawn at the first fit.
    seed = model._engine_params_["random_state"]
    at_once = clone(model).set_params(warm_start=False)._fit(X, y, None, seed=seed)
    assert model._forest.to_bytes() == at_once._forest.to_bytes()
    refit = model.set_params(warm_start=False).fit(X, y)
    assert not np.array_equal(refit.apply(X)[:, :5], first)


def test_warm_start_refuses_what_it_cannot_add_to():
    X, y = data()
    model = RandomForestClassifier(n_estimators=6, warm_start=True, random_state=0)
    model.fit(X, y)
    before = model._forest.to_bytes()
    with pytest.raises(ValueError, match="at least the 6 trees"):
        model.set_params(n_estimators=4).fit(X, y)
    with pytest.warns(UserWarning, match="without increasing n_estimators"):
        model.set_params(n_estimators=6).fit(X, y)
    assert model._forest.to_bytes() == before
    model.set_params(n_estimators=9)
    with pytest.raises(ValueError, match="of 16 features"):
        model.fit(X[:, :10], y)
    with pytest.raises(ValueError, match="not among the classes"):
        model.fit(X, y + 1)
    assert model._forest.to_bytes() == before


BOOSTERS = [
    GradientBoostingClassifier,
    SparseObliqueGradientBoostingClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    GradientBoostingRegressor,
    SparseObliqueGradientBoostingRegressor,
    ManifoldObliqueGradientBoostingRegressor,
]


@pytest.mark.parametrize("cls", BOOSTERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("early_stopping", [False, True])
def test_thirty_rounds_and_twenty_more_are_the_model_of_fifty(cls, early_stopping):
    X, y = data(200)
    params = dict(
        subsample=0.8,
        early_stopping=early_stopping,
        n_iter_no_change=50,
        random_state=3,
    )
    grown = cls(n_estimators=30, warm_start=True, n_jobs=1, **params).fit(X, y)
    assert grown.n_iter_ == 30
    first_rounds = grown._raw_rounds(X, 0, 30)
    grown.set_params(n_estimators=50, n_jobs=2).fit(X, y)
    at_once = cls(n_estimators=50, **params).fit(X, y)
    assert grown.n_iter_ == 50
    assert grown._booster.to_bytes() == at_once._booster.to_bytes()
    np.testing.assert_array_equal(grown._raw_rounds(X, 0, 30), first_rounds)
    np.testing.assert_array_equal(grown.predict(X), at_once.predict(X))
    np.testing.assert_array_equal(grown.train_score_, at_once.train_score_)


def test_a_seedless_booster_keeps_its_seed_and_trains_only_its_new_rounds():
    X, y = data(200)
    model = GradientBoostingClassifier(n_estimators=5, warm_start=True).fit(X, y)
    first = model._raw_rounds(X, 0, 5)
    trained = []
    previous = model._booster
    params = dict(model._engine_params_, n_estimators=8)
    y_index = np.unique(y, return_inverse=True)[1].astype(np.uint32)
    X32 = np.ascontiguousarray(X)
    grown = Booster.fit(
        X32,
        y_index,
        3,
        None,
        params,
        1,
        lambda done, total: trained.append(total),
        previous,
    )
    # 3 classes: 3 trees a round, for the 3 new rounds only.
    assert trained
    assert set(trained) == {9}
    model.set_params(n_estimators=8).fit(X, y)
    np.testing.assert_array_equal(model._raw_rounds(X, 0, 5), first)
    assert model._booster.to_bytes() == grown.to_bytes()
    at_once = Booster.fit(X32, y_index, 3, None, params, 1)
    assert at_once.to_bytes() == grown.to_bytes()


def test_booster_warm_start_refuses_what_it_cannot_add_to():
    X, y = data()
    model = GradientBoostingClassifier(n_estimators=6, warm_start=True, random_state=0)
    model.fit(X, y)
    before = model._booster.to_bytes()
    with pytest.raises(ValueError, match="at least the 6 rounds"):
        model.set_params(n_estimators=4).fit(X, y)
    model.set_params(n_estimators=9)
    with pytest.raises(ValueError, match="features"):
        model.fit(X[:, :10], y)
    with pytest.raises(ValueError, match="other classes_"):
        model.fit(X, y + 1)
    with pytest.raises(ValueError, match="these changed: learning_rate"):
        model.set_params(learning_rate=0.3).fit(X, y)
    assert model._booster.to_bytes() == before
