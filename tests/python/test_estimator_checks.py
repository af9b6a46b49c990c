"""scikit-learn's own compatibility checks for the classifiers and regressors."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueForestRegressor,
)

# Checks these forests cannot pass by design.
EXPECTED_FAILED_CHECKS = {
    # scikit-learn lists the same expected failure for its RandomForestClassifier.
    "check_sample_weight_equivalence_on_dense_data": (
        "a bootstrap draws samples by count, so an integer weight is not the same "
        "as repeating the sample"
    ),
}


def expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [
        ManifoldObliqueForestClassifier(n_estimators=5),
        SparseObliqueForestClassifier(n_estimators=5),
        RandomForestClassifier(n_estimators=5),
        ManifoldObliqueForestRegressor(n_estimators=5),
        SparseObliqueForestRegressor(n_estimators=5),
        RandomForestRegressor(n_estimators=5),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
