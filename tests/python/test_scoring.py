"""Scoring reads X where it lies: every dtype and layout scores the same, the only
pass over X is the engine's parallel walk, and a memory-mapped X larger than the
memory allowed is scored within it."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from conftest import make_blobs_data
from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    _validation,
)
from morf_rs._validation import validate_X_scoring


def pixel_data(n_samples, n_features=16, random_state=0):
    """Whole values in 0..=255 whose class shows in the first features."""
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 3
    X = rng.integers(0, 160, size=(n_samples, n_features))
    X[:, :4] += 40 * y[:, None]
    return X.astype(np.uint8), y


@pytest.fixture(scope="module")
def pixels():
    return pixel_data(600)


def test_every_dtype_and_layout_scores_as_float32(forest_class, pixels):
    X, y = pixels
    forest = forest_class(n_estimators=6, random_state=0, n_jobs=2).fit(X, y)
    methods = ("predict_proba", "predict", "apply")
    X32 = X.astype(np.float32)
    variants = {
        "uint8": X,
        "float64": X.astype(np.float64),
        "int16": X.astype(np.int16),
        "fortran": np.asfortranarray(X32),
        "strided": np.repeat(X32, 2, axis=0)[::2],
        "dataframe": pd.DataFrame(X32),
        "list": X32.tolist(),
    }
    for name, variant in variants.items():
        for method in methods:
            np.testing.assert_array_equal(
                getattr(forest, method)(variant),
                getattr(forest, method)(X32),
                err_msg=f"{name} {method}",
            )
    flags = X > 100
    for method in methods:
        np.testing.assert_array_equal(
            getattr(forest, method)(flags),
            getattr(forest, method)(flags.astype(np.float32)),
        )


@pytest.mark.parametrize(
    "estimator",
    [
        RandomForestClassifier(n_estimators=3, random_state=0),
        RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
        SparseObliqueForestClassifier(n_estimators=3, random_state=0),
        ManifoldObliqueForestClassifier(
            n_estimators=3, image_shape=(4, 4), patch_max=(2, 3), random_state=0
        ),
        ManifoldObliqueGradientBoostingClassifier(
            n_estimators=5, image_shape=(4, 4), early_stopping=False, random_state=0
        ),
    ],
    ids=["rf", "shallow-rf", "sporf", "morf", "boosted"],
)
def test_rows_of_pixels_score_as_bytes_and_as_floats_alike(estimator):
    # Rows whose values are all whole numbers in 0..=255 are walked as bytes, a chunk
    # of rows (16 at least) at a time; a chunk holding any other value as floats.
    # Every eighth row nudged off the whole numbers sends every chunk the float way:
    # the other rows must reach the same leaves and scores either way.
    X, y = pixel_data(3000)
    estimator.fit(X, y)
    X32 = X.astype(np.float32)
    nudged = X32.copy()
    nudged[::8, 5] += 0.25
    kept = np.arange(len(X)) % 8 != 0
    for method in ("apply", "predict_proba"):
        for n_jobs in (1, 2):
            estimator.set_params(n_jobs=n_jobs)
            as_bytes = getattr(estimator, method)(X32)
            as_floats = getattr(estimator, method)(nudged)
            np.testing.assert_array_equal(
                as_bytes[kept], as_floats[kept], err_msg=method
            )


class RecordingEngine:
    """Forwards to the engine's forest, noting the dtype and rows of each call."""

    def __init__(self, forest):
        self.forest = forest
        self.calls = []

    def __getattr__(self, name):
        attribute = getattr(self.forest, name)
        if not callable(attribute):
            return attribute

        def record(x, *args):
            self.calls.append((name, x.dtype, len(x)))
            return attribute(x, *args)

        return record


def test_other_integer_dtypes_are_converted_a_block_at_a_time(
    forest_class, pixels, monkeypatch
):
    X, y = pixels
    forest = forest_class(n_estimators=4, random_state=0).fit(X, y)
    expected = [forest.predict_proba(X), forest.predict(X), forest.apply(X)]
    monkeypatch.setattr(_validation, "_BLOCK_BYTES", 4 * X.shape[1] * 70)
    engine = forest._forest = RecordingEngine(forest._forest)
    X16 = X.astype(np.int16)
    got = [forest.predict_proba(X16), forest.predict(X16), forest.apply(X16)]
    for values, want in zip(got, expected):
        np.testing.assert_array_equal(values, want)
    # 600 rows in blocks of 70, each converted to float32.
    blocks = [np.dtype(np.float32)] * 9
    assert [(dtype, rows) for _, dtype, rows in engine.calls] == list(
        zip(blocks * 3, ([70] * 8 + [40]) * 3)
    )
    # uint8 goes in one piece, as it is.
    engine.calls.clear()
    forest.predict_proba(X)
    assert engine.calls == [("predict_proba", np.dtype(np.uint8), 600)]


