"""The figures of the docs' plotting guide (docs/guide/plots.rst), by morf_rs.plot.

    python benches/figures.py           # 10,000 training images, 100 trees, 50 rounds
    python benches/figures.py --quick   # a check: PNGs and figures.md to results/quick/

On the first ``--n`` Fashion-MNIST training images and as many test images: a MORF
forest's importance maps (split counts and impurity decreases) and the first splits
of its first tree, the first splits of a tree over ``dictionary="images"``
(signed patches, Gabor-like stripes and pooled windows), and a MORF booster's error
per round on its training and test images, and the first test image beside its
contribution map (``predict_contributions``) for its predicted class. The PNGs go to
docs/_static/, the test errors and fit times with the machine to
benches/results/figures.md.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fashion_mnist import CLASS_NAMES, load_fashion_mnist  # noqa: E402
from harness import machine, output_folder, timed, write_markdown  # noqa: E402

from morf_rs import (  # noqa: E402
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
)
from morf_rs.plot import (  # noqa: E402
    contribution_map,
    importance_map,
    staged_error,
    tree_splits,
)

# Small files for the docs: a modest resolution is plenty for 28x28 grids.
DPI = 90


def save(figure, path):
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    print(f"{path}: {path.stat().st_size / 1000:.0f} kB")


def fitted(model, rows, name, X, y, X_test, y_test):
    """``model`` fitted on (X, y), its fit time and test error added to ``rows``."""
    _, fit_seconds = timed(partial(model.fit, X, y))
    error = 1 - model.score(X_test, y_test)
    rows.append({"model": name, "fit s": fit_seconds, "test error": error})
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="images each")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, help="PNG folder (default docs/_static)")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    args = parser.parse_args()
    if args.quick:
        args.n, args.trees, args.rounds = 500, 5, 3
        args.out = output_folder(True, args.out, "figures")
    args.out = args.out or HERE.parent / "docs" / "_static"
    args.out.mkdir(parents=True, exist_ok=True)
    report = args.out if args.quick else HERE / "results"

    X, y = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    data = X[: args.n], y[: args.n], X_test[: args.n], y_test[: args.n]
    image_model = dict(image_shape=(28, 28), n_jobs=args.threads, random_state=0)
    rows = []

    forest = fitted(
        ManifoldObliqueForestClassifier(n_estimators=args.trees, **image_model),
        rows,
        f"MORF forest, {args.trees} trees",
        *data,
    )
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    importance_map(forest, axes[0])
    importance_map(forest, axes[1], attribute="impurity_importances_")
    save(figure, args.out / "importance_fashion.png")
    save(tree_splits(forest).figure, args.out / "tree_splits_fashion.png")

    image = data[2][0]
    label = int(forest.predict(image[None])[0])  # classes_ are 0..9: its column
    values = forest.predict_contributions(image[None])[0, :-1, label]
    figure, axes = plt.subplots(1, 2, figsize=(8, 3.6), layout="constrained")
    axes[0].imshow(image.reshape(28, 28), cmap="gray_r")
    axes[0].set_title(f"test image 0: {CLASS_NAMES[data[3][0]]}")
    contribution_map(values, image=image.reshape(28, 28), ax=axes[1])
    axes[1].set_title(f"contributions to {CLASS_NAMES[label]}")
    save(figure, args.out / "contributions_fashion.png")

    # One tree: tree 0 depends only on (random_state, 0), whatever n_estimators.
    mixed = ManifoldObliqueForestClassifier(
        n_estimators=1, dictionary="images", **image_model
    ).fit(*data[:2])
    save(tree_splits(mixed).figure, args.out / "tree_splits_images_fashion.png")

    booster = fitted(
        ManifoldObliqueGradientBoostingClassifier(
            n_estimators=args.rounds, **image_model
        ),
        rows,
        f"MORF booster, {args.rounds} rounds",
        *data,
    )
    ax = staged_error(booster, data[2], data[3], eval_sets={"train": data[:2]})
    ax.set_title("MORF booster on Fashion-MNIST")
    save(ax.figure, args.out / "staged_error_fashion.png")

    write_markdown(
        report / "figures.md",
        "Models behind the plotting guide's figures",
        rows,
        {
            **machine(("numpy", "sklearn", "matplotlib", "morf_rs")),
            "threads": args.threads,
            "data": f"Fashion-MNIST, first {args.n} training and test images",
        },
    )
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
