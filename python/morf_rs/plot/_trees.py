"""A tree's first splits drawn as their atoms over the image grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.patches import Rectangle

from morf_rs._validation import check_int
from morf_rs.plot._common import Axes, axes, model_grid, plt

# Deeper trees are more panels than a figure shows legibly (2**depth across).
_MAX_DEPTH = 5
# Grey of the cells that are not part of a split's atom.
_OUTSIDE_ATOM = "0.85"


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
    shape = model_grid(model, image_shape, model.n_features_in_)
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
    ax = axes(ax, figsize=(2.0 * 2**depth + 1.5, 2.2 * (depth + 1)))
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
