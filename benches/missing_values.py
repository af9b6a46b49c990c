"""Missing values on Fashion-MNIST: morf_rs's RF and MORF beside scikit-learn's
RandomForestClassifier when pixels are missing (NaN); with --boosting, morf_rs's
boosted models beside scikit-learn's HistGradientBoostingClassifier instead.

Trains on 10,000 training images and tests on the 10,000 test images, in three
variants: complete images (the reference), 20% of the pixels missing at random, and
occluded images (a random 12x12 block, 18% of the image, missing in each). Every
model gets the same float32 X with NaN and the same number of trees and threads. Each
seed draws its training images, its missing pixels and the forests' random_state;
test errors are averaged over seeds, and fit and predict times are the best over
seeds, the models taking turns. Writes benches/results/missing_values.csv (every
run) and .md (the summary); --quick writes under benches/results/quick/ instead.

    python benches/missing_values.py               # about 5 minutes per seed on 2 cores
    python benches/missing_values.py --quick       # 2,000 images, 20 trees: a check
    OMP_NUM_THREADS=2 python benches/missing_values.py --boosting   # 100 rounds:
        # boosted models, into benches/results/missing_values_boosting.csv/.md
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.ensemble import RandomForestClassifier as SklearnRandomForest

from morf_rs import (
    GradientBoostingClassifier,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
)

sys.path.insert(0, str(Path(__file__).parent))
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import (  # noqa: E402
    command_line,
    machine,
    markdown_table,
    output_folder,
    timed,
    write_csv,
)

SIDE = 28
BLOCK = 12


def at_random(X, fraction, rng):
    """X with a fraction of its pixels, drawn independently, missing."""
    X = X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return X


def occluded(X, rng):
    """X with one random BLOCK x BLOCK square of each image missing."""
    X = X.copy()
    images = X.reshape(len(X), SIDE, SIDE)
    corners = rng.integers(0, SIDE - BLOCK + 1, size=(len(X), 2))
    for image, (row, column) in zip(images, corners):
        image[row : row + BLOCK, column : column + BLOCK] = np.nan
    return X


def models(n_estimators, n_jobs, seed):
    shared = {"n_estimators": n_estimators, "n_jobs": n_jobs, "random_state": seed}
    return {
        "morf_rs RF": RandomForestClassifier(**shared),
        "scikit-learn RF": SklearnRandomForest(**shared),
        # The papers' Fashion-MNIST patch settings (benches/compare.py).
        "morf_rs MORF": ManifoldObliqueForestClassifier(
            image_shape=(SIDE, SIDE), patch_min=2, patch_max=5, **shared
        ),
    }


def boosted_models(n_estimators, n_jobs, seed):
    """Boosting at equal rounds and leaves; HistGradientBoosting's threads follow
    OMP_NUM_THREADS."""
    shared = {"early_stopping": False, "random_state": seed}
    return {
        "morf_rs boosted, pixels": GradientBoostingClassifier(
            n_estimators=n_estimators, n_jobs=n_jobs, **shared
        ),
        "morf_rs boosted, patches": ManifoldObliqueGradientBoostingClassifier(
            n_estimators=n_estimators,
            image_shape=(SIDE, SIDE),
            patch_min=1,
            patch_max=5,
            max_features=400,
            n_jobs=n_jobs,
            **shared,
        ),
        "scikit-learn HistGradientBoosting": HistGradientBoostingClassifier(
            max_iter=n_estimators, **shared
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=10_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2,000 images and 20 trees, to check (into results/quick/)",
    )
    parser.add_argument(
        "--boosting",
        action="store_true",
        help="boosted models (n-estimators rounds) instead of forests",
    )
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.n_train, args.n_test, args.n_estimators = 2000, 2000, 20
    name = "missing_values_boosting" if args.boosting else "missing_values"
    out = output_folder(args.quick, args.out) / name
    make_models = boosted_models if args.boosting else models

    X_all, y_all = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    X_test, y_test = X_test[: args.n_test].astype(np.float32), y_test[: args.n_test]
    # Every run is appended to the CSV as it ends, so an interrupted run keeps them.
    out.with_suffix(".csv").unlink(missing_ok=True)
    rows = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(y_all))[: args.n_train]
        X, y = X_all[order].astype(np.float32), y_all[order]
        variants = {
            "complete": (X, X_test),
            "20% missing at random": (
                at_random(X, 0.2, rng),
                at_random(X_test, 0.2, rng),
            ),
            f"{BLOCK}x{BLOCK} block missing": (
                occluded(X, rng),
                occluded(X_test, rng),
            ),
        }
        for variant, (X_fit, X_score) in variants.items():
            for model_name, model in make_models(
                args.n_estimators, args.n_jobs, seed
            ).items():
                _, fit_seconds = timed(partial(model.fit, X_fit, y))
                predicted, predict_seconds = timed(partial(model.predict, X_score))
                row = {
                    "seed": seed,
                    "variant": variant,
                    "model": model_name,
                    "missing_fraction": round(float(np.isnan(X_fit).mean()), 4),
                    "test_error": round(float(np.mean(predicted != y_test)), 4),
                    "fit_seconds": round(fit_seconds, 3),
                    "predict_seconds": round(predict_seconds, 3),
                }
                rows.append(row)
                write_csv(out.with_suffix(".csv"), [row], append=True)
                print(row, flush=True)

    about = machine()
    load = os.getloadavg()[0]
    lines = [
        "# Missing values on Fashion-MNIST",
        "",
        f"Machine: {about['cpu']}, {about['cores']} cores (load average {load:.1f} "
        "at the end: the machine was shared), "
        f"Python {about['python']}, numpy {about['numpy']}.",
        "",
        f"{args.n_train} training images, {args.n_test} test images, "
        f"{args.n_estimators} {'rounds' if args.boosting else 'trees'}, "
        f"{args.n_jobs} threads, {args.seeds} seeds "
        f"(test error: mean and range over seeds; times: best over seeds), "
        f"morf_rs {about['morf_rs']}, scikit-learn {about['sklearn']}. "
        f"Made by `{command_line()}`.",
        "",
    ]
    table = []
    for variant in dict.fromkeys(row["variant"] for row in rows):
        for model in dict.fromkeys(row["model"] for row in rows):
            runs = [r for r in rows if r["variant"] == variant and r["model"] == model]
            errors = [r["test_error"] for r in runs]
            table.append(
                {
                    "variant": variant,
                    "model": model,
                    "pixels missing": f"{runs[0]['missing_fraction']:.1%}",
                    "test error": f"{np.mean(errors):.4f} "
                    f"({min(errors):.4f}-{max(errors):.4f})",
                    "fit (s)": f"{min(r['fit_seconds'] for r in runs):.2f}",
                    "predict (s)": f"{min(r['predict_seconds'] for r in runs):.2f}",
                }
            )
    lines += markdown_table(table)
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
