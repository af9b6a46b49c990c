"""The fits that benches/profiles.md profiles, one per run, at one thread.

    perf record -g -o booster.data -- python benches/profile_fit.py booster
    python benches/profile_fit.py forest --trees 20
    python benches/profile_fit.py seeds
    python benches/profile_fit.py booster --quick   # a check, small sizes

``booster``: ManifoldObliqueGradientBoostingClassifier with the dictionary of
benches/boosting.py (31 leaves, 400 atoms a round) on the first 20,000 Fashion-MNIST
training images, 20 rounds. ``forest``: ManifoldObliqueForestClassifier with the
papers' Fashion-MNIST settings (benches/compare.py) on the first 10,000 images.
``seeds``: the papers' MORF on each seed experiment (circle, bars, impulse,
multivariate) at n = 1,000.

Prints one JSON line: the CPU seconds (``time.process_time``) of the fit alone, data
loading left out, and a digest of the saved models and of their ``predict_proba`` on
held-out rows, by which benches/fit_speed.py checks that two builds make the same
models bit for bit. With ``--out`` (or ``--quick``, to benches/results/quick/), also
writes that line and the machine to profile_fit.csv.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from boosting import _dictionary  # noqa: E402
from compare import FASHION_PATCHES, SIMULATION_PATCHES  # noqa: E402
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import cpu_clock, machine, output_folder, timed, write_csv  # noqa: E402

SEED_N = 1_000
TEST_SEED = 1_000_003


def _booster(n: int, rounds: int):
    from morf_rs import ManifoldObliqueGradientBoostingClassifier

    return ManifoldObliqueGradientBoostingClassifier(
        n_estimators=rounds,
        max_leaf_nodes=31,
        image_shape=(28, 28),
        patch_min=1,
        patch_max=5,
        dictionary=_dictionary(),
        early_stopping=False,
        n_jobs=1,
        random_state=0,
    )


def _papers_forest(patches, trees: int):
    from morf_rs import ManifoldObliqueForestClassifier

    return ManifoldObliqueForestClassifier(
        n_estimators=trees,
        image_shape=patches.image_shape,
        patch_min=patches.patch_min,
        patch_max=patches.patch_max,
        wrap=patches.wrap,
        max_features=patches.max_features,
        n_jobs=1,
        random_state=0,
    )


def workloads(
    name: str, args
) -> list[tuple[object, np.ndarray, np.ndarray, np.ndarray]]:
    """(model, X, y, X_test) for each fit of workload ``name``."""
    if name in ("booster", "forest"):
        X, y = load_fashion_mnist("train")
        X_test = load_fashion_mnist("test")[0][:1_000]
        if name == "booster":
            return [(_booster(args.n, args.rounds), X[: args.n], y[: args.n], X_test)]
        n = args.n if args.n != 20_000 else 10_000
        return [(_papers_forest(FASHION_PATCHES, args.trees), X[:n], y[:n], X_test)]
    from morf_rs import datasets

    fits = []
    for experiment, patches in SIMULATION_PATCHES.items():
        make = getattr(datasets, f"make_{experiment}")
        X, y = make(SEED_N, random_state=0)
        X_test = make(1_000, random_state=TEST_SEED)[0]
        fits.append((_papers_forest(patches, args.trees), X, y, X_test))
    return fits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=("booster", "forest", "seeds"))
    parser.add_argument("--n", type=int, default=20_000, help="training images")
    parser.add_argument("--rounds", type=int, default=20, help="booster rounds")
    parser.add_argument("--trees", type=int, default=100, help="forest trees")
    parser.add_argument("--quick", action="store_true", help="1,000 images, 3 rounds")
    parser.add_argument("--out", type=Path, help="folder for profile_fit.csv")
    args = parser.parse_args()
    if args.quick:
        args.n, args.rounds, args.trees = 1_000, 3, 5

    fits = workloads(args.workload, args)
    digest = hashlib.sha256()
    cpu = 0.0
    for model, X, y, X_test in fits:
        cpu += timed(partial(model.fit, X, y), clock=cpu_clock)[1]
        digest.update(pickle.dumps(model))
        digest.update(np.ascontiguousarray(model.predict_proba(X_test)).tobytes())
    row = {"workload": args.workload, "cpu_s": cpu, "digest": digest.hexdigest()}
    print(json.dumps(row))
    if args.quick or args.out:
        folder = output_folder(args.quick, args.out)
        write_csv(folder / "profile_fit.csv", [{**row, **machine()}])


if __name__ == "__main__":
    main()
