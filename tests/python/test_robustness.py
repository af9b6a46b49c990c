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

    The body opens with the two counts as varints.
    """
    features, after_features = read_varint(data, 6)
    classes, after_classes = read_varint(data, after_features)
    body = (
        varint(features if n_features is None else n_features)
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
