"""Which atom dictionary makes MORF win: Fashion-MNIST, the seed experiments, MNIST-1D
and graph data, each dictionary beside a random forest and the papers' MORF.

    python benches/dictionaries.py fashion     # timed: 60,000 / 10,000 images
    python benches/dictionaries.py signals     # seed experiments and MNIST-1D
    python benches/dictionaries.py graphs      # sensors on non-grid graphs; a grid
    python benches/dictionaries.py importance  # importance maps, two Fashion classes
    python benches/dictionaries.py report      # summary.md from the CSVs
    python benches/dictionaries.py all --quick # a check: 5 trees, small sets

Every part appends to its CSV under benches/results/dictionaries/ (``--fresh`` starts
it over; ``--quick`` writes under benches/results/quick/dictionaries/, afresh) and
rewrites summary.md. All forests use the same settings beside their
dictionary (``bootstrap=False``, as recommended for the dictionaries, unless a row
says otherwise) and ``--threads`` threads (default 2). Only the fashion part's fit
times are meant to be compared; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from dictionary_data import (
    load_mnist1d,
    make_graph_blobs,
    random_geometric_graph,
    small_world_ring,
)
from dictionary_models import (
    IMAGES,
    SIGNALS,
    fit_and_score,
    forest_settings,
    graph_dictionary,
    morf,
    recommended,
)
from dictionary_report import Table, plot_importance, report
from fashion_mnist import load_fashion_mnist
from harness import output_folder

from morf_rs import (
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
    datasets,
)
from morf_rs.dictionary import (
    AxisAligned,
    Bumps,
    Gabors,
    GraphAtoms,
    Patches,
    SignedPatches,
    grid_graph,
)


def part_fashion(args):
    """Fit time and test error on all 60,000 / 10,000 images."""
    table = Table("fashion" if args.n == 60_000 else f"fashion_{args.n}", args)
    X, y = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    X, y = np.ascontiguousarray(X[: args.n]), y[: args.n]
    run = {"n_jobs": args.threads, "random_state": 0}
    for trees in args.trees:
        models = {
            "RF": RandomForestClassifier(trees, bootstrap=False, **run),
            "MORF papers": morf("fashion", n_estimators=trees, bootstrap=False, **run),
            "MORF images dictionary": recommended(
                "fashion", n_estimators=trees, bootstrap=False, **run
            ),
        }
        if trees == min(args.trees):
            # Today's MORF at the dictionary's max_features, for the fit-time ratio;
            # the defaults (bootstrap=True), as the baselines were measured.
            models["MORF papers, max_features=56"] = morf(
                "fashion", n_estimators=trees, bootstrap=False, max_features=56, **run
            )
            models["RF, bootstrap"] = RandomForestClassifier(trees, **run)
            models["MORF papers, bootstrap"] = morf(
                "fashion", n_estimators=trees, **run
            )
            if args.treeple:
                models["treeple patch forest, bootstrap"] = treeple_patch_forest(
                    trees, run
                )
                # The settings of the images dictionary, but the papers' atoms.
                models["treeple patch forest, max_features=56"] = treeple_patch_forest(
                    trees, run, bootstrap=False, max_features=56
                )
        if args.models:
            models = {k: v for k, v in models.items() if k in args.models}
        while models:
            name, forest = _first(models)
            fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
            table.add(
                model=name,
                n=len(y),
                trees=trees,
                threads=args.threads,
                fit_s=fit_s,
                test_error=error,
            )


def _first(models):
    """Takes the first model out of ``models``, so that a fitted forest is freed
    before the next is fitted."""
    name = next(iter(models))
    return name, models.pop(name)


def treeple_patch_forest(trees, run, **settings):
    from treeple import PatchObliqueRandomForestClassifier

    return PatchObliqueRandomForestClassifier(
        n_estimators=trees,
        data_dims=(28, 28),
        min_patch_dims=(2, 2),
        max_patch_dims=(2, 5),
        **{"max_features": "sqrt", **settings},
        **run,
    )


def simulation(name, n, seed):
    return getattr(datasets, f"make_{name}")(n, random_state=seed)


def part_signals(args):
    """The seed experiments and MNIST-1D over seeds: RF, the papers' MORF and the
    recommended dictionary (images for bars, signals for the others)."""
    table = Table("signals", args)
    for experiment in ("circle", "bars", "impulse", "multivariate", "mnist1d"):
        if experiment == "mnist1d":
            X_all, y_all, X_test, y_test = load_mnist1d()
            sizes = (len(y_all),)
        else:
            X_test, y_test = simulation(experiment, args.test_n, 1_000_003)
            sizes = (100, 500, 2000) if experiment != "bars" else (50, 100)
            sizes = sizes[:1] if args.quick else sizes
        for n in sizes:
            for seed in range(args.seeds):
                if experiment == "mnist1d":
                    X, y = X_all, y_all
                else:
                    X, y = simulation(experiment, n, seed)
                run = forest_settings(args, seed)
                for name, forest in (
                    ("RF", RandomForestClassifier(**run)),
                    ("MORF papers", morf(experiment, **run)),
                    ("MORF dictionary", recommended(experiment, **run)),
                ):
                    fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
                    table.add(
                        experiment=experiment,
                        n=n,
                        seed=seed,
                        model=name,
                        fit_s=fit_s,
                        test_error=error,
                    )


def part_graphs(args):
    """Sensors on graphs that are not grids (graph atoms against RF, SPORF and 1-D
    patches over the sensors' numbering), then an image's grid (graph atoms against
    patches)."""
    table = Table("graphs", args)
    graphs = {
        "geometric": random_geometric_graph(100, 6, seed=0),
        "small-world ring": small_world_ring(100, 5, seed=0),
    }
    for graph_name, adjacency in graphs.items():
        X_test, y_test = make_graph_blobs(
            args.test_n, adjacency, noise=0.5, random_state=1_000_003
        )
        for n in (200,) if args.quick else (200, 1000):
            for seed in range(args.seeds):
                X, y = make_graph_blobs(n, adjacency, noise=0.5, random_state=seed)
                run = forest_settings(args, seed)
                for name, forest in (
                    ("RF", RandomForestClassifier(**run)),
                    ("SPORF", SparseObliqueForestClassifier(**run)),
                    (
                        "MORF 1-D patches",
                        ManifoldObliqueForestClassifier(patch_max=10, **run),
                    ),
                    (
                        "graph atoms",
                        ManifoldObliqueForestClassifier(
                            dictionary=GraphAtoms(adjacency, max_size=10), **run
                        ),
                    ),
                    (
                        "graph atoms, plain and signed",
                        ManifoldObliqueForestClassifier(
                            dictionary=graph_dictionary(adjacency), **run
                        ),
                    ),
                ):
                    fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
                    table.add(
                        data=graph_name,
                        n=n,
                        seed=seed,
                        model=name,
                        fit_s=fit_s,
                        test_error=error,
                    )
    # The grid: Fashion-MNIST on the 8-neighbour grid of its pixels.
    X_pool, y_pool = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    grid = grid_graph((28, 28), diagonal=True)
    for seed in range(min(args.seeds, 2)):
        order = np.random.default_rng(seed).permutation(len(y_pool))[: args.grid_n]
        X, y = np.ascontiguousarray(X_pool[order]), y_pool[order]
        run = forest_settings(args, seed)
        # Patches of 2 x (2..5) pixels hold 4 to 10 of them; graph atoms the same.
        for name, forest in (
            ("MORF papers", morf("fashion", **run)),
            (
                "graph atoms on the grid",
                ManifoldObliqueForestClassifier(
                    dictionary=GraphAtoms(grid, min_size=4, max_size=10), **run
                ),
            ),
            ("MORF images dictionary", recommended("fashion", **run)),
            (
                "graph atoms on the grid, plain and signed",
                ManifoldObliqueForestClassifier(
                    dictionary=[
                        (GraphAtoms(grid, 4, 10), 0.5),
                        (GraphAtoms(grid, 4, 20, signed=True), 0.5),
                    ],
                    **run,
                ),
            ),
        ):
            fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
            table.add(
                data="fashion grid",
                n=len(y),
                seed=seed,
                model=name,
                fit_s=fit_s,
                test_error=error,
            )


def part_scan(args):
    """What the images dictionary was chosen from, and what limits its gain:
    families, band extents, candidates per node and bootstrap, on 20,000 Fashion-MNIST
    training images (100 trees); then MNIST-1D's candidates per node."""
    table = Table("scan", args)
    X_pool, y_pool = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    order = np.random.default_rng(0).permutation(len(y_pool))[: args.scan_n]
    X, y = np.ascontiguousarray(X_pool[order]), y_pool[order]
    edges_and_lines = [(SignedPatches(2), 0.6), (SignedPatches(3), 0.4)]
    square = {"patch_min": 2, "patch_max": 5}
    configurations = [
        ("RF", {}, None),
        ("MORF papers", {"patch_min": (2, 2), "patch_max": (2, 5)}, None),
        ("patches", square, Patches()),
        ("bumps", square, Bumps()),
        ("Gabors", square, Gabors()),
        ("edges", square, SignedPatches(2)),
        ("edges and lines", square, edges_and_lines),
        ("images dictionary", square, IMAGES),
        (
            "edges, patches, single pixels",
            square,
            [(SignedPatches(2), 0.5), (Patches(), 0.25), (AxisAligned(), 0.25)],
        ),
        (
            "edges, lines, Gabors",
            square,
            [(SignedPatches(2), 0.5), (SignedPatches(3), 0.3), (Gabors(3, 7), 0.2)],
        ),
        (
            "edges and lines, bands 1..3",
            {"patch_min": 1, "patch_max": 3},
            edges_and_lines,
        ),
        (
            "edges and lines, bands 1..7",
            {"patch_min": 1, "patch_max": 7},
            edges_and_lines,
        ),
        (
            "edges and lines, bands 2 x 2..5",
            {"patch_min": (2, 2), "patch_max": (2, 5)},
            edges_and_lines,
        ),
        ("images dictionary, bootstrap", square | {"bootstrap": True}, IMAGES),
    ]
    for max_features in (28, 56, 84):
        for name, settings, dictionary in configurations:
            if max_features != 28 and name not in ("MORF papers", "images dictionary"):
                continue
            run = forest_settings(args, 0)
            run |= {"max_features": max_features} | settings
            if name == "RF":
                forest = RandomForestClassifier(**run)
            else:
                forest = ManifoldObliqueForestClassifier(
                    image_shape=(28, 28), dictionary=dictionary, **run
                )
            fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
            table.add(
                data="fashion",
                n=len(y),
                model=name,
                max_features=max_features,
                fit_s=fit_s,
                test_error=error,
            )
    X, y, X_test, y_test = load_mnist1d()
    for max_features in ("sqrt", 0.5, 1.0):
        for name in ("RF", "MORF papers", "MORF dictionary"):
            if name == "RF" and max_features == 1.0:
                continue  # without bootstrap, every tree would be the same
            run = forest_settings(args, 0)
            run["max_features"] = max_features
            if name == "RF":
                forest = RandomForestClassifier(**run)
            else:
                dictionary = SIGNALS if name == "MORF dictionary" else None
                forest = morf("mnist1d", dictionary, **run)
            fit_s, error = fit_and_score(forest, X, y, X_test, y_test)
            table.add(
                data="mnist1d",
                n=len(y),
                model=name,
                max_features=max_features,
                fit_s=fit_s,
                test_error=error,
            )


IMPORTANCE_CLASSES = (7, 9)  # Sneaker and Ankle boot, as benches/compare.py
IMPORTANCE_PER_CLASS = 100


def part_importance(args):
    """Importance maps of the papers' MORF, the images dictionary and RF on 100
    images each of two classes (seed 003, Fig. 5)."""
    X, y = load_fashion_mnist("train")
    order = np.random.default_rng(0).permutation(len(y))
    picked = np.concatenate(
        [order[y[order] == c][:IMPORTANCE_PER_CLASS] for c in IMPORTANCE_CLASSES]
    )
    X, y = np.ascontiguousarray(X[picked]), y[picked]
    run = {
        "n_estimators": args.importance_trees,
        "n_jobs": args.threads,
        "random_state": 0,
        "bootstrap": False,
    }
    maps = {
        f"mean image, class {c}": X[y == c].mean(axis=0) for c in IMPORTANCE_CLASSES
    }
    for name, forest in (
        ("RF", RandomForestClassifier(**run)),
        ("MORF papers", morf("fashion", **run)),
        ("MORF images dictionary", recommended("fashion", **run)),
    ):
        forest.fit(X, y)
        maps[f"{name}: split counts"] = forest.feature_importances_
        maps[f"{name}: impurity"] = forest.impurity_importances_
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out / "importance.npz", **{k: v.reshape(28, 28) for k, v in maps.items()}
    )
    plot_importance(maps, args.out)


