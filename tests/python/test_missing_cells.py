"""Atoms some of whose features are missing: the projection is the sum over the
present features times the atom's whole |w| over the present |w|, missing only when
every feature is; training, scoring, contributions and ONNX all follow the rule each
tree records, and models saved before it keep theirs."""

from pathlib import Path

import numpy as np
import pytest

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    SparseObliqueForestClassifier,
)
from morf_rs.dictionary import Patches

FIXTURES = Path(__file__).parent.parent / "fixtures"


def images(n, missing, seed=0, side=8):
    """side x side float32 images whose class is set by patch sums; a fraction
    ``missing`` of the pixels NaN."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, side * side)).astype(np.float32)
    grid = X.reshape(n, side, side)
    y = (grid[:, :3, :3].sum(axis=(1, 2)) > grid[:, 4:, 4:].sum(axis=(1, 2))).astype(
        int
    )
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def rescaled_projection(X, features, weights):
    """The rule written out in float32, term by term in the atom's order as the
    engine sums: present terms summed, times whole |w| over present |w| where a
    feature is missing; NaN where none is present."""
    values = X[:, features]
    present = ~np.isnan(values)
    total = np.zeros(len(X), dtype=np.float32)
    present_weight = np.zeros(len(X), dtype=np.float32)
    whole = np.float32(0.0)
    for j, w in enumerate(np.asarray(weights, dtype=np.float32)):
        total = total + np.where(present[:, j], w * values[:, j], np.float32(0.0))
        present_weight = present_weight + np.where(present[:, j], abs(w), np.float32(0))
        whole = whole + abs(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(
            present_weight == whole, total, total * (whole / present_weight)
        )
    return np.where(present_weight == 0, np.float32(np.nan), scaled).astype(np.float32)


def check_routes(model, X, rescaled):
    """Every plain split sends the rows that reach it as the rule says (the
    rescaled present sum when ``rescaled``, else missing when any feature is);
    returns how many times a row reached a split whose atom was partly missing."""
    indicator, starts = model.decision_path(X)
    indicator = indicator.tocsc()
    partly_missing = 0
    for t in range(model._n_trees()):
        tree = model.tree_structure(t)
        assert tree.rescales_missing_cells == rescaled
        splits = np.flatnonzero(~tree.is_leaf & (tree.pool_reduce == 0))
        for node in splits:
            rows = indicator[:, starts[t] + node].nonzero()[0]
            if len(rows) == 0:
                continue
            features, weights = tree.atom(node)
            missing_cells = np.isnan(X[rows][:, features])
            if rescaled:
                value = rescaled_projection(X[rows], features, weights)
            else:
                value = np.where(
                    missing_cells.any(axis=1),
                    np.float32(np.nan),
                    rescaled_projection(X[rows], features, weights),
                )
            partly_missing += np.sum(
                missing_cells.any(axis=1) & ~missing_cells.all(axis=1)
            )
            left = np.where(
                np.isnan(value),
                tree.missing_go_to_left[node],
                value <= np.float32(tree.threshold[node]),
            )
            child = starts[t] + tree.children_left[node]
            went_left = indicator[rows, child].toarray()[:, 0].astype(bool)
            np.testing.assert_array_equal(went_left, left)
    # The scoring engine (vector lanes over blocks of rows) reaches the leaves the
    # paths end at.
    assert_leaves_are_the_paths_ends(model, X, indicator, starts)
    return partly_missing


def assert_leaves_are_the_paths_ends(model, X, indicator, starts):
    leaves = model.apply(X)
    leaves = leaves.reshape(len(X), -1)
    for t in range(model._n_trees()):
        tree = model.tree_structure(t)
        leaf_ids = np.flatnonzero(tree.is_leaf)
        reached = indicator[:, starts[t] + leaf_ids].toarray()
        np.testing.assert_array_equal(leaf_ids[reached.argmax(axis=1)], leaves[:, t])
    # A call of a few rows walks them one by one instead of in blocks.
    for i in range(0, len(X), 37):
        alone = model.apply(X[i : i + 1]).reshape(1, -1)
        np.testing.assert_array_equal(alone[0], leaves[i], err_msg=f"row {i} alone")


@pytest.mark.parametrize(
    "model",
    [
        ManifoldObliqueForestClassifier(
            image_shape=(8, 8), n_estimators=4, random_state=0
        ),
        SparseObliqueForestClassifier(n_estimators=4, random_state=0),
        ManifoldObliqueGradientBoostingClassifier(
            image_shape=(8, 8), n_estimators=4, random_state=0
        ),
    ],
    ids=["morf", "sporf", "boosted"],
)
def test_rows_go_where_the_rescaled_present_sum_sends_them(model):
    X, y = images(300, missing=0.2)
    model.fit(X, y)
    # Not trivially: many rows reached splits whose atoms were partly missing.
    assert check_routes(model, X, rescaled=True) > 500


def test_training_sends_rows_where_scoring_does():
    """Each node counts, while the tree grows, the training rows that reach it:
    without bootstrap, the rows that scoring sends there."""
    X, y = images(300, missing=0.3)
    forest = ManifoldObliqueForestClassifier(
        image_shape=(8, 8), n_estimators=4, bootstrap=False, random_state=0
    ).fit(X, y)
    indicator, starts = forest.decision_path(X)
    assert_leaves_are_the_paths_ends(forest, X, indicator, starts)
    counts = np.asarray(indicator.sum(axis=0))[0]
    for t in range(forest.n_estimators):
        tree = forest.tree_structure(t)
        np.testing.assert_array_equal(
            counts[starts[t] : starts[t + 1]], tree.n_node_samples
        )


def test_a_missing_feature_inside_present_patches_gets_no_contribution():
    """A patch with a present feature takes its value from the present ones, which
    share it; contributions still sum to predict_proba."""
    X, y = images(300, missing=0.1)
    forest = ManifoldObliqueForestClassifier(
        image_shape=(8, 8),
        dictionary=Patches(patch_min=2, patch_max=4),
        n_estimators=8,
        random_state=0,
    ).fit(X, y)
    rows = np.nan_to_num(X[:40])
    rows[:, 9] = np.nan  # one missing pixel per row; every patch has another
    contributions = forest.predict_contributions(rows)
    np.testing.assert_allclose(
        contributions.sum(axis=1), forest.predict_proba(rows), atol=1e-7
    )
    assert np.all(contributions[:, 9] == 0)
    # Pixel 9 is used: complete, it takes part.
    assert np.abs(forest.predict_contributions(np.nan_to_num(X[:40]))[:, 9]).sum() > 0


def test_complete_rows_score_as_the_plain_sum():
    """Without missing values the rule changes nothing: the plain sum routes."""
    X, y = images(300, missing=0.0)
    forest = ManifoldObliqueForestClassifier(
        image_shape=(8, 8), n_estimators=2, random_state=0
    ).fit(X, y)
    indicator, starts = forest.decision_path(X)
    tree = forest.tree_structure(0)
    for node in np.flatnonzero(~tree.is_leaf)[:20]:
        rows = indicator[:, node].nonzero()[0]
        features, weights = tree.atom(node)
        plain = np.zeros(len(rows), dtype=np.float32)
        for f, w in zip(features, weights):
            plain = plain + w * X[rows, f]
        went_left = indicator[rows, tree.children_left[node]].toarray()[:, 0]
        np.testing.assert_array_equal(
            went_left.astype(bool), plain <= np.float32(tree.threshold[node])
        )


def old_forest():
    """The version 4 forest fixture (6x6 images, three classes, patches, signed and
    pooled patches, single features), saved before the rule, in an estimator."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 36)).astype(np.float32)
    y = np.arange(60) % 3
    forest = ManifoldObliqueForestClassifier(
        image_shape=(6, 6), n_estimators=2, random_state=0
    ).fit(X, y)
    state = forest.__getstate__()
    state["_forest"] = (FIXTURES / "forest_v4.bin").read_bytes()
    old = ManifoldObliqueForestClassifier.__new__(ManifoldObliqueForestClassifier)
    old.__setstate__(state)
    return old


def test_models_saved_before_the_rule_keep_theirs():
    """Any missing feature makes their projections missing, which take the split's
    learnt side."""
    old = old_forest()
    rng = np.random.default_rng(1)
    X = rng.random((300, 36)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    assert check_routes(old, X, rescaled=False) > 100


@pytest.mark.parametrize("projection", ["matmul", "gather"])
def test_onnx_follows_each_trees_rule_on_rows_with_missing_values(projection):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from morf_rs.onnx import to_onnx

    rng = np.random.default_rng(3)
    X = rng.random((200, 36)).astype(np.float32)
    X[:, 6:12] += (np.arange(200) % 3 == 1)[:, None]
    X[rng.random(X.shape) < 0.25] = np.nan
    new = ManifoldObliqueForestClassifier(
        image_shape=(6, 6), n_estimators=6, random_state=0
    ).fit(X, np.arange(200) % 3)
    for model in (old_forest(), new):
        session = ort.InferenceSession(
            to_onnx(model, projection=projection).SerializeToString()
        )
        label, proba = session.run(None, {"X": X})
        np.testing.assert_allclose(proba, model.predict_proba(X), atol=1e-6)
        assert np.array_equal(label, model.predict(X))
