"""Scoring through the shared engine beside an earlier build of it and scikit-learn.

    python benches/engine_scoring.py --baseline OLD/_core.abi3.so  # benches/results/
    python benches/engine_scoring.py --quick                       # a minute or two

Forests of 100 trees (RF, SPORF, MORF with the papers' patches) and a boosted model of
100 rounds, grown on 10,000 Fashion-MNIST images, then predict_proba (forests) and raw
scores (the booster) over 100,000 float32 rows (the 70,000 images repeated), at 1 and 2
threads. With --baseline (the ``_core`` extension of an earlier morf_rs, for instance
from the wheel of an earlier commit), the models are grown by it and scored by both
builds in this one process, taking turns: its saved bytes load in this build, and both
builds must give the same numbers. scikit-learn's RandomForestClassifier, grown on the
same images, scores the same rows beside RF.

Writes engine_scoring.csv and engine_scoring.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import time
from pathlib import Path

import numpy as np
from fashion_mnist import load_fashion_mnist
from harness import best_wall_and_cpu, machine, write_csv, write_markdown

import morf_rs
from morf_rs import _core

RESULTS = Path(__file__).resolve().parent / "results"


_LOADED_BUILDS = itertools.count()


def load_core(path: Path):
    """The ``_core`` extension at ``path``, imported under a name of its own so that it
    lives beside this build's and beside any other loaded this way: a name used twice
    would find the first build's module again."""
    name = f"morf_rs_build_{next(_LOADED_BUILDS)}._core"
    spec = importlib.util.spec_from_file_location(name, Path(path).resolve())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engine_params(estimator, n_samples, n_features):
    checked = estimator._validate_params(n_samples, n_features)
    params = estimator._engine_params(checked, n_features)
    return params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="_core extension to compare")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="calls per figure")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n_train, n_rows, n_trees = (
        (2_000, 20_000, 20) if args.quick else (10_000, 100_000, 100)
    )

    X_train, y_train = load_fashion_mnist("train")
    X_test, _ = load_fashion_mnist("test")
    X_fit = np.ascontiguousarray(X_train[:n_train], dtype=np.float32)
    y_fit = y_train[:n_train].astype(np.uint32)
    X = np.resize(np.concatenate([X_train, X_test]), (n_rows, 784)).astype(np.float32)

    baseline = load_core(args.baseline) if args.baseline else None
    grower = baseline or _core
    forests = {
        "RF": morf_rs.RandomForestClassifier(n_estimators=n_trees, random_state=0),
        "SPORF": morf_rs.SparseObliqueForestClassifier(
            n_estimators=n_trees, random_state=0
        ),
        "MORF": morf_rs.ManifoldObliqueForestClassifier(
            n_estimators=n_trees,
            image_shape=(28, 28),
            patch_min=(2, 2),
            patch_max=(2, 5),
            random_state=0,
        ),
    }
    booster = morf_rs.ManifoldObliqueGradientBoostingClassifier(
        n_estimators=n_trees, image_shape=(28, 28), early_stopping=False, random_state=0
    )
    models = {}
    for name, estimator in forests.items():
        params = engine_params(estimator, n_train, 784)
        model = grower.Forest.fit(X_fit, y_fit, 10, None, params, 2)
        models[name] = ("forest", model.to_bytes())
    params = engine_params(booster, n_train, 784)
    model = grower.Booster.fit(X_fit, y_fit, 10, None, params, 2)
    models["MORF boosted"] = ("booster", model.to_bytes())

    from sklearn.ensemble import RandomForestClassifier

    sklearn_rf = RandomForestClassifier(n_estimators=n_trees, n_jobs=2, random_state=0)
    sklearn_rf.fit(X_fit, y_fit)

    rows = []
    for name, (kind, data) in models.items():
        builds = {"this build": _core}
        if baseline is not None:
            builds["baseline"] = baseline
        for threads in (1, 2):
            calls, outputs = {}, {}
            for build, core in builds.items():
                if kind == "forest":
                    model = core.Forest.from_bytes(data)

                    def call(model=model, threads=threads):
                        return model.predict_proba(X, threads)

                else:
                    model = core.Booster.from_bytes(data)

                    def call(model=model, threads=threads):
                        return model.predict_raw_rounds(X, 0, model.n_rounds, threads)

                outputs[build] = call()
                calls[f"morf_rs {build}"] = call
            if "baseline" in outputs and not np.array_equal(
                outputs["baseline"], outputs["this build"]
            ):
                raise SystemExit(f"{name}: the builds score differently")
            if name == "RF":
                sklearn_rf.set_params(n_jobs=threads)
                calls["scikit-learn"] = lambda: sklearn_rf.predict_proba(X)
            wall, cpu = best_wall_and_cpu(calls, args.rounds)
            ours = "morf_rs this build"
            for label, seconds in wall.items():
                rows.append(
                    {
                        "model": name,
                        "threads": threads,
                        "library": label,
                        "seconds": seconds,
                        "vs this build": seconds / wall[ours],
                        "cpu seconds": cpu[label],
                        "cpu vs this build": cpu[label] / cpu[ours],
                    }
                )
            print(name, threads, {k: round(v, 3) for k, v in wall.items()}, flush=True)

    about = machine()
    about["date"] = time.strftime("%Y-%m-%d")
    about["setting"] = (
        f"{n_trees} trees/rounds grown on {n_train} Fashion-MNIST images, "
        f"{n_rows} rows scored, best of {args.rounds} in turns"
    )
    out = args.out / "quick" if args.quick else args.out
    write_csv(out / "engine_scoring.csv", rows)
    write_markdown(
        out / "engine_scoring.md",
        "Scoring through the shared engine",
        rows,
        about,
        "`vs this build`: seconds over this build's seconds (above 1: slower); `cpu "
        "seconds`: the process's CPU time (all threads) of the call, best of the "
        "rounds, which depends less on what else the machine runs.",
    )


if __name__ == "__main__":
    main()
