"""morf_rs.plot draws what the models hold, headless (Agg): the arrays behind each
image and line are checked against the models' own attributes and predictions."""

import doctest
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

import morf_rs  # noqa: E402
from morf_rs import (  # noqa: E402
    GradientBoostingRegressor,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
    SparseObliqueGradientBoostingClassifier,
    plot,
)
from morf_rs.dictionary import Bumps, Patches, Pooled  # noqa: E402

SHAPE = (6, 8)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def images(n, random_state=0):
    """Class 1 where the block at rows 2-3, columns 4-6 is bright."""
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, SHAPE[0] * SHAPE[1]))
    y = (X.reshape(-1, *SHAPE)[:, 2:4, 4:7].sum(axis=(1, 2)) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def forest():
    X, y = images(200)
    return ManifoldObliqueForestClassifier(
        image_shape=SHAPE, n_estimators=8, random_state=0
    ).fit(X, y)


@pytest.fixture(scope="module")
def booster():
    X, y = images(300, 1)
    return ManifoldObliqueGradientBoostingClassifier(
        image_shape=SHAPE, n_estimators=12, random_state=0
    ).fit(X[:200], y[:200])


@pytest.mark.parametrize("attribute", ["feature_importances_", "impurity_importances_"])
def test_importance_map_draws_the_importances_over_the_image(forest, attribute):
    ax = plot.importance_map(forest, attribute=attribute)
    (image,) = ax.images
    drawn = np.asarray(image.get_array())
    expected = getattr(forest, attribute).reshape(SHAPE)
    assert drawn.shape == SHAPE
    np.testing.assert_array_equal(drawn, expected)
    assert ax.get_title() == attribute
    assert len(ax.figure.axes) == 2  # the colorbar's


def test_importance_map_draws_a_booster_on_a_given_axes_and_shape(booster):
    _, given = plt.subplots()
    ax = plot.importance_map(
        booster, given, image_shape=(8, 6), attribute="gain_importances_"
    )
    assert ax is given
    np.testing.assert_array_equal(
        ax.images[0].get_array(), booster.gain_importances_.reshape(8, 6)
    )


def test_importance_map_draws_a_signal_as_a_line():
    X, y = images(150)
    model = ManifoldObliqueForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert model.image_shape_ == (48,)
    ax = plot.importance_map(model, colorbar=False)
    assert not ax.images
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), np.arange(48))
    np.testing.assert_array_equal(line.get_ydata(), model.feature_importances_)


