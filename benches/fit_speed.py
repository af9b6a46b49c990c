"""CPU time of single-threaded fits, builds against a baseline, taking turns.

    python benches/fit_speed.py --build main=/tmp/main_pkg --build new=python
    python benches/fit_speed.py --build main=/tmp/main_pkg --build new=python \
        --workloads images images-plain signals signals-plain --results pooled_speed
    python benches/fit_speed.py --build a=python --build b=python --quick  # a check

Each ``--build LABEL=FOLDER`` names a folder holding a ``morf_rs`` package (its
``_core`` extension built from the code to compare); the first is the baseline. Each
turn runs every workload of benches/profile_fit.py once per build, each fit in a fresh
process, and takes the CPU time of the fit alone (``time.process_time`` around ``fit``,
in that process); the best of ``--turns`` turns is kept, so that a busy spell of a
shared machine falls on every build alike. Every build must give the same saved models
and the same ``predict_proba`` bit for bit: the run stops with an error otherwise.
The workloads are (a) to (c) unless ``--workloads`` names others: the pooled presets
and the same families unpooled ((d) to (e')) give what a pooled atom costs against a
plain one; (a') is the booster at the size of the LightGBM comparison. Writes
benches/results/fit_speed.{csv,md} (``--results`` names others; ``--quick``:
profile_fit.py's small sizes, one turn, to benches/results/quick/).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
from math import inf
from pathlib import Path

from harness import best_in_turns, machine, output_folder, write_csv, write_markdown

HERE = Path(__file__).resolve().parent

# (label, arguments of profile_fit.py)
WORKLOADS = {
    "booster": ("(a) booster, Fashion-MNIST 20,000 x 20 rounds", ["booster"]),
    "forest": ("(b) MORF forest, Fashion-MNIST 10,000, 100 trees", ["forest"]),
    "rf": ("(f) RF, Fashion-MNIST 10,000, 100 trees", ["rf"]),
    "seeds": ("(c) MORF forest, 4 seed experiments n = 1,000, 100 trees", ["seeds"]),
    "images": (
        '(d) booster, dictionary="images", Fashion-MNIST 5,000 x 10 rounds',
        ["images", "--n", "5000", "--rounds", "10"],
    ),
    "images-plain": (
        "(d') booster, the same families unpooled, Fashion-MNIST 5,000 x 10 rounds",
        ["images-plain", "--n", "5000", "--rounds", "10"],
    ),
    "signals": (
        '(e) booster, dictionary="signals", MNIST-1D 4,000 x 50 rounds',
        ["signals", "--rounds", "50"],
    ),
    "signals-plain": (
        "(e') booster, the same families unpooled, MNIST-1D 4,000 x 50 rounds",
        ["signals-plain", "--rounds", "50"],
    ),
    "booster-60k": (
        "(a') booster, Fashion-MNIST 60,000 x 5 rounds",
        ["booster", "--n", "60000", "--rounds", "5"],
    ),
}


class ChildClock:
    """A clock that advances by the CPU time each child process reports for its fit,
    so that ``best_in_turns`` keeps the best fit time rather than process wall time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_fit(
    package: Path,
    arguments: list[str],
    clock: ChildClock,
    digests: set[str],
    predict_best: dict[str, float],
    build: str,
) -> None:
    environment = dict(os.environ, PYTHONPATH=str(package.resolve()))
    result = subprocess.run(
        [sys.executable, str(HERE / "profile_fit.py"), *arguments],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    clock.now += report["cpu_s"]
    digests.add(report["digest"])
    predict_best[build] = min(predict_best.get(build, inf), report["predict_cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", required=True, help="LABEL=FOLDER")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS)[:3])
    parser.add_argument(
        "--results", default="fit_speed", help="benches/results/RESULTS.{csv,md}"
    )
    parser.add_argument("--quick", action="store_true", help="small fits, one turn")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.turns = 1
    out = output_folder(args.quick, args.out)
    builds = dict(build.split("=", 1) for build in args.build)
    baseline = next(iter(builds))

    rows = []
    for name in args.workloads:
        label, arguments = WORKLOADS[name]
        if args.quick:
            label, arguments = f"{label} (quick sizes)", [*arguments, "--quick"]
        clock = ChildClock()
        digests: set[str] = set()
        predict_best: dict[str, float] = {}
        calls = {
            build: functools.partial(
                run_fit, Path(package), arguments, clock, digests, predict_best, build
            )
            for build, package in builds.items()
        }
        best = best_in_turns(calls, args.turns, clock=clock)
        if len(digests) != 1:
            raise SystemExit(f"{name}: the builds made {len(digests)} different models")
        for build in builds:
            if build == baseline:
                continue
            row = {
                "workload": label,
                "build": build,
                "baseline": baseline,
                "baseline_cpu_s": best[baseline],
                "build_cpu_s": best[build],
                "speedup": best[baseline] / best[build],
                "baseline_predict_cpu_s": predict_best[baseline],
                "build_predict_cpu_s": predict_best[build],
                "same_models": True,
                "turns": args.turns,
            }
            print(row, flush=True)
            rows.append(row)

    about = {
        **machine(("numpy", "sklearn")),
        "timing": "shared machine, CPU time (time.process_time of each fit, n_jobs=1, "
        f"best of {args.turns} turns, builds alternating)",
    }
    write_csv(out / f"{args.results}.csv", rows)
    write_markdown(
        out / f"{args.results}.md",
        "Fit speed: CPU time of single-threaded fits against main's build",
        rows,
        about,
        notes=(
            "same_models: every build saved the same models and predicted the same "
            "probabilities bit for bit (sha256 of the pickles and of predict_proba); "
            "predict_cpu_s: CPU time of predict_proba on the held-out rows, best of "
            "the turns. "
            "Workloads and profiles: benches/profile_fit.py, benches/profiles.md."
        ),
    )


if __name__ == "__main__":
    main()
