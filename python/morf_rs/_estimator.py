"""What every estimator of morf_rs shares, forest or boosted model.

:class:`BaseTreeEnsemble` holds the machinery both model types need around their
engine model: parameter validation (each class declares
``_parameter_constraints``, :mod:`morf_rs._constraints`), a fit that leaves the
estimator as it was when it raises or is interrupted, sample weights with the
task's own weights folded in and zero-weight rows dropped, the engine seed drawn
from ``random_state``, threads, fit progress, scoring over X, scikit-learn tags and
pickling through the engine model's bytes.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import compute_sample_weight

from morf_rs._constraints import draw_seed, validate_params
from morf_rs._persist import PersistThroughBytes
from morf_rs._progress import fit_progress
from morf_rs._swap import fit_and_swap
from morf_rs._validation import (
    resolve_n_threads,
    resolve_sample_weight,
    scaled_to_one,
    score_blocks,
)

if TYPE_CHECKING:
    from morf_rs._constraints import Constraint

__all__ = ["BaseTreeEnsemble", "class_weighted"]


class BaseTreeEnsemble(PersistThroughBytes, BaseEstimator):
    """Shared machinery of forests and boosted models; not meant to be used directly.

    Subclasses name their engine model (``_model_attribute``, ``_model_type``,
    ``_model_noun``, see :class:`morf_rs._persist.PersistThroughBytes`), declare
    ``_parameter_constraints``, and implement ``_fit``.
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {}
    _model_attribute: ClassVar[str]
    # A fitted attribute that only fits able to take more trees set.
    _warm_start_marker: ClassVar[str] = "_engine_params_"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    def __sklearn_is_fitted__(self):
        return hasattr(self, self._model_attribute)

    def _fit_keeping_state_on_error(self, X, y, sample_weight):
        """``self._fit(X, y, sample_weight)`` on a copy whose state then replaces
        the estimator's at once (:func:`morf_rs._swap.fit_and_swap`): a fit that
        raises, interrupted (Ctrl-C) or not, leaves the estimator as it was, and
        two threads fitting it leave the complete state of one fit."""
        return fit_and_swap(self, type(self)._fit, X, y, sample_weight)

    def _warm_start_forest(self):
        """The fitted forest that warm_start adds trees to, if any."""
        if not hasattr(self, self._model_attribute):
            return None
        if not hasattr(self, self._warm_start_marker):
            raise ValueError(
                f"this {self._model_noun} was fitted by an older version of morf_rs "
                "and cannot take more trees; fit it with warm_start=False."
            )
        return getattr(self, self._model_attribute)

    def _trees_to_add(self, previous, n_estimators, n_features):
        """The range of trees warm_start grows on top of ``previous``."""
        if self.n_features_in_ != n_features:
            raise ValueError(
                f"warm_start adds trees to a forest of {n_features} features, but X "
                f"has {self.n_features_in_}; fit with warm_start=False for new data."
            )
        n_fitted = previous.n_estimators
        if n_estimators < n_fitted:
            raise ValueError(
                f"n_estimators={n_estimators} must be at least the {n_fitted} trees "
                "already fitted when warm_start=True; set warm_start=False to fit "
                "a new forest."
            )
        if n_estimators == n_fitted:
            warnings.warn(
                "Warm-start fitting without increasing n_estimators does not fit "
                "new trees.",
                UserWarning,
                stacklevel=4,
            )
        return (n_fitted, n_estimators)

    def _validate_params(self, n_samples: int, n_features: int) -> dict[str, Any]:
        """Every parameter checked against ``_parameter_constraints`` for an X of
        this shape: the values the engine takes, by name."""
        return validate_params(self, n_samples, n_features)

    def _draw_seed(self):
        """The engine's seed, drawn from random_state as scikit-learn draws the
        seeds of its trees."""
        return draw_seed(self.random_state)

    def _fit_progress(self, verbose, n_trees, n_threads, trees_per_round=None):
        """The progress reporter of a fit of ``n_trees`` trees (in rounds of
        ``trees_per_round`` for boosted models) at this (checked) verbosity."""
        label = type(self).__name__
        return fit_progress(verbose, label, n_trees, n_threads, trees_per_round)

    def _fit_weights(self, sample_weight, X, y):
        """sample_weight as float64 with the task's weights folded in (None when all
        are 1), and the rows of positive weight (None: all of them).

        Dropping zero-weight rows makes weight 0 exactly equivalent to leaving the
        sample out (bootstrap draws included).
        """
        sample_weight = resolve_sample_weight(
            sample_weight, X, y, self._task_sample_weight
        )
        if sample_weight is None or np.all(sample_weight > 0):
            return sample_weight, None
        rows = np.flatnonzero(sample_weight > 0)
        return sample_weight[rows], rows

    def _task_sample_weight(self, sample_weight, y):
        """sample_weight with the task's own weights folded in."""
        return sample_weight

    def _atom_params(self, n_features):
        """Engine parameters specific to the atom dictionary, validated."""
        return {}

    def _score(self, X, kernel, width, dtype, n_threads=None):
        """Run an engine scoring ``kernel(x, n_threads, out)`` over X, which fills
        one output array of ``width`` columns (None: one value per row) in place,
        on ``n_threads`` threads (None: as n_jobs says).

        X of a dtype the engine reads (float32, float64, uint8) goes to it as it
        is, memory-mapped or not, in any layout; other dtypes go a bounded block
        of rows at a time.
        """
        if n_threads is None:
            n_threads = resolve_n_threads(self.n_jobs)
        return score_blocks(self, X, kernel, width, dtype, n_threads)


def class_weighted(sample_weight, y, class_weight):
    """sample_weight (or None) times the weights ``class_weight`` (a checked
    None, "balanced" or dict) gives the classes of y."""
    if class_weight is None:
        return sample_weight
    weights = compute_sample_weight(class_weight, y)
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise ValueError("class_weight must be finite and non-negative.")
    if sample_weight is None:
        return weights
    # Each scaled to a largest weight of 1 first, so that the product of two large
    # finite weights cannot overflow; only ratios of weights matter.
    return scaled_to_one(sample_weight) * scaled_to_one(weights)
