"""Isolation forests: anomalies scored first, scores as the path-length formula
says, agreement with scikit-learn's IsolationForest, thread invariance, errors."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import IsolationForest as SklearnIsolationForest
from sklearn.ensemble._iforest import _average_path_length
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from morf_rs import (
    IsolationForest,
    ManifoldObliqueIsolationForest,
    SparseObliqueIsolationForest,
)


def images_with_bright_patches(n, n_outliers, seed):
    """n 8x8 noise images, the first n_outliers with a bright 3x3 patch."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8, 8))
    for i in range(n_outliers):
        top, left = rng.integers(0, 6, size=2)
        X[i, top : top + 3, left : left + 3] += 2.0
    return X.reshape(n, 64)


def detectors(**kwargs):
    return [
        IsolationForest(**kwargs),
        SparseObliqueIsolationForest(**kwargs),
        ManifoldObliqueIsolationForest(image_shape=(8, 8), patch_max=3, **kwargs),
    ]


# scikit-learn lists the same expected failure for its IsolationForest: rows are
# drawn without replacement in proportion to their weights, so an integer weight
# is not the same as repeating the row.
EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "sample_weight is not equivalent to removing/repeating samples."
    ),
}


@parametrize_with_checks(
    [
        IsolationForest(n_estimators=5),
        SparseObliqueIsolationForest(n_estimators=5),
        ManifoldObliqueIsolationForest(n_estimators=5),
    ],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("detector", detectors(random_state=0))
def test_planted_anomalies_score_below_the_other_rows(detector):
    X = images_with_bright_patches(400, 20, seed=1)
    scores = detector.fit(X).score_samples(X)
    is_outlier = np.arange(400) < 20
    assert roc_auc_score(is_outlier, -scores) > 0.9
    assert np.all((scores >= -1) & (scores < 0))
    assert np.array_equal(detector.predict(X), np.where(scores < -0.5, -1, 1))


@pytest.mark.parametrize("detector", detectors(n_estimators=9, random_state=3))
def test_scores_are_minus_two_to_the_minus_mean_path_length_over_c(detector):
    X = images_with_bright_patches(300, 10, seed=2)
    X[5, 10] = np.nan
    detector.set_params(max_samples=64).fit(X)
    assert detector.max_samples_ == 64
    leaves = detector.apply(X)
    lengths = detector._isolation_forest.leaf_path_lengths()
    path = np.column_stack([lengths[t][leaves[:, t]] for t in range(9)])
    assert np.all(np.isfinite(path))
    # Trees stop at depth ceil(log2(64)) = 6, where a leaf adds c(rows it holds).
    assert np.all(path <= 6 + _average_path_length(np.array([64]))[0])
    expected = -(2.0 ** (-path.mean(axis=1) / _average_path_length(np.array([64]))[0]))
    np.testing.assert_allclose(detector.score_samples(X), expected, rtol=1e-12)
    assert np.all(detector.tree_stats_["max_depth"] <= 6)


def test_axis_aligned_scores_agree_with_scikit_learn():
    """Same algorithm, other random streams: the AUC on a standard outlier set and
    the mean score of the inliers agree within a small margin."""
    rng = np.random.default_rng(0)
    inliers = np.vstack(
        [rng.normal(-2, 0.5, size=(300, 2)), rng.normal(2, 0.5, size=(300, 2))]
    )
    outliers = rng.uniform(-6, 6, size=(60, 2))
    X = np.vstack([outliers, inliers])
    is_outlier = np.arange(len(X)) < 60
    ours, theirs = [], []
    for seed in range(5):
        for model, results in (
            (IsolationForest(random_state=seed), ours),
            (SklearnIsolationForest(random_state=seed), theirs),
        ):
            scores = model.fit(X).score_samples(X)
            results.append((roc_auc_score(is_outlier, -scores), scores[60:].mean()))
    (auc_ours, inlier_ours), (auc_theirs, inlier_theirs) = (
        np.mean(ours, axis=0),
        np.mean(theirs, axis=0),
    )
    assert abs(auc_ours - auc_theirs) < 0.02, (auc_ours, auc_theirs)
    assert abs(inlier_ours - inlier_theirs) < 0.01, (inlier_ours, inlier_theirs)


@pytest.mark.parametrize("detector", detectors(n_estimators=30, random_state=7))
def test_the_same_forest_for_any_number_of_threads_and_after_pickling(detector):
    X = images_with_bright_patches(3000, 30, seed=4)
    one = detector.set_params(n_jobs=1).fit(X)
    bytes_one = one._isolation_forest.to_bytes()
    scores_one = one.score_samples(X)
    two = pickle.loads(pickle.dumps(detector.set_params(n_jobs=2).fit(X)))
    assert two._isolation_forest.to_bytes() == bytes_one
    np.testing.assert_array_equal(two.score_samples(X), scores_one)
    other = detector.set_params(random_state=8).fit(X)
    assert other._isolation_forest.to_bytes() != bytes_one


# scikit-learn's finiteness check sums X, which overflows here (and says so).
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
@pytest.mark.parametrize("detector", detectors(n_estimators=5, random_state=0))
def test_projections_that_overflow_still_cut_at_finite_thresholds(detector):
    # Patches of values near float32's largest sum to +-inf: a threshold drawn
    # between such ends was infinite, and the saved model would not load.
    rng = np.random.default_rng(5)
    X = (rng.standard_normal((200, 64)) * 3e38).clip(-3.4e38, 3.4e38)
    X = X.astype(np.float32)
    fitted = detector.fit(X)
    assert np.isfinite(fitted.score_samples(X)).all()
    structure = fitted.tree_structure(0)
    splits = structure.children_left >= 0
    assert np.isfinite(structure.threshold[splits]).all()
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.score_samples(X), fitted.score_samples(X))


