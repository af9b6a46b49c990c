"""Atom dictionaries: the families of morf_rs.dictionary on the MORF estimators."""

import doctest
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs import dictionary as dictionary_module
from morf_rs.datasets import make_bars, make_circle
from morf_rs.dictionary import (
    AxisAligned,
    Bumps,
    Gabors,
    GraphAtoms,
    Patches,
    SignedPatches,
    SparseOblique,
    grid_graph,
)

SIDE = 12


def small_bars(n, random_state):
    """Bars on 12x12 images: rows (class 0) or columns (class 1) set to 1."""
    rng = np.random.default_rng(random_state)
    y = np.arange(n) % 2
    lines = rng.random((n, SIDE)) < 0.3
    images = np.where(
        (y == 0)[:, None, None], lines[:, :, None], lines[:, None, :]
    ) & np.ones((1, SIDE, SIDE), dtype=bool)
    return images.reshape(n, -1).astype(np.float32), y


def morf(**kwargs):
    settings = {
        "n_estimators": 10,
        "image_shape": (SIDE, SIDE),
        "patch_min": 1,
        "patch_max": 3,
        "random_state": 0,
    }
    return ManifoldObliqueForestClassifier(**(settings | kwargs))


RING = np.array([(i, (i + 1) % (SIDE * SIDE)) for i in range(SIDE * SIDE)])

EVERY_FAMILY = [
    Patches(),
    SignedPatches(bands=2),
    SignedPatches(bands=3, patch_min=(1, 2), patch_max=(2, 3)),
    Bumps(),
    Gabors(patch_min=2, patch_max=4),
    AxisAligned(),
    SparseOblique(feature_combinations=2.0),
    GraphAtoms(grid_graph((SIDE, SIDE)), max_size=6),
    GraphAtoms(RING, min_size=2, max_size=5, signed=True),
]


@pytest.mark.parametrize("family", EVERY_FAMILY, ids=repr)
def test_every_family_learns_bars(family):
    X, y = small_bars(300, 0)
    X_test, y_test = small_bars(500, 1)
    forest = morf(dictionary=family).fit(X, y)
    assert forest.score(X_test, y_test) > 0.9
    for importances in (forest.feature_importances_, forest.impurity_importances_):
        assert importances.shape == (SIDE * SIDE,)
        assert np.all(importances >= 0)
        assert importances.sum() == pytest.approx(1.0)


def test_a_mixture_of_every_family_is_the_same_for_any_n_jobs():
    X, y = small_bars(200, 2)
    dictionary = [(family, 1 / len(EVERY_FAMILY)) for family in EVERY_FAMILY]
    one = morf(dictionary=dictionary, n_jobs=1).fit(X, y)
    two = morf(dictionary=dictionary, n_jobs=2).fit(X, y)
    assert one._forest.to_bytes() == two._forest.to_bytes()
    other_seed = morf(dictionary=dictionary, random_state=1).fit(X, y)
    assert one._forest.to_bytes() != other_seed._forest.to_bytes()
    restored = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(restored.predict_proba(X), one.predict_proba(X))


def test_the_papers_patches_alone_are_the_default_forest():
    X, y = make_circle(300, random_state=3)
    settings = {"image_shape": (100,), "patch_min": 3, "patch_max": 12, "wrap": True}
    default = morf(**settings).fit(X, y)
    for dictionary in (Patches(), [(Patches(), 1.0)], [(Patches(), 1), (Gabors(), 0)]):
        same = morf(**settings, dictionary=dictionary).fit(X, y)
        assert same._forest.to_bytes() == default._forest.to_bytes()


def test_signed_patches_learn_what_patch_sums_cannot():
    # Signals rise (class 1) or fall (class 0) gently from a random level: a patch sum
    # mostly sees the level, the difference of two neighbouring patches the slope.
    rng = np.random.default_rng(4)
    n = 800
    y = np.arange(n) % 2
    slope = np.where(y == 1, 0.03, -0.03)[:, None] * (np.arange(40) - 19.5)
    level = rng.uniform(-30, 30, size=(n, 1))
    X = (level + slope + rng.standard_normal((n, 40))).astype(np.float32)
    train, test = slice(0, 400), slice(400, None)
    errors = {}
    for name, dictionary in (("sums", None), ("signed", SignedPatches())):
        forest = ManifoldObliqueForestClassifier(
            n_estimators=50,
            patch_min=4,
            patch_max=8,
            dictionary=dictionary,
            max_features=0.5,
            random_state=0,
        ).fit(X[train], y[train])
        errors[name] = 1 - forest.score(X[test], y[test])
    assert errors["signed"] + 0.1 < errors["sums"], errors


def test_graph_atoms_take_an_adjacency_or_an_edge_list_alike():
    X, y = small_bars(150, 5)
    adjacency = grid_graph((SIDE, SIDE))
    edges = np.argwhere(sp.triu(adjacency).toarray())
    forests = [
        morf(dictionary=GraphAtoms(graph, max_size=4)).fit(X, y)
        for graph in (adjacency, sp.csr_matrix(adjacency), edges, edges[:, ::-1])
    ]
    for other in forests[1:]:
        assert other._forest.to_bytes() == forests[0]._forest.to_bytes()


