"""Regression benchmark: morf_rs's regressors against scikit-learn's
RandomForestRegressor, in one process, on the same data with the same threads.

Data sets:

* ``patch_amplitude``: 20x20 images of Gaussian noise with a 4x4 square of
  random position added at a random amplitude; the target is that amplitude.
  It lives on the image structure: no single pixel tells it, a patch sum does.
* ``impulse_amplitude``: 1-D signals of 100 noisy samples with an exponentially
  decaying impulse of random onset and amplitude; the target is the amplitude
  (the regression version of the seeds' impulse experiment).
* ``friedman1``: scikit-learn's ``make_friedman1`` (10 features, noise 1), a
  standard tabular regression problem.
* ``diabetes``: scikit-learn's bundled diabetes set (442 patients, 10
  features), a standard offline regression set (California housing needs the
  network).

Each model is fitted on ``--seeds`` training sets per data set and scored (R²)
on a fixed test set; the figures are the mean and spread over seeds and the
median fit time. ``--oob`` adds out-of-bag estimates on 10,000 Fashion-MNIST
images: ``oob_score_`` against the test accuracy and the cost of the out-of-bag
pass over the fit.

    python benches/regression.py --threads 2 --seeds 3 --oob
    python benches/regression.py --quick --oob   # a check: 10 trees, small sets

writes ``benches/results/regression/{regression.csv,regression.md,r2.png}``
(and ``oob.csv``, ``oob.md`` with ``--oob``; under results/quick/ with ``--quick``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial
from pathlib import Path

import numpy as np
from harness import (
    command_line,
    machine,
    output_folder,
    timed,
    write_csv,
    write_markdown,
)
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.ensemble import RandomForestRegressor as SklearnForest
from sklearn.metrics import r2_score

from morf_rs import (
    ManifoldObliqueForestRegressor,
    RandomForestRegressor,
    SparseObliqueForestRegressor,
)

TEST_SEED = 12345


def patch_amplitude(n, seed, side=20, square=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, side, side)).astype(np.float32)
    amplitude = rng.uniform(0.0, 2.0, n)
    rows = rng.integers(0, side - square + 1, n)
    cols = rng.integers(0, side - square + 1, n)
    for i in range(n):
        X[i, rows[i] : rows[i] + square, cols[i] : cols[i] + square] += amplitude[i]
    return X.reshape(n, -1), amplitude


def impulse_amplitude(n, seed, length=100):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, length)).astype(np.float32)
    amplitude = rng.uniform(0.0, 3.0, n)
    onset = rng.integers(0, length - 20, n)
    decay = np.exp(-np.arange(20) / 5.0)
    for i in range(n):
        X[i, onset[i] : onset[i] + 20] += amplitude[i] * decay
    return X, amplitude


def friedman1(n, seed):
    X, y = make_friedman1(n, noise=1.0, random_state=seed)
    return X.astype(np.float32), y


_DIABETES = load_diabetes()


def diabetes_split(seed):
    """A seeded 3/4 - 1/4 split of the 442 patients."""
    order = np.random.default_rng(seed).permutation(len(_DIABETES.target))
    cut = 3 * len(order) // 4
    X = _DIABETES.data.astype(np.float32)
    y = _DIABETES.target
    return (X[order[:cut]], y[order[:cut]]), (X[order[cut:]], y[order[cut:]])


# name: (make(n, seed), n_train, n_test, image_shape, patch_min, patch_max)
SETS = {
    "patch_amplitude": (patch_amplitude, 2000, 2000, (20, 20), (2, 2), (6, 6)),
    "impulse_amplitude": (impulse_amplitude, 2000, 2000, (100,), (2,), (20,)),
    "friedman1": (friedman1, 2000, 2000, None, None, None),
    "diabetes": (None, None, None, None, None, None),
}


def models(image_shape, patch_min, patch_max, threads, seed, trees=100):
    common = dict(n_estimators=trees, n_jobs=threads, random_state=seed)
    out = {
        "scikit-learn RandomForestRegressor": SklearnForest(max_features=1.0, **common),
        "morf_rs RandomForestRegressor": RandomForestRegressor(**common),
        "morf_rs SparseObliqueForestRegressor": SparseObliqueForestRegressor(**common),
    }
    if image_shape is not None:
        out["morf_rs ManifoldObliqueForestRegressor"] = ManifoldObliqueForestRegressor(
            image_shape=image_shape, patch_min=patch_min, patch_max=patch_max, **common
        )
    return out


def run_regression(args):
    rows = []
    for name in args.sets:
        make, n_train, n_test, shape, pmin, pmax = SETS[name]
        scores, times = {}, {}
        for seed in range(args.seeds):
            if make is None:
                (X, y), (X_test, y_test) = diabetes_split(seed)
            else:
                X, y = make(min(n_train, args.max_n), seed)
                X_test, y_test = make(min(n_test, args.max_n), TEST_SEED)
            fitted = models(shape, pmin, pmax, args.threads, seed, args.trees)
            for label, model in fitted.items():
                _, elapsed = timed(partial(model.fit, X, y))
                scores.setdefault(label, []).append(
                    r2_score(y_test, model.predict(X_test))
                )
                times.setdefault(label, []).append(elapsed)
        for label in scores:
            rows.append(
                {
                    "data": name,
                    "model": label,
                    "r2_mean": statistics.mean(scores[label]),
                    "r2_std": statistics.pstdev(scores[label]),
                    "fit_s_median": statistics.median(times[label]),
                    "seeds": args.seeds,
                    "threads": args.threads,
                }
            )
            print(
                f"{name:18s} {label:40s} R2 {rows[-1]['r2_mean']:.3f} "
                f"+- {rows[-1]['r2_std']:.3f}  fit {rows[-1]['fit_s_median']:.2f} s",
                flush=True,
            )
    return rows


def run_oob(args):
    from fashion_mnist import load_fashion_mnist

    from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier

    X_pool, y_pool = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    rows = []
    for seed in range(args.seeds):
        order = np.random.default_rng(seed).permutation(len(y_pool))[: args.oob_n]
        X, y = np.ascontiguousarray(X_pool[order]).astype(np.uint8), y_pool[order]
        X_test_bytes = X_test.astype(np.uint8)
        for cls, extra in (
            (RandomForestClassifier, {}),
            (
                ManifoldObliqueForestClassifier,
                dict(image_shape=(28, 28), patch_min=2, patch_max=5),
            ),
        ):
            model = cls(
                n_estimators=args.trees, n_jobs=args.threads, random_state=seed, **extra
            )
            _, fit_s = timed(partial(model.fit, X, y))
            _, oob_s = timed(
                partial(
                    model._forest.oob_predict, X, model._engine_params_, args.threads
                )
            )
            model.set_params(oob_score=True).fit(X, y)
            test_accuracy = float(np.mean(model.predict(X_test_bytes) == y_test))
            rows.append(
                {
                    "model": cls.__name__,
                    "seed": seed,
                    "n_train": args.oob_n,
                    "oob_score": model.oob_score_,
                    "test_accuracy": test_accuracy,
                    "gap": model.oob_score_ - test_accuracy,
                    "fit_s": fit_s,
                    "oob_s": oob_s,
                    "oob_cost": oob_s / fit_s,
                    "threads": args.threads,
                }
            )
            print(
                f"{cls.__name__:34s} seed {seed}: OOB {model.oob_score_:.4f} test "
                f"{test_accuracy:.4f}  fit {fit_s:.2f} s  OOB pass {oob_s:.2f} s "
                f"({100 * oob_s / fit_s:.0f}% of fit)",
                flush=True,
            )
    return rows


def write_table(rows, path_csv, path_md, columns, title):
    """Every column of ``rows`` as CSV, ``columns`` of them as Markdown."""
    write_csv(path_csv, rows)
    table = [{c: row[c] for c in columns} for row in rows]
    about = machine(("numpy", "sklearn", "morf_rs"))
    write_markdown(path_md, title, table, about, f"Made by `{command_line()}`.")


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(dict.fromkeys(r["data"] for r in rows))
    labels = list(dict.fromkeys(r["model"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        xs, means, stds = [], [], []
        for i, name in enumerate(sets):
            for r in rows:
                if r["data"] == name and r["model"] == label:
                    xs.append(i + k * width)
                    means.append(r["r2_mean"])
                    stds.append(r["r2_std"])
        ax.bar(xs, means, width, yerr=stds, label=label)
    ax.set_xticks(np.arange(len(sets)) + 0.4 - width / 2, sets)
    ax.set_ylabel("test R²")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--oob", action="store_true", help="also the OOB figures")
    parser.add_argument("--oob-n", type=int, default=10_000)
    parser.add_argument("--no-regression", action="store_true")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--max-n", type=int, default=2_000, help="rows per set")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="default benches/results/regression")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.trees, args.max_n, args.oob_n = 1, 10, 300, 1_000
    return args


def main(argv=None):
    args = parse_args(argv)
    out = output_folder(args.quick, args.out, "regression")
    if not args.no_regression:
        rows = run_regression(args)
        columns = ["data", "model", "r2_mean", "r2_std", "fit_s_median"]
        write_table(
            rows,
            out / "regression.csv",
            out / "regression.md",
            columns,
            f"Regression: R² and fit time, {args.seeds} seed(s), {args.trees} trees",
        )
        plot(rows, out / "r2.png")
    if args.oob:
        rows = run_oob(args)
        columns = ["model", "seed", "oob_score", "test_accuracy", "gap", "fit_s"]
        columns += ["oob_s", "oob_cost"]
        write_table(
            rows,
            out / "oob.csv",
            out / "oob.md",
            columns,
            f"Out-of-bag estimates on {args.oob_n:,} Fashion-MNIST images",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
