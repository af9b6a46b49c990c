"""Side by side on the seed experiments: morf_rs against scikit-learn and treeple.

    python benches/compare.py               # full run -> benches/results/
    python benches/compare.py --quick       # ~2 minutes -> benches/results/quick/
    python benches/compare.py --preset medium --experiments circle fashion
    python benches/compare.py --report-only # redraw figures, summary.md from the CSVs

Every model is fitted in this one process on the same arrays with the same number of
threads and the hyperparameters of the seeds' Table S2 (MORF patches and max_features;
max_features="sqrt" for SPORF and RF), n_estimators equal for all. Writes runs.csv,
predict_scaling.csv, meta.json, PNG figures and summary.md to the output folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import report
from fashion_mnist import load_fashion_mnist
from harness import (
    PEAK_MEMORY_SUPPORTED,
    RESULTS,
    best_in_turns,
    machine,
    pickled_size,
    timed,
    timed_with_memory,
    write_csv,
)
from models import Model, Patches, available_models, tree_stats
from tqdm import tqdm

# Distribution name -> module whose version is recorded.
VERSIONED = {
    "morf_rs": "morf_rs",
    "numpy": "numpy",
    "scikit-learn": "sklearn",
    "treeple": "treeple",
}
TEST_SEED = 1_000_003  # test sets are drawn apart from every training seed
IMPORTANCE_CLASSES = (7, 9)  # Sneaker vs Ankle boot: the difference is a local shape
IMPORTANCE_PER_CLASS = 100


@dataclass(frozen=True)
class Preset:
    sim_sizes: tuple[int, ...]
    sim_test: int
    fashion_sizes: tuple[int, ...]
    seeds: int
    fashion_seeds: int
    # n at which predict is timed on a 10,000-row batch for each thread count.
    scaling_n: int


PRESETS = {
    "quick": Preset((100, 1000), 2_000, (1_000,), 1, 1, 1_000),
    "medium": Preset((50, 200, 1000, 2000), 10_000, (1_000, 10_000), 2, 1, 10_000),
    "full": Preset(
        (50, 100, 200, 500, 1000, 2000),
        10_000,
        (1_000, 2_000, 5_000, 10_000, 60_000),
        3,
        2,
        10_000,
    ),
}


@dataclass(frozen=True)
class Experiment:
    name: str
    patches: Patches
    # (n, seed) -> training set; the test set is fixed per experiment.
    train: Callable[[int, int], tuple[np.ndarray, np.ndarray]]
    test: Callable[[], tuple[np.ndarray, np.ndarray]]
    sizes: tuple[int, ...]
    seeds: int


def _simulation(name: str, patches: Patches, preset: Preset) -> Experiment:
    from morf_rs import datasets

    make = getattr(datasets, f"make_{name}")
    pools: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def train(n: int, seed: int):
        # One pool per seed in a seeded order: a learning curve's sizes are nested.
        if seed not in pools:
            pools.clear()
            X, y = make(max(preset.sim_sizes), random_state=seed)
            order = np.random.default_rng(seed).permutation(len(y))
            pools[seed] = (np.ascontiguousarray(X[order]), y[order])
        X, y = pools[seed]
        return X[:n], y[:n]

    return Experiment(
        name,
        patches,
        train,
        lambda: make(preset.sim_test, random_state=TEST_SEED),
        preset.sim_sizes,
        preset.seeds,
    )


SIMULATION_PATCHES = {
    "circle": Patches((100,), (3,), (12,), True, 0.5),
    "bars": Patches((28, 28), (2, 2), (2, 9), False, "sqrt"),
    "impulse": Patches((100,), (2,), (12,), False, 0.3),
    "multivariate": Patches((3, 100), (2, 5), (2, 10), False, "sqrt"),
}
FASHION_PATCHES = Patches((28, 28), (2, 2), (2, 5), False, "sqrt")
EXPERIMENTS = (*SIMULATION_PATCHES, "fashion")


def _fashion(preset: Preset) -> Experiment:
    X_pool, y_pool = load_fashion_mnist("train")

    def train(n: int, seed: int):
        order = np.random.default_rng(seed).permutation(len(y_pool))[:n]
        return np.ascontiguousarray(X_pool[order]), y_pool[order]

    return Experiment(
        "fashion",
        FASHION_PATCHES,
        train,
        lambda: load_fashion_mnist("test"),
        preset.fashion_sizes,
        preset.fashion_seeds,
    )


def _threads_to_scale(max_threads: int) -> list[int]:
    return sorted({t for t in (1, 2, max_threads) if t <= max_threads})


def _warm_up(models: list[Model], threads: int) -> None:
    """One tiny fit each: thread pools and lazy imports are not billed to run one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 100)).astype(np.float32)
    y = np.arange(60) % 2
    for model in models:
        model.build(SIMULATION_PATCHES["impulse"], 4, threads, 0).fit(
            X, y
        ).predict_proba(X)


