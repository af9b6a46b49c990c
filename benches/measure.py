"""Timing, peak resident memory and pickled size of one fitted model.

Peak memory is the kernel's own high-water mark of this process's resident set (VmHWM),
reset to the current RSS through /proc/self/clear_refs just before fit. It counts every
allocation that touches memory -- Python, NumPy, Cython and Rust alike -- which
tracemalloc would miss, and needs no sampling thread that could miss a short peak.
Reported: the high-water mark during fit minus the RSS just before it.
"""

from __future__ import annotations

import ctypes
import gc
import pickle
import time
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")

try:
    _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):
    _malloc_trim = None


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _peak_memory_supported() -> bool:
    try:
        _CLEAR_REFS.write_text("5")
        _status_kib("VmHWM")
    except (OSError, KeyError):
        return False
    return True


# Linux >= 4.0 only; elsewhere peak memory is reported as NaN.
PEAK_MEMORY_SUPPORTED = _peak_memory_supported()


class PeakMemory:
    """Context manager: ``mb`` holds the extra resident memory at the peak, in MiB (NaN
    where the kernel offers no resettable high-water mark)."""

    def __enter__(self) -> PeakMemory:
        gc.collect()
        if _malloc_trim is not None:
            # Give freed heap pages back first, so the baseline is not inflated by what
            # earlier runs left cached in the allocator.
            _malloc_trim(0)
        self.mb = float("nan")
        self._base_kib = None
        if PEAK_MEMORY_SUPPORTED:
            _CLEAR_REFS.write_text("5")  # VmHWM := current VmRSS
            self._base_kib = _status_kib("VmRSS")
        return self

    def __exit__(self, *exc) -> None:
        if self._base_kib is not None:
            self.mb = (_status_kib("VmHWM") - self._base_kib) / 1024.0


class Timer:
    def __enter__(self) -> Timer:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.s = time.perf_counter() - self._t0


class _ByteCounter:
    """A write-only sink: counts pickle bytes without holding a multi-GB buffer."""

    def __init__(self) -> None:
        self.n = 0

    def write(self, data) -> int:
        size = memoryview(data).nbytes
        self.n += size
        return size


def pickled_size(model) -> int:
    sink = _ByteCounter()
    pickle.dump(model, sink, protocol=pickle.HIGHEST_PROTOCOL)
    return sink.n
