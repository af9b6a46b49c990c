"""The forests benches/dictionaries.py compares: the recommended dictionaries, the
papers' MORF settings per experiment, and how each forest is fitted and scored."""

from __future__ import annotations

from functools import partial

import numpy as np
from harness import timed

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs.dictionary import AxisAligned, GraphAtoms, Patches, SignedPatches

# The recommendations of README.md, measured here.
IMAGES = [
    (SignedPatches(bands=2), 0.55),
    (SignedPatches(bands=3), 0.35),
    (AxisAligned(), 0.1),
]
# Bands of 2..5 pixels each way, twice the default number of candidates (2 sqrt(784)).
IMAGE_SETTINGS = {"patch_min": 2, "patch_max": 5, "max_features": 56}
SIGNALS = [
    (Patches(), 0.3),
    (AxisAligned(), 0.3),
    (SignedPatches(bands=2), 0.25),
    (SignedPatches(bands=3), 0.15),
]
SIGNALS_MAX_FEATURES = 1.0


def graph_dictionary(adjacency):
    return [
        (GraphAtoms(adjacency, min_size=1, max_size=10), 0.5),
        (GraphAtoms(adjacency, min_size=2, max_size=10, signed=True), 0.5),
    ]


# The papers' MORF settings per experiment (seed 003, Table S2), as benches/compare.py.
PAPER = {
    "circle": {"image_shape": (100,), "patch_min": 3, "patch_max": 12, "wrap": True},
    "bars": {"image_shape": (28, 28), "patch_min": (2, 2), "patch_max": (2, 9)},
    "impulse": {"image_shape": (100,), "patch_min": 2, "patch_max": 12},
    "multivariate": {
        "image_shape": (3, 100),
        "patch_min": (2, 5),
        "patch_max": (2, 10),
    },
    "mnist1d": {"image_shape": (40,), "patch_min": 1, "patch_max": 6},
    "fashion": {"image_shape": (28, 28), "patch_min": (2, 2), "patch_max": (2, 5)},
}
PAPER_MAX_FEATURES = {"circle": 0.5, "impulse": 0.3}
IMAGE_EXPERIMENTS = ("bars", "fashion")


def morf(experiment, dictionary=None, **settings):
    """MORF on ``experiment``'s image with the papers' extents and max_features."""
    params = {
        **PAPER[experiment],
        "max_features": PAPER_MAX_FEATURES.get(experiment, "sqrt"),
    }
    return ManifoldObliqueForestClassifier(
        **{**params, "dictionary": dictionary, **settings}
    )


def recommended(experiment, **settings):
    """The README's dictionary for the kind of data ``experiment`` holds."""
    if experiment in IMAGE_EXPERIMENTS:
        return morf(experiment, IMAGES, **{**IMAGE_SETTINGS, **settings})
    return morf(
        experiment, SIGNALS, **{"max_features": SIGNALS_MAX_FEATURES, **settings}
    )


def forest_settings(args, seed):
    """The settings every forest of the signals, graphs and scan parts shares
    (100 trees, or ``--trees`` in a quick run)."""
    trees = {"n_estimators": args.trees[0]} if args.quick else {}
    return {"n_jobs": args.threads, "random_state": seed, "bootstrap": False, **trees}


def fit_and_score(forest, X, y, X_test, y_test):
    _, fit_s = timed(partial(forest.fit, X, y))
    error = float(np.mean(forest.predict(X_test) != y_test))
    return fit_s, error
