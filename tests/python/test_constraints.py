"""Each estimator checks its parameters at fit against its _parameter_constraints."""

import inspect

import numpy as np
import pytest

import morf_rs
from morf_rs import GradientBoostingClassifier, RandomForestClassifier
from morf_rs._estimator import BaseTreeEnsemble

PUBLIC_ESTIMATORS = [
    cls
    for cls in (getattr(morf_rs, name) for name in morf_rs.__all__)
    if inspect.isclass(cls)
    and issubclass(cls, BaseTreeEnsemble)
    and cls is not morf_rs.BaseObliqueForest
]
RNG = np.random.default_rng(0)
X = RNG.random((40, 16))
Y = np.arange(40) % 2


@pytest.mark.parametrize("cls", PUBLIC_ESTIMATORS, ids=lambda cls: cls.__name__)
def test_a_value_of_no_allowed_kind_is_refused_naming_the_parameter(cls):
    for name in inspect.signature(cls).parameters:
        model = cls(n_estimators=2).set_params(**{name: object()})
        with pytest.raises((TypeError, ValueError), match=name):
            model.fit(X, Y)
        assert model.get_params()[name] is not None  # stored unchanged


def test_validation_fraction_is_checked_also_without_early_stopping():
    # "auto" turns early stopping on above 10,000 samples: a bad value must fail
    # on the small fit too, not only once the data grows.
    for early_stopping in (False, "auto", True):
        for value in (1.5, 0.0, -1, "a"):
            model = GradientBoostingClassifier(
                n_estimators=2, early_stopping=early_stopping, validation_fraction=value
            )
            with pytest.raises((TypeError, ValueError), match="validation_fraction"):
                model.fit(X, Y)
    # A count beyond the samples matters only when samples are held out.
    GradientBoostingClassifier(
        n_estimators=2, early_stopping=False, validation_fraction=500
    ).fit(X, Y)


def test_checked_values_are_what_the_engine_grows_with():
    forest = RandomForestClassifier(
        n_estimators=2, criterion="log_loss", min_samples_split=0.5, random_state=0
    ).fit(X, Y)
    assert forest._engine_params_["criterion"] == "entropy"
    assert forest._engine_params_["min_samples_split"] == 20  # half of 40 samples


def test_a_random_state_that_cannot_seed_is_refused_before_anything_is_drawn():
    state = np.random.RandomState(0)
    expected = np.random.RandomState(0).randint(10**6)
    with pytest.raises(ValueError, match="max_depth must be >= 1"):
        RandomForestClassifier(max_depth=0, random_state=state).fit(X, Y)
    assert state.randint(10**6) == expected
    with pytest.raises(ValueError, match="random_state must be None, an int seed"):
        RandomForestClassifier(random_state="seven").fit(X, Y)
    for seed in (-1, 2**32):
        with pytest.raises(ValueError, match="Seed must be between 0 and 2"):
            RandomForestClassifier(random_state=seed).fit(X, Y)


@pytest.mark.parametrize("seed", [0, 7, np.int64(7), 2**32 - 1])
def test_an_int_random_state_seeds_the_engine_as_scikit_learn_seeds_its_trees(seed):
    expected = np.random.RandomState(seed).randint(np.iinfo(np.int32).max)
    for _ in range(2):  # the second time from the cache
        forest = RandomForestClassifier(n_estimators=2, random_state=seed).fit(X, Y)
        assert forest._engine_params_["random_state"] == expected