def test_importance_map_of_a_model_without_image_shape_needs_one():
    X, y = images(100)
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="has no image_shape_; pass image_shape"):
        plot.importance_map(model)
    ax = plot.importance_map(model, image_shape=SHAPE)
    np.testing.assert_array_equal(
        ax.images[0].get_array(), model.feature_importances_.reshape(SHAPE)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"image_shape": (7, 7)}, ValueError, "holds 49 values but there are 48"),
        ({"image_shape": (2, 4, 6)}, ValueError, "has 3 axes"),
        ({"image_shape": (6, 0)}, ValueError, r"image_shape\[1\] must be >= 1"),
        ({"image_shape": "6x8"}, TypeError, "tuple of ints"),
        ({"attribute": "coef_"}, ValueError, "attribute must be one of"),
        ({"attribute": "gain_importances_"}, TypeError, "has no gain_importances_"),
        ({"ax": "left"}, TypeError, "ax must be a matplotlib Axes"),
    ],
)
def test_importance_map_refuses_bad_input(forest, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot.importance_map(forest, **kwargs)


def test_importance_map_needs_a_fitted_model():
    with pytest.raises(NotFittedError):
        plot.importance_map(ManifoldObliqueForestClassifier(image_shape=SHAPE))
    with pytest.raises(TypeError, match="has no feature_importances_"):
        plot.importance_map(object())


def test_contribution_map_draws_values_over_the_grey_image():
    rng = np.random.default_rng(0)
    values = rng.normal(size=48)
    image = rng.uniform(0, 255, size=SHAPE)
    ax = plot.contribution_map(values, image=image)
    under, over = ax.images
    np.testing.assert_array_equal(under.get_array(), image)
    assert under.get_cmap().name == "gray_r"
    np.testing.assert_array_equal(over.get_array(), values.reshape(SHAPE))
    limit = np.abs(values).max()
    assert over.get_clim() == (-limit, limit)
    assert over.get_cmap().name == "RdBu_r"
    # The largest contribution at the given opacity, those near 0 see-through.
    np.testing.assert_allclose(
        over.get_alpha(), 0.9 * np.abs(values.reshape(SHAPE)) / limit
    )


def test_contribution_map_takes_a_flat_image_with_its_shape_or_no_image():
    values = np.linspace(-2.0, 0.5, 48)
    ax = plot.contribution_map(values, (8, 6), np.arange(48.0), colorbar=False)
    np.testing.assert_array_equal(
        ax.images[0].get_array(), np.arange(48.0).reshape(8, 6)
    )
    np.testing.assert_array_equal(ax.images[1].get_array(), values.reshape(8, 6))
    ax = plot.contribution_map(values, image_shape=SHAPE)
    (alone,) = ax.images
    assert alone.get_clim() == (-2.0, 2.0)
    assert alone.get_alpha() is None


def test_contribution_map_colours_a_signal_by_its_values():
    values = np.array([0.5, -1.5, 0.0, 1.0, 0.25])
    signal = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    ax = plot.contribution_map(values, image=signal)
    assert not ax.images
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), signal)
    (points,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_array_equal(points.get_offsets(), np.c_[np.arange(5), signal])
    np.testing.assert_array_equal(points.get_array(), values)
    assert points.get_clim() == (-1.5, 1.5)


def test_contribution_map_draws_bars_without_a_signal():
    values = np.array([0.5, -2.0, 0.0, 1.0])
    ax = plot.contribution_map(values)
    heights = [bar.get_height() for bar in ax.patches]
    np.testing.assert_array_equal(heights, values)
    # The most negative bar takes the colormap's low end, zero its middle.
    cmap = plt.get_cmap("RdBu_r")
    np.testing.assert_allclose(ax.patches[1].get_facecolor(), cmap(0.0))
    np.testing.assert_allclose(ax.patches[2].get_facecolor(), cmap(0.5))


def test_contribution_map_of_zeros_still_centres_at_zero():
    ax = plot.contribution_map(np.zeros(48), image_shape=SHAPE)
    assert ax.images[0].get_clim() == (-1.0, 1.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((np.zeros((3, 49, 2)),), {}, ValueError, r"contributions\[i, :-1, k\]"),
        ((np.zeros(49),), {"image_shape": SHAPE}, ValueError, "expected value"),
        ((np.r_[np.zeros(47), np.nan],), {}, ValueError, "NaN or infinity"),
        ((np.zeros(48),), {"image": np.zeros(47)}, ValueError, "image holds 47"),
        ((["a"] * 48,), {}, TypeError, "values must be an array of numbers"),
        ((np.zeros(48),), {"image": "picture"}, TypeError, "image must be an array"),
        ((np.zeros(48, complex),), {}, TypeError, "values must be an array of real"),
        ((np.zeros(48),), {"image": np.ones(48, complex)}, TypeError, "image must"),
        (([],), {}, ValueError, "values is empty"),
        ((np.zeros(48),), {"image_shape": (4, 4, 3)}, ValueError, "has 3 axes"),
        ((np.zeros(48),), {"alpha": 2}, ValueError, r"alpha must be in \[0, 1\]"),
    ],
)
def test_contribution_map_refuses_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot.contribution_map(*args, **kwargs)


def node_depths(structure):
    depths = np.zeros(structure.node_count, dtype=int)
    for node in range(structure.node_count):
        for child in (structure.children_left[node], structure.children_right[node]):
            if child >= 0:
                depths[child] = depths[node] + 1
    return depths


