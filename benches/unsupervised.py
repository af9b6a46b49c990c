"""Unsupervised forests beside treeple's (#23): clusters of sklearn's digits and of a
Fashion-MNIST subset, and fit times.

    /work/benchvenv/bin/python benches/unsupervised.py            # both data sets
    /work/benchvenv/bin/python benches/unsupervised.py --fashion 500 --trees 20
    /work/benchvenv/bin/python benches/unsupervised.py --quick    # -> results/quick/

Ours: the three atom kinds (axis-aligned, sparse oblique, MORF patches on the image)
with both criteria; treeple 0.10.3: UnsupervisedRandomForest and
UnsupervisedObliqueRandomForest with both criteria. Every model has the same
n_estimators and the settings both default to (max_features="sqrt",
min_samples_split="sqrt", bootstrap=False), one thread, random_state=0. A fit is the
whole of each library's fit: the trees, the similarity of the training set and its
clustering into the number of classes. The adjusted Rand index (ARI) compares each
model's clusters (``labels_``) with the classes: ours cluster by average linkage at
distance 1 - similarity, treeple's by Ward's linkage on the rows of its similarity
(its default); "ARI, same clustering" clusters treeple's similarity as ours are, to
compare the trees alone. Figures go to benches/results/unsupervised.{csv,md}.
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
    best_in_turns,
    machine,
    output_folder,
    write_csv,
    write_markdown,
)


def data_sets(n_fashion):
    """(name, X, y, image_shape) of digits and the first ``n_fashion`` training
    images of Fashion-MNIST."""
    digits = load_digits()
    X_fashion, y_fashion = load_fashion_mnist("train")
    return [
        ("digits", digits.data.astype(np.float32), digits.target, (8, 8)),
        (
            f"fashion-mnist {n_fashion}",
            X_fashion[:n_fashion],
            y_fashion[:n_fashion],
            (28, 28),
        ),
    ]


def models(n_trees, n_clusters, image_shape):
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
                random_state=0,
                **extra,
            )
        for name, cls in theirs.items():
            made[f"{name} {criterion}"] = cls(
                n_estimators=n_trees,
                criterion=criterion,
                n_jobs=1,
                random_state=0,
                clustering_func_args={"n_clusters": n_clusters},
            )
    return made


def same_clustering_ari(similarity, y, n_clusters):
    """ARI of average linkage at distance 1 - similarity (our clustering)."""
    clustering = AgglomerativeClustering(
        n_clusters=n_clusters, metric="precomputed", linkage="average"
    )
    return adjusted_rand_score(y, clustering.fit_predict(1.0 - similarity))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--fashion", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="5 trees, 300 images")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.trees, args.fashion, args.rounds = 5, 300, 1
    out = output_folder(args.quick, args.out)
    warnings.filterwarnings("ignore")
    rows = []
    for data_name, X, y, image_shape in data_sets(args.fashion):
        n_clusters = len(np.unique(y))
        made = models(args.trees, n_clusters, image_shape)
        calls = {name: (lambda m=model, X=X: m.fit(X)) for name, model in made.items()}
        times = best_in_turns(calls, args.rounds)
        for label, model in made.items():
            if label.startswith("morf_rs"):
                similarity = model.similarity_matrix(X)
            else:
                similarity = model.compute_similarity_matrix(X)
            row = {
                "data": data_name,
                "model": label,
                "trees": args.trees,
                "ARI": adjusted_rand_score(y, model.labels_),
                "ARI, same clustering": same_clustering_ari(similarity, y, n_clusters),
                "fit s": times[label],
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
