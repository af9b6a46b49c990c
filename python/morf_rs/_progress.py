"""Progress of a fit for ``verbose=1``: a tqdm bar on a terminal, lines otherwise.

The engine calls a reporter as ``reporter(trees_done, n_trees)`` from the thread
that called ``fit``, at most every 50 ms and only when a tree has been grown.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

# A line at each tenth of the trees, but not more often than this (seconds)...
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

    def __init__(self, label, stream):
        self._label = label
        self._stream = stream
        self._start = time.perf_counter()
        self._last_line = self._start
        self._next_tenth = 1

    def __call__(self, done, total):
        now = time.perf_counter()
        elapsed = now - self._start
        if done >= total:
            self._write(f"{done}/{total} trees in {elapsed:.1f} s")
            return
        tenth = 10 * done // total
        since_line = now - self._last_line
        due = tenth >= self._next_tenth and since_line >= _MIN_LINE_INTERVAL
        if not (due or since_line >= _MAX_LINE_INTERVAL):
            return
        self._next_tenth = tenth + 1
        self._last_line = now
        left = elapsed * (total - done) / done
        self._write(f"{done}/{total} trees, {elapsed:.1f} s, about {left:.1f} s left")

    def _write(self, message):
        print(f"{self._label}: {message}", file=self._stream, flush=True)

    def close(self):
        pass


class BarProgress:
    """A tqdm bar counting trees."""

    def __init__(self, tqdm, label, stream):
        self._tqdm = tqdm
        self._label = label
        self._stream = stream
        self._bar = None

    def __call__(self, done, total):
        if self._bar is None:
            self._bar = self._tqdm(
                total=total, desc=self._label, unit="tree", file=self._stream
            )
        self._bar.update(done - self._bar.n)

    def close(self):
        if self._bar is not None:
            self._bar.close()


@contextmanager
def fit_progress(verbose, label):
    """The reporter for a fit with this ``verbose`` level, or None when quiet.

    A bar when tqdm is installed and stderr is a terminal; otherwise a line at
    each tenth of the trees (at most one a second, at least one every 30 s) and
    one at the end.
    """
    if not verbose:
        yield None
        return
    stream = sys.stderr
    tqdm = _load_tqdm()
    is_terminal = getattr(stream, "isatty", lambda: False)()
    if tqdm is not None and is_terminal:
        reporter = BarProgress(tqdm, label, stream)
    else:
        reporter = TextProgress(label, stream)
    try:
        yield reporter
    finally:
        reporter.close()
