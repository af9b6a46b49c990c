"""Plots of fitted morf_rs models with matplotlib (``pip install morf_rs[plot]``).

Each function draws on the matplotlib Axes it is given (``ax``), or on a new
figure's, and returns that Axes:

* :func:`importance_map`: a model's feature importances over its image grid,
  or along its signal.
* :func:`contribution_map`: one sample's per-feature contributions over its
  image (a diverging colormap centred at 0, the image in grey underneath) or
  along its signal.
* :func:`tree_splits`: the first splits of a tree, each drawn as its atom's
  weights over the image grid and titled with its threshold.
* :func:`staged_error`: a gradient-boosted model's error rate (classifiers) or
  mean squared error (regressors) after each round, on one or several sets.

Images are drawn with rows down and columns across, as ``reshape(image_shape)``
lays the features out; models and images of one axis are drawn along it.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import numpy as np
>>> from morf_rs import ManifoldObliqueForestClassifier
>>> from morf_rs.plot import importance_map
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 64))
>>> y = (X.reshape(-1, 8, 8)[:, 2:5, 3:6].sum(axis=(1, 2)) > 0).astype(int)
>>> forest = ManifoldObliqueForestClassifier(
...     image_shape=(8, 8), n_estimators=10, random_state=0
... ).fit(X, y)
>>> ax = importance_map(forest)
>>> ax.images[0].get_array().shape
(8, 8)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import is_classifier

try:
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.patches import Rectangle
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "morf_rs.plot needs matplotlib: pip install 'morf_rs[plot]'."
    ) from error

from morf_rs._validation import check_int, is_int

__all__ = ["contribution_map", "importance_map", "staged_error", "tree_splits"]

# The fitted importances a model may hold, by the attribute's name.
_IMPORTANCES = ("feature_importances_", "impurity_importances_", "gain_importances_")
# Deeper trees are more panels than a figure shows legibly (2**depth across).
_MAX_DEPTH = 5
# How strongly a sample's image shows under its contributions.
_IMAGE_OPACITY = 0.4
# Grey of the cells that are not part of a split's atom.
_OUTSIDE_ATOM = "0.85"


def __dir__():
    return __all__


def importance_map(
    model: Any,
    ax: Axes | None = None,
    *,
    image_shape: Sequence[int] | None = None,
    attribute: str = "feature_importances_",
    cmap: str = "viridis",
    colorbar: bool = True,
) -> Axes:
    """Draw a fitted model's feature importances over its image grid.

    A model of two-axis images (its ``image_shape_``, or the ``image_shape``
    given) is drawn as an image; one of one axis as a line along the signal.

    Parameters
    ----------
    model : fitted forest or gradient-boosted model
        The model whose importances to draw.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new figure.
    image_shape : tuple of int, default=None
        The grid to draw on, one or two axes whose product is the number of
        features. None: the model's ``image_shape_`` (MORF models); models
        without one (random and sparse oblique ones) need it.
    attribute : {"feature_importances_", "impurity_importances_", \
"gain_importances_"}, default="feature_importances_"
        Which importances: split counts (every model), impurity decreases
        (forests) or split gains (gradient-boosted models).
    cmap : str, default="viridis"
        Colormap of an image.
    colorbar : bool, default=True
        Whether to add a colorbar beside an image.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on: its image holds ``importances.reshape(image_shape)``,
        or its line the importances along the signal.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs.plot import importance_map
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 12))
    >>> y = (X[:, 5] > 0).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> ax = importance_map(forest, image_shape=(3, 4))
    >>> int(np.argmax(ax.images[0].get_array()))
    5
    """
    if attribute not in _IMPORTANCES:
        raise ValueError(
            f"attribute must be one of {', '.join(_IMPORTANCES)}, got {attribute!r}."
        )
    if not hasattr(type(model), attribute):
        raise TypeError(
            f"{type(model).__name__} has no {attribute}; draw a morf_rs forest or "
            "gradient-boosted model (impurity_importances_ belongs to forests, "
            "gain_importances_ to gradient-boosted models)."
        )
    importances = np.asarray(getattr(model, attribute), dtype=np.float64)
    shape = _model_grid(model, image_shape, len(importances))
    ax = _axes(ax)
    if len(shape) == 1:
        ax.plot(np.arange(len(importances)), importances)
        ax.set_xlabel("feature")
        ax.set_ylabel("importance")
    else:
        image = ax.imshow(importances.reshape(shape), cmap=cmap)
        if colorbar:
            ax.figure.colorbar(image, ax=ax, label="importance")
    ax.set_title(attribute)
    return ax


def contribution_map(
    values: ArrayLike,
    image_shape: Sequence[int] | None = None,
    image: ArrayLike | None = None,
    ax: Axes | None = None,
    *,
    cmap: str = "RdBu_r",
    alpha: float = 0.9,
    colorbar: bool = True,
) -> Axes:
    """Draw one sample's per-feature contributions over its image or signal.

    The colours are centred at 0: the colormap's middle is no contribution,
    its two ends the largest absolute contribution, towards and against the
    output. A model's contributions come from its ``predict_contributions``:
    ``contributions = model.predict_contributions(X)`` has shape (n_samples,
    n_features + 1, n_outputs), the last slot of axis 1 the expected value;
    sample ``i``'s values for output (class) ``k`` are
    ``contributions[i, :-1, k]``. Any other per-feature attribution, such as
    SHAP values, draws the same way.

    Parameters
    ----------
    values : array-like of shape (n_features,)
        The sample's contribution of each feature.
    image_shape : tuple of int, default=None
        The grid, one or two axes whose product is n_features. None: the
        shape of a two-axis ``image``, else one axis.
    image : array-like of shape (n_features,) or image_shape, default=None
        The sample itself, drawn in grey under the contributions (an image)
        or as the line they colour (a signal).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new figure.
    cmap : str, default="RdBu_r"
        A diverging colormap.
    alpha : float, default=0.9
        Opacity of the largest contribution over an image; smaller ones are
        drawn as much more transparent as they are smaller, so that the image
        (in grey, dark for high values) shows where they are near 0.
    colorbar : bool, default=True
        Whether to add a colorbar (images, and signals given with ``image``).

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on. Over an image its last image holds the values
        reshaped to the grid; along a signal its scatter's colours (with
        ``image``) or its bars' heights (without) are the values; colour
        limits are ``(-m, m)`` with ``m`` the largest absolute value.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from morf_rs.plot import contribution_map
    >>> image = np.arange(16.0).reshape(4, 4)
    >>> values = np.linspace(-1.0, 3.0, 16)
    >>> ax = contribution_map(values, image=image)
    >>> ax.images[-1].get_clim()
    (-3.0, 3.0)
    """
    values = _numbers("values", values)
    if values.ndim != 1:
        raise ValueError(
            f"values must be one sample's contributions, shape (n_features,), got "
            f"shape {values.shape}; from predict_contributions take "
            "contributions[i, :-1, k] (sample i, output k, without the expected "
            "value)."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("values contains NaN or infinity; contributions are finite.")
    n_features = len(values)
    if image is not None:
        image = _numbers("image", image)
        if image.size != n_features:
            raise ValueError(
                f"image holds {image.size} values but values has {n_features}; "
                "give the sample whose contributions these are."
            )
    if image_shape is None:
        image_shape = image.shape if image is not None and image.ndim == 2 else None
    shape = (n_features,) if image_shape is None else _grid(image_shape, n_features)
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}.")
    # Symmetric limits put no contribution at the colormap's middle.
    limit = float(np.max(np.abs(values), initial=0.0)) or 1.0
    ax = _axes(ax)
    mappable = None
    if len(shape) == 2:
        opacity = None
        if image is not None:
            ax.imshow(image.reshape(shape), cmap="gray_r", alpha=_IMAGE_OPACITY)
            # The image shows through where the contributions are near 0.
            opacity = alpha * np.abs(values.reshape(shape)) / limit
        mappable = ax.imshow(
            values.reshape(shape), cmap=cmap, vmin=-limit, vmax=limit, alpha=opacity
        )
    else:
        positions = np.arange(n_features)
        if image is not None:
            signal = image.reshape(-1)
            ax.plot(positions, signal, color="0.6", zorder=1)
            mappable = ax.scatter(
                positions, signal, c=values, cmap=cmap, vmin=-limit, vmax=limit
            )
            ax.set_ylabel("value")
        else:
            colours = plt.get_cmap(cmap)((values / limit + 1) / 2)
            ax.bar(positions, values, color=colours)
            ax.axhline(0.0, color="0.3", linewidth=0.8)
            ax.set_ylim(-1.05 * limit, 1.05 * limit)
            ax.set_ylabel("contribution")
        ax.set_xlabel("feature")
    if colorbar and mappable is not None:
        ax.figure.colorbar(mappable, ax=ax, label="contribution")
    ax.set_title("contributions")
    return ax


def tree_splits(
    model: Any,
    tree: int = 0,
    depth: int = 2,
    ax: Axes | None = None,
    *,
    image_shape: Sequence[int] | None = None,
    cmap: str = "RdBu_r",
    colorbar: bool = True,
) -> Axes:
    """Draw the first splits of a tree as their atoms over the image grid.

    Each split down to ``depth`` is a small panel at its place in the tree:
    its atom's weights coloured over the grid (cells outside the atom grey,
    one colour scale centred at 0 for every panel), titled with its node id
    and threshold (a sample whose projection is ``<=`` it goes left). A pooled
    split (:class:`~morf_rs.dictionary.Pooled`) shows its base atom at the
    first shift of its window, and the window its shifts cover as a dashed
    rectangle (cut to the image along a wrapping axis); its title says whether
    it takes the maximum or minimum.
    Leaves within ``depth`` are marked "leaf".

    Parameters
    ----------
    model : fitted forest or gradient-boosted model
        The model whose tree to draw.
    tree : int, default=0
        The tree, numbered as :meth:`tree_structure` numbers them (a
        gradient-boosted model's round after round, one per output).
    depth : int, default=2
        The deepest level drawn, from 0 (the root alone) to 5; 2 draws the
        root, its children and theirs (up to 7 splits).
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new figure.
    image_shape : tuple of int, default=None
        The grid, one or two axes whose product is the number of features.
        None: the model's ``image_shape_`` (MORF models); models without one
        need it.
    cmap : str, default="RdBu_r"
        A diverging colormap for the weights.
    colorbar : bool, default=True
        Whether to add a colorbar of the weights.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on: one image per split drawn, in breadth-first order
        (left child before right), and one rectangle per pooled split.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from morf_rs import ManifoldObliqueForestClassifier
    >>> from morf_rs.plot import tree_splits
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 64))
    >>> y = (X.reshape(-1, 8, 8)[:, 2:5, 3:6].sum(axis=(1, 2)) > 0).astype(int)
    >>> forest = ManifoldObliqueForestClassifier(
    ...     image_shape=(8, 8), n_estimators=5, random_state=0
    ... ).fit(X, y)
    >>> ax = tree_splits(forest, tree=0, depth=1)
    >>> len(ax.images)
    3
    """
    if not hasattr(model, "tree_structure"):
        raise TypeError(
            f"{type(model).__name__} has no tree_structure; draw a morf_rs forest "
            "or gradient-boosted model."
        )
    depth = check_int("depth", depth, 0, _MAX_DEPTH)
    structure = model.tree_structure(tree)
    shape = _model_grid(model, image_shape, model.n_features_in_)
    rows, columns = (1, shape[0]) if len(shape) == 1 else shape
    # Panel sizes in data units: one unit per cell; a signal gets some height.
    width = columns
    height = rows if len(shape) == 2 else max(1.0, columns / 6)
    slot = 1.45 * width
    level_step = 1.8 * height
    levels = _levels(structure, depth)
    grids = {}
    for node, _, _ in levels:
        if not structure.is_leaf[node]:
            features, weights = _drawn_atom(structure, node, (rows, columns))
            grid = np.zeros(rows * columns)
            np.add.at(grid, features, weights)
            outside = np.ones(rows * columns, dtype=bool)
            outside[features] = False
            grids[node] = np.ma.masked_array(grid, outside).reshape(rows, columns)
    limit = max((float(np.abs(g).max()) for g in grids.values()), default=0.0) or 1.0
    colours = plt.get_cmap(cmap).with_extremes(bad=_OUTSIDE_ATOM)
    ax = _axes(ax, figsize=(2.0 * 2**depth + 1.5, 2.2 * (depth + 1)))
    image = None
    for node, level, position in levels:
        centre = (position + 0.5) * 2 ** (depth - level) * slot
        left, top = centre - width / 2, -level * level_step
        if node in grids:
            image = ax.imshow(
                grids[node],
                cmap=colours,
                vmin=-limit,
                vmax=limit,
                extent=(left, left + width, top - height, top),
                interpolation="nearest",
            )
            window = _pool_window(structure, node, shape)
            if window is not None:
                (row_low, row_high), (column_low, column_high) = window
                cell = height / rows
                ax.add_patch(
                    Rectangle(
                        (left + column_low, top - (row_high + 1) * cell),
                        column_high - column_low + 1,
                        (row_high - row_low + 1) * cell,
                        fill=False,
                        edgecolor="black",
                        linestyle="--",
                    )
                )
            reduce = {1: "max ", -1: "min "}.get(int(structure.pool_reduce[node]), "")
            label = f"#{node}\n{reduce}<= {structure.threshold[node]:.4g}"
            ax.text(
                centre,
                top + 0.05 * height,
                label,
                ha="center",
                va="bottom",
                size="small",
            )
        else:
            ax.text(
                centre, top - height / 2, f"#{node}: leaf", ha="center", size="small"
            )
        if level > 0:
            parent_centre = (position // 2 + 0.5) * 2 ** (depth - level + 1) * slot
            parent_bottom = top + level_step - height
            ax.plot(
                [parent_centre, centre],
                [parent_bottom, top + 0.45 * height],
                color="0.5",
                linewidth=0.8,
            )
    ax.set_xlim(0, 2**depth * slot)
    ax.set_ylim(-depth * level_step - 1.1 * height, 0.4 * height)
    ax.set_axis_off()
    ax.set_title(f"tree {tree}: splits to depth {depth}, atom weights")
    if colorbar and image is not None:
        ax.figure.colorbar(image, ax=ax, label="weight", shrink=0.6)
    return ax


def staged_error(
    model: Any,
    X: ArrayLike,
    y: ArrayLike,
    ax: Axes | None = None,
    *,
    label: str | None = "test",
    eval_sets: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
) -> Axes:
    """Draw a gradient-boosted model's error after each round.

    The error rate (the share of misclassified samples) of a classifier, or
    the mean squared error of a regressor, of the predictions
    ``staged_predict`` gives after each round: to see where more rounds stop
    helping, or start to overfit.

    Parameters
    ----------
    model : fitted gradient-boosted model
        A morf_rs gradient-boosting classifier or regressor.
    X : array-like of shape (n_samples, n_features)
        The samples.
    y : array-like of shape (n_samples,)
        Their true classes or values.
    ax : matplotlib Axes, default=None
        Where to draw; None draws on a new figure.
    label : str or None, default="test"
        The legend's name for (X, y); None: no legend entry.
    eval_sets : dict of str to (X, y), default=None
        Further sets, each drawn as its own line named by its key, such as
        ``{"train": (X_train, y_train)}``.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on: one line per set, the rounds (from 1) along x and
        the errors along y.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from morf_rs import GradientBoostingClassifier
    >>> from morf_rs.plot import staged_error
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 5))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> booster = GradientBoostingClassifier(n_estimators=20, random_state=0)
    >>> booster = booster.fit(X[:200], y[:200])
    >>> ax = staged_error(
    ...     booster, X[200:], y[200:], eval_sets={"train": (X[:200], y[:200])}
    ... )
    >>> [len(line.get_ydata()) for line in ax.get_lines()]
    [20, 20]
    """
    if not hasattr(model, "staged_predict"):
        raise TypeError(
            f"staged_error needs a gradient-boosted model (with staged_predict), "
            f"got {type(model).__name__}."
        )
    if eval_sets is not None and not isinstance(eval_sets, Mapping):
        raise TypeError(
            "eval_sets must be a dict of name to (X, y), such as "
            f"{{'train': (X_train, y_train)}}, got {type(eval_sets).__name__}."
        )
    sets = [(label, X, y), *((name, *pair) for name, pair in (eval_sets or {}).items())]
    classifier = is_classifier(model)
    curves = [
        (name, _staged_errors(model, X_set, y_set, classifier))
        for name, X_set, y_set in sets
    ]
    ax = _axes(ax)
    for name, errors in curves:
        ax.plot(np.arange(1, len(errors) + 1), errors, label=name)
    ax.set_xlabel("boosting round")
    ax.set_ylabel("error rate" if classifier else "mean squared error")
    if any(name is not None for name, _ in curves):
        ax.legend()
    return ax


def _staged_errors(model, X, y, classifier):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must have shape (n_samples,), got shape {y.shape}.")
    if not classifier:
        y = _numbers("y", y)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity; give finite targets.")
    errors = []
    for predicted in model.staged_predict(X):
        if len(predicted) != len(y):
            raise ValueError(
                f"X has {len(predicted)} samples but y has {len(y)}; give one "
                "target per sample."
            )
        wrong = predicted != y if classifier else (predicted - y) ** 2
        errors.append(float(np.mean(wrong)))
    return np.asarray(errors)


def _levels(structure, depth):
    """(node, level, position within the level) from the root down to ``depth``,
    breadth first, left child before right."""
    levels = []
    frontier = [(0, 0)]
    for level in range(depth + 1):
        levels.extend((node, level, position) for node, position in frontier)
        frontier = [
            (int(child), 2 * position + side)
            for node, position in frontier
            if not structure.is_leaf[node]
            for side, child in enumerate(
                (structure.children_left[node], structure.children_right[node])
            )
        ]
    return levels


def _drawn_atom(structure, node, grid):
    """A split's atom as (features, weights) on the ``grid`` of rows and columns:
    a pooled split's base atom moved to the first shift of its window, where it
    takes part in the projection (the base atom's own place need not)."""
    features, weights = structure.atom(node)
    if structure.pool_reduce[node] == 0:
        return features, weights
    low = structure.pool_shift_low[node]
    shift = low if len(low) == 2 else np.concatenate([[0], low])
    # Modulo: a wrapping axis continues around the end; others keep the atom inside.
    cells = [
        (axis + step) % length
        for axis, step, length in zip(np.unravel_index(features, grid), shift, grid)
    ]
    return np.ravel_multi_index(cells, grid), weights


def _pool_window(structure, node, shape):
    """The cells a pooled split's shifts cover, as (row range, column range)
    inclusive, cut to the image; None for a split that is not pooled."""
    if structure.pool_reduce[node] == 0:
        return None
    features, _ = structure.atom(node)
    grid = (1, shape[0]) if len(shape) == 1 else shape
    cells = np.unravel_index(features, grid)
    low = structure.pool_shift_low[node]
    high = structure.pool_shift_high[node]
    if len(shape) == 1:
        low, high = np.concatenate([[0], low]), np.concatenate([[0], high])
    return tuple(
        (max(0, int(axis.min() + lo)), min(length - 1, int(axis.max() + hi)))
        for axis, lo, hi, length in zip(cells, low, high, grid)
    )


def _model_grid(model, image_shape, n_features):
    """The grid to draw ``model``'s features on: the one given, else the model's."""
    if image_shape is not None:
        return _grid(image_shape, n_features)
    model_shape = getattr(model, "image_shape_", None)
    if model_shape is None:
        raise ValueError(
            f"{type(model).__name__} has no image_shape_; pass image_shape, such as "
            f"(28, 28) for images or ({n_features},) for one axis of "
            f"{n_features} features."
        )
    return _grid(model_shape, n_features)


def _grid(image_shape, n_features):
    if is_int(image_shape):
        image_shape = (image_shape,)
    if isinstance(image_shape, str) or not isinstance(image_shape, Sequence):
        raise TypeError(
            f"image_shape must be a tuple of ints such as (28, 28), got "
            f"{image_shape!r}."
        )
    shape = tuple(
        check_int(f"image_shape[{axis}]", length, 1)
        for axis, length in enumerate(image_shape)
    )
    if len(shape) not in (1, 2):
        raise ValueError(
            f"image_shape {shape} has {len(shape)} axes; plots draw one or two, so "
            "pass an image_shape of one or two axes (for instance one channel's)."
        )
    if math.prod(shape) != n_features:
        extra = (
            " (one more than the grid holds: drop the expected value, the last slot "
            "of predict_contributions' axis 1)"
            if n_features == math.prod(shape) + 1
            else ""
        )
        raise ValueError(
            f"image_shape {shape} holds {math.prod(shape)} values but there are "
            f"{n_features} features{extra}; give an image_shape whose product is "
            "the number of features."
        )
    return shape


def _numbers(name, values):
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of numbers: {error}") from error


def _axes(ax, figsize=None):
    if ax is None:
        return plt.subplots(figsize=figsize)[1]
    if not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__}."
        )
    return ax
