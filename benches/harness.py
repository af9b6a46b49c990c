"""What every side-by-side benchmark needs: calls timed in turns (best of several,
so that a slow spell of a shared machine falls on every model alike), the machine and
library versions, and the figures written as CSV and as a Markdown table.
"""

from __future__ import annotations

import csv
import importlib
import os
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def best_in_turns(
    calls: dict[str, Callable[[], object]], rounds: int, clock=time.perf_counter
) -> dict[str, float]:
    """The best time of each call over ``rounds`` rounds, the calls taking turns
    within each round."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for label, call in calls.items():
            start = clock()
            call()
            best[label] = min(best[label], clock() - start)
    return best


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
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        **versions,
    }


def write_csv(path: Path, rows: Sequence[dict]) -> None:
    """``rows`` (dicts with the same keys) as CSV."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_markdown(
    path: Path, title: str, rows: Sequence[dict], about: dict, notes: str = ""
) -> None:
    """``rows`` as a Markdown table under ``title``, with the machine ``about``."""
    columns = list(rows[0])
    lines = [f"# {title}", ""]
    lines += [f"- {key}: {value}" for key, value in about.items()]
    lines += ["", "| " + " | ".join(columns) + " |"]
    lines += ["|" + "---|" * len(columns)]
    for row in rows:
        cells = (f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values())
        lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += ["", notes.strip()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
