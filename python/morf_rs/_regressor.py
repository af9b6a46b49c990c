"""Regression: numbers in (one or several outputs), mean leaf values out."""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import MultiOutputMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from morf_rs._base import BaseObliqueForest
from morf_rs._constraints import Constraint, Options
from morf_rs._core import Forest
from morf_rs._validation import validate_X_y_values

__all__ = ["ForestRegressor"]


class ForestRegressor(MultiOutputMixin, RegressorMixin, BaseObliqueForest):
    """Shared machinery of the regressors; not meant to be used directly."""

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BaseObliqueForest._parameter_constraints,
        "criterion": Options(("squared_error", "poisson")),
        # A leaf without honest samples has no uniform distribution of values.
        "honest_prior": Options(("ignore", "empirical")),
    }

    def _validate_training_data(self, X, y):
        X, y = validate_X_y_values(self, X, y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it is "
                "treated as y.ravel() (predictions are 1-D).",
                DataConversionWarning,
                stacklevel=3,
            )
        return X, y

    def _prepare_targets(self, y):
        values = np.ascontiguousarray(y.reshape(len(y), -1), dtype=np.float64)
        return values, {"n_outputs_": values.shape[1]}

    def _fit_engine(
        self, X, values, sample_weight, params, n_threads, progress, fitted, trees
    ):
        return Forest.fit_regression(
            X, values, sample_weight, params, n_threads, progress, trees
        )

    _oob_attributes = ("oob_score_", "oob_prediction_")

    def _forest_values(self, X, n_threads):
        return self._forest.predict_values(X, n_threads)

    def _set_oob_attributes(self, oob, values, oob_score):
        if self.n_outputs_ == 1:
            oob, values = oob[:, 0], values[:, 0]
        self.oob_prediction_ = oob
        scorer = r2_score if oob_score is True else oob_score
        self.oob_score_ = scorer(values, oob)

    @staticmethod
    def _engine_shape(forest):
        return {"n_outputs_": forest.n_outputs, "classes": forest.n_classes}

    @staticmethod
    def _state_shape(state):
        return {"n_outputs_": state.get("n_outputs_"), "classes": None}

    def _predict(self, X, n_threads=None):
        check_is_fitted(self)
        values = self._score(
            X,
            lambda x, n, out: self._forest.predict_values(x, n, out),
            self.n_outputs_,
            np.float64,
            n_threads,
        )
        return values[:, 0] if self.n_outputs_ == 1 else values

    def predict(self, X):
        """Mean of the trees' leaf values: array of shape (n_samples,), or
        (n_samples, n_outputs) when y had several outputs. Rows are scored in
        parallel on ``n_jobs`` threads; a float32, float64 or uint8 X (a numpy
        memmap too) is read where it lies, without a copy."""
        return self._predict(X)
