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

writes ``benches/results/poisson/{poisson.csv,poisson.md}``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from regression import write_table
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor as SklearnForest
from sklearn.metrics import mean_poisson_deviance, r2_score

from morf_rs import ManifoldObliqueForestRegressor, RandomForestRegressor

RESULTS = Path(__file__).parent / "results" / "poisson"
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


def models(image_shape, threads, seed):
    common = dict(n_estimators=100, n_jobs=threads, random_state=seed)
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
        X_test, y_test = make(n_test, TEST_SEED)
        deviances, r2s, times = {}, {}, {}
        for seed in range(args.seeds):
            X, y = make(n_train, seed)
            for key, model in models(shape, args.threads, seed).items():
                start = time.perf_counter()
                model.fit(X, y)
                times.setdefault(key, []).append(time.perf_counter() - start)
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
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows = run(args)
    columns = ["data", "model", "criterion", "deviance_mean", "deviance_std"]
    columns += ["r2_mean", "fit_s_median"]
    write_table(rows, RESULTS / "poisson.csv", RESULTS / "poisson.md", columns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
