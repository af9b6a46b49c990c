"""Pooled atoms (morf_rs.dictionary.Pooled) and the named dictionaries on the
estimators."""

import numpy as np
import pytest

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
)
from morf_rs._presets import preset
from morf_rs.dictionary import (
    AxisAligned,
    Gabors,
    Geometry,
    Patches,
    Pooled,
    SignedPatches,
)

LENGTH = 32


def shifted_bumps(n, random_state):
    """Class 1: three neighbours raised somewhere; class 0: three lone spikes."""
    rng = np.random.default_rng(random_state)
    y = np.arange(n) % 2
    X = rng.integers(0, 3, size=(n, LENGTH)).astype(np.float32)
    for i in range(n):
        if y[i]:
            start = rng.integers(0, LENGTH - 2)
            X[i, start : start + 3] += 3
        else:
            spikes = []
            while len(spikes) < 3:
                j = rng.integers(0, LENGTH)
                if all(abs(j - s) > 2 for s in spikes):
                    spikes.append(j)
            X[i, spikes] += 3
    return X, y


def test_pooled_atoms_learn_shifted_bumps_in_forests_boosters_and_mixtures():
    X, y = shifted_bumps(300, 0)
    X_test, y_test = shifted_bumps(400, 1)
    pooled = Pooled(Patches(patch_min=3, patch_max=3))
    forest = ManifoldObliqueForestClassifier(
        n_estimators=20, max_features=4, dictionary=pooled, random_state=0
    ).fit(X, y)
    plain = ManifoldObliqueForestClassifier(
        n_estimators=20,
        max_features=4,
        dictionary=Patches(patch_min=3, patch_max=3),
        random_state=0,
    ).fit(X, y)
    assert forest.score(X_test, y_test) > 0.97
    assert 1 - plain.score(X_test, y_test) > 4 * (1 - forest.score(X_test, y_test))
    mixture = [(Pooled(SignedPatches(), reduce="both"), 0.5), (pooled, 0.5)]
    booster = ManifoldObliqueGradientBoostingClassifier(
        n_estimators=20, max_features=8, dictionary=mixture, random_state=0
    ).fit(X, y)
    assert booster.score(X_test, y_test) > 0.97
    # The window covers the whole signal: every feature takes part.
    assert np.all(forest.feature_importances_ > 0)


def test_tree_structure_shows_the_base_atom_and_its_window():
    X, y = shifted_bumps(100, 2)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=1,
        image_shape=(4, 8),
        dictionary=Pooled(Patches(patch_min=1, patch_max=2), 1, (2, 8), reduce="min"),
        random_state=0,
    ).fit(X, y)
    tree = forest.tree_structure(0)
    splits = ~tree.is_leaf
    assert np.all(tree.pool_reduce[splits] == -1)
    assert np.all(tree.pool_reduce[~splits] == 0)
    assert tree.pool_shift_low.shape == (tree.node_count, 2)
    widths = tree.pool_shift_high - tree.pool_shift_low + 1
    assert np.all(widths[splits] >= 1)
    assert np.all(widths[splits] <= (2, 8))
    for node in np.flatnonzero(splits):
        features, _ = tree.atom(node)
        rows, columns = np.unravel_index(features, (4, 8))
        # Every shift keeps the base atom inside the image.
        assert rows.min() + tree.pool_shift_low[node, 0] >= 0
        assert rows.max() + tree.pool_shift_high[node, 0] < 4
        assert columns.min() + tree.pool_shift_low[node, 1] >= 0
        assert columns.max() + tree.pool_shift_high[node, 1] < 8


def test_presets_name_measured_dictionaries_for_every_manifold_class():
    X, y = shifted_bumps(120, 3)
    for cls in (
        ManifoldObliqueForestClassifier,
        ManifoldObliqueGradientBoostingClassifier,
    ):
        for name in ("signals", "images"):
            model = cls(n_estimators=3, dictionary=name, random_state=0).fit(X, y)
            assert model.score(X, y) > 0.6
    # A given max_features wins over the preset's.
    few = ManifoldObliqueGradientBoostingClassifier(
        n_estimators=2, dictionary="signals", max_features=3, random_state=0
    )

    def engine_max_features(model):
        checked = model._validate_params(120, LENGTH)
        return model._engine_params(checked, LENGTH)["max_features"]

    assert engine_max_features(few) == 3
    default = ManifoldObliqueGradientBoostingClassifier(dictionary="signals")
    assert engine_max_features(default) == 200


@pytest.mark.parametrize("name", ["signals", "images"])
def test_presets_leave_out_what_an_unordered_image_cannot_hold(name):
    # Without a contiguous axis there is nothing for edges, lines or stripes to run
    # along; the preset keeps single features and patch sums, plain and pooled.
    X, y = shifted_bumps(120, 3)
    model = ManifoldObliqueForestClassifier(
        n_estimators=3, image_shape=(4, 8), contiguous=False, dictionary=name
    )
    assert model.set_params(random_state=0).fit(X, y).score(X, y) > 0.6
    geometry = Geometry(32, (4, 8), [1, 1], [4, 8], [False, False], [False, False])
    families = [getattr(f, "family", f) for f, _ in preset(name, geometry)[0]]
    kinds = {type(family).__name__ for family in families}
    assert kinds == {"AxisAligned", "Patches"}
    # One ordered axis of 2 cells holds edges but not lines.
    geometry = Geometry(12, (6, 2), [1, 1], [6, 2], [False] * 2, [False, True])
    bands = {
        getattr(f, "family", f).bands
        for f, _ in preset(name, geometry)[0]
        if isinstance(getattr(f, "family", f), SignedPatches)
    }
    assert bands == {2}


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: Pooled(AxisAligned()), TypeError, "needs an image family"),
        (lambda: Pooled(Gabors(), reduce="mean"), ValueError, "reduce must be"),
    ],
)
def test_bad_pooled_families_are_refused_at_once(build, error, match):
    with pytest.raises(error, match=match):
        build()


@pytest.mark.parametrize(
    ("family", "error", "match"),
    [
        (Pooled(Patches(), shift_max=33), ValueError, r"shift_max\[0\] must be"),
        (Pooled(Patches(), shift_min=0), ValueError, r"shift_min\[0\] must be"),
        (Pooled(Patches(), 5, 4), ValueError, "is larger than shift_max"),
        (Pooled(Patches(), (1, 2)), ValueError, "the image has 1 axes"),
        (Pooled(Patches(), shift_max=2.5), TypeError, "must be an int"),
    ],
)
def test_bad_windows_say_what_to_fix(family, error, match):
    X, y = shifted_bumps(40, 4)
    with pytest.raises(error, match=match):
        ManifoldObliqueForestClassifier(n_estimators=2, dictionary=family).fit(X, y)


def test_missing_values_and_thread_counts():
    X, y = shifted_bumps(200, 5)
    X[3, 4] = np.nan
    X[10, 20] = np.nan
    models = [
        ManifoldObliqueGradientBoostingClassifier(
            n_estimators=5, dictionary="signals", random_state=1, n_jobs=n_jobs
        ).fit(X, y)
        for n_jobs in (1, 2)
    ]
    probe = X[:20].copy()
    probe[0, :] = np.nan
    first, second = (m.predict_proba(probe) for m in models)
    np.testing.assert_array_equal(first, second)
    assert np.all(np.isfinite(first))
