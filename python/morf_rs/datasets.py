"""The simulated two-class experiments of the MORF papers (seed 003, section 5).

Every generator takes ``n_samples`` and ``random_state`` (an int, None or a
``numpy.random.Generator``) and returns ``X`` as float32 of shape
(n_samples, n_features) and ``y`` as int64 labels 0/1 with balanced classes
(their counts differ by at most one, in random order). Each row of ``X`` is
the row-major flattening of the experiment's ``image_shape``.

=========================  ============  ===============================  ============
generator                  image_shape   MORF settings in the paper       Bayes error
=========================  ============  ===============================  ============
:func:`make_circle`        (100,)        patch 3..12, wrap, 0.5 features  0
:func:`make_bars`          (28, 28)      patch (2, 2)..(2, 9), "sqrt"     > 0 (k = 0)
:func:`make_impulse`       (100,)        patch 2..12, 0.3 features        ~0.295
:func:`make_multivariate`  (3, 100)      patch (2, 5)..(2, 10), "sqrt"
=========================  ============  ===============================  ============
"""

import math
import numbers

import numpy as np

__all__ = ["make_bars", "make_circle", "make_impulse", "make_multivariate"]


def __dir__():
    # What dir() and tab completion list: the generators, not numpy or the constants.
    return __all__


CIRCLE_LENGTH = 100
CIRCLE_SEGMENTS = ((5, 5), (4, 6))
BARS_SIDE = 28
BARS_RATE = 10
IMPULSE_LENGTH = 100
IMPULSE_ONSET = 20
MULTIVARIATE_TIMES = 100
MULTIVARIATE_INPUT_TIMES = (20, 40)
# Stable: a damped rotation in sensors 0-1 (|eigenvalue| 0.92) that drives a
# decaying sensor 2 (eigenvalue 0.8). The same A serves both classes.
MULTIVARIATE_A = np.array([[0.9, -0.2, 0.0], [0.2, 0.9, 0.0], [0.05, 0.05, 0.8]])
MULTIVARIATE_B = (
    0.5 * np.eye(3),
    np.full((3, 3), 0.1) + 0.4 * np.eye(3),
)


def _labels(n_samples, rng):
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples!r}.")
    y = np.arange(n_samples, dtype=np.int64) % 2
    rng.shuffle(y)
    return y


def make_circle(n_samples=1000, random_state=None):
    """Experiment (A): two segments of 1s on a discretised circle of 100 cells.

    Class 0 has two segments of length 5, class 1 one of length 4 and one of
    length 6. The segments never touch (at least one 0 between them on both
    sides) and may wrap around the end of the vector. Every row has ten 1s, so
    only the layout tells the classes apart.
    """
    rng = np.random.default_rng(random_state)
    y = _labels(n_samples, rng)
    lengths = np.array(CIRCLE_SEGMENTS)[y]
    # Class 1's order around the circle is random: 4 then 6, or 6 then 4.
    swap = rng.random(n_samples) < 0.5
    lengths[swap] = lengths[swap, ::-1]
    first, second = lengths[:, :1], lengths[:, 1:]
    zeros = CIRCLE_LENGTH - first - second
    start = rng.integers(0, CIRCLE_LENGTH, size=(n_samples, 1))
    # The gap after the first segment leaves at least one 0 on both sides.
    gap = rng.integers(1, zeros)
    offset = (np.arange(CIRCLE_LENGTH) - start) % CIRCLE_LENGTH
    ones = (offset < first) | (
        (offset >= first + gap) & (offset < first + gap + second)
    )
    return ones.astype(np.float32), y


def make_bars(n_samples=1000, random_state=None, *, noise=0.0):
    """Experiment (B): 28x28 binary images of horizontal or vertical bars.

    k ~ Poisson(10) distinct random rows (class 0) or columns (class 1) are
    set to 1; rows are flattened row-major. An image with k = 0 is blank in
    both classes, which is why the Bayes error is not quite 0. ``noise`` > 0
    adds Gaussian noise of that standard deviation to every pixel (not in the
    papers): at ``noise=1`` one pixel tells little, while a patch along a bar
    averages the noise away.
    """
    if not (isinstance(noise, numbers.Real) and 0 <= noise < math.inf):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}.")
    rng = np.random.default_rng(random_state)
    y = _labels(n_samples, rng)
    k = np.minimum(rng.poisson(BARS_RATE, size=n_samples), BARS_SIDE)
    # The k lines of lowest rank in a random permutation are a uniform k-subset.
    rank = rng.random((n_samples, BARS_SIDE)).argsort(axis=1).argsort(axis=1)
    lines = rank < k[:, None]
    horizontal = np.broadcast_to(lines[:, :, None], (n_samples, BARS_SIDE, BARS_SIDE))
    vertical = np.broadcast_to(lines[:, None, :], (n_samples, BARS_SIDE, BARS_SIDE))
    images = np.where((y == 0)[:, None, None], horizontal, vertical)
    X = images.reshape(n_samples, -1).astype(np.float32)
    if noise > 0:
        X += (noise * rng.standard_normal(X.shape)).astype(np.float32)
    return X, y


def make_impulse(n_samples=1000, random_state=None):
    """Experiment (C): white noise, plus a decaying impulse in class 1.

    100 values N(0, 1); class 1 adds exp(-(t - 20)) for t >= 20. The Bayes
    error is about 0.295.
    """
    rng = np.random.default_rng(random_state)
    y = _labels(n_samples, rng)
    t = np.arange(IMPULSE_LENGTH)
    impulse = np.where(t >= IMPULSE_ONSET, np.exp(-(t - IMPULSE_ONSET)), 0.0)
    X = rng.standard_normal((n_samples, IMPULSE_LENGTH)) + y[:, None] * impulse
    return X.astype(np.float32), y


def make_multivariate(n_samples=1000, random_state=None, *, noise=0.1):
    """Experiment (D): 3 sensors x 100 times of a linear dynamical system.

    x(t+1) = A x(t) + B_y u(t) + noise * N(0, I), x(0) = 0, with one stable A
    for both classes (``MULTIVARIATE_A``), B_0 = 0.5 I and B_1 = 0.5 on the
    diagonal, 0.1 off it. The input u is a unit impulse (1 on every input) at
    a random time in [20, 40]. Rows are sensor-major: the 100 times of sensor 0,
    then sensor 1, then sensor 2 (image_shape (3, 100)).
    """
    rng = np.random.default_rng(random_state)
    y = _labels(n_samples, rng)
    low, high = MULTIVARIATE_INPUT_TIMES
    onset = rng.integers(low, high + 1, size=n_samples)
    # B_y times the unit impulse (1, 1, 1): each sample's input response.
    kick = np.stack(MULTIVARIATE_B)[y].sum(axis=2)
    states = np.zeros((n_samples, 3, MULTIVARIATE_TIMES))
    for t in range(MULTIVARIATE_TIMES - 1):
        state = states[:, :, t] @ MULTIVARIATE_A.T
        state += noise * rng.standard_normal((n_samples, 3))
        state += (onset == t)[:, None] * kick
        states[:, :, t + 1] = state
    return states.reshape(n_samples, -1).astype(np.float32), y
