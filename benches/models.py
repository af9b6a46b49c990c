"""The forests compared, built with equal hyperparameters, and their tree statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# treeple 0.10.3 rejects boundary="wrap" (TypeError from its Cython splitter), so its
# patch forest always runs with zero padding at the image border.
TREEPLE_WRAP_NOTE = (
    "treeple runs without wrap: boundary='wrap' raises TypeError in treeple 0.10.3, "
    "so its patch forest pads with zeros where ours wraps around (circle)."
)

SPORF_FEATURE_COMBINATIONS = 1.5


@dataclass(frozen=True)
class Patches:
    """Seed Table S2 settings of one experiment: MORF atoms and its max_features."""

    image_shape: tuple[int, ...]
    patch_min: tuple[int, ...]
    patch_max: tuple[int, ...]
    wrap: bool
    max_features: float | str


@dataclass(frozen=True)
class Model:
    library: str  # "morf_rs", "sklearn" or "treeple"
    forest: str  # "MORF", "SPORF" or "RF"
    build: Callable[
        [Patches, int, int, int], Any
    ]  # (patches, n_estimators, n_jobs, seed)

    @property
    def label(self) -> str:
        return f"{self.library} {self.forest}"


def _treeple_dims(shape: tuple[int, ...]) -> tuple[int, ...]:
    # treeple's patch splitter wants a 2-D data shape: a signal is one row.
    return (1, *shape) if len(shape) == 1 else shape


def available_models() -> tuple[list[Model], dict[str, str]]:
    """Every model whose library imports, and a note per library where one is due."""
    models: list[Model] = []
    notes: dict[str, str] = {}

    try:
        import morf_rs
    except ImportError as exc:
        notes["morf_rs"] = (
            f"morf_rs not importable ({exc}): `pip install .` installs it"
        )
    else:
        models += [
            Model(
                "morf_rs",
                "MORF",
                lambda p, t, j, s: morf_rs.ManifoldObliqueForestClassifier(
                    n_estimators=t,
                    image_shape=p.image_shape,
                    patch_min=p.patch_min,
                    patch_max=p.patch_max,
                    wrap=p.wrap,
                    max_features=p.max_features,
                    n_jobs=j,
                    random_state=s,
                ),
            ),
            Model(
                "morf_rs",
                "SPORF",
                lambda p, t, j, s: morf_rs.SparseObliqueForestClassifier(
                    n_estimators=t,
                    feature_combinations=SPORF_FEATURE_COMBINATIONS,
                    max_features="sqrt",
                    n_jobs=j,
                    random_state=s,
                ),
            ),
            Model(
                "morf_rs",
                "RF",
                lambda p, t, j, s: morf_rs.RandomForestClassifier(
                    n_estimators=t, max_features="sqrt", n_jobs=j, random_state=s
                ),
            ),
        ]

    from sklearn.ensemble import RandomForestClassifier

    models.append(
        Model(
            "sklearn",
            "RF",
            lambda p, t, j, s: RandomForestClassifier(
                n_estimators=t, max_features="sqrt", n_jobs=j, random_state=s
            ),
        )
    )

    try:
        from treeple import (
            ObliqueRandomForestClassifier,
            PatchObliqueRandomForestClassifier,
        )
    except ImportError as exc:
        notes["treeple"] = (
            f"treeple not importable ({exc}): see benches/requirements.txt"
        )
    else:
        models += [
            Model(
                "treeple",
                "MORF",
                lambda p, t, j, s: PatchObliqueRandomForestClassifier(
                    n_estimators=t,
                    data_dims=_treeple_dims(p.image_shape),
                    min_patch_dims=_treeple_dims(p.patch_min),
                    max_patch_dims=_treeple_dims(p.patch_max),
                    max_features=p.max_features,
                    n_jobs=j,
                    random_state=s,
                ),
            ),
            Model(
                "treeple",
                "SPORF",
                lambda p, t, j, s: ObliqueRandomForestClassifier(
                    n_estimators=t,
                    feature_combinations=SPORF_FEATURE_COMBINATIONS,
                    max_features="sqrt",
                    n_jobs=j,
                    random_state=s,
                ),
            ),
        ]
        notes["treeple"] = TREEPLE_WRAP_NOTE
    return models, notes


def _sklearn_tree_stats(tree) -> tuple[int, int, int, float]:
    left, right = tree.children_left, tree.children_right
    depth = np.zeros(tree.node_count, dtype=np.int64)
    # Node ids are assigned parent before child, so one forward pass fills every depth.
    for node in range(tree.node_count):
        if left[node] != -1:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    leaves = left == -1
    return (
        int(depth.max()),
        int(leaves.sum()),
        int(tree.node_count),
        float(depth[leaves].mean()),
    )


def tree_stats(model) -> dict[str, np.ndarray]:
    """Per-tree max_depth, n_leaves, n_nodes and mean_leaf_depth (leaves unweighted)."""
    if hasattr(model, "tree_stats_"):
        return {k: np.asarray(v) for k, v in model.tree_stats_.items()}
    rows = np.array([_sklearn_tree_stats(est.tree_) for est in model.estimators_])
    return {
        "max_depth": rows[:, 0],
        "n_leaves": rows[:, 1],
        "n_nodes": rows[:, 2],
        "mean_leaf_depth": rows[:, 3],
    }
