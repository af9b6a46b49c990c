"""Grow a forest on a local Dask cluster, then score a dask array larger than memory.

    python examples/dask_cluster.py                 # images: 1.25x this machine's RAM
    python examples/dask_cluster.py --rows 200000   # a quick run

The cluster's workers grow the trees (each its share, merged into one ordinary
model), then score a lazily generated dask array of 28x28 uint8 images, block by
block: no machine ever holds the array, only each worker's current blocks and the
running class counts. Needs ``pip install 'morf_rs[dask]'``.
"""

from __future__ import annotations

import argparse
import os
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs import dask as morf_dask
from morf_rs.datasets import make_bars

N_FEATURES = 28 * 28


def images(n_rows, seed):
    """A block of bar images as stored: uint8, 255 where a bar is."""
    X, y = make_bars(n_rows, random_state=seed)
    return (X * 255).astype(np.uint8), y.astype(np.int64)


def machine_memory():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        type=int,
        default=int(1.25 * machine_memory() / N_FEATURES),
        help="images to score (default: 1.25 times this machine's memory in bytes)",
    )
    parser.add_argument("--block-rows", type=int, default=50_000)
    parser.add_argument("--train", type=int, default=2_000, help="training images")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads-per-worker", type=int, default=1)
    args = parser.parse_args()

    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads_per_worker,
            processes=True,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        X_train, y_train = images(args.train, seed=0)
        forest = ManifoldObliqueForestClassifier(
            n_estimators=args.trees,
            image_shape=(28, 28),
            patch_min=(1, 1),
            patch_max=(2, 9),
            random_state=0,
        )
        start = time.perf_counter()
        morf_dask.fit(forest, X_train, y_train, client=client)
        print(
            f"grew {forest._forest.n_estimators} trees on "
            f"{len(client.nthreads())} workers in {time.perf_counter() - start:.1f} s"
        )

        # A lazy array of images, generated block by block where it is scored.
        block_rows = min(args.block_rows, args.rows)
        sizes = [block_rows] * (args.rows // block_rows)
        if args.rows % block_rows:
            sizes.append(args.rows % block_rows)
        blocks = [dask.delayed(images)(n, seed=1 + i) for i, n in enumerate(sizes)]
        X = da.concatenate(
            [
                da.from_delayed(b[0], shape=(n, N_FEATURES), dtype=np.uint8)
                for b, n in zip(blocks, sizes)
            ]
        )
        y = da.concatenate(
            [
                da.from_delayed(b[1], shape=(n,), dtype=np.int64)
                for b, n in zip(blocks, sizes)
            ]
        )
        print(
            f"scoring {args.rows:,} images: {X.nbytes / 2**30:.1f} GiB as uint8 "
            f"({X.nbytes / machine_memory():.2f}x this machine's memory), "
            f"{len(sizes)} blocks"
        )
        start = time.perf_counter()
        predicted = morf_dask.predict(forest, X)
        counts, correct = dask.compute(
            da.bincount(predicted, minlength=2), (predicted == y).sum()
        )
        seconds = time.perf_counter() - start
        print(f"predicted per class: {counts.tolist()}")
        print(f"accuracy: {correct / args.rows:.4f}")
        print(f"done in {seconds:.1f} s ({args.rows / seconds:,.0f} images/s)")


if __name__ == "__main__":
    main()