def splits_breadth_first(structure, depth):
    """The splits down to ``depth``, level by level, left child before right."""
    order, level = [], [0]
    for _ in range(depth + 1):
        order += [node for node in level if not structure.is_leaf[node]]
        level = [
            child
            for node in level
            if not structure.is_leaf[node]
            for child in (structure.children_left[node], structure.children_right[node])
        ]
    return order


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_tree_splits_draws_each_split_as_its_atom(depth):
    X, y = images(200)
    # Bumps: weights 1, 2, 3, ... so that the colours show more than membership.
    model = ManifoldObliqueForestClassifier(
        image_shape=SHAPE,
        n_estimators=2,
        dictionary=Bumps(patch_min=3, patch_max=4),
        random_state=0,
    ).fit(X, y)
    structure = model.tree_structure(1)
    depths = node_depths(structure)
    drawn = splits_breadth_first(structure, depth)
    assert len(drawn) == np.sum(~structure.is_leaf & (depths <= depth))
    ax = plot.tree_splits(model, tree=1, depth=depth)
    assert len(ax.images) == len(drawn)
    limit = max(np.abs(structure.atom(node)[1]).max() for node in drawn)
    assert limit > 1
    for image, node in zip(ax.images, drawn):
        features, weights = structure.atom(node)
        grid = image.get_array()
        assert grid.shape == SHAPE
        assert sorted(np.flatnonzero(~grid.mask.ravel())) == sorted(features)
        np.testing.assert_array_equal(grid.ravel()[features], weights)
        assert image.get_clim() == (-limit, limit)
    texts = [text.get_text() for text in ax.texts]
    for node in drawn:
        assert f"#{node}\n<= {structure.threshold[node]:.4g}" in texts
    leaves = np.flatnonzero(structure.is_leaf & (depths <= depth))
    assert sum(t.endswith("leaf") for t in texts) == len(leaves)
    assert not any(isinstance(p, Rectangle) for p in ax.patches)


def test_tree_splits_shows_a_pooled_split_with_its_window():
    X, y = images(200)
    model = ManifoldObliqueForestClassifier(
        image_shape=SHAPE,
        n_estimators=1,
        dictionary=Pooled(Patches(patch_min=1, patch_max=2), 2, (3, 4), reduce="min"),
        random_state=0,
    ).fit(X, y)
    structure = model.tree_structure(0)
    depths = node_depths(structure)
    drawn = np.flatnonzero(~structure.is_leaf & (depths <= 2))
    ax = plot.tree_splits(model, depth=2)
    windows = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(windows) == len(drawn) == len(ax.images)
    root = ax.images[0]
    left, _, _, top = root.get_extent()
    features, _ = structure.atom(0)
    rows, columns = np.unravel_index(features, SHAPE)
    low, high = structure.pool_shift_low[0], structure.pool_shift_high[0]
    window = windows[0]
    assert window.get_x() == left + columns.min() + low[1]
    assert window.get_width() == columns.max() + high[1] - columns.min() - low[1] + 1
    assert window.get_y() == top - (rows.max() + high[0] + 1)
    assert window.get_height() == rows.max() + high[0] - rows.min() - low[0] + 1
    # The base atom is drawn at the window's first shift, inside the window.
    moved = np.ravel_multi_index((rows + low[0], columns + low[1]), SHAPE)
    assert sorted(np.flatnonzero(~root.get_array().mask.ravel())) == sorted(moved)
    assert f"#0\nmin <= {structure.threshold[0]:.4g}" in [
        t.get_text() for t in ax.texts
    ]


def test_tree_splits_draws_a_booster_tree_of_a_signal():
    X, y = images(150)
    model = SparseObliqueGradientBoostingClassifier(n_estimators=3, random_state=0)
    model.fit(X, y)
    with pytest.raises(ValueError, match="has no image_shape_"):
        plot.tree_splits(model, tree=2)
    ax = plot.tree_splits(model, tree=2, depth=1, image_shape=(48,))
    structure = model.tree_structure(2)
    assert len(ax.images) == np.sum(~structure.is_leaf & (node_depths(structure) <= 1))
    assert ax.images[0].get_array().shape == (1, 48)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"depth": 6}, ValueError, "depth must be >= 0 and <= 5"),
        ({"depth": 1.5}, TypeError, "depth must be an int"),
        ({"tree": 8}, ValueError, "index must be >= 0 and <= 7"),
        ({"image_shape": (8, 8)}, ValueError, "holds 64 values but there are 48"),
    ],
)
def test_tree_splits_refuses_bad_input(forest, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot.tree_splits(forest, **kwargs)
    with pytest.raises(TypeError, match="has no tree_structure"):
        plot.tree_splits(np.zeros(3))


def test_staged_error_draws_the_error_rate_of_every_round(booster):
    X, y = images(300, 1)
    X_test, y_test = X[200:], y[200:]
    ax = plot.staged_error(booster, X_test, y_test)
    (line,) = ax.get_lines()
    # Independently: the most probable class after each round.
    expected = [
        np.mean(booster.classes_[np.argmax(p, axis=1)] != y_test)
        for p in booster.staged_predict_proba(X_test)
    ]
    assert len(expected) == booster.n_iter_ == 12
    np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 13))
    np.testing.assert_allclose(line.get_ydata(), expected)
    assert ax.get_ylabel() == "error rate"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["test"]


