"""What growing each worker's trees on its own partition costs in accuracy.

    python benches/dask_partitions.py          # 60,000 images, 100 trees, 2/4/8 workers
    python benches/dask_partitions.py --quick  # 10,000 images, 20 trees, 2/4 workers

morf_rs.dask.fit with training_data="all" gives the one-machine forest bit for bit
(tested). With training_data="partitions" each of k workers grows its n_estimators/k
trees on the 1/k of the training rows it holds, as when no machine can hold the whole
set. This runs that on a LocalCluster of k single-thread worker processes, on
Fashion-MNIST (rows shuffled, so every partition is a random sample), and compares the
test error on the 10,000 test images with the forest grown on one machine.

Writes dask_partitions.csv and dask_partitions.md to the output folder. Errors are not
disturbed by other work on the machine; fit times are.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np
from dask.distributed import Client, LocalCluster
from fashion_mnist import load_fashion_mnist
from harness import (
    command_line,
    machine,
    output_folder,
    timed,
    write_csv,
    write_markdown,
)

import morf_rs
from morf_rs import dask as morf_dask


def build(forest: str, trees: int, seed: int):
    if forest == "MORF":
        return morf_rs.ManifoldObliqueForestClassifier(
            n_estimators=trees,
            image_shape=(28, 28),
            patch_min=(2, 2),
            patch_max=(2, 5),
            max_features="sqrt",
            random_state=seed,
        )
    return morf_rs.RandomForestClassifier(
        n_estimators=trees, max_features="sqrt", random_state=seed
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--train", type=int)
    parser.add_argument("--trees", type=int)
    parser.add_argument("--workers", type=int, nargs="+")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    train = args.train or (10_000 if args.quick else 60_000)
    trees = args.trees or (20 if args.quick else 100)
    workers = args.workers or ([2, 4] if args.quick else [2, 4, 8])
    out = output_folder(args.quick, args.out)

    X_all, y_all = load_fashion_mnist("train")
    test = load_fashion_mnist("test")
    rows = []
    for seed in range(args.seeds):
        order = np.random.default_rng(seed).permutation(len(X_all))[:train]
        X, y = X_all[order], y_all[order]
        for forest in ("RF", "MORF"):
            model = build(forest, trees, seed).set_params(n_jobs=2)
            _, fit_s = timed(partial(model.fit, X, y))
            rows.append(
                record(forest, seed, train, 1, "one machine", model, fit_s, test)
            )
            print(rows[-1], flush=True)
        for k in workers:
            with (
                LocalCluster(
                    n_workers=k,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                ) as cluster,
                Client(cluster) as client,
            ):
                for forest in ("RF", "MORF"):
                    model = build(forest, trees, seed)
                    _, fit_s = timed(
                        partial(
                            morf_dask.fit,
                            model,
                            X,
                            y,
                            client=client,
                            training_data="partitions",
                        )
                    )
                    rows.append(
                        record(forest, seed, train, k, "partitions", model, fit_s, test)
                    )
                    print(rows[-1], flush=True)

    write_csv(out / "dask_partitions.csv", rows)
    write_report(rows, out, train, trees)
    return 0


def record(forest, seed, train, k, training_data, model, fit_s, test) -> dict:
    X_test, y_test = test
    error = float(np.mean(model.set_params(n_jobs=2).predict(X_test) != y_test))
    return {
        "forest": forest,
        "seed": seed,
        "train": train,
        "workers": k,
        "training_data": training_data,
        "rows_per_tree_set": train // k,
        "test_error": error,
        "fit_s": fit_s,
    }


def write_report(rows, out: Path, train: int, trees: int) -> None:
    table = []
    for forest in ("RF", "MORF"):
        base = None
        for k in sorted({r["workers"] for r in rows}):
            group = [r for r in rows if r["forest"] == forest and r["workers"] == k]
            errors = np.array([r["test_error"] for r in group])
            mean = errors.mean()
            base = mean if k == 1 else base
            table.append(
                {
                    "forest": forest,
                    "k workers": k,
                    "rows per worker": f"{train // k:,}",
                    "test error": f"{mean:.4f} ± {errors.std():.4f}",
                    "vs one machine": f"{mean - base:+.4f}",
                    "fit s": f"{np.mean([r['fit_s'] for r in group]):.1f}",
                }
            )
    write_markdown(
        out / "dask_partitions.md",
        "Distributed fit on partitions: the accuracy cost",
        table,
        machine(("numpy", "morf_rs", "dask", "distributed")),
        f"Made by `{command_line()}`. Fit times are disturbed by other work on "
        "the machine; errors are not.\n\n"
        f"Fashion-MNIST, {train:,} shuffled training images, {trees} trees, test "
        "error on the 10,000 test images, mean ± standard deviation over "
        f"{len({r['seed'] for r in rows})} seed(s). k workers: each grows "
        f"{trees}/k trees on its 1/k of the rows (morf_rs.dask.fit, "
        'training_data="partitions"); k = 1 is the forest grown on one machine, '
        'which training_data="all" reproduces bit for bit.',
    )


if __name__ == "__main__":
    sys.exit(main())
