"""Measure candidate defaults of ManifoldObliqueForestClassifier's patch_max.

For each of the seeds' experiments (circle, bars, impulse, multivariate) and
Fashion-MNIST, fits MORF with the papers' patch settings, with patches up to the
whole axis (the former default) and with patches up to the square root of each axis
(the default), and records test error and fit time. A long signal (100,000 features)
shows what the whole-axis default cost. Writes benches/results/patch_max_default.csv
and .md.

    python benches/patch_max_default.py            # about 5 minutes on 2 cores
    python benches/patch_max_default.py --quick    # a check, to benches/results/quick
"""

from __future__ import annotations

import argparse
import math
import sys
from functools import partial
from pathlib import Path

import numpy as np

from morf_rs import ManifoldObliqueForestClassifier, datasets

sys.path.insert(0, str(Path(__file__).parent))
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import (  # noqa: E402
    machine,
    output_folder,
    timed,
    write_csv,
    write_markdown,
)

# The papers' settings (Table S2 of the seeds; benches/compare.py uses the same).
PAPERS = {
    "circle": dict(
        image_shape=(100,), patch_min=3, patch_max=12, wrap=True, max_features=0.5
    ),
    "bars": dict(
        image_shape=(28, 28), patch_min=(2, 2), patch_max=(2, 9), max_features="sqrt"
    ),
    "impulse": dict(image_shape=(100,), patch_min=2, patch_max=12, max_features=0.3),
    "multivariate": dict(
        image_shape=(3, 100), patch_min=(2, 5), patch_max=(2, 10), max_features="sqrt"
    ),
    "fashion": dict(
        image_shape=(28, 28), patch_min=(2, 2), patch_max=(2, 5), max_features="sqrt"
    ),
}


def data(name, n_train, n_test, seed):
    if name == "fashion":
        X, y = load_fashion_mnist("train")
        X_test, y_test = load_fashion_mnist("test")
        order = np.random.default_rng(seed).permutation(len(y))[:n_train]
        return X[order], y[order], X_test[:n_test], y_test[:n_test]
    make = getattr(datasets, f"make_{name}")
    X, y = make(n_train, random_state=seed)
    X_test, y_test = make(n_test, random_state=1000 + seed)
    return X, y, X_test, y_test


def variants(name):
    papers = PAPERS[name]
    shape = papers["image_shape"]
    # The rest of the papers' settings stay; only the largest extent changes.
    shared = {k: v for k, v in papers.items() if k != "patch_max"}
    return {
        "papers": papers,
        "whole axis": dict(shared, patch_max=shape),
        "sqrt (default)": dict(shared, patch_max=None),
    }


def run(name, settings, X, y, X_test, y_test, args, seed):
    clf = ManifoldObliqueForestClassifier(
        n_estimators=args.trees, n_jobs=args.jobs, random_state=seed, **settings
    )
    _, fit_s = timed(partial(clf.fit, X, y))
    error = float(np.mean(clf.predict(X_test) != y_test))
    return fit_s, error, clf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--n-sim", type=int, default=1000)
    parser.add_argument("--n-fashion", type=int, default=5000)
    parser.add_argument("--long-features", type=int, default=100_000)
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args(argv)
    if args.quick:
        args.trees, args.seeds, args.n_sim, args.n_fashion = 5, 1, 200, 300
        args.long_features, args.n_test = 2_000, 500
    out = output_folder(args.quick, args.out)
    rows = []
    for name in PAPERS:
        n = args.n_fashion if name == "fashion" else args.n_sim
        for seed in range(args.seeds):
            X, y, X_test, y_test = data(name, n, args.n_test, seed)
            for label, settings in variants(name).items():
                fit_s, error, clf = run(
                    name, settings, X, y, X_test, y_test, args, seed
                )
                rows.append(
                    dict(
                        experiment=name,
                        n=n,
                        seed=seed,
                        patch_max=label,
                        resolved=str(clf._atom_params(X.shape[1])["patch_max"]),
                        fit_s=round(fit_s, 3),
                        test_error=round(error, 4),
                    )
                )
                print(rows[-1], flush=True)
    # The case of issue 14: one long axis, where each whole-axis patch spans up to
    # all of it; fewer trees and samples keep the former default's run short.
    rng = np.random.default_rng(0)
    n, p = 200, args.long_features
    X = rng.random((n, p), dtype=np.float32)
    y = (X[:, : p // 2].sum(axis=1) > X[:, p // 2 :].sum(axis=1)).astype(int)
    for label, patch_max in [("whole axis", p), ("sqrt (default)", None)]:
        clf = ManifoldObliqueForestClassifier(
            n_estimators=10, n_jobs=args.jobs, random_state=0, patch_max=patch_max
        )
        _, fit_s = timed(partial(clf.fit, X, y))
        rows.append(
            dict(
                experiment=f"long signal ({p} features, 10 trees)",
                n=n,
                seed=0,
                patch_max=label,
                resolved=str(patch_max or math.isqrt(p)),
                fit_s=round(fit_s, 3),
                test_error="",
            )
        )
        print(rows[-1], flush=True)
    write_csv(out / "patch_max_default.csv", rows)
    write_summary(rows, args, out)
    return 0


def write_summary(rows, args, out):
    """Mean fit time and test error per experiment and patch_max, as markdown."""
    table = []
    keys = dict.fromkeys(
        (r["experiment"], r["n"], r["patch_max"], r["resolved"]) for r in rows
    )
    for experiment, n, label, resolved in keys:
        mine = [
            r for r in rows if (r["experiment"], r["patch_max"]) == (experiment, label)
        ]
        fit = np.mean([float(r["fit_s"]) for r in mine])
        errors = [float(r["test_error"]) for r in mine if r["test_error"] != ""]
        error = f"{np.mean(errors):.4f}" if errors else ""
        table.append(
            {
                "experiment": experiment,
                "n": n,
                "patch_max": label,
                "resolved": resolved,
                "fit (s)": f"{fit:.2f}",
                "test error": error,
            }
        )
    write_markdown(
        out / "patch_max_default.md",
        "Candidate defaults of MORF's patch_max",
        table,
        machine(),
        f"MORF, {args.trees} trees, n_jobs={args.jobs}, mean over {args.seeds} "
        f"seed(s), {args.n_test:,} test rows; written by benches/patch_max_default.py.",
    )


if __name__ == "__main__":
    raise SystemExit(main())
