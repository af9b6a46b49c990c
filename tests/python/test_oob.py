"""Out-of-bag estimates, against a reference built in Python from apply and the
samples each tree learnt from."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, mean_absolute_error, r2_score

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueForestRegressor,
)

CLASSIFIERS = [
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    ManifoldObliqueForestClassifier,
]
REGRESSORS = [
    RandomForestRegressor,
    SparseObliqueForestRegressor,
    ManifoldObliqueForestRegressor,
]


def data(n_samples=160, n_features=16, random_state=0):
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 3
    X = rng.standard_normal((n_samples, n_features)) + 0.8 * y[:, None]
    weights = rng.uniform(0.5, 2.0, n_samples)
    weights[::11] = 0.0  # left out of the fit: no tree saw them
    return X, y, weights


def reference(model, X, targets, weights):
    """Per row, the mean over the trees that never saw it of its leaf's weighted
    mean target, each leaf's value recomputed from the rows each tree drew."""
    leaves = model.apply(X)
    n_samples = len(X)
    sums = np.zeros(targets.shape)
    votes = np.zeros(n_samples)
    for t, sample in enumerate(model.estimators_samples_):
        counts = np.bincount(sample, minlength=n_samples)
        _, leaf = np.unique(leaves[:, t], return_inverse=True)
        drawn = counts * weights
        leaf_weight = np.bincount(leaf, weights=drawn)
        leaf_sums = np.stack(
            [np.bincount(leaf, weights=drawn * column) for column in targets.T], 1
        )
        out = counts == 0
        sums[out] += leaf_sums[leaf[out]] / leaf_weight[leaf[out], None]
        votes[out] += 1
    assert votes.min() > 0
    return sums / votes[:, None]


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_classifier_oob_equals_the_reference(cls):
    X, y, weights = data()
    model = cls(n_estimators=25, oob_score=True, random_state=1, n_jobs=2)
    model.fit(X, y, sample_weight=weights)
    expected = reference(model, X, np.eye(3)[y], weights)
    np.testing.assert_allclose(model.oob_decision_function_, expected, atol=1e-6)
    assert model.oob_score_ == accuracy_score(y, np.argmax(expected, axis=1))
    assert 0.5 < model.oob_score_ < 1.0
    # The rows of weight 0 are scored by every tree.
    np.testing.assert_allclose(
        model.oob_decision_function_[weights == 0],
        model.predict_proba(X[weights == 0]),
        atol=1e-6,
    )


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_regressor_oob_equals_the_reference(cls):
    X, y, weights = data()
    values = np.stack([X[:, 0] + y, 2.0 * y], 1)
    model = cls(n_estimators=25, oob_score=True, random_state=1, n_jobs=1)
    model.fit(X, values, sample_weight=weights)
    expected = reference(model, X, values, weights)
    np.testing.assert_allclose(model.oob_prediction_, expected, rtol=1e-10)
    assert model.oob_score_ == pytest.approx(r2_score(values, expected))
    single = cls(n_estimators=25, oob_score=True, random_state=1).fit(X, values[:, 1])
    assert single.oob_prediction_.shape == (len(X),)
    assert single.oob_score_ == r2_score(values[:, 1], single.oob_prediction_)


def test_honest_trees_leave_their_estimation_rows_out_of_bag():
    X, y, _ = data()
    model = RandomForestClassifier(
        n_estimators=25, honest_fraction=0.5, oob_score=True, random_state=0
    ).fit(X, y)
    for sample in model.estimators_samples_:
        # Half the rows fill the leaves, the other half is bootstrapped: about
        # 0.5 + 0.5 * (1 - 1/e) of the rows are in a tree's sample.
        assert 0.75 < len(np.unique(sample)) / len(X) < 0.88
    assert 0.5 < model.oob_score_ <= 1.0


def test_a_callable_scores_the_oob_predictions():
    X, y, _ = data()
    calls = []

    def metric(truth, prediction):
        calls.append((truth, prediction))
        return mean_absolute_error(truth, prediction)

    model = RandomForestRegressor(n_estimators=25, oob_score=metric, random_state=0)
    model.fit(X, y.astype(float))
    truth, prediction = calls[0]
    np.testing.assert_array_equal(truth, y)
    assert prediction is model.oob_prediction_
    assert model.oob_score_ == mean_absolute_error(y, model.oob_prediction_)


def test_bad_oob_requests_say_what_to_fix():
    X, y, _ = data()
    with pytest.raises(ValueError, match="bootstrap=True"):
        RandomForestClassifier(oob_score=True, bootstrap=False).fit(X, y)
    with pytest.raises(TypeError, match="oob_score must be"):
        RandomForestClassifier(oob_score="accuracy").fit(X, y)


def test_too_few_trees_warn_and_refits_drop_stale_estimates():
    X, y, _ = data()
    model = RandomForestClassifier(n_estimators=2, oob_score=True, random_state=0)
    with pytest.warns(UserWarning, match="do not have OOB scores"):
        model.fit(X, y)
    never_out = model.oob_decision_function_.sum(axis=1) == 0
    assert never_out.any()
    assert not never_out.all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.set_params(oob_score=False).fit(X, y)
    assert not hasattr(model, "oob_score_")
    assert not hasattr(model, "oob_decision_function_")
