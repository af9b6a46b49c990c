"""Time of predict_contributions (TreeSHAP over atoms) per 1,000 Fashion-MNIST test
images: a 100-tree MORF forest and a boosted MORF model, beside their own scoring
time, with how far the contributions' sums are from the predictions.

    PYTHONPATH=python python benches/contributions.py [--rounds 1] [--threads 2]
    PYTHONPATH=python python benches/contributions.py --quick   # a check

Writes benches/results/contributions.{csv,md} (under results/quick/ with --quick).
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np
from fashion_mnist import load_fashion_mnist
from harness import (
    best_wall_and_cpu,
    machine,
    output_folder,
    timed,
    write_csv,
    write_markdown,
)

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="timed calls per model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1000, help="test images explained")
    parser.add_argument("--forest-train", type=int, default=10_000)
    parser.add_argument("--booster-train", type=int, default=5_000)
    parser.add_argument("--booster-rounds", type=int, default=300)
    parser.add_argument("--forest-trees", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.forest_train, args.booster_train = 100, 1000, 1000
        args.booster_rounds, args.forest_trees = 5, 5
    out = output_folder(args.quick, args.out)

    X, y = load_fashion_mnist("train")
    X_test, _ = load_fashion_mnist("test")
    rows = X_test[: args.rows]
    models = {
        f"MORF forest, {args.forest_trees} trees": (
            ManifoldObliqueForestClassifier(
                image_shape=(28, 28),
                n_estimators=args.forest_trees,
                n_jobs=args.threads,
                random_state=0,
            ),
            args.forest_train,
            lambda model: model.predict_proba(rows),
        ),
        f"boosted MORF, {args.booster_rounds} rounds": (
            ManifoldObliqueGradientBoostingClassifier(
                image_shape=(28, 28),
                n_estimators=args.booster_rounds,
                early_stopping=False,
                n_jobs=args.threads,
                random_state=0,
            ),
            args.booster_train,
            lambda model: model.decision_function(rows),
        ),
    }
    table = []
    for label, (model, n_train, predict) in models.items():
        _, fit_s = timed(partial(model.fit, X[:n_train], y[:n_train]))
        calls = {
            "contributions": lambda m=model: m.predict_contributions(rows),
            "predict": lambda m=model, p=predict: p(m),
        }
        wall, cpu = best_wall_and_cpu(calls, args.rounds)
        contributions = model.predict_contributions(rows)
        total = contributions.sum(axis=1)
        output = predict(model)
        if output.ndim == 1:  # two classes: the one raw score is output 1
            total = total[:, 1]
        stats = model.tree_stats_
        per_1000 = 1000 / len(rows)
        table.append(
            {
                "model": label,
                "train images": n_train,
                "trees": len(stats["n_leaves"]),
                "mean leaves": float(np.mean(stats["n_leaves"])),
                "mean depth": float(np.mean(stats["max_depth"])),
                "fit (s)": fit_s,
                "contributions per 1,000 images (s)": wall["contributions"] * per_1000,
                "contributions, CPU s per 1,000 images": cpu["contributions"]
                * per_1000,
                "scoring per 1,000 images (s)": wall["predict"] * per_1000,
                "scoring, CPU s per 1,000 images": cpu["predict"] * per_1000,
                "largest sum error": f"{np.abs(total - output).max():.1e}",
            }
        )
        print(table[-1], flush=True)
    about = {
        **machine(),
        "threads": args.threads,
        "test images explained": len(rows),
        "timed calls (best of)": args.rounds,
    }
    write_csv(out / "contributions.csv", table)
    write_markdown(
        out / "contributions.md",
        "predict_contributions on Fashion-MNIST",
        table,
        about,
        notes="""
Exact path-dependent TreeSHAP over each split's atom (Linear TreeSHAP with each
subtree's polynomial in the Bernstein basis: O(sum over nodes of height x outputs
below) per tree and row), each distinct atom shared among its pixels once per row.
Scoring is predict_proba for the forest and decision_function for the boosted model,
on the same rows and threads. The forest's trees grow until pure, so their size (and
the time) grows with the training set.
Wall times are best of the timed calls on a machine shared with other work; CPU
times are summed over the threads (on an idle machine the wall time is about the CPU
time over the threads).
""",
    )


if __name__ == "__main__":
    main()
