"""The search for the images preset: named variants of its families, their mixture,
pooled windows, extents and candidates, each fitted once on a Fashion-MNIST subset
and scored after every round (``staged_decision_function``), so one fit gives the
test error at every round count.

    python benches/presets_search.py preset atoms800 --train 20000 --rounds 300
    python benches/presets_search.py --list

Each fit is a ManifoldObliqueGradientBoostingClassifier(image_shape=(28, 28)) at its
defaults (early stopping off), the variant's dictionary and max_features. Rows are
appended to benches/results/presets_search.csv (test error after 50, 100, ... 300
rounds, fit wall and CPU seconds); presets_search.md is rewritten from the whole CSV.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from boosting import fashion  # noqa: E402
from harness import (  # noqa: E402
    RESULTS,
    cpu_clock,
    machine,
    read_csv,
    timed,
    write_csv,
    write_markdown,
)

CHECKPOINTS = (50, 100, 150, 200, 250, 300)  # rounds at which the test error is kept
CSV = RESULTS / "presets_search.csv"
NOTES = """
err_K: test error after K rounds of one fit (staged_decision_function); variants in
benches/presets_search.py (VARIANTS), each at the defaults of
ManifoldObliqueGradientBoostingClassifier otherwise, early stopping off, seed 0.
fit_s is wall time on the shared 2-core machine under nice 19 (load 10 to 19), so
compare fit_cpu_s. "preset reuse0.5 (prototype)": the preset with up to half of each
round's candidates taken from the atoms the previous round's trees split on (a
prototype in src/boost/fit.rs, not kept, run on a test-release build of it; the other
rows on main's release build at 07134d9). Not in the table: "global" (a fifth of the
pooled atoms pooled over the whole image), stopped after more than 460 CPU seconds of
fit, twice the preset's, without a figure. VARIANTS also holds candidates not run.
The rows tagged "60k" (all 60,000 training images) ran at a9c4664 on a lent 16-core
machine (Intel Xeon, Python 3.12.3, numpy 2.5.2), 16 threads, one after another:
`python benches/presets_search.py VARIANT --train 60000 --threads 16 --tag " 60k"`.
The preset's 0.0666 is the figure the 2-thread run gave (benches/results/
presets_fashion60k.md): the same model at 16 threads. The cut-off of the call (540 s)
left global, bumps and window2-4 unrun at 60,000.
"""


def mixture(
    atoms=400,
    extent=5,
    pooled_extent=None,
    window=(2, 8),
    pooled_share=0.5,
    reduce="both",
    weights=(0.1, 0.3, 0.2, 0.3, 0.1),
    bumps=0.0,
    global_share=0.0,
):
    """The images preset's shape of dictionary: single pixels, edges, lines, Gabors
    and patch sums (``weights``, in that order; ``bumps`` adds Bumps), each image
    family split between plain atoms (extents 1 to ``extent``) and atoms pooled over
    ``window`` shifts per axis (extents 1 to ``pooled_extent``), ``pooled_share`` of
    it pooled; ``global_share`` of the pooled part pools over the whole image."""
    from morf_rs.dictionary import (
        AxisAligned,
        Bumps,
        Gabors,
        Patches,
        Pooled,
        SignedPatches,
    )

    pooled_extent = pooled_extent or extent
    pixels, edges, lines, gabors, sums = weights

    def kinds(high):
        ext = dict(patch_min=1, patch_max=high)
        made = [
            (SignedPatches(bands=2, **ext), edges),
            (SignedPatches(bands=3, **ext), lines),
            (Gabors(**ext), gabors),
            (Patches(**ext), sums),
        ]
        if bumps:
            made.append((Bumps(**ext), bumps))
        return made

    families = [(AxisAligned(), pixels)] if pixels else []
    shifts = dict(shift_min=window[0], shift_max=window[1], reduce=reduce)
    for (plain, p), (base, _) in zip(kinds(extent), kinds(pooled_extent)):
        if pooled_share < 1:
            families.append((plain, p * (1 - pooled_share)))
        local = pooled_share * (1 - global_share)
        if local:
            families.append((Pooled(base, **shifts), p * local))
        if global_share:
            whole = Pooled(base, shift_min=28, shift_max=None, reduce=reduce)
            families.append((whole, p * pooled_share * global_share))
    total = sum(p for _, p in families)
    return [(f, p / total) for f, p in families], atoms


VARIANTS = {
    "preset": dict(),
    "atoms800": dict(atoms=800),
    "atoms1200": dict(atoms=1200),
    "pooled75": dict(pooled_share=0.75),
    "pooled100": dict(pooled_share=1.0),
    "window2-4": dict(window=(2, 4)),
    "window4-12": dict(window=(4, 12)),
    "extent7": dict(extent=7),
    "extent9": dict(extent=9),
    "extent3": dict(extent=3),
    "pooled-extent3": dict(pooled_extent=3),
    "bumps": dict(bumps=0.1),
    "global": dict(global_share=0.2),
}


def staged_errors(model, X_test, y_test):
    """Test error after each of CHECKPOINTS rounds ("" past the fit's rounds)."""
    errors = {f"err_{k}": "" for k in CHECKPOINTS}
    for k, scores in enumerate(model.staged_decision_function(X_test), start=1):
        if k in CHECKPOINTS:
            predicted = model.classes_[np.asarray(scores).argmax(1)]
            errors[f"err_{k}"] = round(float(np.mean(predicted != y_test)), 4)
    return errors


def run(name, args, X, y, X_test, y_test):
    from morf_rs import ManifoldObliqueGradientBoostingClassifier

    families, atoms = mixture(**VARIANTS[name])
    model = ManifoldObliqueGradientBoostingClassifier(
        n_estimators=args.rounds,
        image_shape=(28, 28),
        dictionary=families,
        max_features=atoms,
        early_stopping=False,
        n_jobs=args.threads,
        random_state=args.seed,
    )
    cpu_start = cpu_clock()
    _, fit_s = timed(partial(model.fit, X, y))
    cpu_s = cpu_clock() - cpu_start
    row = dict(
        variant=name + args.tag,
        n_train=len(y),
        n_test=len(y_test),
        seed=args.seed,
        threads=args.threads,
        fit_s=round(fit_s, 1),
        fit_cpu_s=round(cpu_s, 1),
        **staged_errors(model, X_test, y_test),
    )
    print(row, flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--report", action="store_true", help="rewrite the .md only")
    parser.add_argument("--train", type=int, default=20_000)
    parser.add_argument("--test", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tag", default="", help="added to the variant's name")
    args = parser.parse_args()
    if args.list:
        for name, settings in VARIANTS.items():
            print(f"{name}: {settings}")
        return
    if args.report:
        write_report()
        return
    X, y, X_test, y_test = fashion(quick=False)
    X, y = X[: args.train], y[: args.train]
    X_test, y_test = X_test[: args.test], y_test[: args.test]
    for name in args.variants:
        row = run(name, args, X, y, X_test, y_test)
        write_csv(CSV, [row], append=True)
        write_report()


def write_report():
    """presets_search.md from every row of presets_search.csv."""
    write_markdown(
        RESULTS / "presets_search.md",
        "The search for the images preset (Fashion-MNIST subsets)",
        read_csv(CSV),
        machine(),
        notes=NOTES,
    )


if __name__ == "__main__":
    main()
