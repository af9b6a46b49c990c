"""Input and parameter checks shared by the estimators.

X reaches the engine as a float32, float64 or uint8 array without a copy when it
already is one (any memory layout when scoring, C order for fit); every check
raises ValueError or TypeError with a message that says what to fix.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import re

import numpy as np
from joblib import cpu_count
from sklearn.utils.validation import _check_sample_weight, check_array, column_or_1d

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn < 1.6 offers the same logic as a method

    def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
        return estimator._validate_data(X, y, **kwargs)


# The dtypes the engine reads directly. float32 first: the engine compares values
# in float32, so anything else is converted to the smaller type; uint8 is how
# images are stored, and a float copy would take four times its memory.
ENGINE_DTYPES = (np.float32, np.float64, np.uint8)
# scikit-learn >= 1.6 names it ensure_all_finite; older versions force_all_finite.
_ALL_FINITE = (
    "ensure_all_finite"
    if "ensure_all_finite" in inspect.signature(check_array).parameters
    else "force_all_finite"
)
# NaN marks a missing value, which every forest learns a side for; infinity is
# refused.
_X_CHECKS = {
    "dtype": list(ENGINE_DTYPES),
    "order": "C",
    "accept_sparse": False,
    _ALL_FINITE: "allow-nan",
}
# Scoring leaves X in its dtype and layout and leaves values unchecked: the engine
# checks each chunk of rows inside its parallel walk, where a separate pass over X
# would be a serial scan of all of it (numpy's sum, in scikit-learn's check).
_X_SCORING_CHECKS = {
    "dtype": "numeric",
    "order": None,
    "accept_sparse": False,
    _ALL_FINITE: False,
}
# Rows of X converted to float32 at a time when X has another integer dtype, so
# that scoring a memory-mapped X never holds a float copy of all of it.
_BLOCK_BYTES = 64 << 20
_Y_CHECKS = {"ensure_2d": False, "dtype": None}

_NUMERIC_HINT = (
    "X must be numeric; encode text or categories as numbers first (e.g. with "
    "sklearn.preprocessing.OrdinalEncoder)."
)
_X_HINTS = (
    ("could not convert", _NUMERIC_HINT),
    ("argument must be", _NUMERIC_HINT),
    (
        "Found array with dim",
        "X must be 2-D with one sample per row; flatten each "
        "sample with X.reshape(len(X), -1) and describe its layout with image_shape.",
    ),
    (
        "infinity",
        "Replace the infinite values by finite ones, or by NaN to mark them missing.",
    ),
)


def raise_with_hint(error, X=None):
    """Raise ``error`` again, or a copy with a hint on how to fix it when we know
    one, chained to it; ``X`` is what was validated, to describe its shape.

    Never ``raise error from error``: an exception that is its own ``__cause__``
    makes every walk of the chain endless (dask.distributed's error collection
    loops on it, its memory growing, and the user never sees the error).
    """
    message = str(error)
    if message.startswith("Expected 2D array"):
        # scikit-learn's message prints the whole array, however long.
        raise ValueError(
            f"X must be 2-D with one sample per row, got {_shape_of(X)}. Reshape "
            "your data: X.reshape(-1, 1) for a single feature, X.reshape(1, -1) "
            "for a single sample."
        ) from None
    # numpy >= 2 shows text as np.str_('a'): the user passed 'a'.
    message = re.sub(r"np\.(?:str_|bytes_)\((.*?)\)", r"\1", message).strip()
    for needle, hint in _X_HINTS:
        if needle in message:
            end = "" if message.endswith((".", "!", "?")) else "."
            raise type(error)(f"{message}{end} {hint}") from error
    raise error


def _shape_of(X):
    try:
        shape = np.shape(X)
    except ValueError:  # ragged nested lists
        return "ragged rows"
    return f"a {len(shape)}-D array of shape {shape}"


def refuse_text(X):
    """Raise ValueError if X holds text: scikit-learn would read numbers written as
    text ('1.5') as numbers, a silent conversion of what is likely a wrong column."""
    columns = getattr(X, "dtypes", None)
    if columns is not None and hasattr(columns, "items"):  # a DataFrame
        for name, dtype in columns.items():
            if dtype.kind in "OSU" or str(dtype).startswith("string"):
                _refuse_text_in(X[name].to_numpy(), f"column {name!r}, ")
        return
    if not isinstance(X, np.ndarray):
        if not isinstance(X, (list, tuple)):
            return
        try:
            X = np.asarray(X)
        except ValueError:  # ragged rows: scikit-learn says so
            return
    if X.dtype.kind in "OSU":
        _refuse_text_in(X, "")


def _refuse_text_in(values, column):
    for index, value in np.ndenumerate(values):
        if isinstance(value, (str, bytes)):
            where = f"row {index[0]}" + "".join(f", column {i}" for i in index[1:])
            text = str(value) if isinstance(value, str) else bytes(value)
            raise ValueError(
                f"X holds text ({text!r} at {column}{where}); X must be numeric. "
                "Convert numbers stored as text with X.astype(float) and encode "
                "categories as numbers (e.g. with "
                "sklearn.preprocessing.OrdinalEncoder)."
            )


def raise_for_y(error, y):
    """Raise ``error`` again, or in its place a message saying where y holds NaN
    or infinity and what to do."""
    message = str(error)
    if not message.startswith("Input y contains"):
        raise error
    try:
        values = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise error from None
    bad = ~np.isfinite(values)
    if values.ndim == 2:
        bad = bad.any(axis=1)
    rows = np.flatnonzero(bad)
    if len(rows) == 0:
        raise error
    what = (
        "NaN"
        if np.isnan(values.reshape(len(values), -1)[rows[0]]).any()
        else ("infinity")
    )
    raise ValueError(
        f"y contains {what} (first at row {rows[0]}; {len(rows)} row(s) in all); "
        "drop those samples from X and y (e.g. keep = np.isfinite(y); X[keep], "
        "y[keep]) or fill in their targets."
    ) from None


def validate_X_scoring(estimator, X):
    """Validate X's type, shape and feature names for scoring, without copying an
    array of a numeric dtype and without reading its values."""
    refuse_text(X)
    try:
        return validate_data(estimator, X, reset=False, **_X_SCORING_CHECKS)
    except (ValueError, TypeError) as error:
        raise_with_hint(error, X)


def engine_blocks(X):
    """Split a validated X into (rows, block) pairs the engine reads.

    X in a dtype of :data:`ENGINE_DTYPES` is one block, uncopied. Other integer
    and bool dtypes are converted to float32 a bounded block of rows at a time;
    other floats (float16, longdouble) at once, so that the engine reports a
    non-finite value at its row of X.
    """
    if X.dtype in ENGINE_DTYPES:
        return [(slice(None), X)]
    if X.dtype.kind not in "biu":
        return [(slice(None), X.astype(np.float32))]
    step = max(1, _BLOCK_BYTES // (4 * X.shape[1]))
    return (
        (rows, np.asarray(X[rows], dtype=np.float32))
        for rows in (slice(start, start + step) for start in range(0, len(X), step))
    )


def score_blocks(estimator, X, kernel, width, dtype, n_threads):
    """Run an engine scoring ``kernel(x, n_threads, out)`` over X, which fills one
    output array of ``width`` columns (None: one value per row) in place.

    X of a dtype the engine reads (float32, float64, uint8) goes to it as it is,
    memory-mapped or not, in any layout; other dtypes go a bounded block of rows at
    a time (:func:`engine_blocks`).
    """
    X = validate_X_scoring(estimator, X)
    shape = (len(X),) if width is None else (len(X), width)
    out = np.empty(shape, dtype)
    for rows, block in engine_blocks(X):
        kernel(block, n_threads, out[rows])
    return out


def validate_X_y(estimator, X, y):
    refuse_text(X)
    y_given = y
    try:
        X, y = validate_data(
            estimator, X, y, validate_separately=(_X_CHECKS, _Y_CHECKS)
        )
    except (ValueError, TypeError) as error:
        if str(error).startswith("Input y contains"):
            raise_for_y(error, y_given)
        raise_with_hint(error, X)
    y = column_or_1d(y, warn=True)
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} labels but X has {X.shape[0]} samples; pass "
            "exactly one label per row of X."
        )
    return X, y


def validate_X_y_values(estimator, X, y):
    """X as for :func:`validate_X_y`; y as float64 numbers of shape (n_samples,) or
    (n_samples, n_outputs), finite."""
    if y is None:
        raise ValueError(
            f"This {type(estimator).__name__} estimator requires y to be passed, "
            "but the target y is None."
        )
    refuse_text(X)
    try:
        X = validate_data(estimator, X, reset=True, **_X_CHECKS)
    except (ValueError, TypeError) as error:
        raise_with_hint(error, X)
    try:
        y = check_array(
            y, ensure_2d=False, dtype=np.float64, input_name="y", ensure_min_samples=0
        )
    except (ValueError, TypeError) as error:
        if "convert" not in str(error):
            raise_for_y(error, y)
        raise type(error)(
            f"{error} A regressor's y must hold numbers (one column per output); "
            "for class labels use a classifier."
        ) from error
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} targets but X has {X.shape[0]} samples; pass "
            "exactly one target (or row of targets) per row of X."
        )
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError("y has no outputs: give it at least one column.")
    return X, y


def is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(
        value, (bool, np.bool_)
    )


# Largest int the engine takes (its counts are 64-bit).
MAX_ENGINE_INT = 2**63 - 1


def check_int(name, value, minimum, maximum=None):
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}.")
    limit = MAX_ENGINE_INT if maximum is None else min(maximum, MAX_ENGINE_INT)
    if value > limit:
        raise ValueError(
            f"{name} must be >= {minimum} and <= {limit}, got {value!r}: too large."
        )
    return int(value)


def check_real(name, value, low, high=math.inf, *, low_open=False, high_open=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r}.")
    value = float(value)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if not math.isfinite(value) or too_low or too_high:
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}.")
    return value


def check_choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value


def check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_verbose(value):
    """verbose as a level: a bool, or an int of at least 0."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    return check_int("verbose", value, 0)


