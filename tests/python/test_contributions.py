"""predict_contributions: TreeSHAP over atoms sums to every model's output, equals
shap's TreeExplainer on axis-aligned trees, and does not depend on threads."""

import doctest

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from morf_rs import (
    AtomContributions,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueForestRegressor,
    SparseObliqueGradientBoostingRegressor,
)
from morf_rs._contributions import ExplainContributions
from morf_rs.dictionary import Patches, Pooled, SignedPatches

shap = pytest.importorskip("shap")

SHAPE = (6, 6)
N_FEATURES = SHAPE[0] * SHAPE[1]


def images(n, n_classes, missing, seed=0):
    """6x6 float32 images whose class is set by patch sums; NaN in a tenth of the
    cells when ``missing``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    grid = X.reshape(n, *SHAPE)
    score = grid[:, :2, :2].sum(axis=(1, 2)) - grid[:, 3:, 4:].sum(axis=(1, 2))
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


MORF = {"image_shape": SHAPE, "patch_max": 3}
FORESTS = {
    "RF": lambda **kw: RandomForestClassifier(**kw),
    "SPORF": lambda **kw: SparseObliqueForestClassifier(**kw),
    "MORF": lambda **kw: ManifoldObliqueForestClassifier(**MORF, **kw),
    "dictionary": lambda **kw: ManifoldObliqueForestClassifier(
        image_shape=SHAPE,
        dictionary=[(Patches(patch_max=2), 0.5), (SignedPatches(), 0.5)],
        **kw,
    ),
    "pooled": lambda **kw: ManifoldObliqueForestClassifier(
        image_shape=SHAPE, dictionary=Pooled(Patches(patch_max=2), reduce="both"), **kw
    ),
    "honest": lambda **kw: ManifoldObliqueForestClassifier(
        **MORF, honest_fraction=0.4, honest_prior="uniform", **kw
    ),
}


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("name", list(FORESTS))
def test_forest_classifier_contributions_sum_to_predict_proba(name, missing):
    X, y = images(200, 3, missing)
    forest = FORESTS[name](n_estimators=8, max_depth=8, random_state=0).fit(X, y)
    contributions = forest.predict_contributions(X[:60])
    assert contributions.shape == (60, N_FEATURES + 1, 3)
    np.testing.assert_allclose(
        contributions.sum(axis=1), forest.predict_proba(X[:60]), atol=1e-7
    )
    # Not trivially: the features carry most of each prediction.
    assert np.abs(contributions[:, :-1]).sum() > 1


@pytest.mark.parametrize(
    "regressor",
    [
        RandomForestRegressor,
        SparseObliqueForestRegressor,
        ManifoldObliqueForestRegressor,
    ],
)
def test_forest_regressor_contributions_sum_to_every_output(regressor):
    X, labels = images(200, 4, missing=True)
    y = np.column_stack([labels, np.nan_to_num(X[:, 7]) + labels])
    extra = (
        {"image_shape": SHAPE} if regressor is ManifoldObliqueForestRegressor else {}
    )
    forest = regressor(n_estimators=6, random_state=0, **extra).fit(X, y)
    contributions = forest.predict_contributions(X[:50])
    assert contributions.shape == (50, N_FEATURES + 1, 2)
    np.testing.assert_allclose(
        contributions.sum(axis=1), forest.predict(X[:50]), atol=1e-12
    )
    single = regressor(n_estimators=4, random_state=0, **extra).fit(X, y[:, 0])
    contributions = single.predict_contributions(X[:50])
    assert contributions.shape == (50, N_FEATURES + 1, 1)
    np.testing.assert_allclose(
        contributions.sum(axis=1)[:, 0], single.predict(X[:50]), atol=1e-12
    )


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "booster",
    [
        lambda: GradientBoostingClassifier(n_estimators=10, random_state=0),
        lambda: ManifoldObliqueGradientBoostingClassifier(
            n_estimators=10, image_shape=SHAPE, random_state=0
        ),
    ],
)
def test_boosted_classifier_contributions_sum_to_the_decision_function(
    booster, n_classes, missing
):
    X, y = images(200, n_classes, missing)
    model = booster().fit(X, y)
    contributions = model.predict_contributions(X[:50])
    assert contributions.shape == (50, N_FEATURES + 1, n_classes)
    total = contributions.sum(axis=1)
    if n_classes == 2:
        assert np.all(contributions[:, :, 0] == 0)
        np.testing.assert_allclose(
            total[:, 1], model.decision_function(X[:50]), atol=1e-12
        )
    else:
        np.testing.assert_allclose(total, model.decision_function(X[:50]), atol=1e-12)


@pytest.mark.parametrize(
    "regressor", [GradientBoostingRegressor, SparseObliqueGradientBoostingRegressor]
)
def test_boosted_regressor_contributions_sum_to_predict(regressor):
    X, y = images(200, 5, missing=True)
    model = regressor(n_estimators=10, random_state=0).fit(X, y.astype(float))
    contributions = model.predict_contributions(X[:50])
    assert contributions.shape == (50, N_FEATURES + 1, 1)
    np.testing.assert_allclose(
        contributions.sum(axis=1)[:, 0], model.predict(X[:50]), atol=1e-12
    )


def shap_trees(model, n_outputs, tree_output, scale):
    """The model's axis-aligned trees as shap's dict of arrays; tree t's values go
    to output ``tree_output(t)`` (None: every output), times ``scale``."""
    trees = []
    for t in range(model._n_trees()):
        s = model.tree_structure(t)
        leaf = s.children_left < 0
        first = np.minimum(s.atom_ptr[:-1], len(s.atom_features) - 1)
        assert np.all(np.diff(s.atom_ptr)[~leaf] == 1)
        assert np.all(s.atom_weights == 1)
        values = np.zeros((s.node_count, n_outputs))
        column = tree_output(t)
        if column is None:
            values[:] = s.value
        else:
            values[:, column] = s.value[:, 0]
        trees.append(
            {
                "children_left": s.children_left,
                "children_right": s.children_right,
                "children_default": np.where(
                    s.missing_go_to_left, s.children_left, s.children_right
                ),
                "features": np.where(leaf, 0, s.atom_features[first]),
                "thresholds": s.threshold,
                "values": values * scale,
                "node_sample_weight": s.weighted_n_node_samples,
            }
        )
    return trees


def assert_equals_shap(model, trees, X, base=0.0, atol=1e-9):
    explainer = shap.TreeExplainer({"trees": trees})
    expected = np.asarray(explainer.shap_values(X.astype(np.float64)))
    if expected.ndim == 2:
        expected = expected[:, :, None]
    ours = model.predict_contributions(X)
    np.testing.assert_allclose(ours[:, :-1, :], expected, atol=atol)
    np.testing.assert_allclose(
        ours[0, -1, :], np.atleast_1d(explainer.expected_value) + base, atol=atol
    )


@pytest.mark.parametrize("missing", [False, True])
def test_axis_aligned_forests_give_shaps_values(missing):
    X, y = images(300, 3, missing, seed=1)
    forest = RandomForestClassifier(n_estimators=6, max_depth=7, random_state=0)
    forest.fit(X, y)
    assert_equals_shap(forest, shap_trees(forest, 3, lambda t: None, 1 / 6), X[:40])
    regressor = RandomForestRegressor(n_estimators=5, max_depth=7, random_state=0)
    regressor.fit(X, y.astype(float))
    trees = shap_trees(regressor, 1, lambda t: None, 1 / 5)
    assert_equals_shap(regressor, trees, X[:40])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_axis_aligned_boosters_give_shaps_values(n_classes):
    X, y = images(300, n_classes, missing=True, seed=2)
    model = GradientBoostingClassifier(n_estimators=8, random_state=0).fit(X, y)
    if n_classes == 2:
        trees = shap_trees(model, 2, lambda t: 1, 1.0)
        base = np.array([0.0, model._booster.baseline()[0]])
    else:
        trees = shap_trees(model, 3, lambda t: t % 3, 1.0)
        base = model._booster.baseline()
    # Covers are hessian sums kept in float32: a parent's differs from the sum of
    # its children's by rounding, and shap divides by the parent's where we divide
    # by the children's sum.
    assert_equals_shap(model, trees, X[:40], base, atol=1e-6)


def test_contributions_are_the_same_for_any_number_of_threads():
    X, y = images(300, 3, missing=True)
    forest = ManifoldObliqueForestClassifier(
        **MORF, n_estimators=8, random_state=0, n_jobs=1
    ).fit(X, y)
    one = forest.predict_contributions(X)
    one_atoms = forest.predict_contributions(X, per_atom=True)
    forest.set_params(n_jobs=2)
    np.testing.assert_array_equal(forest.predict_contributions(X), one)
    two_atoms = forest.predict_contributions(X, per_atom=True)
    for name in ("sample", "tree", "node", "values", "expected_value"):
        np.testing.assert_array_equal(
            getattr(two_atoms, name), getattr(one_atoms, name)
        )


def test_per_atom_values_map_back_to_the_trees_and_sum_to_the_prediction():
    X, y = images(200, 2, missing=True)
    forest = ManifoldObliqueForestClassifier(**MORF, n_estimators=5, random_state=0)
    forest.fit(X, y)
    atoms = forest.predict_contributions(X[:20], per_atom=True)
    assert isinstance(atoms, AtomContributions)
    assert atoms.values.shape == (len(atoms.sample), 2)
    totals = np.zeros((20, 2))
    np.add.at(totals, atoms.sample, atoms.values)
    np.testing.assert_allclose(
        totals + atoms.expected_value, forest.predict_proba(X[:20]), atol=1e-12
    )
    for tree, node in zip(atoms.tree[:50], atoms.node[:50]):
        structure = forest.tree_structure(int(tree))
        assert not structure.is_leaf[node]
        features, _ = structure.atom(node)
        assert len(features) > 0
    # A feature's values are its atoms' shares: features no atom holds get nothing.
    per_feature = forest.predict_contributions(X[:20])
    used = np.zeros(N_FEATURES, bool)
    for t in range(5):
        used[forest.tree_structure(t).atom_features] = True
    assert np.all(per_feature[:, :-1][:, ~used] == 0)


def test_bad_input_gets_clear_errors():
    X, y = images(100, 2, missing=False)
    forest = RandomForestClassifier(n_estimators=3, random_state=0)
    with pytest.raises(NotFittedError):
        forest.predict_contributions(X)
    forest.fit(X, y)
    with pytest.raises(TypeError, match="per_atom must be True or False"):
        forest.predict_contributions(X, per_atom="yes")
    with pytest.raises(ValueError, match="features"):
        forest.predict_contributions(X[:, :5])
    bad = X[:3].copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match="inf"):
        forest.predict_contributions(bad)
    silent = RandomForestClassifier(
        n_estimators=5, honest_fraction=0.5, honest_prior="ignore", random_state=0
    ).fit(X, y)
    with pytest.raises(ValueError, match="cast no vote.*'empirical'"):
        silent.predict_contributions(X)


def test_the_documented_example_runs():
    method = ExplainContributions.predict_contributions
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner()
    for test in finder.find(method, method.__name__):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float64])
def test_every_dtype_of_X_gives_the_values_of_its_float32_copy(dtype):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 256, size=(150, N_FEATURES)).astype(dtype)
    y = (X[:, :4].sum(axis=1) > 510).astype(int)
    forest = ManifoldObliqueForestClassifier(**MORF, n_estimators=4, random_state=0)
    forest.fit(X, y)
    as_float = X.astype(np.float32)
    np.testing.assert_array_equal(
        forest.predict_contributions(X), forest.predict_contributions(as_float)
    )
    atoms = forest.predict_contributions(X, per_atom=True)
    float_atoms = forest.predict_contributions(as_float, per_atom=True)
    np.testing.assert_array_equal(atoms.sample, float_atoms.sample)
    np.testing.assert_array_equal(atoms.values, float_atoms.values)


@pytest.mark.parametrize("name", ["SPORF", "MORF", "pooled"])
def test_float64_X_is_shared_as_its_float32_copy_even_below_float32s_range(name):
    # The model reads float64 cells as float32: sharing must too, or the shares
    # differ in the last bits and a cell too small for float32 (0 to the model)
    # becomes a term whose inverse overflows.
    X, y = images(200, 3, missing=False)
    forest = FORESTS[name](n_estimators=5, random_state=0).fit(X, y)
    X_test = X[:40].astype(np.float64) * 1.1
    X_test[:10] *= 1e-310
    as_float32 = X_test.astype(np.float32)
    contributions = forest.predict_contributions(X_test)
    assert np.isfinite(contributions).all()
    np.testing.assert_array_equal(
        contributions, forest.predict_contributions(as_float32)
    )
    np.testing.assert_allclose(
        contributions.sum(axis=1), forest.predict_proba(X_test), atol=1e-12
    )
