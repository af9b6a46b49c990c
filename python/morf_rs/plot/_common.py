"""What the plots share: matplotlib (an optional extra), the grid a model's
features are drawn on, and the Axes to draw on."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

try:
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "morf_rs.plot needs matplotlib: pip install 'morf_rs[plot]'."
    ) from error

from morf_rs._validation import check_int, is_int


def model_grid(model, image_shape, n_features):
    """The grid to draw ``model``'s features on: the one given, else the model's."""
    if image_shape is not None:
        return grid(image_shape, n_features)
    model_shape = getattr(model, "image_shape_", None)
    if model_shape is None:
        raise ValueError(
            f"{type(model).__name__} has no image_shape_; pass image_shape, such as "
            f"(28, 28) for images or ({n_features},) for one axis of "
            f"{n_features} features."
        )
    return grid(model_shape, n_features)


def grid(image_shape, n_features):
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


def numbers(name, values):
    if np.iscomplexobj(values):
        # float64 would drop the imaginary parts with only a warning.
        raise TypeError(f"{name} must be an array of real numbers, got complex ones.")
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of numbers: {error}") from error


def axes(ax, figsize=None):
    if ax is None:
        return plt.subplots(figsize=figsize)[1]
    if not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__}."
        )
    return ax
