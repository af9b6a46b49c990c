"""The fits that benches/profiles.md profiles, one per run, at one thread by default.

    perf record -g -o booster.data -- python benches/profile_fit.py booster
    python benches/profile_fit.py forest --trees 20
    python benches/profile_fit.py seeds
    python benches/profile_fit.py booster --quick   # a check, small sizes

``booster``: ManifoldObliqueGradientBoostingClassifier with the dictionary of
benches/boosting.py (31 leaves, 400 atoms a round) on the first 20,000 Fashion-MNIST
training images, 20 rounds. ``forest``: ManifoldObliqueForestClassifier with the
papers' Fashion-MNIST settings (benches/compare.py) on the first 10,000 images.
``rf``: RandomForestClassifier (axis-aligned, ``max_features="sqrt"``) on the same
images. ``seeds``: the papers' MORF on each seed experiment (circle, bars, impulse,
multivariate) at n = 1,000. ``images``: the booster with ``dictionary="images"`` (half
its image atoms pooled) on the first ``--n`` Fashion-MNIST images, scoring all 10,000
test images; ``signals``: the booster with ``dictionary="signals"`` on MNIST-1D (4,000
signals, seed 99, scoring its 1,000 test signals), both at ``--rounds`` rounds and
otherwise default settings. ``images-plain`` and ``signals-plain``: the same with the
same families unpooled at the same number of candidates (benches/pooled.py's), what a
pooled atom's cost is measured against.

Prints one JSON line: the CPU seconds (``time.process_time``) of the fit alone, data
loading left out, those of ``predict_proba`` on the held-out rows, and a digest of the
saved models and of their ``predict_proba``, by which benches/fit_speed.py checks
that two builds make the same models bit for bit. With ``--out`` (or ``--quick``, to
benches/results/quick/), also writes that line and the machine to profile_fit.csv.
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

WORKLOADS = (
    "booster",
    "forest",
    "rf",
    "seeds",
    "images",
    "images-plain",
    "signals",
    "signals-plain",
)
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


def _random_forest(trees: int):
    from morf_rs import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=trees, max_features="sqrt", n_jobs=1, random_state=0
    )


def _preset_booster(name: str, shape: tuple[int, ...], rounds: int):
    """The booster with preset ``name``, or with its families unpooled if ``name``
    ends in ``-plain``."""
    from pooled import plain_families

    from morf_rs import ManifoldObliqueGradientBoostingClassifier

    dictionary: object = name
    extra = {}
    if name.endswith("-plain"):
        # The preset's candidates (400 on images, 200 on signals) and patch extents.
        images = name.startswith("images")
        dictionary = plain_families(5 if images else 8)
        extra = dict(max_features=400 if images else 200)
    return ManifoldObliqueGradientBoostingClassifier(
        n_estimators=rounds,
        image_shape=shape,
        dictionary=dictionary,
        early_stopping=False,
        n_jobs=1,
        random_state=0,
        **extra,
    )


def workloads(
    name: str, args
) -> list[tuple[object, np.ndarray, np.ndarray, np.ndarray]]:
    """(model, X, y, X_test) for each fit of workload ``name``."""
    if name.startswith("signals"):
        from pooled import mnist1d

        X, y, X_test, _ = mnist1d()
        return [(_preset_booster(name, (40,), args.rounds), X, y, X_test)]
    if name.startswith("images"):
        X, y = load_fashion_mnist("train")
        X_test = load_fashion_mnist("test")[0]
        model = _preset_booster(name, (28, 28), args.rounds)
        return [(model, X[: args.n], y[: args.n], X_test)]
    if name in ("booster", "forest", "rf"):
        X, y = load_fashion_mnist("train")
        X_test = load_fashion_mnist("test")[0][:1_000]
        if name == "booster":
            return [(_booster(args.n, args.rounds), X[: args.n], y[: args.n], X_test)]
        n = args.n if args.n != 20_000 else 10_000
        if name == "rf":
            return [(_random_forest(args.trees), X[:n], y[:n], X_test)]
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
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("--n", type=int, default=20_000, help="training images")
    parser.add_argument("--rounds", type=int, default=20, help="booster rounds")
    parser.add_argument("--trees", type=int, default=100, help="forest trees")
    parser.add_argument(
        "--threads", type=int, default=1, help="n_jobs of every model (default 1)"
    )
    parser.add_argument("--quick", action="store_true", help="1,000 images, 3 rounds")
    parser.add_argument("--out", type=Path, help="folder for profile_fit.csv")
    args = parser.parse_args()
    if args.quick:
        args.n, args.rounds, args.trees = 1_000, 3, 5

    fits = workloads(args.workload, args)
    digest = hashlib.sha256()
    cpu = predict_cpu = 0.0
    for model, X, y, X_test in fits:
        model.set_params(n_jobs=args.threads)
        cpu += timed(partial(model.fit, X, y), clock=cpu_clock)[1]
        digest.update(pickle.dumps(model))
        probabilities, predict_seconds = timed(
            partial(model.predict_proba, X_test), clock=cpu_clock
        )
        predict_cpu += predict_seconds
        digest.update(np.ascontiguousarray(probabilities).tobytes())
    row = {
        "workload": args.workload,
        "cpu_s": cpu,
        "predict_cpu_s": predict_cpu,
        "digest": digest.hexdigest(),
    }
    print(json.dumps(row))
    if args.quick or args.out:
        folder = output_folder(args.quick, args.out)
        write_csv(folder / "profile_fit.csv", [{**row, **machine()}])


if __name__ == "__main__":
    main()
