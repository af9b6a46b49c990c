"""What every benchmark needs: calls timed in turns (best of several, so that a slow
spell of a shared machine falls on every model alike), one call timed with its peak
memory, the machine and library versions, and the figures written as CSV and as
Markdown tables.

Peak memory is the kernel's own high-water mark of this process's resident set
(VmHWM), reset to the current RSS through /proc/self/clear_refs just before the call.
It counts every allocation that touches memory -- Python, NumPy, Cython and Rust alike
-- which tracemalloc would miss, and needs no sampling thread that could miss a short
peak. Reported: the high-water mark during the call minus the RSS just before it.
"""

from __future__ import annotations

import csv
import ctypes
import gc
import importlib
import os
import pickle
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# Seconds of CPU this process spent, on all its threads: the work a call did,
# whatever else the machine was running.
cpu_clock = time.process_time

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")

try:
    _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):
    _malloc_trim = None


def best_in_turns(
    calls: dict[Hashable, Callable[[], object]],
    rounds: int,
    clock=time.perf_counter,
    results: dict | None = None,
) -> dict[Hashable, float]:
    """The best time of each call over ``rounds`` rounds, the calls taking turns
    within each round; ``results``, if given, receives each call's last result
    (a fitted model, say) under its label."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for label, call in calls.items():
            start = clock()
            result = call()
            best[label] = min(best[label], clock() - start)
            if results is not None:
                results[label] = result
            # Not held through the next call: a fitted model can take gigabytes.
            del result
    return best


def best_wall_and_cpu(
    calls: dict[Hashable, Callable[[], object]], rounds: int
) -> tuple[dict[Hashable, float], dict[Hashable, float]]:
    """The best wall time and the best CPU time (all threads, :data:`cpu_clock`) of
    each call over ``rounds`` rounds taken in turns: on a shared machine the wall
    time depends on what else runs, the CPU time much less."""
    wall = dict.fromkeys(calls, float("inf"))
    cpu = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for label, call in calls.items():
            wall_start, cpu_start = time.perf_counter(), cpu_clock()
            call()
            cpu[label] = min(cpu[label], cpu_clock() - cpu_start)
            wall[label] = min(wall[label], time.perf_counter() - wall_start)
    return wall, cpu


def timed(call: Callable[[], object], clock=time.perf_counter) -> tuple[object, float]:
    """``call()``'s result and the time it took, once (for calls too long to repeat
    or whose result is needed)."""
    start = clock()
    result = call()
    return result, clock() - start


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


def release_freed_memory() -> None:
    """Collects garbage and gives freed heap pages back to the system, so that a
    memory baseline taken next is not inflated by what earlier runs left cached in
    the allocator."""
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


class PeakMemory:
    """Context manager: ``mb`` holds the extra resident memory at the peak, in MiB (NaN
    where the kernel offers no resettable high-water mark)."""

    def __enter__(self) -> PeakMemory:
        release_freed_memory()
        self.mb = float("nan")
        self._base_kib = None
        if PEAK_MEMORY_SUPPORTED:
            _CLEAR_REFS.write_text("5")  # VmHWM := current VmRSS
            self._base_kib = _status_kib("VmRSS")
        return self

    def __exit__(self, *exc) -> None:
        if self._base_kib is not None:
            self.mb = (_status_kib("VmHWM") - self._base_kib) / 1024.0


def timed_with_memory(
    call: Callable[[], object], clock=time.perf_counter
) -> tuple[object, float, float]:
    """``call()``'s result, the time it took and the extra resident memory at its
    peak in MiB (see :class:`PeakMemory`)."""
    with PeakMemory() as memory:
        result, seconds = timed(call, clock)
    return result, seconds, memory.mb


class _ByteCounter:
    """A write-only sink: counts pickle bytes without holding a multi-GB buffer."""

    def __init__(self) -> None:
        self.n = 0

    def write(self, data) -> int:
        size = memoryview(data).nbytes
        self.n += size
        return size


def pickled_size(model) -> int:
    """Bytes of ``model`` pickled, counted without holding them."""
    sink = _ByteCounter()
    pickle.dump(model, sink, protocol=pickle.HIGHEST_PROTOCOL)
    return sink.n


def machine(libraries: Sequence[str] = ("numpy", "sklearn", "morf_rs")) -> dict:
    """The CPU, its cores, Python and the versions of ``libraries`` importable here."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for name in libraries:
        try:
            versions[name] = getattr(importlib.import_module(name), "__version__", "?")
        except ImportError:
            continue
    about = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        **versions,
    }
    commit = source_commit()
    if commit is not None:
        about["commit"] = commit
    return about


def source_commit() -> str | None:
    """The commit of the checkout these benchmarks run from, with ``+changes`` when
    its tracked files differ from it: a source tree's morf_rs has no version of its
    own, so this says which code the figures are of. ``None`` outside a git checkout."""
    here = Path(__file__).resolve().parent

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True
        )

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return None
    changed = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + ("+changes" if changed else "")


def describe(about: dict) -> str:
    """``about`` (from :func:`machine`) as one line for a report's text."""
    rest = ", ".join(
        f"{key} {value}"
        for key, value in about.items()
        if key not in ("cpu", "cores", "python")
    )
    return f"{about['cpu']}, {about['cores']} cores; Python {about['python']}" + (
        f"; {rest}" if rest else ""
    )


def output_folder(quick: bool, out: Path | None = None, under: str = "") -> Path:
    """Where a run writes: ``out`` if given, else ``benches/results[/quick]/under``,
    created. Quick runs go under results/quick/, which git ignores, so that a smoke
    run never overwrites the committed figures."""
    folder = out if out is not None else (RESULTS / "quick" if quick else RESULTS)
    folder = folder / under if out is None and under else folder
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def command_line() -> str:
    """The command that ran this script, as the reports quote it."""
    return " ".join(["python", f"benches/{Path(sys.argv[0]).name}", *sys.argv[1:]])


def write_csv(path: Path, rows: Sequence[dict], append: bool = False) -> None:
    """``rows`` (dicts with the same keys) as CSV; nothing is written for no rows.
    With ``append``, added after the rows already in ``path`` (the header written
    only when the file is new)."""
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not (append and path.exists())
    with path.open("w" if new else "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)


def read_csv(path: Path) -> list[dict]:
    """The rows of a CSV written by :func:`write_csv`, values as strings; no rows
    where the file does not exist."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def markdown_table(rows: Sequence[dict]) -> list[str]:
    """The lines of ``rows`` as a Markdown table, floats to 3 decimals (format a
    column as strings first to show it otherwise)."""
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = (f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values())
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_markdown(
    path: Path,
    title: str,
    rows: Sequence[dict] | dict[str, Sequence[dict]],
    about: dict,
    notes: str = "",
) -> None:
    """``rows`` as a Markdown table under ``title``, with the machine ``about``;
    ``rows`` may map section headings to tables, one section each."""
    lines = [f"# {title}", ""]
    lines += [f"- {key}: {value}" for key, value in about.items()]
    sections = rows if isinstance(rows, dict) else {"": rows}
    for heading, table in sections.items():
        if not table:
            continue
        lines += ["", f"## {heading}", ""] if heading else [""]
        lines += markdown_table(table)
    if notes:
        lines += ["", notes.strip()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
