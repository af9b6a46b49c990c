"""Pooled atoms (translation invariance) against the same models without them (#25).

    python benches/pooled.py --part mnist1d   # MNIST-1D 4,000 / 1,000, seed 99
    python benches/pooled.py --part fashion   # Fashion-MNIST 10,000 / 10,000 subset
    python benches/pooled.py --part seeds     # the papers' simulations, 3 seeds
    python benches/pooled.py --part mnist1d --quick   # a check, to results/quick/

MNIST-1D: the boosted model with ``dictionary="signals"`` at 300 rounds and otherwise
default settings, the forest with ``dictionary="signals"`` and default settings, and
the boosted model with the same families unpooled (benches/boosting.py's dictionary,
patch_max=8, the preset's 200 candidates) at the same rounds. Fashion-MNIST: the first
10,000 training and test images, boosted with the images dictionary beside the same
families pooled, at equal rounds and candidates; fit and scoring times beside each
error. Seeds: the papers' circle, bars, impulse and multivariate simulations at
n = 200 and 1,000 (test sets of 10,000, ``--seed-test``), the models of
benches/boosting.py's seed part (today's) beside the presets ("signals" for the 1-D
ones, "images" for bars, both for the 3 x 100 multivariate signals): boosted at
defaults, boosted with the recipe's 15 leaves and min_samples_leaf=5, and the forest
(300 trees); a summary per experiment says whether each preset model is worse than
today's best beyond the spread over seeds (pooled_seeds.csv / .md). The other parts'
figures go to benches/results/pooled.csv (one row per fit, appended), and this run's
to pooled_PART.md beside it.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np
from harness import machine, output_folder, timed, write_csv, write_markdown


def mnist1d():
    """MNIST-1D's default generator with seed 99 (the issue's split): 4,000 / 1,000."""
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.seed = 99
    data = make_dataset(args)
    as32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return as32(data["x"]), data["y"], as32(data["x_test"]), data["y_test"]


def fashion(n):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fashion_mnist import load_fashion_mnist

    X, y = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    return X[:n], y[:n], X_test[:n], y_test[:n]


def plain_families(patch_max):
    from morf_rs.dictionary import AxisAligned, Gabors, Patches, SignedPatches

    extents = dict(patch_min=1, patch_max=patch_max)
    return [
        (AxisAligned(), 0.1),
        (SignedPatches(bands=2, **extents), 0.3),
        (SignedPatches(bands=3, **extents), 0.2),
        (Gabors(**extents), 0.3),
        (Patches(**extents), 0.1),
    ]


def pooled_families(patch_max, shift_min, shift_max):
    """The plain families, each image family half pooled (max or min) over windows
    of ``shift_min`` to ``shift_max`` shifts per axis."""
    from morf_rs.dictionary import AxisAligned, Pooled

    families = []
    for family, p in plain_families(patch_max):
        if isinstance(family, AxisAligned):
            families.append((family, p))
            continue
        pooled = Pooled(family, shift_min, shift_max, reduce="both")
        families += [(family, p / 2), (pooled, p / 2)]
    return families


def run(name, model, X, y, X_test, y_test, threads, **extra):
    _, fit_s = timed(partial(model.fit, X, y))
    predicted, predict_s = timed(partial(model.predict, X_test))
    error = float(np.mean(predicted != y_test))
    row = dict(model=name, n=len(y), error=error, fit_s=round(fit_s, 2))
    row.update(predict_s=round(predict_s, 3), threads=threads, **extra)
    print(row, flush=True)
    return row


def mnist1d_rows(args):
    from morf_rs import (
        ManifoldObliqueForestClassifier,
        ManifoldObliqueGradientBoostingClassifier,
    )

    X, y, X_test, y_test = mnist1d()
    rounds, rows = args.mnist1d_rounds, []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        common = dict(n_jobs=args.threads, random_state=seed)
        forest_trees = {"n_estimators": args.forest_trees}
        models = [
            (
                'boosted, dictionary="signals"',
                ManifoldObliqueGradientBoostingClassifier(
                    n_estimators=rounds,
                    image_shape=(40,),
                    dictionary="signals",
                    **common,
                ),
            ),
            (
                'forest, dictionary="signals"',
                ManifoldObliqueForestClassifier(
                    image_shape=(40,), dictionary="signals", **forest_trees, **common
                ),
            ),
        ]
        if not args.pooled_only:
            models.append(
                (
                    "boosted, same families unpooled",
                    ManifoldObliqueGradientBoostingClassifier(
                        n_estimators=rounds,
                        image_shape=(40,),
                        dictionary=plain_families(8),
                        max_features=200,
                        **common,
                    ),
                )
            )
        for name, model in models:
            # Forests have no rounds.
            extra = dict(experiment="mnist1d", seed=seed)
            extra["rounds"] = rounds if "boosted" in name else ""
            rows.append(run(name, model, X, y, X_test, y_test, args.threads, **extra))
    return rows


def fashion_rows(args):
    from morf_rs import ManifoldObliqueGradientBoostingClassifier

    X, y, X_test, y_test = fashion(args.n)
    rows = []
    for name, dictionary in (
        ("boosted, images families", plain_families(5)),
        ("boosted, images families half pooled (2-8 shifts)", pooled_families(5, 2, 8)),
    ):
        model = ManifoldObliqueGradientBoostingClassifier(
            n_estimators=args.rounds,
            image_shape=(28, 28),
            dictionary=dictionary,
            max_features=400,
            early_stopping=False,
            n_jobs=args.threads,
            random_state=0,
        )
        extra = dict(experiment="fashion", seed=0, rounds=args.rounds)
        rows.append(run(name, model, X, y, X_test, y_test, args.threads, **extra))
    return rows


# Presets of the seed experiments, by how many axes the data has, and multivariate's.
SEED_PRESETS = {1: ("signals",), 2: ("images",)}
MULTIVARIATE_PRESETS = ("signals", "images")


def seed_models(experiment, seed, args):
    """(name, model, today's) for one seed experiment: benches/boosting.py's models
    (LightGBM left out: never the best there) and the preset models."""
    from boosting import SEED_ROUNDS, SEEDS, morf_booster, papers_forest, random_forest

    from morf_rs import (
        ManifoldObliqueForestClassifier,
        ManifoldObliqueGradientBoostingClassifier,
    )

    shape, pmin, pmax, max_features, wrap, boost_max = SEEDS[experiment]
    rounds = args.seed_rounds or SEED_ROUNDS
    trees = args.seed_trees
    common = dict(n_jobs=args.threads, random_state=seed)
    recipe_leaves = dict(min_samples_leaf=5, max_leaf_nodes=15)
    today = [
        (
            "boosted (recipe)",
            morf_booster(
                shape, boost_max, rounds, args.threads, seed, wrap=wrap, **recipe_leaves
            ),
        ),
        (
            "boosted (recipe), learning_rate 0.03",
            morf_booster(
                shape,
                boost_max,
                rounds,
                args.threads,
                seed,
                wrap=wrap,
                learning_rate=0.03,
                **recipe_leaves,
            ),
        ),
        (
            "MORF forest (papers)",
            papers_forest(
                shape, pmin, pmax, max_features, wrap, args.threads, seed, trees
            ),
        ),
        ("RF", random_forest(args.threads, seed, trees)),
    ]
    presets = (
        MULTIVARIATE_PRESETS
        if experiment == "multivariate"
        else SEED_PRESETS[len(shape)]
    )
    pooled = []
    for preset in presets:
        boosted = dict(
            n_estimators=rounds,
            image_shape=shape,
            wrap=wrap,
            dictionary=preset,
            early_stopping=False,
            **common,
        )
        pooled += [
            (
                f'boosted, dictionary="{preset}"',
                ManifoldObliqueGradientBoostingClassifier(**boosted),
            ),
            (
                f'boosted, dictionary="{preset}", 15 leaves, min_samples_leaf=5',
                ManifoldObliqueGradientBoostingClassifier(**boosted, **recipe_leaves),
            ),
            (
                f'forest, dictionary="{preset}"',
                ManifoldObliqueForestClassifier(
                    n_estimators=trees,
                    image_shape=shape,
                    wrap=wrap,
                    dictionary=preset,
                    **common,
                ),
            ),
        ]
    return [(n, m, True) for n, m in today] + [(n, m, False) for n, m in pooled]


def seed_rows(args):
    from boosting import SEEDS, TEST_SEED

    from morf_rs import datasets

    rows = []
    sizes = (200,) if args.quick else (200, 1000)
    for experiment in args.experiments or SEEDS:
        make = getattr(datasets, f"make_{experiment}")
        X_test, y_test = make(
            1000 if args.quick else args.seed_test, random_state=TEST_SEED
        )
        for n in sizes:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                X, y = make(n, random_state=seed)
                for name, model, today in seed_models(experiment, seed, args):
                    forest = "forest" in name or name == "RF"
                    extra = dict(experiment=experiment, seed=seed, today=today)
                    extra["rounds"] = "" if forest else model.n_estimators
                    rows.append(
                        run(name, model, X, y, X_test, y_test, args.threads, **extra)
                    )
    return rows


def seed_summary(rows):
    """Per experiment and n: each model's mean error and its range over seeds, and
    for the preset models the gap to today's best (lowest mean) model; "worse" where
    the preset model's range lies wholly above the best's."""
    groups = {}
    for row in rows:
        key = (row["experiment"], row["n"], row["model"])
        groups.setdefault(key, []).append(row)
    summary = []
    for experiment, n in dict.fromkeys((e, n) for e, n, _ in groups):
        models = {m: g for (e, k, m), g in groups.items() if (e, k) == (experiment, n)}
        errors = {m: [float(r["error"]) for r in g] for m, g in models.items()}
        today = [m for m, g in models.items() if str(g[0]["today"]) == "True"]
        best = min(today, key=lambda m: np.mean(errors[m]))
        for model, values in errors.items():
            is_today = model in today
            if is_today:
                verdict = "today's best" if model == best else ""
            elif min(values) > max(errors[best]):
                verdict = "worse beyond the spread"
            elif np.mean(values) <= np.mean(errors[best]):
                verdict = "better or equal"
            else:
                verdict = "within the spread"
            summary.append(
                dict(
                    experiment=experiment,
                    n=n,
                    model=model,
                    seeds=len(values),
                    mean_error=round(float(np.mean(values)), 4),
                    spread=f"{min(values):.4f}..{max(values):.4f}",
                    vs_best=""
                    if is_today
                    else round(float(np.mean(values) - np.mean(errors[best])), 4),
                    verdict=verdict,
                )
            )
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("mnist1d", "fashion", "seeds"), required=True
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=1, help="mnist1d seeds")
    parser.add_argument("--first-seed", type=int, default=0, help="mnist1d")
    parser.add_argument(
        "--pooled-only", action="store_true", help="mnist1d: skip the unpooled model"
    )
    parser.add_argument("--rounds", type=int, default=30, help="fashion rounds")
    parser.add_argument("--n", type=int, default=10_000, help="fashion images each")
    parser.add_argument("--mnist1d-rounds", type=int, default=300)
    parser.add_argument("--forest-trees", type=int, default=100, help="mnist1d")
    parser.add_argument(
        "--experiments", nargs="+", help="seeds: which (default all four)"
    )
    parser.add_argument("--seed-rounds", type=int, help="seeds (default 200)")
    parser.add_argument("--seed-trees", type=int, default=300, help="seeds forests")
    parser.add_argument("--seed-test", type=int, default=10_000, help="seeds test set")
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.mnist1d_rounds, args.forest_trees, args.rounds, args.n = 5, 5, 3, 500
        args.seed_rounds, args.seed_trees = 5, 5
    parts = dict(mnist1d=mnist1d_rows, fashion=fashion_rows, seeds=seed_rows)
    rows = parts[args.part](args)
    out = output_folder(args.quick, args.out)
    if args.part == "seeds":
        # Their own file: a today column the other parts' rows do not have.
        write_csv(out / "pooled_seeds.csv", rows, append=True)
        write_markdown(
            out / "pooled_seeds.md",
            "The presets on the seed experiments beside today's models",
            {"Summary over seeds": seed_summary(rows), "Every fit": rows},
            machine(("numpy", "morf_rs")),
            notes=f"Command: python benches/pooled.py {' '.join(sys.argv[1:])}",
        )
        return
    fields = ["experiment", "model", "n", "seed", "rounds", "error", "fit_s"]
    fields += ["predict_s", "threads"]
    rows = [{field: row[field] for field in fields} for row in rows]
    write_csv(out / "pooled.csv", rows, append=True)
    write_markdown(
        out / f"pooled_{args.part}.md",
        f"Pooled atoms beside the same models without them ({args.part})",
        rows,
        machine(("numpy", "morf_rs", "mnist1d")),
    )


if __name__ == "__main__":
    main()