def test_staged_error_draws_the_mse_of_several_sets():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = X[:, 0] * 2 + rng.normal(scale=0.1, size=200)
    model = GradientBoostingRegressor(n_estimators=15, random_state=0).fit(
        X[:150], y[:150]
    )
    _, given = plt.subplots()
    ax = plot.staged_error(
        model,
        X[150:],
        y[150:],
        given,
        label="held out",
        eval_sets={"train": (X[:150], y[:150])},
    )
    assert ax is given
    held_out, train = ax.get_lines()
    for line, rows in ((held_out, slice(150, None)), (train, slice(None, 150))):
        expected = [np.mean((p - y[rows]) ** 2) for p in model.staged_predict(X[rows])]
        np.testing.assert_allclose(line.get_ydata(), expected)
    assert train.get_ydata()[-1] < train.get_ydata()[0]
    assert ax.get_ylabel() == "mean squared error"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["held out", "train"]
    assert plot.staged_error(model, X, y, label=None).get_legend() is None


def test_staged_error_refuses_bad_input(forest, booster):
    X, y = images(50)
    with pytest.raises(TypeError, match="needs a gradient-boosted model"):
        plot.staged_error(forest, X, y)
    with pytest.raises(ValueError, match="X has 50 samples but y has 49"):
        plot.staged_error(booster, X, y[:49])
    with pytest.raises(ValueError, match=r"y must have shape \(n_samples,\)"):
        plot.staged_error(booster, X, y[:, None])
    with pytest.raises(TypeError, match="eval_sets must be a dict"):
        plot.staged_error(booster, X, y, eval_sets=[(X, y)])
    regressor = GradientBoostingRegressor(n_estimators=2).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="NaN or infinity"):
        plot.staged_error(regressor, X, np.r_[y[:-1], np.nan])
    with pytest.raises(NotFittedError):
        plot.staged_error(GradientBoostingRegressor(), X, y)


def test_the_documented_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    documented = [plot] + [getattr(plot, name) for name in plot.__all__]
    for obj in documented:
        for test in finder.find(obj, obj.__name__):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted >= 5 * 4


def test_the_module_exports_its_four_plots():
    assert sorted(plot.__all__) == [
        "contribution_map",
        "importance_map",
        "staged_error",
        "tree_splits",
    ]
    assert sorted(dir(plot)) == sorted(plot.__all__)
    # Where users import them, which the API pages name.
    assert {getattr(plot, name).__module__ for name in plot.__all__} == {"morf_rs.plot"}


def test_tree_splits_moves_a_pooled_signal_atom_into_its_window():
    X, y = images(200)
    model = ManifoldObliqueForestClassifier(
        n_estimators=1,
        dictionary=Pooled(Patches(patch_min=2, patch_max=3), 3, 10),
        random_state=0,
    ).fit(X, y)
    structure = model.tree_structure(0)
    ax = plot.tree_splits(model, depth=0)
    (root,) = ax.images
    (window,) = ax.patches
    features, _ = structure.atom(0)
    low, high = structure.pool_shift_low[0, 0], structure.pool_shift_high[0, 0]
    drawn = np.flatnonzero(~root.get_array().mask.ravel())
    np.testing.assert_array_equal(drawn, np.sort(features) + low)
    left = root.get_extent()[0]
    assert window.get_x() == left + features.min() + low
    assert window.get_width() == features.max() + high - features.min() - low + 1


def test_without_matplotlib_the_import_says_what_to_install():
    code = (
        "import sys; sys.modules['matplotlib'] = None; import morf_rs; "
        "import morf_rs.plot"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(morf_rs.__file__).parents[1])},
    )
    assert result.returncode != 0
    assert "morf_rs.plot needs matplotlib: pip install 'morf_rs[plot]'" in result.stderr
