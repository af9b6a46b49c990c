"""Type checkers see the estimators' parameters: ``mypy --strict`` accepts a user
script that constructs every public estimator with keyword arguments, and flags a
misspelt parameter."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import morf_rs

USER_SCRIPT = """
import numpy as np

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

models = [
    ManifoldObliqueForestClassifier(
        n_estimators=10, image_shape=(28, 28), patch_min=1, patch_max=(2, 9),
        wrap=False, contiguous=(True, True), max_features="sqrt",
        criterion="entropy", max_leaf_nodes=None, honest_fraction=0.5,
        class_weight={0: 1.0, 1: 2.0}, n_jobs=-1, random_state=0,
    ),
    ManifoldObliqueForestRegressor(
        n_estimators=10, image_shape=(8, 8), max_features=20, criterion="poisson",
        min_samples_leaf=0.1, max_samples=0.5, honest_prior="ignore",
        random_state=np.random.RandomState(0),
    ),
    SparseObliqueForestClassifier(
        feature_combinations=2.0, oob_score=True, class_weight="balanced",
        verbose=1, warm_start=True,
    ),
    SparseObliqueForestRegressor(n_estimators=5, max_depth=4, ccp_alpha=0.01),
    RandomForestClassifier(n_estimators=10, bootstrap=False, max_features=None),
    RandomForestRegressor(
        n_estimators=10, oob_score=lambda y, p: 0.0, min_samples_split=4,
    ),
    ManifoldObliqueGradientBoostingClassifier(
        n_estimators=30, learning_rate=0.2, image_shape=(28, 28), patch_max=(2, 9),
        early_stopping="auto", validation_fraction=0.2, n_iter_no_change=5,
    ),
    ManifoldObliqueGradientBoostingRegressor(
        n_estimators=30, patch_max=8, l2_regularization=1.0, max_bins=64,
    ),
    SparseObliqueGradientBoostingClassifier(
        feature_combinations=2.0, max_features=20, subsample=0.8, early_stopping=True,
    ),
    SparseObliqueGradientBoostingRegressor(n_estimators=10, tol=1e-5),
    GradientBoostingClassifier(n_estimators=10, class_weight="balanced", n_jobs=2),
    GradientBoostingRegressor(max_leaf_nodes=None, max_depth=3, min_samples_leaf=5),
]
"""


def run_mypy(script, tmp_path):
    pytest.importorskip("mypy.api", reason="needs mypy: pip install .[test]")
    path = tmp_path / "user_script.py"
    path.write_text(script)
    package_root = str(Path(morf_rs.__file__).parent.parent)
    env = dict(os.environ)
    # mypy finds an installed morf_rs by itself, and one imported from a source
    # tree through MYPYPATH; errors inside morf_rs (which imports the untyped
    # scikit-learn) are not the user's and stay silent.
    if "site-packages" not in package_root:
        env["MYPYPATH"] = package_root
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--follow-imports=silent",
        "--cache-dir",
        str(tmp_path / "cache"),
        str(path),
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def test_mypy_strict_accepts_every_estimator_built_with_keywords(tmp_path):
    result = run_mypy(USER_SCRIPT, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_flags_a_misspelt_parameter(tmp_path):
    misspelt = USER_SCRIPT.replace("max_leaf_nodes=None, max_depth=3", "max_dept=3")
    assert misspelt != USER_SCRIPT
    result = run_mypy(misspelt, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Unexpected keyword argument "max_dept"' in result.stdout, result.stdout
    assert "GradientBoostingRegressor" in result.stdout


def test_mypy_flags_a_value_of_the_wrong_type(tmp_path):
    wrong = USER_SCRIPT.replace('criterion="entropy"', 'criterion="entropi"')
    assert wrong != USER_SCRIPT
    result = run_mypy(wrong, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert '"criterion"' in result.stdout, result.stdout
