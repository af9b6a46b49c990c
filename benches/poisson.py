"""Poisson regression benchmark: criterion="poisson" beside "squared_error", for
morf_rs's regressors and scikit-learn's RandomForestRegressor, on count-valued
targets, in one process, with the same data and threads.

Data sets (counts drawn from a Poisson law whose log-rate the features tell):

* ``patch_counts``: 20x20 images of Gaussian noise with a 4x4 square of random
  position added at a random amplitude ``a`` in [0, 2]; the count's rate is
  ``exp(1.5 a - 1)`` (from 0.4 to 7). It lives on the image structure.
* ``friedman_counts``: scikit-learn's ``make_friedman1`` features (10, noise 0);
  the rate is ``exp(f / 8 - 1)`` of Friedman's function ``f`` (from about 0.4 to
  7).

Each model is fitted on ``--seeds`` training sets per data set and scored on a
fixed test set by the mean Poisson deviance (scikit-learn's
``mean_poisson_deviance``; predictions are kept above 1e-6, as a forest that
splits off samples without counts may predict 0) and by R²; the figures are the
mean and spread over seeds and the median fit time.

    python benches/poisson.py --threads 2 --seeds 3
    python benches/poisson.py --quick    # a check: 10 trees, 300 rows

writes ``benches/results/poisson/{poisson.csv,poisson.md}``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial
from pathlib import Path

import numpy as np
from harness import output_folder, timed
from regression import write_table
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor as SklearnForest
from sklearn.metrics import mean_poisson_deviance, r2_score

from morf_rs import ManifoldObliqueForestRegressor, RandomForestRegressor

TEST_SEED = 12345


def patch_counts(n, seed, side=20, square=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, side, side)).astype(np.float32)
    amplitude = rng.uniform(0.0, 2.0, n)
    rows = rng.integers(0, side - square + 1, n)
    cols = rng.integers(0, side - square + 1, n)
    for i in range(n):
        X[i, rows[i] : rows[i] + square, cols[i] : cols[i] + square] += amplitude[i]
    counts = rng.poisson(np.exp(1.5 * amplitude - 1.0)).astype(np.float64)
    return X.reshape(n, -1), counts


def friedman_counts(n, seed):
    X, f = make_friedman1(n, noise=0.0, random_state=seed)
    rng = np.random.default_rng(seed + 1)
    counts = rng.poisson(np.exp(f / 8.0 - 1.0)).astype(np.float64)
    return X.astype(np.float32), counts


# name: (make(n, seed), n_train, n_test, image_shape)
SETS = {
    "patch_counts": (patch_counts, 2000, 2000, (20, 20)),
    "friedman_counts": (friedman_counts, 2000, 2000, None),
}
CRITERIA = ("squared_error", "poisson")


def models(image_shape, threads, seed, trees=100):
    common = dict(n_estimators=trees, n_jobs=threads, random_state=seed)
    out = {}
    for criterion in CRITERIA:
        out[("scikit-learn RandomForestRegressor", criterion)] = SklearnForest(
            max_features=1.0, criterion=criterion, **common
        )
        out[("morf_rs RandomForestRegressor", criterion)] = RandomForestRegressor(
            criterion=criterion, **common
        )
        if image_shape is not None:
            out[("morf_rs ManifoldObliqueForestRegressor", criterion)] = (
                ManifoldObliqueForestRegressor(
                    image_shape=image_shape,
                    patch_min=(2, 2),
                    patch_max=(6, 6),
                    criterion=criterion,
                    **common,
                )
            )
    return out


def run(args):
    rows = []
    for name in args.sets:
        make, n_train, n_test, shape = SETS[name]
        X_test, y_test = make(min(n_test, args.max_n), TEST_SEED)
        deviances, r2s, times = {}, {}, {}
        for seed in range(args.seeds):
            X, y = make(min(n_train, args.max_n), seed)
            for key, model in models(shape, args.threads, seed, args.trees).items():
                times.setdefault(key, []).append(timed(partial(model.fit, X, y))[1])
                predicted = model.predict(X_test)
                deviances.setdefault(key, []).append(
                    mean_poisson_deviance(y_test, np.maximum(predicted, 1e-6))
                )
                r2s.setdefault(key, []).append(r2_score(y_test, predicted))
        for (label, criterion), values in deviances.items():
            key = (label, criterion)
            rows.append(
                {
                    "data": name,
                    "model": label,
                    "criterion": criterion,
                    "deviance_mean": statistics.mean(values),
                    "deviance_std": statistics.pstdev(values),
                    "r2_mean": statistics.mean(r2s[key]),
                    "fit_s_median": statistics.median(times[key]),
                    "seeds": args.seeds,
                    "threads": args.threads,
                }
            )
            row = rows[-1]
            print(
                f"{name:16s} {label:40s} {criterion:14s} deviance "
                f"{row['deviance_mean']:.4f} +- {row['deviance_std']:.4f}  "
                f"R2 {row['r2_mean']:.3f}  fit {row['fit_s_median']:.2f} s",
                flush=True,
            )
    return rows


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--max-n", type=int, default=2_000, help="rows per set")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="default benches/results/poisson")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.trees, args.max_n = 1, 10, 300
    return args


def main(argv=None):
    args = parse_args(argv)
    out = output_folder(args.quick, args.out, "poisson")
    rows = run(args)
    columns = ["data", "model", "criterion", "deviance_mean", "deviance_std"]
    columns += ["r2_mean", "fit_s_median"]
    write_table(
        rows,
        out / "poisson.csv",
        out / "poisson.md",
        columns,
        f"Poisson criterion: deviance, {args.seeds} seed(s), {args.trees} trees",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
