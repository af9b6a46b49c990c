"""Unsupervised forests beside treeple's (#23): clusters of sklearn's digits and of a
Fashion-MNIST subset, and fit times.

    /work/benchvenv/bin/python benches/unsupervised.py            # both data sets
    /work/benchvenv/bin/python benches/unsupervised.py --fashion 500 --trees 20
    /work/benchvenv/bin/python benches/unsupervised.py --quick    # -> results/quick/

Ours: the three atom kinds (axis-aligned, sparse oblique, MORF patches on the image)
with both criteria; treeple 0.10.3: UnsupervisedRandomForest and
UnsupervisedObliqueRandomForest with both criteria. Every model has the same
n_estimators and the settings both default to (max_features="sqrt",
min_samples_split="sqrt", bootstrap=False), one thread. A fit is the whole of each
library's fit: the trees, the similarity of the training set and its clustering into
the number of classes. "fit CPU s" is the least CPU time (all threads) of each fit with
random_state=0 over the rounds, the models taking turns within each round; "treeple /
ours" divides the CPU time of treeple's forest of the same criterion (URF for the
axis-aligned forest, UORF for the oblique ones) by ours. The adjusted Rand index (ARI)
compares each model's clusters (``labels_``) with the classes, over the seeds
random_state = 0, 1, ...: the mean and the standard deviation. Ours cluster by average
linkage at distance 1 - similarity, treeple's by Ward's linkage on the rows of its
similarity (its default); "ARI, same clustering" clusters treeple's similarity as ours
are, to compare the trees alone. The Fashion-MNIST subset is drawn at random (seed 0)
from the training images. Figures go to benches/results/unsupervised.{csv,md}.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import AgglomerativeClustering
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import (  # noqa: E402
    best_wall_and_cpu,
    machine,
    output_folder,
    write_csv,
    write_markdown,
)


def data_sets(n_fashion):
    """(name, X, y, image_shape) of digits and ``n_fashion`` training images of
    Fashion-MNIST drawn at random (seed 0)."""
    digits = load_digits()
    X_fashion, y_fashion = load_fashion_mnist("train")
    drawn = np.random.default_rng(0).choice(len(X_fashion), n_fashion, replace=False)
    return [
        ("digits", digits.data.astype(np.float32), digits.target, (8, 8)),
        (
            f"fashion-mnist {n_fashion}",
            X_fashion[drawn],
            y_fashion[drawn],
            (28, 28),
        ),
    ]


def models(n_trees, n_clusters, image_shape, seed):
    """Label -> unfitted model, ours then treeple's."""
    import treeple

    import morf_rs

    ours = {
        "RF": (morf_rs.UnsupervisedRandomForest, {}),
        "SPORF": (morf_rs.UnsupervisedSparseObliqueForest, {}),
        "MORF": (
            morf_rs.UnsupervisedManifoldObliqueForest,
            {"image_shape": image_shape},
        ),
    }
    theirs = {
        "treeple URF": treeple.UnsupervisedRandomForest,
        "treeple UORF": treeple.UnsupervisedObliqueRandomForest,
    }
    made = {}
    for criterion in ("twomeans", "fastbic"):
        for name, (cls, extra) in ours.items():
            made[f"morf_rs {name} {criterion}"] = cls(
                n_estimators=n_trees,
                criterion=criterion,
                min_samples_split="sqrt",
                n_clusters=n_clusters,
                n_jobs=1,
                random_state=seed,
                **extra,
            )
        for name, cls in theirs.items():
            made[f"{name} {criterion}"] = cls(
                n_estimators=n_trees,
                criterion=criterion,
                n_jobs=1,
                random_state=seed,
                clustering_func_args={"n_clusters": n_clusters},
            )
    return made


def same_clustering_ari(similarity, y, n_clusters):
    """ARI of average linkage at distance 1 - similarity (our clustering)."""
    clustering = AgglomerativeClustering(
        n_clusters=n_clusters, metric="precomputed", linkage="average"
    )
    return adjusted_rand_score(y, clustering.fit_predict(1.0 - similarity))


def treeple_pair(label):
    """The label of treeple's forest that one of ours is timed against."""
    _, kind, criterion = label.split()
    return f"treeple {'URF' if kind == 'RF' else 'UORF'} {criterion}"


def aris(model, label, X, y, n_clusters):
    """(ARI of the model's own clusters, ARI of average linkage on its similarity)."""
    if label.startswith("morf_rs"):
        similarity = model.similarity_matrix(X)
    else:
        similarity = model.compute_similarity_matrix(X)
    own = adjusted_rand_score(y, model.labels_)
    return own, same_clustering_ari(similarity, y, n_clusters)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--fashion", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5 trees, 300 images")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.trees, args.fashion, args.rounds, args.seeds = 5, 300, 1, 2
    out = output_folder(args.quick, args.out)
    warnings.filterwarnings("ignore")
    rows = []
    for data_name, X, y, image_shape in data_sets(args.fashion):
        n_clusters = len(np.unique(y))
        made = models(args.trees, n_clusters, image_shape, seed=0)
        calls = {name: (lambda m=model, X=X: m.fit(X)) for name, model in made.items()}
        _, cpu = best_wall_and_cpu(calls, args.rounds)
        scores = {
            label: [aris(model, label, X, y, n_clusters)]
            for label, model in made.items()
        }
        for seed in range(1, args.seeds):
            reseeded = models(args.trees, n_clusters, image_shape, seed)
            for label, model in reseeded.items():
                scores[label].append(aris(model.fit(X), label, X, y, n_clusters))
        for label in made:
            own, same = np.array(scores[label]).T
            row = {
                "data": data_name,
                "model": label,
                "trees": args.trees,
                "seeds": args.seeds,
                "ARI mean": own.mean(),
                "ARI sd": own.std(),
                "ARI, same clustering": same.mean(),
                "fit CPU s": cpu[label],
                "treeple / ours": (
                    cpu[treeple_pair(label)] / cpu[label]
                    if label.startswith("morf_rs")
                    else float("nan")
                ),
            }
            rows.append(row)
            print(row, flush=True)
    about = machine(("numpy", "sklearn", "morf_rs", "treeple"))
    write_csv(out / "unsupervised.csv", rows)
    write_markdown(
        out / "unsupervised.md",
        "Unsupervised forests: clusters of digits and Fashion-MNIST beside treeple",
        rows,
        about,
        __doc__.split("\n\n", 2)[2],
    )


if __name__ == "__main__":
    main()
