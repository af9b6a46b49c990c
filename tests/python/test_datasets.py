"""The simulated experiments have the layout and the class structure of the papers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morf_rs.datasets import (
    MULTIVARIATE_A,
    make_bars,
    make_circle,
    make_impulse,
    make_multivariate,
)

GENERATORS = {
    make_circle: 100,
    make_bars: 784,
    make_impulse: 100,
    make_multivariate: 300,
}


@pytest.mark.parametrize(("make", "n_features"), GENERATORS.items())
@pytest.mark.parametrize("n_samples", [1, 2, 7, 500])
def test_shapes_dtypes_and_balance(make, n_features, n_samples):
    X, y = make(n_samples, random_state=0)
    assert X.shape == (n_samples, n_features)
    assert X.dtype == np.float32
    assert X.flags.c_contiguous
    assert y.shape == (n_samples,)
    assert y.dtype == np.int64
    counts = np.bincount(y, minlength=2)
    assert counts.sum() == n_samples
    assert abs(counts[0] - counts[1]) <= 1


@pytest.mark.parametrize("make", GENERATORS)
def test_random_state_reproduces_and_varies(make):
    X, y = make(50, random_state=3)
    X_again, y_again = make(50, random_state=3)
    np.testing.assert_array_equal(X, X_again)
    np.testing.assert_array_equal(y, y_again)
    assert not np.array_equal(make(50, random_state=4)[0], X)


@pytest.mark.parametrize("make", GENERATORS)
def test_n_samples_must_be_positive(make):
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        make(0)


def cyclic_runs(row):
    """Lengths of the runs of 1s in a binary vector read as a cycle."""
    if row.all():
        return [len(row)]
    # Rotate so that the vector starts just after a 0: no run is split in two.
    row = np.roll(row, -int(np.flatnonzero(row == 0)[0]))
    edges = np.diff(np.r_[0, row, 0])
    return sorted((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).tolist())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_circle_segments(seed):
    X, y = make_circle(40, random_state=seed)
    assert set(np.unique(X)) <= {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(axis=1), 10)
    for row, label in zip(X.astype(int), y):
        # Two runs means the segments do not touch, on either side.
        assert cyclic_runs(row) == ([5, 5] if label == 0 else [4, 6])


def test_circle_segments_wrap_around():
    X, _ = make_circle(2000, random_state=0)
    assert np.any((X[:, 0] == 1) & (X[:, -1] == 1))


def test_bars_are_rows_or_columns():
    X, y = make_bars(300, random_state=0)
    images = X.reshape(-1, 28, 28)
    assert set(np.unique(X)) <= {0.0, 1.0}
    for image, label in zip(images, y):
        lines = image if label == 0 else image.T
        # Each row (class 0) or column (class 1) is entirely 0 or entirely 1.
        assert np.all(lines.min(axis=1) == lines.max(axis=1))
    n_lines = np.where(y == 0, images[:, :, 0].sum(axis=1), images[:, 0, :].sum(axis=1))
    assert 9 < n_lines.mean() < 11  # k ~ Poisson(10)


def test_noisy_bars_are_the_bars_plus_gaussian_noise():
    X, y = make_bars(400, random_state=0)
    X0, y0 = make_bars(400, random_state=0, noise=0.0)
    np.testing.assert_array_equal(X0, X)
    X_noisy, y_noisy = make_bars(400, random_state=0, noise=1.5)
    np.testing.assert_array_equal(y_noisy, y)
    assert X_noisy.dtype == np.float32
    residual = X_noisy - X
    assert residual.std() == pytest.approx(1.5, rel=0.02)
    assert abs(residual.mean()) < 0.01


@pytest.mark.parametrize("noise", [-0.1, float("nan"), float("inf"), "high"])
def test_bars_noise_must_be_a_finite_non_negative_number(noise):
    with pytest.raises(ValueError, match="noise must be a finite number >= 0"):
        make_bars(10, noise=noise)


def test_impulse_mean_is_the_decaying_impulse():
    X, y = make_impulse(20_000, random_state=0)
    t = np.arange(100)
    impulse = np.where(t >= 20, np.exp(-(t - 20.0)), 0.0)
    difference = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    np.testing.assert_allclose(difference, impulse, atol=0.05)
    assert X.std() == pytest.approx(1.0, abs=0.05)


def test_multivariate_system_is_stable_and_classes_differ_after_the_input():
    assert np.max(np.abs(np.linalg.eigvals(MULTIVARIATE_A))) < 1
    X, y = make_multivariate(4000, random_state=0)
    sensors = X.reshape(-1, 3, 100)  # sensor-major rows
    # Before the earliest input both classes are the same noise process.
    before = sensors[:, :, :20]
    assert abs(before[y == 0].mean() - before[y == 1].mean()) < 0.02
    # After it, class 1's input (B_1 = 0.5 I + 0.1 off the diagonal) is larger.
    after = sensors[:, :, 21:45].mean(axis=(1, 2))
    assert after[y == 1].mean() > after[y == 0].mean() + 0.01


def test_multivariate_noise_is_tunable():
    X, y = make_multivariate(20, random_state=0, noise=0.0)
    sensors = X.reshape(-1, 3, 100)
    # Without noise every sensor is exactly 0 until the input arrives at t >= 20.
    assert np.all(sensors[:, :, :21] == 0)
    assert np.all(np.abs(sensors).sum(axis=(1, 2)) > 0)