def test_contamination_sets_the_offset_to_that_percentile():
    X = images_with_bright_patches(500, 25, seed=5)
    assert IsolationForest(random_state=0).fit(X).offset_ == -0.5
    detector = IsolationForest(contamination=0.1, random_state=0).fit(X)
    assert detector.offset_ == np.percentile(detector.score_samples(X), 10.0)
    assert np.mean(detector.predict(X) == -1) == pytest.approx(0.1, abs=0.005)
    np.testing.assert_allclose(
        detector.decision_function(X), detector.score_samples(X) - detector.offset_
    )


def test_missing_values_are_scored_and_max_samples_resolves_as_scikit_learn():
    X = images_with_bright_patches(200, 0, seed=6)
    X[::7, 3] = np.nan
    detector = IsolationForest(random_state=0).fit(X)
    assert np.all(np.isfinite(detector.score_samples(X)))
    assert detector.max_samples_ == 200
    assert IsolationForest(max_samples=0.5).fit(X).max_samples_ == 100
    with pytest.warns(UserWarning, match="greater than the total number"):
        assert IsolationForest(max_samples=1000).fit(X).max_samples_ == 200


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"contamination": 0.7}, ValueError, "contamination"),
        ({"contamination": "most"}, ValueError, "contamination"),
        ({"max_samples": 0}, ValueError, "max_samples"),
        ({"max_samples": 1.5}, ValueError, "max_samples"),
        ({"max_samples": "all"}, ValueError, "max_samples"),
        ({"n_estimators": 0}, ValueError, "n_estimators"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"max_features": 0}, ValueError, "max_features"),
        ({"max_features": 65}, ValueError, "max_features"),
        ({"max_features": 1.5}, ValueError, "max_features"),
        ({"warm_start": "yes"}, TypeError, "warm_start"),
    ],
)
def test_bad_parameters_say_what_to_fix(params, error, match):
    X = images_with_bright_patches(50, 0, seed=7)
    with pytest.raises(error, match=match):
        IsolationForest(**params).fit(X)


def test_bad_data_says_what_to_fix():
    X = images_with_bright_patches(50, 0, seed=8)
    with pytest.raises(ValueError, match="image_shape"):
        ManifoldObliqueIsolationForest(image_shape=(7, 7)).fit(X)
    with pytest.raises(ValueError, match="feature_combinations"):
        SparseObliqueIsolationForest(feature_combinations=0.5).fit(X)
    bad = X.copy()
    bad[3, 4] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        IsolationForest().fit(bad)
    detector = IsolationForest(n_estimators=5).fit(X)
    with pytest.raises(ValueError, match="infinity"):
        detector.score_samples(bad)
    with pytest.raises(ValueError, match="features"):
        detector.predict(X[:, :10])