def test_scoring_does_not_copy_arrays_the_engine_reads(tmp_path):
    X, _ = make_blobs_data()
    forest = RandomForestClassifier(n_estimators=2).fit(X, np.arange(len(X)) % 3)
    memmap = np.memmap(tmp_path / "x", dtype=np.float32, mode="w+", shape=X.shape)
    memmap[:] = X
    for array in (
        X,
        X.astype(np.float32),
        np.asfortranarray(X).astype(np.uint8),
        X[::-1],
        memmap,
    ):
        assert np.shares_memory(validate_X_scoring(forest, array), array)


def test_scoring_makes_no_serial_finiteness_pass(forest_class, data, monkeypatch):
    """scikit-learn's finiteness check sums all of X on one thread; the engine
    checks each chunk of rows in its parallel walk instead, and says where."""
    X, y = data
    forest = forest_class(n_estimators=3, random_state=0).fit(X, y)
    expected = forest.predict_proba(X)

    def no_serial_scan(*args, **kwargs):
        raise AssertionError("a serial scan of X on the scoring path")

    monkeypatch.setattr("sklearn.utils.validation._assert_all_finite", no_serial_scan)
    np.testing.assert_array_equal(forest.predict_proba(X), expected)
    bad = X.copy()
    bad[70, 4] = np.inf
    bad[20:, 2] = np.nan  # missing values are no error
    with pytest.raises(
        ValueError, match=r"X contains infinity \(first at row 70, column 4\)"
    ):
        forest.predict(bad)
    # A float16 X is converted as a whole, so the row named is X's.
    bad = bad.astype(np.float16)
    with pytest.raises(
        ValueError, match=r"X contains infinity \(first at row 70, column 4\)"
    ):
        forest.apply(bad)


# Scores a memory-mapped X under a limit on the process's private memory (the
# mapped file is page cache, outside the limit) that leaves room for the output
# and a few megabytes, then shows that the limit would stop a copy of X.
_BOUNDED_SCORING = textwrap.dedent(
    """
    import pickle, resource, sys
    import numpy as np
    from morf_rs import _validation

    model_path, x_path, dtype, order, n_rows, n_features = sys.argv[1:]
    shape = (int(n_rows), int(n_features))
    X = np.memmap(x_path, dtype=dtype, mode="r", shape=shape, order=order)
    with open(model_path, "rb") as f:
        forest = pickle.load(f)
    _validation._BLOCK_BYTES = 4 << 20

    def data_bytes():
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmData"].split()[0]) * 1024

    output = shape[0] * forest.n_classes_ * 8
    limit = data_bytes() + output + (40 << 20)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.RLIM_INFINITY))
    proba = forest.predict_proba(X)
    tail = np.asarray(X[-1000:], dtype=np.float32)
    np.testing.assert_array_equal(proba[-1000:], forest.predict_proba(tail))
    del proba
    np.testing.assert_array_equal(forest.predict(X)[-1000:], forest.predict(tail))
    try:
        np.array(X, dtype=np.float32)
    except MemoryError:
        print("bounded")
    """
)


@pytest.mark.parametrize(
    ("dtype", "order"),
    [("uint8", "C"), ("float32", "F"), ("int16", "C")],
    ids=["uint8", "float32-fortran", "int16-blocks"],
)
def test_a_memmap_larger_than_the_memory_allowed_is_scored(tmp_path, dtype, order):
    n_rows, n_features = 1_000_000, 48
    X_train, y_train = pixel_data(2000, n_features)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=4, patch_max=6, random_state=0, n_jobs=2
    )
    forest.fit(X_train, y_train)
    model_path = tmp_path / "model.pkl"
    model_path.write_bytes(pickle.dumps(forest))
    x_path = tmp_path / "x"
    X = np.memmap(
        x_path, dtype=dtype, mode="w+", shape=(n_rows, n_features), order=order
    )
    X[:] = np.tile(X_train, (n_rows // len(X_train), 1))
    X.flush()
    del X
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _BOUNDED_SCORING,
            str(model_path),
            str(x_path),
            dtype,
            order,
            str(n_rows),
            str(n_features),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "bounded"