def test_grid_graph():
    a = grid_graph((3, 4))
    assert a.shape == (12, 12)
    assert (a != a.T).nnz == 0
    assert a.diagonal().sum() == 0
    # 3 rows of 3 horizontal edges, 2 x 4 vertical ones.
    assert a.sum() // 2 == 9 + 8
    assert grid_graph((3, 4), diagonal=True).sum() // 2 == 9 + 8 + 2 * 2 * 3
    assert grid_graph((5,), wrap=True).sum() // 2 == 5
    # A cyclic axis of length 2 joins its cells once; of length 1, to nothing.
    assert grid_graph((2,), wrap=True).sum() // 2 == 1
    assert grid_graph((1, 3), wrap=True).sum() // 2 == 3


def test_families_compare_and_show_their_settings():
    assert SignedPatches(3) == SignedPatches(bands=3)
    assert SignedPatches(3) != SignedPatches(2)
    assert Patches() != Bumps()
    assert repr(SignedPatches(3)) == (
        "SignedPatches(bands=3, patch_min=None, patch_max=None)"
    )
    assert repr(GraphAtoms(RING)) == (
        "GraphAtoms(graph=<144 edges>, min_size=1, max_size=8, signed=False)"
    )
    dictionary = [(SignedPatches(), 0.5), (GraphAtoms(RING), 0.5)]
    estimator = morf(dictionary=dictionary)
    assert clone(estimator).get_params()["dictionary"] == dictionary


@pytest.mark.parametrize(
    ("dictionary", "error", "match"),
    [
        ([], ValueError, "dictionary is empty"),
        ("signed", ValueError, "is not a preset; the presets are"),
        (b"signals", TypeError, "dictionary must be None, a preset"),
        ([SignedPatches()], TypeError, r"dictionary\[0\] must be a \(family, prob"),
        ([("signed", 1.0)], TypeError, "is not an atom family"),
        ([(Patches(), 0.5), (AxisAligned(), 0.4)], ValueError, "sum to 0.9"),
        ([(Patches(), 1.5), (AxisAligned(), -0.5)], ValueError, "must be in"),
        ([(Patches(), "half")], TypeError, "probability must be a number"),
        (Patches(patch_max=13), ValueError, r"patch_max\[0\]=13 is larger than"),
        (Bumps(patch_min=3, patch_max=2), ValueError, "patch_min must be <="),
        (Patches(patch_min=(1, 1, 1)), ValueError, "the image has 2 axes"),
        (GraphAtoms(grid_graph((3, 3))), ValueError, "has 9 nodes but X has 144"),
        (GraphAtoms([(0, 144)]), ValueError, r"edge \(0, 144\) names a feature"),
        (GraphAtoms(RING, max_size=200), ValueError, "max_size=200 exceeds"),
    ],
)
def test_bad_dictionaries_say_what_to_fix(dictionary, error, match):
    X, y = small_bars(40, 6)
    forest = morf(n_estimators=2, dictionary=dictionary)
    with pytest.raises(error, match=match):
        forest.fit(X, y)


def test_signed_patches_that_cannot_fit_the_image_are_refused():
    X, y = make_circle(40, random_state=0)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=2,
        wrap=True,
        patch_min=51,
        patch_max=60,
        dictionary=SignedPatches(),
    )
    with pytest.raises(ValueError, match="can hold 2 bands side by side"):
        forest.fit(X, y)
    sensors = ManifoldObliqueForestClassifier(
        n_estimators=2,
        image_shape=(4, 25),
        contiguous=False,
        dictionary=[(Gabors(), 1.0)],
    )
    with pytest.raises(ValueError, match="need at least one"):
        sensors.fit(X, y)


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: SignedPatches(bands=4), ValueError, "bands must be >= 2 and <= 3"),
        (lambda: SparseOblique(0.5), ValueError, "feature_combinations must be in"),
        (lambda: GraphAtoms(RING, min_size=0), ValueError, "min_size must be >= 1"),
        (lambda: GraphAtoms(RING, min_size=5, max_size=4), ValueError, "max_size"),
        (lambda: GraphAtoms(RING, signed="yes"), TypeError, "signed must be True"),
        (lambda: GraphAtoms(np.zeros((3, 3), int)), ValueError, r"shape \(n_edges"),
        (lambda: GraphAtoms(sp.csr_array((2, 3))), ValueError, "must be square"),
        (lambda: GraphAtoms(np.array([[0.5, 1.0]])), TypeError, "index pairs"),
        (lambda: GraphAtoms([(0, -1)]), ValueError, "by their index"),
    ],
)
def test_bad_family_settings_are_refused_at_once(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_dictionaries_fit_the_papers_bars():
    X, y = make_bars(200, random_state=0)
    X_test, y_test = make_bars(500, random_state=1)
    forest = ManifoldObliqueForestClassifier(
        n_estimators=20,
        image_shape=(28, 28),
        patch_min=2,
        patch_max=(2, 9),
        dictionary=[(SignedPatches(), 0.5), (Patches(), 0.3), (AxisAligned(), 0.2)],
        random_state=0,
    ).fit(X, y)
    assert forest.score(X_test, y_test) > 0.95


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(dictionary_module)
    assert sum(len(test.examples) for test in tests) >= 10
    for test in tests:
        runner.run(test)
    assert runner.failures == 0
