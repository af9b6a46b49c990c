"""Forest fit speed against the anchors: our MORF against treeple's patch forest and
our RF against scikit-learn's, with the papers' settings (100 trees), in one process
on the same arrays and threads.

    python benches/forest_fit.py                          # Fashion 10,000, seeds 1,000
    python benches/forest_fit.py --fashion 10000 60000 --seeds 1000 2000 --turns 3
    python benches/forest_fit.py --threads 1 2 --quick    # a check, small sizes
    python benches/forest_fit.py --max-bins 32 --accuracy-seeds 4  # binned splits too

Each workload fits every model in turns, ``--turns`` times, and keeps each model's
best wall time and best CPU time (``time.process_time``: all threads of this
process). The speedup is the anchor's time over ours, per thread count; the thread
scaling is our best wall time at one thread over that at two. Fashion-MNIST is its
first ``n`` training images (float32 pixels 0..255); the seed experiments are drawn
by ``morf_rs.datasets`` with seed 0. ``--max-bins B`` adds each of our forests with
``max_bins=B`` (split search between bins) to the turns, compared with the same
anchor. Every row gives the test accuracy of our forest and the anchor's from the
turns' fits (seed 0; Fashion-MNIST's first 10,000 test images, or 1,000 drawn apart
for a seed experiment), and with ``--accuracy-seeds K`` our forest's mean over seeds 0
to K - 1, refitted after the timing. Writes benches/results/forest_fit.{csv,md}
(``--results`` names others; ``--quick``: benches/results/quick/).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import FASHION_PATCHES, SIMULATION_PATCHES, TEST_SEED  # noqa: E402
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import (  # noqa: E402
    best_wall_and_cpu,
    command_line,
    machine,
    output_folder,
    write_csv,
    write_markdown,
)
from models import Patches, available_models  # noqa: E402

N_ESTIMATORS = 100


def _fit(model, X, y) -> None:
    model.fit(X, y)


def _accuracy(model, X_test, y_test) -> float:
    return float(np.mean(model.predict(X_test) == y_test))


def workloads(args) -> list[tuple[str, Patches, tuple, tuple, list[str]]]:
    """(label, patches, (X, y), (X_test, y_test), forests compared) of each
    workload."""
    runs = []
    if args.fashion:
        X_all, y_all = load_fashion_mnist("train")
        X_test, y_test = load_fashion_mnist("test")
        test = (X_test[:10_000], y_test[:10_000])
        for n in args.fashion:
            forests = ["MORF", "RF"] if n in args.rf_fashion else ["MORF"]
            X, y = np.ascontiguousarray(X_all[:n]), y_all[:n]
            runs.append(
                (f"Fashion-MNIST {n:,}", FASHION_PATCHES, (X, y), test, forests)
            )
    from morf_rs import datasets

    for n in args.seeds:
        for experiment, patches in SIMULATION_PATCHES.items():
            make = getattr(datasets, f"make_{experiment}")
            test = make(1_000, random_state=TEST_SEED)
            runs.append(
                (
                    f"{experiment} {n:,}",
                    patches,
                    make(n, random_state=0),
                    test,
                    ["MORF"],
                )
            )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fashion", type=int, nargs="*", default=[10_000])
    parser.add_argument(
        "--rf-fashion",
        type=int,
        nargs="*",
        default=[10_000],
        help="Fashion-MNIST sizes at which RF is compared too",
    )
    parser.add_argument("--seeds", type=int, nargs="*", default=[1_000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--trees", type=int, default=N_ESTIMATORS)
    parser.add_argument(
        "--max-bins",
        type=int,
        help="also fit our forests with this max_bins (split search between bins)",
    )
    parser.add_argument(
        "--accuracy-seeds",
        type=int,
        default=0,
        help="refit our forests at this many seeds for their mean test accuracy",
    )
    parser.add_argument(
        "--results", default="forest_fit", help="benches/results/RESULTS.{csv,md}"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, one turn")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.fashion, args.rf_fashion, args.seeds = [1_000], [1_000], [1_000]
        args.turns, args.trees = 1, 10
    out = output_folder(args.quick, args.out)

    models, notes = available_models()
    ours = {m.forest: m for m in models if m.library == "morf_rs"}
    anchors = {"MORF": "treeple", "RF": "sklearn"}
    anchor = {
        m.forest: m
        for m in models
        if m.library == anchors.get(m.forest) and m.forest in anchors
    }
    # Our forests as compared: each forest as it is, and with --max-bins.
    variants = [(forest, forest, {}) for forest in anchors]
    if args.max_bins:
        bins = {"max_bins": args.max_bins}
        variants += [
            (forest, f"{forest}, max_bins={args.max_bins}", bins) for forest in anchors
        ]
    rows = []
    for label, patches, (X, y), (X_test, y_test), forests in workloads(args):
        forests = [f for f in forests if f in anchor]
        compared = [v for v in variants if v[0] in forests]
        walls: dict[int, dict[str, float]] = {}
        for threads in args.threads:
            calls, fitted = {}, {}
            for forest, name, params in compared:
                estimator = ours[forest].build(patches, args.trees, threads, 0)
                fitted[name] = estimator.set_params(**params)
                calls[name] = functools.partial(_fit, fitted[name], X, y)
            for forest in forests:
                theirs = anchor[forest]
                fitted[theirs.label] = theirs.build(patches, args.trees, threads, 0)
                calls[theirs.label] = functools.partial(
                    _fit, fitted[theirs.label], X, y
                )
            wall, cpu = best_wall_and_cpu(calls, args.turns)
            walls[threads] = wall
            for forest, mine, params in compared:
                theirs = anchor[forest].label
                row = {
                    "workload": label,
                    "forest": mine,
                    "threads": threads,
                    "ours_wall_s": wall[mine],
                    "ours_cpu_s": cpu[mine],
                    "anchor": theirs,
                    "anchor_wall_s": wall[theirs],
                    "anchor_cpu_s": cpu[theirs],
                    "speedup_wall": wall[theirs] / wall[mine],
                    "speedup_cpu": cpu[theirs] / cpu[mine],
                    "scaling_vs_1_thread": (
                        walls[1][mine] / wall[mine] if 1 in walls else float("nan")
                    ),
                    "ours_accuracy": _accuracy(fitted[mine], X_test, y_test),
                    "anchor_accuracy": _accuracy(fitted[theirs], X_test, y_test),
                }
                if args.accuracy_seeds:
                    row["ours_mean_accuracy"] = np.mean(
                        [
                            _accuracy(
                                ours[forest]
                                .build(patches, args.trees, max(args.threads), seed)
                                .set_params(**params)
                                .fit(X, y),
                                X_test,
                                y_test,
                            )
                            for seed in range(args.accuracy_seeds)
                        ]
                    )
                print(row, flush=True)
                rows.append(row)

    about = {
        **machine(("numpy", "sklearn", "treeple", "morf_rs")),
        "command": command_line(),
        "timing": f"best of {args.turns} turns, models alternating, {args.trees} trees",
        "accuracy": (
            "ours_accuracy, anchor_accuracy: the timed fits (seed 0); "
            "ours_mean_accuracy: our forest refitted at seeds 0 to "
            f"{args.accuracy_seeds - 1}"
            if args.accuracy_seeds
            else "ours_accuracy, anchor_accuracy: the timed fits (seed 0)"
        ),
    }
    write_csv(out / f"{args.results}.csv", rows)
    write_markdown(
        out / f"{args.results}.md",
        "Forest fit: ours against treeple (MORF) and scikit-learn (RF)",
        rows,
        about,
        notes=(
            "speedup: the anchor's best time over ours (wall, and CPU of all threads); "
            "scaling_vs_1_thread: our best wall time at one thread over this row's. "
            + " ".join(notes.values())
        ),
    )


if __name__ == "__main__":
    main()