def run_one(
    model: Model, exp: Experiment, X, y, X_test, y_test, args, seed
) -> tuple[dict, object]:
    """Fit one model and measure it; returns the CSV row and the fitted model."""
    est = model.build(exp.patches, args.n_estimators, args.threads, seed)
    _, fit_s, peak_mb = timed_with_memory(lambda: est.fit(X, y))
    proba, predict_s = timed(lambda: est.predict_proba(X_test))
    wrong = est.classes_[np.argmax(proba, axis=1)] != y_test
    error = float(np.mean(wrong))
    # Circle: the test rows with a segment across the seam between the last cell and
    # the first, the only rows where wrapping patches see something padded ones do not.
    seam = (X_test[:, 0] == 1) & (X_test[:, -1] == 1)
    seam_error = float(np.mean(wrong[seam])) if exp.name == "circle" else math.nan
    stats = tree_stats(est)
    row = {
        "library": model.library,
        "forest": model.forest,
        "experiment": exp.name,
        "n": len(y),
        "seed": seed,
        "threads": args.threads,
        "n_estimators": args.n_estimators,
        "n_test": len(y_test),
        "test_error": error,
        "seam_error": seam_error,
        "fit_s": fit_s,
        "predict_s": predict_s,
        "pickle_bytes": pickled_size(est),
        "peak_mem_mb": peak_mb,
        "max_depth": float(np.mean(stats["max_depth"])),
        "n_leaves": float(np.mean(stats["n_leaves"])),
        "n_nodes": float(np.mean(stats["n_nodes"])),
        "mean_leaf_depth": float(np.mean(stats["mean_leaf_depth"])),
    }
    return row, est


# Where every fit of a round took at most this long, the round is fitted again
# FIT_ROUNDS - 1 times and each model keeps its best time.
RETIME_UNDER_S = 5.0
FIT_ROUNDS = 3


def retime_fits(fitted: list[tuple[Model, dict]], exp: Experiment, X, y, args, seed):
    """More rounds of the same fits, the models taking turns, keeping each model's
    best time: a slow spell of the machine then does not decide a ratio. The same
    seed grows the same forest, so the round's other figures stand."""
    fits = {
        model.label: lambda m=model: m.build(
            exp.patches, args.n_estimators, args.threads, seed
        ).fit(X, y)
        for model, _ in fitted
    }
    best = best_in_turns(fits, FIT_ROUNDS - 1)
    for model, row in fitted:
        row["fit_s"] = min(row["fit_s"], best[model.label])


# Rounds of predict calls per model and thread count; each model's best is kept.
SCALING_ROUNDS = 5


def predict_scaling(fitted: list[tuple[Model, object]], X_batch, args) -> list[dict]:
    """Best-of time of predict_proba and predict on one batch, per model and thread
    count. The models take turns call by call, so that a slow spell of the machine
    falls on all of them rather than on whichever happened to run then."""
    rows = []
    for t in _threads_to_scale(args.threads):
        calls = {}
        for model, est in fitted:
            est.set_params(n_jobs=t)
            calls[model.label, "proba"] = lambda e=est: e.predict_proba(X_batch)
            calls[model.label, "predict"] = lambda e=est: e.predict(X_batch)
        best = best_in_turns(calls, SCALING_ROUNDS)
        rows += [
            {
                "library": model.library,
                "forest": model.forest,
                "threads": t,
                "batch_rows": len(X_batch),
                "predict_proba_s": best[model.label, "proba"],
                "predict_s": best[model.label, "predict"],
            }
            for model, _ in fitted
        ]
    for _, est in fitted:
        est.set_params(n_jobs=args.threads)
    return rows


