"""Time of predict_contributions (TreeSHAP over atoms) per 1,000 Fashion-MNIST test
images: a 100-tree MORF forest and a boosted MORF model, beside their own scoring
time, with how far the contributions' sums are from the predictions.

    PYTHONPATH=python python benches/contributions.py [--rounds 3] [--threads 2]
    PYTHONPATH=python python benches/contributions.py --baseline OLD/_core.abi3.so
    PYTHONPATH=python python benches/contributions.py --quick   # a check

With --baseline (the ``_core`` extension of an earlier morf_rs), that build explains
the same models' rows in the same process, the two builds taking turns, and must give
the same values. --models DIR keeps the fitted models there and reuses them (the
300-round booster takes minutes to grow).

Writes benches/results/contributions.{csv,md} (under results/quick/ with --quick).
"""

from __future__ import annotations

import argparse
import pickle
from functools import partial
from pathlib import Path

import numpy as np
from engine_scoring import load_core
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
    parser.add_argument("--rounds", type=int, default=3, help="timed calls per model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1000, help="test images explained")
    parser.add_argument("--forest-train", type=int, default=10_000)
    parser.add_argument("--booster-train", type=int, default=5_000)
    parser.add_argument("--booster-rounds", type=int, default=300)
    parser.add_argument("--forest-trees", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    parser.add_argument("--baseline", type=Path, help="_core extension to compare")
    parser.add_argument("--models", type=Path, help="folder to keep fitted models in")
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
    baseline = load_core(args.baseline) if args.baseline else None
    table = []
    for label, (model, n_train, predict) in models.items():
        model, fit_s = fitted(model, X[:n_train], y[:n_train], args.models, label)
        calls = {
            "contributions": lambda m=model: m.predict_contributions(rows),
            "predict": lambda m=model, p=predict: p(m),
        }
        if baseline is not None:
            old = baseline_contributions(baseline, model, rows, args.threads)
            calls["baseline contributions"] = old
        wall, cpu = best_wall_and_cpu(calls, args.rounds)
        contributions = model.predict_contributions(rows)
        if baseline is not None:
            difference = np.abs(contributions - calls["baseline contributions"]()).max()
            assert difference < 1e-12, f"{label}: the builds differ by {difference}"
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
        if baseline is not None:
            table[-1]["baseline contributions per 1,000 images (s)"] = (
                wall["baseline contributions"] * per_1000
            )
            table[-1]["baseline contributions, CPU s per 1,000 images"] = (
                cpu["baseline contributions"] * per_1000
            )
            table[-1]["largest difference from the baseline"] = f"{difference:.1e}"
        print(table[-1], flush=True)
    about = {
        **machine(),
        "baseline": args.baseline or "none",
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
below) per tree and row), the rows of a block walking each tree side by side in
vector lanes (blocks of 32 rows where a call has two a thread, else of 8), each
distinct atom projected once per row and shared among its pixels once per block.
The baseline (if any) explains the same models' rows in the same process, the builds
taking turns, and must give the same values.
Scoring is predict_proba for the forest and decision_function for the boosted model,
on the same rows and threads. The forest's trees grow until pure, so their size (and
the time) grows with the training set.
Wall times are best of the timed calls on a machine shared with other work; CPU
times are summed over the threads (on an idle machine the wall time is about the CPU
time over the threads).
""",
    )


def fitted(model, X, y, folder, label):
    """``model`` fitted on ``X, y`` and the seconds its fit took, or the model and time
    kept under ``folder`` by an earlier run (fitted then if not there)."""
    name = label.replace(" ", "_").replace(",", "")
    path = folder / f"{name}.pkl" if folder else None
    if path is not None and path.exists():
        with path.open("rb") as file:
            return pickle.load(file)
    _, fit_s = timed(partial(model.fit, X, y))
    if path is not None:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as file:
            pickle.dump((model, fit_s), file, protocol=pickle.HIGHEST_PROTOCOL)
    return model, fit_s


def baseline_contributions(core, model, rows, threads):
    """A call that explains ``rows`` with the fitted ``model`` loaded into the
    ``_core`` extension ``core``, as predict_contributions' values."""
    kind = core.Forest if model._model_attribute == "_forest" else core.Booster
    engine = kind.from_bytes(getattr(model, model._model_attribute).to_bytes())
    x = np.ascontiguousarray(rows, dtype=np.float32)
    n_outputs = model._n_contribution_outputs()
    shape = (len(x), x.shape[1] + 1, n_outputs)

    def call():
        out = np.empty((len(x), shape[1] * n_outputs))
        return engine.contributions(x, threads, out).reshape(shape)

    return call


if __name__ == "__main__":
    main()
