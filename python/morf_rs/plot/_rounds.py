"""A gradient-boosted model's error after each round."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import is_classifier

from morf_rs.plot._common import Axes, axes, numbers


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
    ax = axes(ax)
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
        y = numbers("y", y)
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