def importance_maps(models: list[Model], args) -> dict[str, np.ndarray]:
    """Fig. 5 of the seeds: our three forests on 100 images of each of two classes."""
    X, y = load_fashion_mnist("train")
    order = np.random.default_rng(0).permutation(len(y))
    picked = np.concatenate(
        [order[y[order] == c][:IMPORTANCE_PER_CLASS] for c in IMPORTANCE_CLASSES]
    )
    X, y = np.ascontiguousarray(X[picked]), y[picked]
    maps = {
        f"mean {c}": X[y == c].mean(axis=0).reshape(28, 28) for c in IMPORTANCE_CLASSES
    }
    for model in models:
        if model.library == "morf_rs":
            forest = model.build(FASHION_PATCHES, args.n_estimators, args.threads, 0)
            importances = forest.fit(X, y).feature_importances_
            maps[model.forest] = np.asarray(importances).reshape(28, 28)
    return maps


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="same as --preset quick")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="full")
    ap.add_argument(
        "--experiments", nargs="+", choices=EXPERIMENTS, default=list(EXPERIMENTS)
    )
    ap.add_argument(
        "--libraries",
        nargs="+",
        choices=("morf_rs", "sklearn", "treeple"),
        default=["morf_rs", "sklearn", "treeple"],
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="n_jobs for every library (default: all cores available)",
    )
    ap.add_argument("--n-estimators", type=int, default=100)
    ap.add_argument("--seeds", type=int, help="override the preset's number of seeds")
    ap.add_argument(
        "--out",
        type=Path,
        help="default benches/results (quick: benches/results/quick)",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="redraw figures and summary.md from the CSVs already in --out",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.preset = "quick"
    if args.out is None:
        args.out = RESULTS / "quick" if args.preset == "quick" else RESULTS
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        report.write_all(args.out)
        return 0

    preset = PRESETS[args.preset]
    if args.seeds is not None:
        preset = Preset(
            **{**asdict(preset), "seeds": args.seeds, "fashion_seeds": args.seeds}
        )
    models, library_notes = available_models()
    models = [m for m in models if m.library in args.libraries]
    notes = [note for lib, note in library_notes.items() if lib in args.libraries]
    if not PEAK_MEMORY_SUPPORTED:
        notes.append(
            "peak memory not measured: /proc/self/clear_refs is unavailable here"
        )
    has_ours = any(m.library == "morf_rs" for m in models)

    experiments = []
    for name in args.experiments:
        if name == "fashion":
            experiments.append(_fashion(preset))
        elif has_ours:
            experiments.append(_simulation(name, SIMULATION_PATCHES[name], preset))
        else:
            notes.append(
                f"{name} skipped: its data generator lives in morf_rs.datasets"
            )
    for note in notes:
        print("note:", note)

    total = sum(len(e.sizes) * e.seeds for e in experiments) * len(models)
    about = machine(tuple(VERSIONED.values()))
    meta = {
        "command": " ".join(
            [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]
        ),
        "preset": args.preset,
        "config": asdict(preset),
        "threads": args.threads,
        "n_estimators": args.n_estimators,
        "fit_rounds": FIT_ROUNDS,
        "retime_under_s": RETIME_UNDER_S,
        "cpu": about["cpu"],
        "cores_available": len(os.sched_getaffinity(0)),
        # Distribution names, as report.py quotes them.
        "versions": {
            "python": about["python"],
            **{
                name: about.get(module, "not installed")
                for name, module in VERSIONED.items()
            },
        },
        "notes": notes,
        "failures": [],
        # Other work on the machine skews timings; say how busy it was.
        "load_before": os.getloadavg()[0],
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }

    _warm_up(models, args.threads)
    rows: list[dict] = []
    scaling: list[dict] = []
    failures: dict[tuple[str, str], str] = {}
    bar = tqdm(total=total, unit="fit", dynamic_ncols=True)
    for exp in experiments:
        X_test, y_test = exp.test()
        for seed in range(exp.seeds):
            for n in exp.sizes:
                X, y = exp.train(n, seed)
                timed_for_scaling = []
                fitted: list[tuple[Model, dict]] = []
                for model in models:
                    bar.set_postfix_str(f"{exp.name} n={n} seed={seed} {model.label}")
                    try:
                        row, est = run_one(model, exp, X, y, X_test, y_test, args, seed)
                        rows.append(row)
                        fitted.append((model, row))
                        if (
                            exp.name == "fashion"
                            and n == preset.scaling_n
                            and seed == 0
                        ):
                            timed_for_scaling.append((model, est))
                        del est
                    # One broken model must not lose the other models' runs.
                    except Exception as exc:
                        key = (model.label, f"{type(exc).__name__}: {exc}")
                        if key not in failures:
                            tqdm.write(
                                f"FAILED {model.label} on {exp.name} n={n}: {key[1]}"
                            )
                            failures[key] = f"first at {exp.name} n={n} seed={seed}"
                    bar.update()
                if fitted and max(row["fit_s"] for _, row in fitted) <= RETIME_UNDER_S:
                    bar.set_postfix_str(f"{exp.name} n={n} seed={seed}: fits again")
                    retime_fits(fitted, exp, X, y, args, seed)
                if timed_for_scaling:
                    bar.set_postfix_str(f"predict on {len(X_test):,} rows")
                    scaling += predict_scaling(timed_for_scaling, X_test, args)
                    timed_for_scaling.clear()  # treeple's models take GBs
        write_csv(args.out / "runs.csv", rows)
    bar.close()

    if has_ours and "fashion" in args.experiments:
        print("importance maps (Fashion-MNIST, two classes)...")
        maps = importance_maps(models, args)
        np.savez_compressed(args.out / "importance.npz", **maps)
    meta["failures"] = [
        f"{label} ({where}): {msg}" for (label, msg), where in failures.items()
    ]
    meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_csv(args.out / "runs.csv", rows)
    write_csv(args.out / "predict_scaling.csv", scaling)
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    report.write_all(args.out)
    print(f"wrote {args.out}/summary.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
