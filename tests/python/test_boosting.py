"""The gradient-boosting estimators: scikit-learn's checks, behaviour, errors."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from morf_rs import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    ManifoldObliqueGradientBoostingClassifier,
    ManifoldObliqueGradientBoostingRegressor,
    SparseObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingRegressor,
)
from morf_rs.datasets import make_circle

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

# Checks these models cannot pass by design.
EXPECTED_FAILED_CHECKS = {
    # scikit-learn lists the same for HistGradientBoostingClassifier/Regressor.
    "check_sample_weight_equivalence_on_dense_data": (
        "bin edges are quantiles of the samples, not of their weights, so repeating "
        "a sample moves them where an integer weight does not; it may still pass "
        "where the edges happen not to move"
    ),
}


def expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [cls(n_estimators=5, min_samples_leaf=1) for cls in CLASSIFIERS + REGRESSORS],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def three_classes(n, random_state):
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, 12))
    y = np.argmax(X[:, :3], axis=1)
    return X, np.array(["a", "b", "c"])[y]


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classifiers_learn_and_stage_their_predictions(cls):
    X, y = three_classes(900, 0)
    atoms = 24 if cls._max_features_above_n else None
    clf = cls(n_estimators=40, max_features=atoms, random_state=0).fit(X[:600], y[:600])
    assert clf.n_iter_ == 40
    assert clf.n_trees_per_iteration_ == 3
    assert clf.score(X[600:], y[600:]) > 0.8
    staged = list(clf.staged_predict_proba(X[600:]))
    assert len(staged) == clf.n_iter_
    np.testing.assert_allclose(staged[-1], clf.predict_proba(X[600:]), atol=1e-12)
    # Accuracy grows with the rounds.
    accuracy = [np.mean(clf.classes_[p.argmax(1)] == y[600:]) for p in staged]
    assert accuracy[-1] > accuracy[0]
    np.testing.assert_array_equal(
        list(clf.staged_predict(X[600:]))[-1], clf.predict(X[600:])
    )
    raw = clf.decision_function(X[:5])
    assert raw.shape == (5, 3)
    np.testing.assert_allclose(
        np.exp(raw) / np.exp(raw).sum(1, keepdims=True), clf.predict_proba(X[:5])
    )


def test_two_classes_take_one_tree_per_round_and_a_log_odds():
    X, y = three_classes(400, 1)
    y = y == "a"
    clf = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert clf.n_trees_per_iteration_ == 1
    assert len(clf.tree_stats_["n_leaves"]) == 10
    log_odds = clf.decision_function(X[:5])
    assert log_odds.shape == (5,)
    np.testing.assert_allclose(
        clf.predict_proba(X[:5])[:, 1], 1 / (1 + np.exp(-log_odds))
    )


def test_many_classes_each_grow_trees_on_their_own_gradients():
    # 37 classes: the trees of a round grow sixteen classes at a time, the last
    # batch holding an odd class whose root is built alone. Class c is marked by
    # feature c alone, so each class's score must follow its own feature.
    rng = np.random.default_rng(0)
    n_classes, per_class = 37, 12
    y = np.repeat(np.arange(n_classes), per_class)
    X = rng.normal(size=(len(y), n_classes))
    X[np.arange(len(y)), y] += 6.0
    clf = GradientBoostingClassifier(
        n_estimators=4, min_samples_leaf=2, random_state=0
    ).fit(X, y)
    scores = clf.decision_function(X)
    recall = [(clf.predict(X[y == c]) == c).mean() for c in range(n_classes)]
    assert min(recall) >= 0.9, recall
    follows = [np.corrcoef(scores[:, c], X[:, c])[0, 1] for c in range(n_classes)]
    assert min(follows) > 0.5, follows


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressors_learn_a_smooth_target(cls):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1200, 8))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    atoms = 16 if cls._max_features_above_n else None
    reg = cls(n_estimators=100, max_features=atoms, random_state=0).fit(
        X[:900], y[:900]
    )
    assert reg.score(X[900:], y[900:]) > 0.85
    staged = list(reg.staged_predict(X[900:]))
    np.testing.assert_allclose(staged[-1], reg.predict(X[900:]))
    assert reg.train_score_[-1] > reg.train_score_[0]


def test_patch_atoms_beat_single_cells_on_the_circle():
    # Segments on a cycle: their lengths are sums over windows, which no single cell
    # shows (make_circle, the papers' experiment A).
    X, y = make_circle(300, random_state=0)
    X_test, y_test = make_circle(1000, random_state=1)
    common = dict(n_estimators=30, random_state=0)
    patch = ManifoldObliqueGradientBoostingClassifier(
        patch_min=3, patch_max=12, wrap=True, **common
    ).fit(X, y)
    single = GradientBoostingClassifier(**common).fit(X, y)
    assert patch.score(X_test, y_test) > single.score(X_test, y_test) + 0.15
    assert patch.image_shape_ == (100,)
    assert patch.feature_importances_.shape == (100,)
    assert np.isclose(patch.gain_importances_.sum(), 1.0)


def test_same_random_state_same_model_for_any_n_jobs():
    X, y = three_classes(700, 3)
    fit = lambda n_jobs: SparseObliqueGradientBoostingClassifier(  # noqa: E731
        n_estimators=8,
        subsample=0.7,
        early_stopping=True,
        random_state=5,
        n_jobs=n_jobs,
    ).fit(X, y)
    one, two = fit(1), fit(2)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
    assert one._booster.to_bytes() == two._booster.to_bytes()


def test_early_stopping_auto_turns_on_above_ten_thousand_samples():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(10_050, 3))
    y = rng.integers(0, 2, size=len(X))  # labels unrelated to X
    clf = GradientBoostingClassifier(n_estimators=100, random_state=0).fit(X, y)
    assert clf.do_early_stopping_
    assert clf.n_iter_ < 100
    assert len(clf.validation_score_) == clf.n_iter_ + 1
    small = GradientBoostingClassifier(n_estimators=5).fit(X[:500], y[:500])
    assert not small.do_early_stopping_
    assert len(small.validation_score_) == 0
    assert len(small.train_score_) == 6


def test_validation_fraction_may_be_a_count():
    X, y = three_classes(300, 5)
    clf = GradientBoostingClassifier(
        n_estimators=200,
        early_stopping=True,
        validation_fraction=60,
        n_iter_no_change=3,
    ).fit(X, y)
    assert clf.n_iter_ < 200


def test_pickles_round_trip_and_tampering_is_caught():
    X, y = three_classes(300, 6)
    clf = ManifoldObliqueGradientBoostingClassifier(
        n_estimators=5, patch_max=4, random_state=0
    ).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))
    state = clf.__getstate__()
    state["classes_"] = state["classes_"][:2]
    with pytest.raises(ValueError, match="altered or damaged"):
        ManifoldObliqueGradientBoostingClassifier().__setstate__(state)
    state = clf.__getstate__()
    state["_booster"] = state["_booster"][:-1]
    with pytest.raises(ValueError, match="checksum|truncated"):
        ManifoldObliqueGradientBoostingClassifier().__setstate__(state)


def test_class_weight_moves_the_predictions_towards_the_heavy_class():
    X, y = three_classes(600, 7)
    plain = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    heavy = GradientBoostingClassifier(
        n_estimators=10, random_state=0, class_weight={"a": 10.0}
    ).fit(X, y)
    assert heavy.predict_proba(X)[:, 0].mean() > plain.predict_proba(X)[:, 0].mean()


def test_verbose_reports_progress(capsys):
    X, y = three_classes(200, 8)
    GradientBoostingClassifier(n_estimators=4, verbose=1).fit(X, y)
    assert "4/4 rounds" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"learning_rate": 0}, ValueError, "learning_rate"),
        ({"max_bins": 300}, ValueError, "max_bins"),
        ({"max_bins": 1}, ValueError, "max_bins"),
        ({"subsample": 0.0}, ValueError, "subsample"),
        ({"max_leaf_nodes": 1}, ValueError, "max_leaf_nodes"),
        ({"min_samples_leaf": 0}, ValueError, "min_samples_leaf"),
        ({"l2_regularization": -1.0}, ValueError, "l2_regularization"),
        ({"early_stopping": "yes"}, ValueError, "early_stopping"),
        ({"early_stopping": 1}, TypeError, "early_stopping"),
        (
            {"early_stopping": True, "validation_fraction": 1.5},
            ValueError,
            "validation_fraction",
        ),
        (
            {"early_stopping": True, "validation_fraction": 500},
            ValueError,
            "validation_fraction",
        ),
        ({"n_iter_no_change": 0}, ValueError, "n_iter_no_change"),
        ({"tol": -1.0}, ValueError, "tol"),
        ({"max_features": 2.0}, ValueError, "max_features"),
        ({"class_weight": "heavy"}, ValueError, "class_weight"),
        ({"n_estimators": 0}, ValueError, "n_estimators"),
    ],
)
def test_bad_parameters_say_what_to_fix(params, error, message):
    X, y = three_classes(100, 9)
    with pytest.raises(error, match=message):
        GradientBoostingClassifier(**params).fit(X, y)


def test_regression_targets_must_be_finite_numbers():
    X, _ = three_classes(50, 11)
    y = np.ones(50)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GradientBoostingRegressor().fit(X, y)
    with pytest.raises(ValueError, match="numbers"):
        GradientBoostingRegressor().fit(X, np.array(["x"] * 50))


@pytest.mark.parametrize("Model", CLASSIFIERS + REGRESSORS)
def test_missing_values_go_to_the_side_learnt_at_fit(Model):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 12)).astype(np.float32)
    y = rng.integers(0, 2, size=400)
    # Only whether features 4 to 11 (the lower two rows of the 3 x 4 image) are
    # missing tells the classes apart: an atom inside them has a missing projection
    # (one that also reads a present cell rescales its present sum).
    X[y == 1, 4:] = np.nan
    params = {"n_estimators": 5, "random_state": 0}
    manifold = (
        ManifoldObliqueGradientBoostingClassifier,
        ManifoldObliqueGradientBoostingRegressor,
    )
    if Model in manifold:
        params.update(image_shape=(3, 4), patch_max=(2, 2))
    model = Model(**params).fit(X, y)
    X_test = rng.normal(size=(200, 12)).astype(np.float32)
    y_test = rng.integers(0, 2, size=200)
    X_test[y_test == 1, 4:] = np.nan
    prediction = model.predict(X_test)
    if hasattr(model, "predict_proba"):
        np.testing.assert_array_equal(prediction, y_test)
    else:
        np.testing.assert_array_equal(np.round(prediction), y_test)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X_test), prediction)
    X_test[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinit"):
        model.predict(X_test)


def test_a_failed_fit_keeps_the_previous_model():
    X, y = three_classes(200, 12)
    clf = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
    before = clf.predict_proba(X)
    clf.set_params(learning_rate=-1.0)
    with pytest.raises(ValueError, match="learning_rate"):
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), before)
