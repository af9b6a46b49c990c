"""Isolation forests on image anomalies beside scikit-learn's IsolationForest and
treeple's ExtendedIsolationForest, in one run: ROC AUC and fit time.

    /work/benchvenv/bin/python benches/isolation.py   # with PYTHONPATH=python
    /work/benchvenv/bin/python benches/isolation.py --quick   # a check, results/quick/

Two kinds of anomaly:
- Fashion-MNIST: the forests grow on 2,000 training images of one class; the test
  set is 1,000 test images of that class and 1,000 of the other classes. Each of
  the ten classes is the normal one in turn; the last Fashion-MNIST rows give each
  model's mean AUC over the ten and its total fit time.
- A seed simulation (``morf_rs.datasets.make_bars``, 28x28 images of bars): 2,000
  images grow the forests; of 2,000 new ones, 100 have a 6x6 patch at a random
  place saturated to the bars' value, 1 (a corrupted patch). Single pixels cannot
  tell it: a third of every image's pixels are 1 already.

Every model has 100 trees, max_samples="auto" (256 rows) and one thread; each AUC is
the mean over the forests of ``--seeds`` random states (3), fit times the best of three
fits of the first taking turns. Figures go to benches/results/isolation.csv
and isolation.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from fashion_mnist import CLASS_NAMES, load_fashion_mnist
from harness import best_in_turns, machine, output_folder, write_csv, write_markdown
from sklearn.ensemble import IsolationForest as SklearnIsolationForest
from sklearn.metrics import roc_auc_score
from treeple import ExtendedIsolationForest

from morf_rs import (
    IsolationForest,
    ManifoldObliqueIsolationForest,
    SparseObliqueIsolationForest,
    datasets,
)

N_TRAIN, N_TEST_PER_SIDE = 2000, 1000
NORMAL_CLASSES = tuple(range(10))
ROUNDS = 3


def models(seed, trees=100):
    """The detectors compared, by label, each with ``trees`` trees on one thread."""
    shared = {"n_estimators": trees, "random_state": seed}
    return {
        "scikit-learn IsolationForest": SklearnIsolationForest(**shared),
        "treeple ExtendedIsolationForest": ExtendedIsolationForest(
            feature_combinations=1.5, **shared
        ),
        "morf_rs IsolationForest": IsolationForest(**shared),
        "morf_rs SparseObliqueIsolationForest": SparseObliqueIsolationForest(**shared),
        "morf_rs ManifoldObliqueIsolationForest": ManifoldObliqueIsolationForest(
            image_shape=(28, 28), **shared
        ),
        'morf_rs ManifoldObliqueIsolationForest, dictionary="images"': (
            ManifoldObliqueIsolationForest(
                image_shape=(28, 28), dictionary="images", **shared
            )
        ),
    }


def fashion_tasks(rng, normal_classes=NORMAL_CLASSES):
    """(name, X_train, X_test, is_anomaly) for each normal Fashion-MNIST class."""
    X_train, y_train = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    for normal in normal_classes:
        train = rng.choice(np.flatnonzero(y_train == normal), N_TRAIN, replace=False)
        inliers = rng.choice(np.flatnonzero(y_test == normal), N_TEST_PER_SIDE, False)
        outliers = rng.choice(np.flatnonzero(y_test != normal), N_TEST_PER_SIDE, False)
        test = np.concatenate([inliers, outliers])
        is_anomaly = np.arange(len(test)) >= N_TEST_PER_SIDE
        name = f"Fashion-MNIST, normal: {CLASS_NAMES[normal]}"
        yield name, X_train[train], X_test[test], is_anomaly


def corrupted_patch_task(rng, n_corrupted=100, extent=6):
    """Bars images, ``n_corrupted`` test images with a saturated patch."""
    X_train, _ = datasets.make_bars(N_TRAIN, random_state=0)
    X_test, _ = datasets.make_bars(2 * N_TEST_PER_SIDE, random_state=1)
    images = X_test.reshape(-1, 28, 28).copy()
    for i in range(n_corrupted):
        top, left = rng.integers(0, 28 - extent + 1, size=2)
        images[i, top : top + extent, left : left + extent] = 1.0
    is_anomaly = np.arange(len(images)) < n_corrupted
    name = f"Bars (seed simulation), {extent}x{extent} corrupted patch"
    return name, X_train, images.reshape(len(images), -1), is_anomaly


def fashion_means(rows):
    """Per model, the mean AUC over the Fashion-MNIST tasks and the summed fit time."""
    fashion = [row for row in rows if row["task"].startswith("Fashion-MNIST")]
    means = []
    for label in dict.fromkeys(row["model"] for row in fashion):
        mine = [row for row in fashion if row["model"] == label]
        means.append(
            {
                "task": f"Fashion-MNIST, mean of {len(mine)} normal classes",
                "model": label,
                "roc_auc": float(np.mean([row["roc_auc"] for row in mine])),
                "fit_s": float(np.sum([row["fit_s"] for row in mine])),
            }
        )
    return means


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 trees, one class")
    parser.add_argument(
        "--seeds", type=int, default=3, help="forests per model and task (AUC mean)"
    )
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    trees, rounds, normal = 100, ROUNDS, NORMAL_CLASSES
    if args.quick:
        trees, rounds, normal = 10, 1, NORMAL_CLASSES[:1]
    rng = np.random.default_rng(0)
    tasks = [*fashion_tasks(rng, normal), corrupted_patch_task(rng)]
    rows = []
    seeds = 1 if args.quick else args.seeds
    for name, X_train, X_test, is_anomaly in tasks:
        detectors = models(seed=0, trees=trees)
        times = best_in_turns(
            {
                label: (lambda m=m, X=X_train: m.fit(X))
                for label, m in detectors.items()
            },
            rounds,
        )
        aucs = {label: [] for label in detectors}
        for seed in range(seeds):
            fitted = detectors if seed == 0 else models(seed=seed, trees=trees)
            for label, detector in fitted.items():
                if seed > 0:
                    detector.fit(X_train)
                scores = detector.score_samples(X_test)
                aucs[label].append(roc_auc_score(is_anomaly, -scores))
        for label in detectors:
            auc = float(np.mean(aucs[label]))
            rows.append(
                {"task": name, "model": label, "roc_auc": auc, "fit_s": times[label]}
            )
            print(f"{name:55s} {label:60s} AUC {auc:.3f} fit {times[label]:.3f} s")
    rows = [*rows, *fashion_means(rows)]
    about = machine(("numpy", "sklearn", "treeple", "morf_rs"))
    out = output_folder(args.quick, args.out)
    write_csv(out / "isolation.csv", rows)
    write_markdown(
        out / "isolation.md",
        "Isolation forests on image anomalies",
        rows,
        about,
        notes=__doc__.split("\n\n", 2)[2],
    )


if __name__ == "__main__":
    main()
