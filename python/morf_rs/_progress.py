"""Progress of a fit for ``verbose=1``: a tqdm bar on a terminal, lines otherwise.

The engine calls a reporter as ``reporter(trees_done, n_trees)`` from the thread
that called ``fit``, at most every 50 ms and only when a tree has been grown.
Boosters are counted in rounds (each adds one tree per class for three classes or
more, one otherwise), forests in trees. A line says at once what is fitted and on
how many threads, and a last one says how the fit ended, interrupted included.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

# A line at each tenth of the work, but not more often than this (seconds)...
_MIN_LINE_INTERVAL = 1.0
# ...and at least this often while trees are being grown, however slowly.
_MAX_LINE_INTERVAL = 30.0


def _load_tqdm():
    """tqdm's class, or None when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class TextProgress:
    """Writes lines such as ``Forest: 40/100 trees, 2.1 s, about 3.2 s left``."""

    def __init__(self, label, stream, unit="trees"):
        self._label = label
        self._stream = stream
        self._unit = unit
        self._start = time.perf_counter()
        self._last_line = self._start
        self._next_tenth = 1
        self._done = 0
        self._total = None
        self._ended = False

    def __call__(self, done, total):
        self._done, self._total = done, total
        now = time.perf_counter()
        elapsed = now - self._start
        if done >= total:
            self._end(f"{done}/{total} {self._unit} in {elapsed:.1f} s")
            return
        tenth = 10 * done // total
        since_line = now - self._last_line
        due = tenth >= self._next_tenth and since_line >= _MIN_LINE_INTERVAL
        if not (due or since_line >= _MAX_LINE_INTERVAL):
            return
        self._next_tenth = tenth + 1
        self._last_line = now
        left = elapsed * (total - done) / max(done, 1)
        self._write(
            f"{done}/{total} {self._unit}, {elapsed:.1f} s, about {left:.1f} s left"
        )

    def _write(self, message):
        print(f"{self._label}: {message}", file=self._stream, flush=True)

    def _end(self, message):
        if not self._ended:
            self._ended = True
            self._write(message)

    def _so_far(self):
        total = "" if self._total is None else f"/{self._total}"
        elapsed = time.perf_counter() - self._start
        return f"{self._done}{total} {self._unit}, {elapsed:.1f} s"

    def start(self, what):
        """The first line, written as the fit starts."""
        self._write(f"fitting {what}")

    def stopped(self, error):
        """The last line of a fit that ended by raising ``error``."""
        if isinstance(error, KeyboardInterrupt):
            self._end(f"interrupted after {self._so_far()}")
        else:
            self._end(f"failed after {self._so_far()}: {type(error).__name__}")

    def close(self):
        """The last line of a fit that ended before its last round (early stopping)."""
        if self._total is not None:
            self._end(f"{self._so_far()} (stopped early)")


class BarProgress:
    """A tqdm bar counting trees or rounds."""

    def __init__(self, tqdm, label, stream, unit="trees"):
        self._tqdm = tqdm
        self._label = label
        self._stream = stream
        self._unit = unit.rstrip("s")
        self._bar = None

    def _open(self, total):
        if self._bar is None:
            self._bar = self._tqdm(
                total=total, desc=self._label, unit=self._unit, file=self._stream
            )

    def __call__(self, done, total):
        self._open(total)
        self._bar.update(done - self._bar.n)

    def start(self, total):
        """Shows the bar at 0 as the fit starts."""
        self._open(total)

    def stopped(self, error):
        self.close()
        if isinstance(error, KeyboardInterrupt):
            print(f"{self._label}: interrupted", file=self._stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class _InRounds:
    """Passes the engine's tree counts on as rounds of ``trees_per_round`` trees."""

    def __init__(self, reporter, trees_per_round):
        self._reporter = reporter
        self._per_round = trees_per_round

    def __call__(self, done, total):
        self._reporter(done // self._per_round, total // self._per_round)


def _plural(count, noun):
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@contextmanager
def fit_progress(verbose, label, n_trees, n_threads, trees_per_round=None):
    """The reporter for a fit of ``n_trees`` trees on ``n_threads`` threads with
    this ``verbose`` level, or None when quiet. ``trees_per_round`` counts a
    booster's rounds instead of its trees.

    A bar when tqdm is installed and stderr is a terminal; otherwise a first line
    at once, a line at each tenth of the work (at most one a second, at least one
    every 30 s) and one at the end, whether the fit finished, stopped early or was
    interrupted.
    """
    if not verbose:
        yield None
        return
    stream = sys.stderr
    unit = "trees" if trees_per_round is None else "rounds"
    total = n_trees if trees_per_round is None else n_trees // trees_per_round
    what = _plural(total, unit[:-1])
    if trees_per_round is not None and trees_per_round > 1:
        what += f" of {trees_per_round} trees"
    what += f" on {_plural(n_threads, 'thread')}"
    tqdm = _load_tqdm()
    is_terminal = getattr(stream, "isatty", lambda: False)()
    if tqdm is not None and is_terminal:
        reporter = BarProgress(tqdm, label, stream, unit)
        reporter.start(total)
    else:
        reporter = TextProgress(label, stream, unit)
        reporter.start(what)
    counted = (
        reporter if trees_per_round is None else _InRounds(reporter, trees_per_round)
    )
    try:
        yield counted
    except BaseException as error:
        reporter.stopped(error)
        raise
    finally:
        reporter.close()
