"""Command line: ``python -m morf_rs demo`` compares MORF and an axis-aligned forest;
``predict`` and ``info`` score with and describe saved models (:mod:`morf_rs._cli`)."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from functools import partial

import numpy as np

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier
from morf_rs._cli import add_commands, run_command
from morf_rs.datasets import make_bars, make_circle

# Gaussian noise on every pixel of the bars: one pixel then tells little, while a
# patch along a bar averages the noise away. Without it both forests are perfect
# from a few hundred images and the demo would show no difference.
BARS_NOISE = 1.0

# Each experiment: its data, MORF's settings (the papers' Table S2) and what it shows.
EXPERIMENTS = {
    "circle": (
        make_circle,
        {
            "image_shape": (100,),
            "patch_min": 3,
            "patch_max": 12,
            "wrap": True,
            "max_features": 0.5,
        },
        "two segments of 1s on a cycle of 100 cells, lengths 5+5 or 4+6: only "
        "neighbouring cells seen together tell the classes apart",
    ),
    "noisy-bars": (
        partial(make_bars, noise=BARS_NOISE),
        {
            "image_shape": (28, 28),
            "patch_min": (2, 2),
            "patch_max": (2, 9),
            "max_features": "sqrt",
        },
        f"28x28 images of horizontal or vertical bars under Gaussian noise "
        f"(sigma {BARS_NOISE:g}): a patch along a bar sees through the noise, a "
        "single pixel hardly does",
    ),
}


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m morf_rs",
        description=(
            "Manifold Oblique Random Forests (morf_rs): a demo, and batch scoring "
            "with models saved by morf_rs.save."
        ),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="train MORF and an axis-aligned forest on the circle and noisy bars",
        description=(
            "Generate the circle experiment (A) of the MORF papers and their bars "
            "(B) under Gaussian noise, train MORF and the axis-aligned random "
            "forest on each and print test error and fit time."
        ),
    )
    demo.add_argument(
        "--n-train",
        type=int,
        nargs="+",
        default=[50, 200, 500, 1000],
        metavar="N",
        help="training set sizes (default: 50 200 500 1000)",
    )
    demo.add_argument(
        "--n-test",
        type=int,
        default=10_000,
        help="test samples (the papers use 10,000)",
    )
    demo.add_argument("--n-estimators", type=int, default=100, help="trees per forest")
    demo.add_argument(
        "--n-jobs", type=int, default=-1, help="threads (-1: all cores; default -1)"
    )
    demo.add_argument("--random-state", type=int, default=0, help="seed")
    add_commands(commands)
    return parser


def run_demo(args, out=sys.stdout, progress=sys.stderr):
    """Train both forests on both experiments; print a table of the results."""
    n_runs = len(EXPERIMENTS) * len(args.n_train) * 2
    rows = []
    for name, (make, morf_params, _) in EXPERIMENTS.items():
        # One test set per experiment; the training sets are nested prefixes.
        n_train_max = max(args.n_train)
        X, y = make(n_train_max + args.n_test, random_state=args.random_state)
        X_test, y_test = X[n_train_max:], y[n_train_max:]
        models = (
            ("MORF", ManifoldObliqueForestClassifier, morf_params),
            ("RF (axis-aligned)", RandomForestClassifier, {}),
        )
        for n_train in args.n_train:
            for model, forest_class, params in models:
                print(
                    f"[{len(rows) + 1}/{n_runs}] {name}, n_train={n_train}: "
                    f"fitting {model} ...",
                    file=progress,
                )
                forest = forest_class(
                    n_estimators=args.n_estimators,
                    n_jobs=args.n_jobs,
                    random_state=args.random_state,
                    **params,
                )
                start = time.perf_counter()
                forest.fit(X[:n_train], y[:n_train])
                fit_seconds = time.perf_counter() - start
                error = float(np.mean(forest.predict(X_test) != y_test))
                rows.append((name, n_train, model, error, fit_seconds))

    for name, (_, _, what) in EXPERIMENTS.items():
        print(textwrap.fill(f"{name}: {what}.", subsequent_indent="  "), file=out)
    print(
        textwrap.fill(
            "MORF's test error falls quickly with n_train; the axis-aligned "
            "forest's stays near chance (0.5) much longer."
        )
        + "\n",
        file=out,
    )
    print(f"n_test={args.n_test}, n_estimators={args.n_estimators}", file=out)
    print(
        f"{'experiment':<12}{'n_train':>8}  {'model':<20}{'test error':>11}"
        f"{'fit time (s)':>14}",
        file=out,
    )
    for name, n_train, model, error, fit_seconds in rows:
        print(
            f"{name:<12}{n_train:>8}  {model:<20}{error:>11.3f}{fit_seconds:>14.2f}",
            file=out,
        )
    return rows


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command != "demo":
        return run_command(args)
    if min(args.n_train) < 1 or args.n_test < 1 or args.n_estimators < 1:
        parser.error("--n-train, --n-test and --n-estimators must be at least 1")
    run_demo(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