# joblib's cpu_count per set of processors this process may run on: it reads the
# cgroup's files on every call, a third of a one-row prediction's time.
_cores_by_affinity: dict[object, int] = {}


def available_cores():
    """The cores this process may use (joblib's ``cpu_count``: its processors and its
    cgroup's quota), read again only when the processors it may run on change."""
    affinity = (
        frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    )
    cores = _cores_by_affinity.get(affinity)
    if cores is None:
        cores = _cores_by_affinity[affinity] = cpu_count()
    return cores


def resolve_n_threads(n_jobs):
    """scikit-learn's n_jobs: None is one thread, -1 all cores, -2 all but one.

    Never more threads than available cores: more would only add start-up time and
    contention (scikit-learn's joblib backend has the same effect).
    """
    if n_jobs is None:
        return 1
    if not is_int(n_jobs):
        raise TypeError(f"n_jobs must be None or an int, got {n_jobs!r}.")
    if n_jobs == 0:
        raise ValueError(
            "n_jobs=0 does not name a number of threads; use None or 1 for one "
            "thread, -1 for all cores."
        )
    cores = available_cores()
    if n_jobs < 0:
        return max(1, cores + 1 + int(n_jobs))
    return min(int(n_jobs), cores)


def resolve_sample_weight(sample_weight, X, y, task_sample_weight):
    """sample_weight as float64 with the task's weights (class_weight) folded in by
    ``task_sample_weight(sample_weight, y)``, checked; None when all weights are 1."""
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(sample_weight < 0):
            raise ValueError(
                "sample_weight must be non-negative; found "
                f"{int(np.sum(sample_weight < 0))} negative value(s). Give "
                "those samples weight 0 or remove them."
            )
    sample_weight = task_sample_weight(sample_weight, y)
    if sample_weight is not None and not np.any(sample_weight > 0):
        raise ValueError(
            "Every sample has weight 0 (sample_weight, times class_weight for "
            "classifiers); give at least one sample a positive weight."
        )
    return sample_weight


def resolve_fraction_or_count(name, value, n_samples, minimum, high_open):
    """An int count, or a float fraction of n_samples (scikit-learn's meaning)."""
    if is_int(value):
        return check_int(name, value, minimum)
    fraction = check_real(name, value, 0.0, 1.0, low_open=True, high_open=high_open)
    return max(minimum, math.ceil(fraction * n_samples))


def scaled_to_one(weights):
    """Non-negative ``weights`` divided by the largest (unchanged when all are 0)."""
    largest = weights.max()
    return weights / largest if largest > 0 else weights


def per_axis(name, value, ndim):
    """Broadcast a single value to every axis, or check one value per axis."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != ndim:
            raise ValueError(
                f"{name} has {len(value)} entries but the image has {ndim} axes; "
                "give one value per axis or a single value for all axes."
            )
        return list(value)
    return [value] * ndim


def per_axis_ints(name, value, shape):
    values = per_axis(name, value, len(shape))
    return [check_int(f"{name}[{axis}]", v, 1) for axis, v in enumerate(values)]


def per_axis_bools(name, value, ndim):
    values = per_axis(name, value, ndim)
    return [check_bool(f"{name}[{axis}]", v) for axis, v in enumerate(values)]