PARTS = {
    "scan": part_scan,
    "fashion": part_fashion,
    "signals": part_signals,
    "graphs": part_graphs,
    "importance": part_importance,
    "report": report,
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("parts", nargs="+", choices=[*PARTS, "all"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 500])
    parser.add_argument(
        "--n", type=int, default=60_000, help="Fashion-MNIST training images"
    )
    parser.add_argument(
        "--grid-n",
        type=int,
        default=10_000,
        help="Fashion-MNIST images of the grid-graph runs",
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--scan-n", type=int, default=20_000, help="Fashion-MNIST images of the scan"
    )
    parser.add_argument(
        "--treeple", action=argparse.BooleanOptionalAction, default=True
    )
    parser.add_argument(
        "--models",
        nargs="+",
        help="fashion part: fit only the models of these names (rows of fashion.csv)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="start each part's CSV over"
    )
    parser.add_argument("--importance-trees", type=int, default=500)
    parser.add_argument("--test-n", type=int, default=10_000, help="simulated tests")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="default results/dictionaries")
    args = parser.parse_args(argv)
    if args.quick:
        args.trees, args.n, args.grid_n, args.seeds, args.scan_n = (
            [5],
            1000,
            500,
            1,
            1000,
        )
        args.importance_trees, args.test_n, args.treeple, args.fresh = (
            5,
            1000,
            False,
            True,
        )
    args.out = output_folder(args.quick, args.out, "dictionaries")
    parts = list(PARTS) if "all" in args.parts else args.parts
    for part in parts:
        PARTS[part](args)
    if "report" not in parts:
        report(args)


if __name__ == "__main__":
    sys.exit(main())
