"""ONNX Runtime scoring exported models beside morf_rs, on the same rows and threads.

    python benches/onnx_scoring.py                 # -> benches/results/onnx_scoring.*
    python benches/onnx_scoring.py --trees 10 --rows 500
    python benches/onnx_scoring.py --quick         # a check -> benches/results/quick/

Fashion-MNIST: forests (MORF, RF) and a MORF booster grown on the first training
images, exported with morf_rs.onnx.to_onnx (the MORF forest with both projections,
MatMul and Gather), then the first test images scored by ``predict_proba`` and by an
ONNX Runtime session, at 1 and 2 threads, each the best of a few calls taking turns.
Agreement: the largest probability difference and the share of equal labels, on the
rows as they are and with 10% of the pixels missing (NaN).

Writes onnx_scoring.csv and onnx_scoring.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnxruntime as ort
from fashion_mnist import load_fashion_mnist
from harness import best_in_turns, machine, output_folder, write_csv, write_markdown

import morf_rs
from morf_rs.onnx import to_onnx


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=5000, help="training images")
    parser.add_argument("--rows", type=int, default=2000, help="test images scored")
    parser.add_argument("--trees", type=int, default=20, help="trees per forest")
    parser.add_argument("--rounds", type=int, default=20, help="booster rounds")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--turns", type=int, default=3, help="calls per figure")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args(argv)
    if args.quick:
        args.train, args.rows, args.trees, args.rounds, args.turns = 500, 100, 3, 3, 1
    args.out = output_folder(args.quick, args.out)
    return args


def models(args):
    """(name, fitted model, projection, rows) of every model measured: the Gather
    projection holds rows x atoms x (largest atom) floats, so it scores fewer."""
    image = {"image_shape": (28, 28), "random_state": 0, "n_jobs": max(args.threads)}
    morf = morf_rs.ManifoldObliqueForestClassifier(n_estimators=args.trees, **image)
    rf = morf_rs.RandomForestClassifier(
        n_estimators=args.trees, random_state=0, n_jobs=max(args.threads)
    )
    booster = morf_rs.ManifoldObliqueGradientBoostingClassifier(
        n_estimators=args.rounds, **image
    )
    return [
        ("MORF forest", morf, "matmul", args.rows),
        ("MORF forest", morf, "gather", min(args.rows, 100)),
        ("RF", rf, "matmul", args.rows),
        ("MORF booster", booster, "matmul", args.rows),
    ]


def session(exported, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(exported.SerializeToString(), options)


def agreement(model, runner, X):
    """(largest |probability difference|, share of equal labels) on X."""
    label, proba = runner.run(None, {"X": X})
    return (
        float(np.abs(proba - model.predict_proba(X)).max()),
        float(np.mean(label == model.predict(X))),
    )


def main(argv=None):
    args = parse_args(argv)
    X, y = load_fashion_mnist("train")
    X_test, _ = load_fashion_mnist("test")
    X, y, X_test = X[: args.train], y[: args.train], X_test[: args.rows]
    X_missing = X_test.copy()
    X_missing[np.random.default_rng(0).random(X_test.shape) < 0.1] = np.nan
    rows = []
    fitted = set()
    for name, model, projection, n_rows in models(args):
        if id(model) not in fitted:
            model.fit(X, y)
            fitted.add(id(model))
        exported = to_onnx(model, projection=projection)
        size = len(exported.SerializeToString()) / 2**20
        print(f"{name} ({projection}): {size:.1f} MiB")
        for threads in args.threads:
            model.set_params(n_jobs=threads)
            runner = session(exported, threads)
            rows_clean, rows_missing = X_test[:n_rows], X_missing[:n_rows]
            times = best_in_turns(
                {
                    "morf_rs": lambda m=model, x=rows_clean: m.predict_proba(x),
                    "onnxruntime": lambda r=runner, x=rows_clean: r.run(None, {"X": x}),
                },
                args.turns,
            )
            gap, same = agreement(model, runner, rows_clean)
            gap_missing, same_missing = agreement(model, runner, rows_missing)
            rows.append(
                {
                    "model": name,
                    "projection": projection,
                    "threads": threads,
                    "rows": n_rows,
                    "morf_rs_ms": 1e3 * times["morf_rs"],
                    "onnxruntime_ms": 1e3 * times["onnxruntime"],
                    "ratio": times["onnxruntime"] / times["morf_rs"],
                    "max_proba_diff": f"{gap:.1e}",
                    "same_label": same,
                    "max_proba_diff_nan": f"{gap_missing:.1e}",
                    "same_label_nan": same_missing,
                    "model_mib": round(size, 1),
                }
            )
            print(rows[-1])
    about = machine(("numpy", "onnx", "onnxruntime", "morf_rs"))
    about["setting"] = (
        f"Fashion-MNIST, {args.train} training images, {args.trees} trees per forest, "
        f"{args.rounds} booster rounds (10 trees each); {args.rows} test images scored"
    )
    write_csv(args.out / "onnx_scoring.csv", rows)
    write_markdown(
        args.out / "onnx_scoring.md",
        "ONNX Runtime beside morf_rs: scoring time and agreement",
        rows,
        about,
        notes=(
            "ratio: ONNX Runtime's time over morf_rs's (predict_proba), best of "
            f"{args.turns} calls taking turns. The ONNX graph projects every row on "
            "every atom of the model before walking the trees, where the engine "
            "projects only on the atoms of the splits a row passes through. *_nan: "
            "the same rows with 10% of the pixels missing."
        ),
    )


if __name__ == "__main__":
    main()
