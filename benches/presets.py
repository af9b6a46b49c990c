"""The named dictionaries beside the hand-written recipes they replace.

    python benches/presets.py                      # Fashion-MNIST subset and MNIST-1D
    python benches/presets.py --part mnist1d --seeds 3
    python benches/presets.py --fashion-train 60000 --fashion-rounds 300

For each data set, two boosted models with the same rounds, seeds and threads:
``ManifoldObliqueGradientBoostingClassifier(image_shape=..., dictionary="images")``
(``"signals"`` for MNIST-1D) as a user types it, beside benches/boosting.py's recipe
(five families, ``patch_min=1``, ``patch_max`` 5 or 8, ``max_features`` 400 or 200,
and for MNIST-1D 15 leaves and ``min_samples_leaf=10``). Early stopping is off for
both, so each fits exactly the rounds asked. Writes benches/results/presets.csv and
presets.md (``--quick``: small sizes, to check the script, under results/quick/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from boosting import fashion, mnist1d, morf_booster  # noqa: E402
from harness import (  # noqa: E402
    best_in_turns,
    machine,
    output_folder,
    write_csv,
    write_markdown,
)

# data set: (image shape, preset, recipe's patch_max, recipe's own parameters)
SETS = {
    "fashion": ((28, 28), "images", 5, dict(max_features=400)),
    "mnist1d": (
        (40,),
        "signals",
        8,
        dict(max_features=200, max_leaf_nodes=15, min_samples_leaf=10),
    ),
}


def preset_booster(shape, preset, rounds, threads, seed):
    from morf_rs import ManifoldObliqueGradientBoostingClassifier

    return ManifoldObliqueGradientBoostingClassifier(
        n_estimators=rounds,
        image_shape=shape,
        dictionary=preset,
        early_stopping=False,
        n_jobs=threads,
        random_state=seed,
    )


def load(part, args):
    if part == "mnist1d":
        return mnist1d()
    X, y, X_test, y_test = fashion(quick=False)
    return (
        X[: args.fashion_train],
        y[: args.fashion_train],
        X_test[: args.fashion_test],
        y_test[: args.fashion_test],
    )


def rows_of(part, args):
    shape, preset, patch_max, recipe_params = SETS[part]
    rounds = args.fashion_rounds if part == "fashion" else args.mnist1d_rounds
    X, y, X_test, y_test = load(part, args)
    rows = []
    for seed in range(args.seeds):
        models = {
            f'dictionary="{preset}"': preset_booster(
                shape, preset, rounds, args.threads, seed
            ),
            "recipe (benches/boosting.py)": morf_booster(
                shape, patch_max, rounds, args.threads, seed, **recipe_params
            ),
        }
        # One fit each, taken in turn, so that load on the machine falls on both.
        fit_s = best_in_turns(
            {name: (lambda m=model: m.fit(X, y)) for name, model in models.items()},
            rounds=1,
        )
        for name, model in models.items():
            error = float(np.mean(model.predict(X_test) != y_test))
            row = dict(
                data=part,
                n_train=len(y),
                n_test=len(y_test),
                model=name,
                rounds=rounds,
                seed=seed,
                threads=args.threads,
                test_error=error,
                fit_s=fit_s[name],
            )
            print(row, flush=True)
            rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=[*SETS, "all"], default="all")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fashion-train", type=int, default=10_000)
    parser.add_argument("--fashion-test", type=int, default=10_000)
    parser.add_argument("--fashion-rounds", type=int, default=50)
    parser.add_argument("--mnist1d-rounds", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="a check: tiny sizes")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    if args.quick:
        args.fashion_train, args.fashion_test = 1000, 1000
        args.fashion_rounds, args.mnist1d_rounds = 3, 3

    parts = list(SETS) if args.part == "all" else [args.part]
    rows = [row for part in parts for row in rows_of(part, args)]
    out = output_folder(args.quick, args.out)
    write_csv(out / "presets.csv", rows)
    write_markdown(
        out / "presets.md",
        "The presets beside the hand-written recipes",
        rows,
        machine(),
        notes=(
            "Test error of ManifoldObliqueGradientBoostingClassifier with "
            'dictionary="images" (Fashion-MNIST) or "signals" (MNIST-1D) at its '
            "defaults, beside benches/boosting.py's recipe, same rounds, seeds and "
            "threads, early stopping off. fit_s: one fit each, the models taking "
            "turns (benches/harness.py best_in_turns, one round). "
            f"Command: python benches/presets.py {' '.join(sys.argv[1:])}"
        ),
    )


if __name__ == "__main__":
    main()
