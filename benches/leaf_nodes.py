"""Best-first growth (max_leaf_nodes) beside depth-first growth to the same number of
leaves, on Fashion-MNIST: fit times, leaves and test accuracy of morf_rs's RF and MORF.

Three comparisons per model family, each pair fitted in turns (best time over rounds):

* ``unbounded``: depth-first trees grown out, and best-first trees with a
  max_leaf_nodes no tree reaches, grown out too (to about as many leaves: their nodes
  draw other candidate atoms, being grown in another order), so the difference is
  the cost of growing best first.
* ``depth D``: depth-first trees cut at max_depth=D, and best-first trees with
  max_leaf_nodes set to the depth-first trees' mean number of leaves.

Writes benches/results/leaf_nodes.csv (every run) and .md (the summary).

    python benches/leaf_nodes.py            # 10,000 images, 50 trees, 3 rounds
    python benches/leaf_nodes.py --quick    # 2,000 images, 10 trees: a check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier

sys.path.insert(0, str(Path(__file__).parent))
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import (  # noqa: E402
    best_in_turns,
    machine,
    output_folder,
    write_csv,
    write_markdown,
)

SIDE = 28
FAMILIES = {
    "RF": lambda **params: RandomForestClassifier(**params),
    # The papers' Fashion-MNIST patch settings (benches/compare.py).
    "MORF": lambda **params: ManifoldObliqueForestClassifier(
        image_shape=(SIDE, SIDE), patch_min=2, patch_max=5, **params
    ),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=10_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--n-estimators", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--depths", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--quick", action="store_true", help="2,000 images, 10 trees")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.n_train, args.n_test, args.n_estimators, args.rounds = 2000, 2000, 10, 1

    X_train, y_train = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    X_train, y_train = X_train[: args.n_train], y_train[: args.n_train]
    X_test, y_test = X_test[: args.n_test], y_test[: args.n_test]
    shared = {
        "n_estimators": args.n_estimators,
        "n_jobs": args.n_jobs,
        "random_state": 0,
    }
    rows = []
    for family, make in FAMILIES.items():
        for depth in [None, *args.depths]:
            depth_first = make(max_depth=depth, **shared).fit(X_train, y_train)
            leaves = depth_first.tree_stats_["n_leaves"]
            if depth is None:
                # More leaves than any tree has: best first grows the same trees.
                max_leaf_nodes = 2 * int(leaves.max())
            else:
                max_leaf_nodes = int(round(leaves.mean()))
            variants = {
                "depth first": {"max_depth": depth},
                "best first": {"max_leaf_nodes": max_leaf_nodes},
            }
            fitted = {}
            best = best_in_turns(
                {
                    name: lambda p=params, m=make: m(**p, **shared).fit(
                        X_train, y_train
                    )
                    for name, params in variants.items()
                },
                args.rounds,
                results=fitted,
            )
            for name, model in fitted.items():
                rows.append(
                    {
                        "family": family,
                        "comparison": "unbounded"
                        if depth is None
                        else f"depth {depth}",
                        "growth": name,
                        "max_depth": depth,
                        "max_leaf_nodes": max_leaf_nodes
                        if name == "best first"
                        else None,
                        "mean_leaves": float(model.tree_stats_["n_leaves"].mean()),
                        "fit_s": best[name],
                        "accuracy": float(model.score(X_test, y_test)),
                    }
                )
                print(rows[-1], flush=True)

    out = output_folder(args.quick, args.out)
    write_csv(out / "leaf_nodes.csv", rows)
    table = []
    for depth_first, best_first in zip(rows[::2], rows[1::2]):
        ratio = best_first["fit_s"] / depth_first["fit_s"]
        for row, shown in ((depth_first, ""), (best_first, f"{ratio:.2f}")):
            table.append(
                {
                    "family": row["family"],
                    "comparison": row["comparison"],
                    "growth": row["growth"],
                    "mean leaves": f"{row['mean_leaves']:.0f}",
                    "fit (s)": f"{row['fit_s']:.2f}",
                    "best/depth": shown,
                    "accuracy": f"{row['accuracy']:.4f}",
                }
            )
    write_markdown(
        out / "leaf_nodes.md",
        f"Best-first beside depth-first growth ({args.n_train} Fashion-MNIST images, "
        f"{args.n_estimators} trees, {args.n_jobs} threads, best of {args.rounds})",
        table,
        machine(),
    )
    print((out / "leaf_nodes.md").read_text())


if __name__ == "__main__":
    main()
