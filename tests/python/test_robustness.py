"""Hostile input fails cleanly (issue 14).

Each test reproduces one of the failures the issue lists. Those that used to abort the
interpreter run in a subprocess, so that a regression fails the test rather than
killing the test run.
"""

import pickle
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs._core import Forest


def run_isolated(code, timeout=120):
    """Run ``code`` in a fresh interpreter; fail on a non-zero exit (an abort too)."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, (
        f"exit code {result.returncode}\n{result.stdout[-2000:]}\n"
        f"{result.stderr[-4000:]}"
    )
    return result.stdout


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data, start):
    value, shift, position = 0, 0, start
    while True:
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if byte < 0x80:
            return value, position
        shift += 7


def with_counts(data, n_features=None, n_classes=None):
    """Saved forest bytes with other feature or class counts and a valid checksum.

    The body opens with the feature count, the task (variant 0: classification) and
    the class count, as varints.
    """
    features, after_features = read_varint(data, 6)
    task, after_task = read_varint(data, after_features)
    assert task == 0, "a classification forest"
    classes, after_classes = read_varint(data, after_task)
    body = (
        varint(features if n_features is None else n_features)
        + varint(task)
        + varint(classes if n_classes is None else n_classes)
        + data[after_classes:-4]
    )
    return sealed(data[:6] + body)


def sealed(framed):
    """Header and body followed by their checksum, CRC-32 (zlib's)."""
    return framed + zlib.crc32(framed).to_bytes(4, "little")


@pytest.fixture(scope="module")
def small_morf():
    rng = np.random.default_rng(0)
    X = rng.random((40, 8))
    y = (X[:, :4].sum(axis=1) > X[:, 4:].sum(axis=1)).astype(int)
    clf = ManifoldObliqueForestClassifier(
        n_estimators=3, max_depth=3, random_state=0
    ).fit(X, y)
    return clf, X


def test_crafted_counts_in_a_pickle_are_refused_when_it_loads(small_morf):
    """Failure 1: a pickle declaring 2^32 - 1 classes or 2^40 features aborted."""
    clf, X = small_morf
    state = clf.__getstate__()
    assert with_counts(state["_forest"]) == state["_forest"]
    crafted = {
        "classes": with_counts(state["_forest"], n_classes=2**32 - 1),
        "features 2^40": with_counts(state["_forest"], n_features=2**40),
        "features 2^62": with_counts(state["_forest"], n_features=2**62),
    }
    output = run_isolated(
        f"""
        import pickle
        import numpy as np
        from morf_rs import ManifoldObliqueForestClassifier
        state = pickle.loads({pickle.dumps(state)!r})
        for name, data in {crafted!r}.items():
            restored = ManifoldObliqueForestClassifier.__new__(
                ManifoldObliqueForestClassifier
            )
            try:
                restored.__setstate__(dict(state, _forest=data))
            except ValueError as error:
                assert "classes" in str(error) or "features" in str(error), error
                print(name, "refused")
        """
    )
    assert output.split("\n")[:3] == [f"{name} refused" for name in crafted]


def test_every_bit_flip_of_a_saved_forest_is_refused_or_harmless(small_morf):
    """Failure 2: flipped bits loaded silently and gave NaN or wrong answers."""
    clf, X = small_morf
    data = clf.__getstate__()["_forest"]
    expected = clf.predict_proba(X)
    n_loaded = 0
    for bit in range(8 * len(data)):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        try:
            forest = Forest.from_bytes(bytes(flipped))
        except ValueError:
            continue
        n_loaded += 1
        np.testing.assert_array_equal(forest.predict_proba(X, 1), expected)
    assert n_loaded == 0
    with pytest.raises(ValueError, match="trailing"):
        Forest.from_bytes(sealed(data[:-4] + b"\0"))


def test_absurd_tree_and_atom_counts_are_refused_before_fitting():
    """Failure 3: n_estimators=10**12 aborted, max_features=10**9 exhausted memory."""
    output = run_isolated(
        """
        import numpy as np
        from morf_rs import (
            ManifoldObliqueForestClassifier,
            RandomForestClassifier,
            SparseObliqueForestClassifier,
        )
        X = np.random.default_rng(0).random((30, 16))
        y = np.arange(30) % 2
        cases = [
            (RandomForestClassifier(n_estimators=10**12), "n_estimators"),
            (RandomForestClassifier(n_estimators=2**62), "n_estimators"),
            (SparseObliqueForestClassifier(max_features=10**9), "max_features"),
            (ManifoldObliqueForestClassifier(max_features=1e9), "max_features"),
        ]
        for clf, name in cases:
            try:
                clf.fit(X, y)
            except ValueError as error:
                assert name in str(error) and "too large" in str(error), error
                print("refused")
        """
    )
    assert output.split() == ["refused"] * 4


def test_n_jobs_is_capped_at_the_available_cores():
    """Failure 4: n_jobs=2**40 started threads until the process was killed."""
    from joblib import cpu_count

    from morf_rs._validation import resolve_n_threads

    assert resolve_n_threads(2**40) == cpu_count()
    assert resolve_n_threads(1) == 1
    output = run_isolated(
        """
        import numpy as np
        from morf_rs import RandomForestClassifier
        X = np.random.default_rng(0).random((40, 5))
        y = np.arange(40) % 2
        a = RandomForestClassifier(n_estimators=2, n_jobs=2**40, random_state=0)
        b = RandomForestClassifier(n_estimators=2, random_state=0)
        a.fit(X, y)
        b.fit(X, y)
        assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
        print("same")
        """,
        timeout=60,
    )
    assert output.split() == ["same"]


@pytest.mark.parametrize("weight", [1e160, 1e308])
def test_extreme_finite_weights_train_as_unit_weights(weight):
    """Failure 5: weights of 1e308 gave NaN probabilities, 1e160 one-leaf trees."""
    from morf_rs import RandomForestClassifier

    rng = np.random.default_rng(1)
    X = rng.random((60, 4))
    y = (X[:, 0] > 0.5).astype(int)
    reference = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    expected = reference.predict_proba(X)
    for kwargs, fit_kwargs in [
        ({}, {"sample_weight": np.full(60, weight)}),
        ({"class_weight": {0: weight, 1: weight}}, {}),
        (
            {"class_weight": {0: weight, 1: weight}},
            {"sample_weight": np.full(60, weight)},
        ),
    ]:
        clf = RandomForestClassifier(n_estimators=5, random_state=0, **kwargs)
        proba = clf.fit(X, y, **fit_kwargs).predict_proba(X)
        np.testing.assert_array_equal(proba, expected)
        assert clf.tree_stats_["n_leaves"].min() > 1


def test_x_written_by_another_thread_during_fit_never_panics():
    """Failure 6: a Rust panic (PanicException) escaped when X changed during fit."""
    output = run_isolated(
        """
        import pickle
        import threading
        import numpy as np
        from morf_rs import ManifoldObliqueForestClassifier
        rng = np.random.default_rng(0)
        outcomes = set()
        for attempt in range(40):
            X = rng.integers(0, 4, size=(400, 32)).astype(np.float32)
            y = np.arange(400) % 3
            stop = threading.Event()
            def scribble():
                values = [np.nan, 0.5, 1e30, -7.25, 3.0]
                k = 0
                while not stop.is_set():
                    X[k % 400, :] = values[k % len(values)]
                    k += 1
            writer = threading.Thread(target=scribble)
            clf = ManifoldObliqueForestClassifier(
                n_estimators=8, patch_max=8, random_state=attempt
            )
            writer.start()
            try:
                clf.fit(X, y)
                outcomes.add("fitted")
            except ValueError:
                outcomes.add("ValueError")
            finally:
                stop.set()
                writer.join()
            if hasattr(clf, "_forest"):
                # A non-finite threshold made forests that could not be loaded.
                pickle.loads(pickle.dumps(clf))
        print(sorted(outcomes))
        """,
        timeout=300,
    )
    assert "fitted" in output or "ValueError" in output


def test_a_panic_in_the_engine_is_a_runtime_error_that_asks_for_a_report():
    """Failure 6: PanicException is not even an Exception; a bug must be one."""
    from morf_rs import _core

    with pytest.raises(RuntimeError, match="bug in morf_rs.*report") as caught:
        _core._panic_in_engine()
    assert "a deliberate panic" in str(caught.value)


def test_messages_say_what_is_too_large():
    """Failure 7: 1e300 was called NaN or infinity, 2**64 'the wrong type'."""
    from morf_rs import RandomForestClassifier

    X = np.random.default_rng(2).random((20, 3))
    y = np.arange(20) % 2
    X[4, 1] = 1e300
    with pytest.raises(ValueError, match=r"X\[4, 1\] = 1e300 is too large for float32"):
        RandomForestClassifier(n_estimators=2).fit(X, y)
    X[4, 1] = 0.5
    for name in ["max_depth", "min_samples_split", "min_samples_leaf"]:
        with pytest.raises(
            ValueError, match=f"{name} must .*, got 18446744073709551616: too large"
        ):
            RandomForestClassifier(n_estimators=2, **{name: 2**64}).fit(X, y)
    with pytest.raises(ValueError, match="max_depth is too large"):
        Forest.fit(X, y.astype(np.uint32), 2, None, {"max_depth": 2**64}, 1)


@pytest.mark.parametrize(
    ("scale", "match"),
    [(2.0**490, "overflow the squared errors"), (2.0**-490, "vanish in the squared")],
)
def test_forest_regressors_refuse_targets_their_squared_errors_cannot_hold(
    scale, match
):
    # Beyond these a forest's split costs overflow or vanish in float64: the trees
    # learned nothing and said nothing. Just inside them, the same trees as for y.
    from morf_rs import RandomForestRegressor

    X = np.random.default_rng(3).random((60, 3))
    y = X[:, 0] * 2 - X[:, 1]
    forest = RandomForestRegressor(n_estimators=3, random_state=0)
    with pytest.raises(ValueError, match=match):
        forest.fit(X, y * scale)
    inside = scale / 2.0**12 if scale > 1 else scale * 2.0**12
    plain = forest.fit(X, y).predict(X)
    np.testing.assert_array_equal(forest.fit(X, y * inside).predict(X), plain * inside)


@pytest.mark.parametrize(
    ("shape", "patch_min", "expected"),
    [
        ((28, 28), 1, [5, 5]),
        ((100,), 1, [10]),
        ((100_000,), 1, [316]),
        ((3, 100), (2, 5), [2, 10]),
        ((28, 28), (7, 1), [7, 5]),
    ],
)
def test_default_patch_max_is_the_square_root_of_each_axis(shape, patch_min, expected):
    """Failure 7: patches up to the whole axis made 100,000 features take minutes."""
    clf = ManifoldObliqueForestClassifier(image_shape=shape, patch_min=patch_min)
    n_features = int(np.prod(shape))
    assert clf._atom_params(n_features)["patch_max"] == expected
    # The whole axis stays available by asking for it.
    clf.set_params(patch_max=shape)
    assert clf._atom_params(n_features)["patch_max"] == list(shape)
