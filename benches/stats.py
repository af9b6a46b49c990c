"""The Coleman (MIGHT / CoMIGHT) test of morf_rs.stats beside treeple 0.10.3's
build_coleman_forest, on the seed experiment (C) (morf_rs.datasets.make_impulse:
white noise of 100 time points, class 1 adds a decaying impulse from t = 20).

* calibration: the tested window is pure noise (t in [60, 70)), so the null holds;
  over ``--sets`` simulated data sets, the share of p-values below 0.05 (morf_rs).
* power: the tested window holds the impulse (t in [20, 30)); the share of p-values
  below 0.05 over ``--power-sets`` data sets, morf_rs's RF and MORF (windows of the
  signal) beside treeple's honest forest, the same number of trees and repeats.
* time: statistic and p-value from the same trees (treeple's posteriors of one
  test), treeple's null (``_compute_null_distribution_coleman`` and the metric)
  beside morf_rs's (``_core.coleman_test``), both on all cores.

Writes benches/results/stats.csv and stats.md (under results/quick/ with --quick).

    PYTHONPATH=python /work/benchvenv/bin/python benches/stats.py
    PYTHONPATH=python /work/benchvenv/bin/python benches/stats.py --quick
"""

from __future__ import annotations

import argparse
import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier, _core
from morf_rs.datasets import make_impulse
from morf_rs.stats import coleman_test

sys.path.insert(0, str(Path(__file__).parent))
from harness import (  # noqa: E402
    best_in_turns,
    machine,
    output_folder,
    timed,
    write_csv,
    write_markdown,
)

NOISE_WINDOW = np.arange(60, 70)
SIGNAL_WINDOW = np.arange(20, 30)


def ours(family, n_estimators, n_jobs):
    """An honest forest, as MIGHT grows one (half the rows fill the leaves)."""
    common = dict(n_estimators=n_estimators, honest_fraction=0.5, n_jobs=n_jobs)
    if family == "MORF":
        return ManifoldObliqueForestClassifier(image_shape=100, patch_max=10, **common)
    return RandomForestClassifier(**common)


