"""Maps of a model's or a sample's values over the image grid: importances and
contributions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from morf_rs.plot._common import Axes, axes, grid, model_grid, numbers, plt

# The fitted importances a model may hold, by the attribute's name.
_IMPORTANCES = ("feature_importances_", "impurity_importances_", "gain_importances_")
# How strongly a sample's image shows under its contributions.
_IMAGE_OPACITY = 0.4


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
    attribute : str
        Which importances: ``"feature_importances_"`` (the default: split
        counts, every model), ``"impurity_importances_"`` (impurity decreases,
        forests) or ``"gain_importances_"`` (split gains, gradient-boosted
        models).
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
    shape = model_grid(model, image_shape, len(importances))
    ax = axes(ax)
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
    values = numbers("values", values)
    if values.ndim != 1:
        raise ValueError(
            f"values must be one sample's contributions, shape (n_features,), got "
            f"shape {values.shape}; from predict_contributions take "
            "contributions[i, :-1, k] (sample i, output k, without the expected "
            "value)."
        )
    if values.size == 0:
        raise ValueError("values is empty; give one contribution per feature.")
    if not np.all(np.isfinite(values)):
        raise ValueError("values contains NaN or infinity; contributions are finite.")
    n_features = len(values)
    if image is not None:
        image = numbers("image", image)
        if image.size != n_features:
            raise ValueError(
                f"image holds {image.size} values but values has {n_features}; "
                "give the sample whose contributions these are."
            )
    if image_shape is None:
        image_shape = image.shape if image is not None and image.ndim == 2 else None
    shape = (n_features,) if image_shape is None else grid(image_shape, n_features)
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}.")
    # Symmetric limits put no contribution at the colormap's middle.
    limit = float(np.max(np.abs(values), initial=0.0)) or 1.0
    ax = axes(ax)
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
