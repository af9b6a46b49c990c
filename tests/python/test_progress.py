"""verbose progress reports and Ctrl-C during fit and predict."""

import _thread
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier, _progress
from morf_rs._core import Forest
from morf_rs.datasets import make_bars, make_circle


def test_verbose_reports_the_end_of_every_fit(forest_class, data, capsys):
    X, y = data
    forest_class(n_estimators=7, verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert re.fullmatch(
        rf"{forest_class.__name__}: 7/7 trees in \d+\.\d s", lines[-1]
    ), lines


def test_quiet_by_default(forest_class, data, capsys):
    X, y = data
    forest_class(n_estimators=7, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("verbose", "error"), [(-1, ValueError), ("yes", TypeError)])
def test_bad_verbose_is_refused(data, verbose, error):
    with pytest.raises(error, match="verbose"):
        RandomForestClassifier(n_estimators=2, verbose=verbose).fit(*data)


def test_verbose_true_means_one(data, capsys):
    RandomForestClassifier(n_estimators=3, verbose=True).fit(*data)
    assert "3/3 trees" in capsys.readouterr().err


def test_the_engine_reports_growing_counts_up_to_every_tree():
    X, y = make_circle(300, random_state=0)
    calls = []
    params = {"n_estimators": 40, "atoms": "patch", "image_shape": [100]}
    params.update(patch_min=[2], patch_max=[10], random_state=1)
    Forest.fit(X, y.astype(np.uint32), 2, None, params, 2, lambda *a: calls.append(a))
    done = [d for d, _ in calls]
    assert calls[-1] == (40, 40)
    assert all(total == 40 for _, total in calls)
    assert done == sorted(set(done))


def test_an_exception_from_the_progress_callback_stops_the_fit():
    X, y = make_bars(500, random_state=0)

    def fail(done, total):
        raise RuntimeError(f"stop at {done}")

    params = {"n_estimators": 100_000, "atoms": "patch", "image_shape": [28, 28]}
    params.update(patch_min=[1, 1], patch_max=[2, 5])
    with pytest.raises(RuntimeError, match="stop at"):
        Forest.fit(X, y.astype(np.uint32), 2, None, params, 1, fail)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_text_progress_writes_a_line_per_tenth_at_a_sensible_rate(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    stream = io.StringIO()
    report = _progress.TextProgress("Forest", stream)
    # (seconds since start, trees done of 100)
    for clock.now, done in [
        (100.5, 5),  # under a tenth: nothing
        (100.8, 10),  # a tenth, but under a second since the start: nothing
        (102.0, 12),  # a tenth passed and 2 s: a line
        (102.5, 25),  # two tenths, but 0.5 s after the last line: nothing
        (103.0, 26),  # now a line
        (104.0, 27),  # still the same tenth: nothing
        (134.0, 28),  # 31 s without a line: a line anyway
        (150.0, 100),
    ]:
        report(done, 100)
    assert stream.getvalue().splitlines() == [
        "Forest: 12/100 trees, 2.0 s, about 14.7 s left",
        "Forest: 26/100 trees, 3.0 s, about 8.5 s left",
        "Forest: 28/100 trees, 34.0 s, about 87.4 s left",
        "Forest: 100/100 trees in 50.0 s",
    ]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


class FakeBar:
    made = []

    def __init__(self, total, desc, unit, file):
        self.n = 0
        self.updates = []
        self.closed = False
        self.args = (total, desc, unit, file)
        FakeBar.made.append(self)

    def update(self, count):
        self.n += count
        self.updates.append(count)

    def close(self):
        self.closed = True


def test_a_bar_on_a_terminal_when_tqdm_is_installed(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(_progress, "_load_tqdm", lambda: FakeBar)
    FakeBar.made.clear()
    with _progress.fit_progress(1, "Forest", 10, 2) as report:
        report(3, 10)
        report(10, 10)
    (bar,) = FakeBar.made
    assert bar.args == (10, "Forest", "tree", terminal)
    assert bar.updates == [3, 7]
    assert bar.closed
    assert terminal.getvalue() == ""


@pytest.mark.parametrize(("tqdm", "stream"), [(None, FakeTerminal()), (FakeBar, None)])
def test_lines_without_tqdm_or_without_a_terminal(monkeypatch, tqdm, stream):
    stream = stream or io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(_progress, "_load_tqdm", lambda: tqdm)
    FakeBar.made.clear()
    with _progress.fit_progress(1, "Forest", 10, 1) as report:
        report(10, 10)
    assert FakeBar.made == []
    first, last = stream.getvalue().splitlines()
    assert first == "Forest: fitting 10 trees on 1 thread"
    assert last.startswith("Forest: 10/10 trees in ")


def test_a_real_tqdm_bar(monkeypatch):
    pytest.importorskip("tqdm")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    X, y = make_circle(200, random_state=0)
    RandomForestClassifier(n_estimators=30, verbose=1).fit(X, y)
    assert "30/30" in terminal.getvalue()


def long_morf(**params):
    """A MORF forest whose fit on bars takes minutes: only interruptions end it."""
    return ManifoldObliqueForestClassifier(
        n_estimators=100_000,
        image_shape=(28, 28),
        patch_min=1,
        patch_max=(2, 5),
        random_state=0,
        **params,
    )


@pytest.fixture(autouse=True)
def ctrl_c_raises():
    """Ctrl-C raises KeyboardInterrupt during each test, also where the test run was
    started with SIGINT ignored (a shell's background job), in which case
    `_thread.interrupt_main` would do nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_interrupting_a_fit_keeps_the_previous_model():
    X_small, y_small = make_circle(100, random_state=0)
    forest = long_morf()
    forest.set_params(n_estimators=5, image_shape=None, patch_max=4)
    forest.fit(X_small, y_small)
    before = forest.predict_proba(X_small)
    engine = forest._forest
    fitted = {k: v for k, v in vars(forest).items() if k.endswith("_")}

    X, y = make_bars(1000, random_state=0)
    forest.set_params(n_estimators=100_000, image_shape=(28, 28), patch_max=(2, 5))
    interrupt = threading.Timer(0.5, _thread.interrupt_main)
    interrupt.start()
    with pytest.raises(KeyboardInterrupt):
        forest.fit(X, y)
    interrupt.join()
    assert forest._forest is engine
    assert {k: v for k, v in vars(forest).items() if k.endswith("_")} == fitted
    assert forest.image_shape_ == (100,)
    np.testing.assert_array_equal(forest.predict_proba(X_small), before)


def test_interrupting_a_first_fit_leaves_the_forest_unfitted():
    X, y = make_bars(1000, random_state=0)
    forest = long_morf()
    interrupt = threading.Timer(0.5, _thread.interrupt_main)
    interrupt.start()
    with pytest.raises(KeyboardInterrupt):
        forest.fit(X, y)
    interrupt.join()
    assert not hasattr(forest, "n_features_in_")
    assert not hasattr(forest, "_forest")


CHILD = textwrap.dedent(
    """
    import signal, sys, time
    import numpy as np
    # A shell's background job starts with Ctrl-C ignored: take it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from morf_rs import ManifoldObliqueForestClassifier
    from morf_rs.datasets import make_bars, make_circle

    method = sys.argv[1]
    X_small, y_small = make_circle(200, random_state=0)
    forest = ManifoldObliqueForestClassifier(
        n_estimators={n_estimators}, patch_min=2, patch_max=10, random_state=0
    ).fit(X_small, y_small)
    before = forest.predict_proba(X_small[:50])
    if method == "fit":
        X, y = make_bars(1000, random_state=0)
        forest.set_params(
            n_estimators=100_000, image_shape=(28, 28), patch_min=1, patch_max=(2, 5)
        )
        call = lambda: forest.fit(X, y)
    else:
        # Ten seconds of scoring or more on any machine we know, so that the
        # signal always lands inside the one call.
        X = np.repeat(X_small.astype(np.float32), 1000, axis=0)
        call = lambda: forest.predict_proba(X)
    print("ready", flush=True)
    try:
        call()
    except KeyboardInterrupt:
        stopped = time.time()
        assert forest.n_features_in_ == 100
        np.testing.assert_array_equal(forest.predict_proba(X_small[:50]), before)
        print(f"interrupted {{stopped}}", flush=True)
    else:
        print("finished", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(("method", "n_estimators"), [("fit", 5), ("predict", 3000)])
def test_ctrl_c_stops_a_long_call_within_two_seconds(method, n_estimators):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(n_estimators=n_estimators), method],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "ready\n", child.stderr.read()
        time.sleep(1.0)
        sent = time.time()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out.startswith("interrupted "), out + err
    stopped = float(out.split()[1])
    assert stopped - sent < 2.0, f"stopped {stopped - sent:.2f} s after SIGINT"


def test_the_first_line_comes_at_once_and_says_what_is_fitted(
    forest_class, data, monkeypatch, capsys
):
    """Issue 21 item 6: nothing was printed before a tenth of the trees."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(_progress, "_load_tqdm", lambda: None)
    with _progress.fit_progress(1, "Forest", 400, 4):
        assert stream.getvalue() == "Forest: fitting 400 trees on 4 threads\n"
    monkeypatch.undo()
    forest_class(n_estimators=7, verbose=1, n_jobs=1, random_state=0).fit(*data)
    lines = capsys.readouterr().err.splitlines()
    name = forest_class.__name__
    assert lines[0] == f"{name}: fitting 7 trees on 1 thread"
    assert re.fullmatch(rf"{name}: 7/7 trees in \d+\.\d s", lines[-1]), lines


def boosting_lines(booster, X, y, capsys):
    booster.set_params(verbose=1)
    booster.fit(X, y)
    return capsys.readouterr().err.splitlines()


def test_boosters_count_rounds_not_trees(capsys):
    from morf_rs import GradientBoostingClassifier, GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.random((300, 6))
    y = np.arange(300) % 4
    lines = boosting_lines(
        GradientBoostingClassifier(n_estimators=12, n_jobs=2, early_stopping=False),
        X,
        y,
        capsys,
    )
    threads = "1 thread" if os.cpu_count() == 1 else "2 threads"
    assert lines[0] == (
        f"GradientBoostingClassifier: fitting 12 rounds of 4 trees on {threads}"
    )
    assert re.fullmatch(
        r"GradientBoostingClassifier: 12/12 rounds in \d+\.\d s", lines[-1]
    )
    lines = boosting_lines(
        GradientBoostingRegressor(n_estimators=5, early_stopping=False), X, y, capsys
    )
    assert lines[0] == "GradientBoostingRegressor: fitting 5 rounds on 1 thread"
    assert lines[-1].startswith("GradientBoostingRegressor: 5/5 rounds in ")


def test_a_booster_that_stops_early_says_so(capsys):
    from morf_rs import GradientBoostingRegressor

    rng = np.random.default_rng(1)
    X = rng.random((400, 3))
    y = rng.random(400)  # noise: the held-out loss stops improving at once
    booster = GradientBoostingRegressor(
        n_estimators=500, early_stopping=True, n_iter_no_change=2
    )
    lines = boosting_lines(booster, X, y, capsys)
    assert booster.n_iter_ < 500
    assert re.fullmatch(
        rf"GradientBoostingRegressor: {booster.n_iter_}/500 rounds, \d+\.\d s "
        r"\(stopped early\)",
        lines[-1],
    ), lines


def test_an_interrupted_fit_says_so_in_a_last_line(capsys):
    X, y = make_bars(1000, random_state=0)
    forest = long_morf(verbose=1, n_jobs=1)
    interrupt = threading.Timer(0.5, _thread.interrupt_main)
    interrupt.start()
    with pytest.raises(KeyboardInterrupt):
        forest.fit(X, y)
    interrupt.join()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        "ManifoldObliqueForestClassifier: fitting 100000 trees on 1 thread"
    )
    assert re.fullmatch(
        r"ManifoldObliqueForestClassifier: interrupted after \d+/100000 trees, "
        r"\d+\.\d s",
        lines[-1],
    ), lines


def test_warm_start_counts_the_rounds_it_adds(capsys):
    from morf_rs import GradientBoostingRegressor

    X, y = make_circle(200, random_state=0)
    booster = GradientBoostingRegressor(
        n_estimators=5, warm_start=True, early_stopping=False
    )
    booster.fit(X, y)
    capsys.readouterr()
    lines = boosting_lines(booster.set_params(n_estimators=8), X, y, capsys)
    assert lines[0] == "GradientBoostingRegressor: fitting 3 rounds on 1 thread"
    assert lines[-1].startswith("GradientBoostingRegressor: 3/3 rounds in ")
