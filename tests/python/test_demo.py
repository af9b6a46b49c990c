"""`python -m morf_rs demo` runs end to end."""

import subprocess
import sys


def run_module(*args):
    return subprocess.run(
        [sys.executable, "-m", "morf_rs", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_prints_a_table_and_progress():
    result = run_module(
        "demo", "--n-train", "30", "60", "--n-test", "100", "--n-estimators", "5"
    )
    assert result.returncode == 0, result.stderr
    assert "[1/8] circle, n_train=30: fitting MORF" in result.stderr
    assert "[8/8] bars, n_train=60: fitting RF (axis-aligned)" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "n_test=100, n_estimators=5"
    assert lines[1].split() == [
        "experiment",
        "n_train",
        "model",
        "test",
        "error",
        "fit",
        "time",
        "(s)",
    ]
    rows = [line.split() for line in lines[2:]]
    assert [row[:3] for row in rows] == [
        [name, n_train, model]
        for name in ("circle", "bars")
        for n_train in ("30", "60")
        for model in ("MORF", "RF")
    ]
    for row in rows:
        error, seconds = float(row[-2]), float(row[-1])
        assert 0.0 <= error <= 1.0
        assert seconds >= 0.0


def test_help_and_bad_usage():
    help_result = run_module("--help")
    assert help_result.returncode == 0
    assert "demo" in help_result.stdout
    demo_help = run_module("demo", "--help")
    assert demo_help.returncode == 0
    assert "--n-train" in demo_help.stdout
    assert run_module().returncode == 2
    bad = run_module("demo", "--n-train", "50", "0")
    assert bad.returncode == 2
    assert "--n-train, --n-test and --n-estimators must be at least 1" in bad.stderr


def test_package_imports_with_docstrings_stripped():
    result = subprocess.run(
        [sys.executable, "-OO", "-c", "import morf_rs"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
