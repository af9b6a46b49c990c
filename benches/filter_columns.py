"""LightGBM on Fashion-MNIST with fixed max-pooled filter columns appended: random
small integer filters against templates cut from training images.

    python benches/filter_columns.py                        # raw, random, templates
    python benches/filter_columns.py --variants templates   # one variant
    python benches/filter_columns.py --quick                # a check, small sizes

The measurement behind #25 (translation-invariant atoms), made outside the engine:
each filter's response at every position of the image, max-pooled over windows of
``--pool`` x ``--pool`` positions placed every ``--stride`` (the last window flush
with the edge), each window's maximum one column beside the raw pixels. ``random``:
``--filters`` filters of 2x2 to 5x5 cells with whole weights in -2..2 (the issue's
figures). ``templates``: as many patches of the same sizes cut from random training
images where the patch is not blank (standard deviation above 5 of 255), less their
mean and scaled to unit length: what a dictionary of atoms drawn from the data
would hold. The same LightGBM (``--rounds`` rounds, 31 leaves, learning rate 0.1)
on each; test error on the 10,000 test images. Writes
benches/results/filter_columns.{csv,md} (or results/quick/).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import command_line, machine, output_folder, write_csv, write_markdown  # noqa: E402

SIDE = 28
INKED = 5.0  # least standard deviation of a template's cells, of 0..255
CHUNK = 2_000  # images whose responses are computed together


def random_filters(rng, n):
    """``n`` filters of 2x2 to 5x5 cells, whole weights in -2..2."""
    return [
        rng.integers(-2, 3, size=tuple(rng.integers(2, 6, size=2))).astype(np.float32)
        for _ in range(n)
    ]


def templates(rng, images, n):
    """``n`` patches of 2x2 to 5x5 cells from random ``images`` (not blank), less
    their mean, of unit length."""
    out = []
    while len(out) < n:
        h, w = rng.integers(2, 6, size=2)
        image = images[rng.integers(len(images))]
        r, c = rng.integers(0, SIDE + 1 - h), rng.integers(0, SIDE + 1 - w)
        patch = image[r : r + h, c : c + w].astype(np.float32)
        if patch.std() <= INKED:
            continue
        patch -= patch.mean()
        out.append(patch / np.linalg.norm(patch))
    return out


def window_starts(positions, pool, stride):
    """Starts of the pooling windows along an axis of ``positions`` responses."""
    starts = list(range(0, max(positions - pool, 0) + 1, stride))
    if starts[-1] + pool < positions:
        starts.append(positions - pool)
    return starts


def pooled_columns(images, filters, pool, stride):
    """Per image, each filter's response maxima over the pooling windows."""
    columns = []
    for f in filters:
        h, w = f.shape
        responses = np.empty((len(images), SIDE + 1 - h, SIDE + 1 - w), np.float32)
        for s in range(0, len(images), CHUNK):
            windows = sliding_window_view(images[s : s + CHUNK], (h, w), axis=(1, 2))
            responses[s : s + CHUNK] = np.tensordot(windows, f, axes=([3, 4], [0, 1]))
        for r in window_starts(responses.shape[1], pool, stride):
            for c in window_starts(responses.shape[2], pool, stride):
                columns.append(
                    responses[:, r : r + pool, c : c + pool].max(axis=(1, 2))
                )
    return np.stack(columns, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["raw", "random", "templates"],
        choices=["raw", "random", "templates"],
    )
    parser.add_argument("--train", type=int, default=20_000)
    parser.add_argument("--filters", type=int, default=120)
    parser.add_argument("--pool", type=int, default=6)
    parser.add_argument("--stride", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, to results/quick/"
    )
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.train, args.filters, args.rounds = 1_000, 4, 5

    import lightgbm

    X, y = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    if args.quick:
        X_test, y_test = X_test[:500], y_test[:500]
    images = X[: args.train].reshape(-1, SIDE, SIDE).astype(np.float32)
    y = y[: args.train]
    test_images = X_test.reshape(-1, SIDE, SIDE).astype(np.float32)
    rows = []
    for variant in args.variants:
        rng = np.random.default_rng(args.seed)
        start = time.perf_counter()
        train, test = (
            images.reshape(len(images), -1),
            test_images.reshape(len(test_images), -1),
        )
        if variant != "raw":
            filters = (
                random_filters(rng, args.filters)
                if variant == "random"
                else templates(rng, images, args.filters)
            )
            train = np.hstack(
                [train, pooled_columns(images, filters, args.pool, args.stride)]
            )
            test = np.hstack(
                [test, pooled_columns(test_images, filters, args.pool, args.stride)]
            )
        model = lightgbm.LGBMClassifier(
            n_estimators=args.rounds,
            n_jobs=args.threads,
            random_state=args.seed,
            verbose=-1,
        ).fit(train, y)
        error = float(np.mean(model.predict(test) != y_test))
        rows.append(
            {
                "variant": variant,
                "n_train": args.train,
                "n_test": len(test_images),
                "filters": 0 if variant == "raw" else args.filters,
                "columns": train.shape[1],
                "rounds": args.rounds,
                "seed": args.seed,
                "test_error": f"{error:.4f}",
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
        print(rows[-1], flush=True)
    folder = output_folder(args.quick, args.out)
    write_csv(folder / "filter_columns.csv", rows)
    write_markdown(
        folder / "filter_columns.md",
        "LightGBM with max-pooled filter columns: random filters against templates",
        rows,
        {**machine(("numpy", "lightgbm")), "command": command_line()},
        f"Windows of {args.pool}x{args.pool} positions every {args.stride}; seconds: "
        "columns and fit together, one run.",
    )


if __name__ == "__main__":
    main()