def treeple_test(X, y, covariates, n_estimators, n_repeats, seed, n_jobs):
    from treeple import HonestForestClassifier
    from treeple.stats import PermutationHonestForestClassifier, build_coleman_forest

    forest = HonestForestClassifier(
        n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs
    )
    # As its honest forest: bootstrap draws of 1.6 n rows.
    permuted = PermutationHonestForestClassifier(
        n_estimators=n_estimators,
        bootstrap=True,
        max_samples=1.6,
        random_state=seed + 1,
        n_jobs=n_jobs,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_coleman_forest(
            forest,
            permuted,
            X,
            y,
            covariate_index=covariates,
            metric="s@98",
            n_repeats=n_repeats,
            seed=seed,
        )


def calibration(args, about):
    rows = []
    for family in ("RF", "MORF"):
        pvalues, seconds = [], 0.0
        for s in range(args.sets):
            X, y = make_impulse(args.n_samples, random_state=1000 + s)
            result, elapsed = timed(
                partial(
                    coleman_test,
                    ours(family, args.n_estimators, args.n_jobs),
                    X,
                    y,
                    NOISE_WINDOW,
                    n_repeats=args.n_repeats,
                    random_state=s,
                )
            )
            seconds += elapsed
            pvalues.append(result.pvalue)
        pvalues = np.array(pvalues)
        share = float(np.mean(pvalues < 0.05))
        rows.append(
            {
                "part": f"calibration (null), n={args.n_samples}",
                "model": f"morf_rs {family}",
                "data sets": args.sets,
                "share p < 0.05": share,
                "standard error": float(np.sqrt(share * (1 - share) / args.sets)),
                "failed": 0,
                "mean p": float(pvalues.mean()),
                "seconds per test": seconds / args.sets,
            }
        )
        print(rows[-1], flush=True)
    return rows


def power(args):
    return [row for n in args.power_samples for row in power_at(args, n)]


def power_at(args, n_samples):
    rows = []
    pvalues = {"morf_rs RF": [], "morf_rs MORF": [], "treeple honest RF": []}
    seconds = dict.fromkeys(pvalues, 0.0)
    failed = dict.fromkeys(pvalues, 0)
    for s in range(args.power_sets):
        X, y = make_impulse(n_samples, random_state=5000 + s)
        for family in ("RF", "MORF"):
            result, elapsed = timed(
                partial(
                    coleman_test,
                    ours(family, args.n_estimators, args.n_jobs),
                    X,
                    y,
                    SIGNAL_WINDOW,
                    n_repeats=args.n_repeats,
                    random_state=s,
                )
            )
            seconds[f"morf_rs {family}"] += elapsed
            pvalues[f"morf_rs {family}"].append(result.pvalue)
        try:
            found, elapsed = timed(
                partial(
                    treeple_test,
                    X,
                    y,
                    SIGNAL_WINDOW,
                    args.n_estimators,
                    args.n_repeats,
                    s,
                    args.n_jobs,
                )
            )
        except ValueError:
            # treeple's metric refuses the NaN posterior of a row that every tree
            # held: no p-value for this data set.
            failed["treeple honest RF"] += 1
            continue
        seconds["treeple honest RF"] += elapsed
        pvalues["treeple honest RF"].append(found[0].pvalue)
    for model, values in pvalues.items():
        values = np.array(values)
        share = float(np.mean(values < 0.05))
        rows.append(
            {
                "part": f"power (signal in window), n={n_samples}",
                "model": model,
                "data sets": len(values),
                "share p < 0.05": share,
                "standard error": float(np.sqrt(share * (1 - share) / len(values))),
                "failed": failed[model],
                "mean p": float(values.mean()),
                "seconds per test": seconds[model] / len(values),
            }
        )
        print(rows[-1], flush=True)
    return rows


def timing(args):
    """The null and p-value from treeple's posteriors of one test, both ways."""
    from treeple.stats.utils import METRIC_FUNCTIONS, _compute_null_distribution_coleman

    X, y = make_impulse(args.time_samples, random_state=9)
    _, original, permuted, _, _ = treeple_test(
        X, y, SIGNAL_WINDOW, args.time_trees, 10, 0, args.n_jobs
    )
    y_column = y.reshape(-1, 1)
    classes = y.astype(np.uint32)
    metric = METRIC_FUNCTIONS["s@98"]

    def treeple_null():
        first, second = _compute_null_distribution_coleman(
            y_column, original, permuted, "s@98", args.time_repeats, 0, args.n_jobs
        )
        observed = metric(y_column, np.nanmean(original, axis=0)) - metric(
            y_column, np.nanmean(permuted, axis=0)
        )
        null = second - first
        return (1 + np.sum(null >= observed)) / (1 + args.time_repeats)

    def morf_rs_null():
        return _core.coleman_test(
            classes, original, permuted, "s@98", args.time_repeats, 0, args.n_jobs
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = best_in_turns(
            {"treeple": treeple_null, "morf_rs": morf_rs_null}, args.rounds
        )
    part = (
        f"time: {args.time_trees} + {args.time_trees} trees, "
        f"{args.time_samples} samples, {args.time_repeats} repeats"
    )
    rows = [
        {
            "part": part,
            "model": model,
            "data sets": "",
            "share p < 0.05": "",
            "standard error": "",
            "failed": "",
            "mean p": "",
            "seconds per test": best[model],
        }
        for model in ("treeple", "morf_rs")
    ]
    print(rows, "speed-up", best["treeple"] / best["morf_rs"], flush=True)
    return rows, best["treeple"] / best["morf_rs"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--n-samples", type=int, default=100)
    parser.add_argument("--power-sets", type=int, default=40)
    parser.add_argument("--power-samples", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--n-estimators", type=int, default=50)
    parser.add_argument("--n-repeats", type=int, default=500)
    parser.add_argument("--time-trees", type=int, default=100)
    parser.add_argument("--time-samples", type=int, default=200)
    parser.add_argument("--time-repeats", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--parts", nargs="+", default=["time", "calibration", "power"])
    parser.add_argument("--quick", action="store_true", help="a few sets: a check")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.sets, args.power_sets, args.time_repeats, args.rounds = 10, 3, 200, 1
    out = output_folder(args.quick, args.out)
    about = machine(("numpy", "sklearn", "treeple", "morf_rs"))
    timed, speed_up = timing(args) if "time" in args.parts else ([], float("nan"))
    rows = (calibration(args, about) if "calibration" in args.parts else []) + (
        power(args) if "power" in args.parts else []
    )
    rows += timed
    write_csv(out / "stats.csv", rows)
    notes = (
        "Calibration: a null test is calibrated when the share of p-values below "
        "0.05 lies within [0.02, 0.08]. treeple splits the pooled trees into a "
        "quarter and three quarters (its `n_estimators // 2` of the 2N); morf_rs "
        "into two halves of N. Forests: honest (honest_fraction=0.5), bootstrap, "
        f"{args.n_estimators} trees, {args.n_repeats} repeats, metric s@98, "
        f"{args.n_jobs} threads. Time: the null distribution and p-value of "
        f"treeple's posteriors of one test, morf_rs {speed_up:.0f}x faster."
    )
    write_markdown(
        out / "stats.md",
        "Coleman test: morf_rs.stats beside treeple",
        rows,
        about,
        notes,
    )


if __name__ == "__main__":
    main()
