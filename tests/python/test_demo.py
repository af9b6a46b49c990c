"""`python -m morf_rs demo` runs end to end."""

import argparse
import io
import subprocess
import sys

import pytest

from morf_rs.__main__ import main, run_demo


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
    assert "[8/8] noisy-bars, n_train=60: fitting RF (axis-aligned)" in result.stderr
    explanation, table = result.stdout.split("\n\n")
    assert explanation.startswith("circle: ")
    assert "\nnoisy-bars: " in explanation
    lines = table.splitlines()
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
        for name in ("circle", "noisy-bars")
        for n_train in ("30", "60")
        for model in ("MORF", "RF")
    ]
    for row in rows:
        error, seconds = float(row[-2]), float(row[-1])
        assert 0.0 <= error <= 1.0
        assert seconds >= 0.0


def test_help_and_bad_usage(capsys):
    # The module run as a user runs it, then the other usages in this process.
    help_result = run_module("--help")
    assert help_result.returncode == 0
    assert "demo" in help_result.stdout
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--help"])
    assert exited.value.code == 0
    assert "--n-train" in capsys.readouterr().out
    assert main([]) == 0
    assert capsys.readouterr().out == help_result.stdout
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--n-train", "50", "0"])
    assert exited.value.code == 2
    message = "--n-train, --n-test and --n-estimators must be at least 1"
    assert message in capsys.readouterr().err


def test_package_imports_with_docstrings_stripped():
    result = subprocess.run(
        [sys.executable, "-OO", "-c", "import morf_rs"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_the_demo_shows_what_morf_does():
    # At n_train=500 MORF's error must be well below the axis-aligned forest's on
    # every experiment: the point of the demo.
    args = argparse.Namespace(
        n_train=[500], n_test=2000, n_estimators=40, n_jobs=-1, random_state=0
    )
    rows = run_demo(args, out=io.StringIO(), progress=io.StringIO())
    errors = {(name, model): error for name, _, model, error, _ in rows}
    for name in ("circle", "noisy-bars"):
        morf, rf = errors[name, "MORF"], errors[name, "RF (axis-aligned)"]
        assert morf < 0.5 * rf, (name, morf, rf)
        assert rf - morf > 0.05, (name, morf, rf)
