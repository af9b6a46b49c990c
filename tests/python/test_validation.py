"""Every bad input gets a ValueError or TypeError that says what to fix."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from morf_rs import (
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
)

N_SAMPLES, N_FEATURES = 30, 10
RNG = np.random.default_rng(0)
X = RNG.standard_normal((N_SAMPLES, N_FEATURES))
Y = np.arange(N_SAMPLES) % 2


def with_value(index, value):
    bad = X.copy()
    bad[index] = value
    return bad


@pytest.mark.parametrize(
    ("X_bad", "y_bad", "match"),
    [
        (with_value((3, 4), np.inf), Y, "(?s)infinity.*or by NaN to mark them missing"),
        (
            with_value((0, 0), -np.inf),
            Y,
            "(?s)infinity.*or by NaN to mark them missing",
        ),
        (
            X[:, 0],
            Y,
            r"got a 1-D array of shape \(30,\)\. Reshape your data: X.reshape\(-1, 1\)",
        ),
        (X.reshape(N_SAMPLES, 2, 5), Y, "(?s)dim 3.*X.reshape\\(len\\(X\\), -1\\)"),
        (X[:0], Y[:0], "0 sample\\(s\\)"),
        (X[:, :0], Y, "0 feature\\(s\\)"),
        (X, Y[:-1], "y has 29 labels but X has 30 samples"),
        (X, np.ones((N_SAMPLES, 2)), "y should be a 1d array"),
        (X, np.linspace(0, 1, N_SAMPLES), "Unknown label type"),
        (X, None, "requires y to be passed"),
    ],
    ids=[
        "inf",
        "-inf",
        "1-d",
        "3-d",
        "no-samples",
        "no-features",
        "y-length",
        "y-2d",
        "y-continuous",
        "y-none",
    ],
)
def test_fit_rejects_bad_data(forest_class, X_bad, y_bad, match):
    with pytest.raises(ValueError, match=match):
        forest_class(n_estimators=2).fit(X_bad, y_bad)


def test_fit_rejects_non_numeric_X(forest_class):
    X_text = X.astype(object)
    X_text[2, 3] = "seven"
    match = r"X holds text \('seven' at row 2, column 3\).*OrdinalEncoder"
    with pytest.raises(ValueError, match=match):
        forest_class(n_estimators=2).fit(X_text, Y)


def test_fit_rejects_sparse_X(forest_class):
    with pytest.raises(TypeError, match="dense data is required"):
        forest_class(n_estimators=2).fit(sp.csr_matrix(X), Y)


@pytest.mark.parametrize(
    ("sample_weight", "match"),
    [
        (np.r_[-1.0, np.ones(N_SAMPLES - 1)], "sample_weight must be non-negative"),
        (np.r_[np.nan, np.ones(N_SAMPLES - 1)], "Input sample_weight contains NaN"),
        (np.r_[np.inf, np.ones(N_SAMPLES - 1)], "sample_weight contains infinity"),
        (np.ones(N_SAMPLES - 1), re.escape("sample_weight.shape == (29,)")),
        # scikit-learn >= 1.8 rejects all-zero weights itself, older versions do not.
        (np.zeros(N_SAMPLES), "non-zero|positive weight"),
    ],
    ids=["negative", "nan", "inf", "length", "all-zero"],
)
def test_fit_rejects_bad_sample_weight(forest_class, sample_weight, match):
    with pytest.raises(ValueError, match=match):
        forest_class(n_estimators=2).fit(X, Y, sample_weight=sample_weight)


def test_class_weight_that_zeroes_every_sample_is_rejected(forest_class):
    forest = forest_class(n_estimators=2, class_weight={0: 0.0, 1: 0.0})
    with pytest.raises(ValueError, match="give at least one sample a positive weight"):
        forest.fit(X, Y)


@pytest.mark.parametrize(
    ("X_bad", "match"),
    [
        (X[:, :3], "X has 3 features, but \\w+ is expecting 10 features"),
        (with_value((1, 1), -np.inf), r"infinity \(first at row 1, column 1\)"),
        (with_value((2, 3), np.inf), r"infinity \(first at row 2, column 3\)"),
        (X[0], "X must be 2-D with one sample per row"),
    ],
    ids=["n-features", "-inf", "inf", "1-d"],
)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "apply"])
def test_predict_rejects_bad_data(forest_class, method, X_bad, match):
    forest = forest_class(n_estimators=2, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match=match):
        getattr(forest, method)(X_bad)


def test_predict_before_fit_says_to_fit(forest_class):
    with pytest.raises(ValueError, match="(?s)not fitted yet.*Call 'fit'"):
        forest_class().predict(X)


SHARED_BAD_PARAMS = [
    ({"n_estimators": 0}, ValueError, "n_estimators must be >= 1, got 0"),
    ({"n_estimators": 2.5}, TypeError, "n_estimators must be an int"),
    ({"criterion": "mse"}, ValueError, "criterion must be one of 'gini'"),
    ({"max_depth": 0}, ValueError, "max_depth must be >= 1"),
    ({"min_samples_split": 1}, ValueError, "min_samples_split must be >= 2"),
    ({"min_samples_split": 1.5}, ValueError, "min_samples_split must be in \\(0.0"),
    ({"min_samples_leaf": 0}, ValueError, "min_samples_leaf must be >= 1"),
    ({"min_samples_leaf": 1.0}, ValueError, "min_samples_leaf must be in \\(0.0"),
    ({"min_impurity_decrease": -0.1}, ValueError, "min_impurity_decrease must be"),
    ({"max_leaf_nodes": 1}, ValueError, "max_leaf_nodes must be >= 2, got 1"),
    ({"max_leaf_nodes": 0}, ValueError, "max_leaf_nodes must be >= 2, got 0"),
    ({"max_leaf_nodes": 8.0}, TypeError, "max_leaf_nodes must be an int"),
    ({"ccp_alpha": -0.1}, ValueError, "ccp_alpha must be in \\[0.0, inf\\]"),
    ({"ccp_alpha": np.nan}, ValueError, "ccp_alpha must be in"),
    ({"ccp_alpha": "0.1"}, TypeError, "ccp_alpha must be a number"),
    ({"max_bins": 1}, ValueError, "max_bins must be >= 2, got 1"),
    ({"max_bins": 65_537}, ValueError, "max_bins must be >= 2 and <= 65536"),
    ({"max_bins": 32.0}, TypeError, "max_bins must be an int"),
    ({"max_features": "auto"}, ValueError, "max_features must be 'sqrt', 'log2'"),
    ({"max_features": 0}, ValueError, "max_features must be >= 1"),
    ({"max_features": -0.5}, ValueError, "max_features must be in \\(0.0"),
    ({"max_features": [1]}, TypeError, "max_features must be a number"),
    ({"bootstrap": "yes"}, TypeError, "bootstrap must be True or False"),
    ({"max_samples": 0}, ValueError, "max_samples must be >= 1"),
    ({"max_samples": N_SAMPLES + 1}, ValueError, "max_samples must be >= 1 and <="),
    ({"max_samples": 1.5}, ValueError, "max_samples must be in \\(0.0, 1.0\\]"),
    ({"honest_fraction": 1.0}, ValueError, "honest_fraction must be in \\[0.0, 1.0\\)"),
    ({"honest_fraction": np.nan}, ValueError, "honest_fraction must be in"),
    ({"honest_prior": "none"}, ValueError, "honest_prior must be one of 'ignore'"),
    ({"class_weight": "subsample"}, ValueError, "class_weight must be None"),
    ({"n_jobs": 0}, ValueError, "n_jobs=0 does not name a number of threads"),
    ({"n_jobs": "2"}, TypeError, "n_jobs must be None or an int"),
    ({"random_state": "seed"}, ValueError, "cannot be used to seed"),
]


@pytest.mark.parametrize(("params", "error", "match"), SHARED_BAD_PARAMS)
def test_fit_rejects_bad_shared_params(forest_class, params, error, match):
    with pytest.raises(error, match=match):
        forest_class(**params).fit(X, Y)


@pytest.mark.parametrize(
    ("forest_class", "params", "error", "match"),
    [
        (RandomForestClassifier, {"max_features": 11}, ValueError, "<= 10, got 11"),
        (RandomForestClassifier, {"max_features": 1.5}, ValueError, "\\(0.0, 1.0\\]"),
        (
            SparseObliqueForestClassifier,
            {"feature_combinations": 0.5},
            ValueError,
            "feature_combinations must be in \\[1.0, 700.0\\]",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (3, 4)},
            ValueError,
            "image_shape \\(3, 4\\) holds 12 values but X has 10 features",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (0, 10)},
            ValueError,
            "image_shape\\[0\\] must be >= 1",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": "2x5"},
            TypeError,
            "image_shape must be a tuple of ints",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (2, 5), "patch_max": (2, 6)},
            ValueError,
            "patch_max\\[1\\]=6 is larger than image_shape\\[1\\]=5",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"patch_min": 11},
            ValueError,
            "patch_min\\[0\\]=11 is larger than patch_max\\[0\\]=10",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (2, 5), "patch_min": (1, 4), "patch_max": (2, 3)},
            ValueError,
            "patch_min\\[1\\]=4 is larger than patch_max\\[1\\]=3",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (2, 5), "patch_min": (1, 1, 1)},
            ValueError,
            "patch_min has 3 entries but the image has 2 axes",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"patch_min": 0},
            ValueError,
            "patch_min\\[0\\] must be >= 1",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"wrap": "yes"},
            TypeError,
            "wrap\\[0\\] must be True or False",
        ),
        (
            ManifoldObliqueForestClassifier,
            {"image_shape": (2, 5), "contiguous": [True]},
            ValueError,
            "contiguous has 1 entries but the image has 2 axes",
        ),
    ],
)
def test_fit_rejects_bad_atom_params(forest_class, params, error, match):
    with pytest.raises(error, match=match):
        forest_class(**params).fit(X, Y)


def test_bad_params_are_stored_unchanged_until_fit():
    forest = ManifoldObliqueForestClassifier(image_shape="nonsense", n_estimators=-1)
    assert forest.get_params()["image_shape"] == "nonsense"
    assert forest.n_estimators == -1
