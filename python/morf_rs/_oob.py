"""Out-of-bag estimates: every training sample scored by the trees that never saw it."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["out_of_bag"]


def out_of_bag(model, X, X_fit, rows, n_threads):
    """Per row of X, the mean leaf values (class distributions or target values)
    of the trees of ``model`` that never saw it, shape (n_samples, width).

    ``X_fit`` holds the rows ``rows`` of X that grew the forest (None: all of them).
    Rows left out of the fit (weight 0) were seen by no tree: the whole forest
    scores them. Rows that every tree saw get zeros, with a warning, as
    scikit-learn gives them.
    """
    forest = model._forest
    values, votes = forest.oob_predict(X_fit, model._engine_params_, n_threads)
    if rows is not None:
        every_tree = np.ones(len(X), bool)
        every_tree[rows] = False
        full = np.empty((len(X), values.shape[1]))
        full[rows] = values
        full[every_tree] = model._forest_values(X[every_tree], n_threads)
        full_votes = np.full(len(X), forest.n_estimators, np.uint32)
        full_votes[rows] = votes
        values, votes = full, full_votes
    if np.any(votes == 0):
        warnings.warn(
            "Some inputs do not have OOB scores. This probably means too few trees "
            "were used to compute any reliable OOB estimates.",
            UserWarning,
            stacklevel=4,
        )
    return values
