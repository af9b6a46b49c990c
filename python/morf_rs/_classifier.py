"""Classification: class labels in, class probabilities out."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from morf_rs._base import BaseObliqueForest
from morf_rs._constraints import ClassWeight, Constraint, Options
from morf_rs._core import Forest
from morf_rs._estimator import class_weighted
from morf_rs._validation import validate_X_y

__all__ = ["ForestClassifier"]


class ForestClassifier(ClassifierMixin, BaseObliqueForest):
    """Shared machinery of the classifiers; not meant to be used directly."""

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BaseObliqueForest._parameter_constraints,
        # scikit-learn treats "log_loss" and "entropy" as the same criterion.
        "criterion": Options(
            ("gini", "entropy", "log_loss"), aliases=(("log_loss", "entropy"),)
        ),
        "honest_prior": Options(("ignore", "uniform", "empirical")),
        "class_weight": ClassWeight(subsample=True),
    }

    def _validate_training_data(self, X, y):
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        return X, y

    def _prepare_targets(self, y, classes=None):
        """Class indices of y, among its own sorted labels or among ``classes``
        (sorted; a distributed fit fixes them for the whole training set)."""
        if classes is None:
            classes, y_index = np.unique(y, return_inverse=True)
        else:
            classes = np.asarray(classes)
            y_index = np.searchsorted(classes, y)
            known = y_index < len(classes)
            known[known] = classes[y_index[known]] == y[known]
            if not np.all(known):
                raise ValueError(
                    f"y holds labels that are not among the classes {classes!r}, "
                    f"such as {y[~known][0]!r}."
                )
        y_index = np.ascontiguousarray(y_index.reshape(-1), dtype=np.uint32)
        return y_index, {"classes_": classes, "n_classes_": len(classes)}

    def _task_sample_weight(self, sample_weight, y):
        if _balanced_per_tree(self.class_weight, self.bootstrap):
            return sample_weight  # balanced per tree, in the engine
        if self.class_weight == "balanced_subsample":
            # Every tree's sample is all of them: scikit-learn's "balanced".
            return class_weighted(sample_weight, y, "balanced")
        return class_weighted(sample_weight, y, self.class_weight)

    def _engine_params(self, checked, n_features, seed=None):
        params = super()._engine_params(checked, n_features, seed)
        balanced = _balanced_per_tree(checked["class_weight"], checked["bootstrap"])
        params["balanced_classes_per_tree"] = balanced
        return params

    def _fit_engine(
        self, X, y_index, sample_weight, params, n_threads, progress, fitted, trees
    ):
        n_classes = fitted["n_classes_"]
        return Forest.fit(
            X, y_index, n_classes, sample_weight, params, n_threads, progress, trees
        )

    _oob_attributes = ("oob_score_", "oob_decision_function_")

    def _warm_start_targets(self):
        return {"classes": self.classes_}

    def _forest_values(self, X, n_threads):
        return self._forest.predict_proba(X, n_threads)

    def _set_oob_attributes(self, oob, y_index, oob_score):
        self.oob_decision_function_ = oob
        scorer = accuracy_score if oob_score is True else oob_score
        # scikit-learn's forests score class indices, as here.
        self.oob_score_ = scorer(y_index, np.argmax(oob, axis=1))

    def _predict_proba(self, X, n_threads=None):
        check_is_fitted(self)
        return self._score(
            X,
            lambda x, n, out: self._forest.predict_proba(x, n, out),
            self.n_classes_,
            np.float64,
            n_threads,
        )

    def _predict(self, X, n_threads=None):
        check_is_fitted(self)

        def kernel(x, n, out):
            out[:] = self._forest.predict(x, n)

        return self.classes_.take(self._score(X, kernel, None, np.intp, n_threads))

    @staticmethod
    def _engine_shape(forest):
        return {"classes_": forest.n_classes}

    @staticmethod
    def _state_shape(state):
        return {"classes_": len(state.get("classes_", ()))}

    def predict_proba(self, X):
        """Class probabilities: the mean of the trees' leaf class distributions.

        Returns an array of shape (n_samples, n_classes) whose columns follow
        ``classes_``. Rows are scored in parallel on ``n_jobs`` threads; a
        float32, float64 or uint8 X (a numpy memmap too) is read where it lies,
        without a copy. NaN in X is a missing value: at each split it goes to
        the side learned at fit.
        """
        return self._predict_proba(X)

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (-inf where it is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the highest mean probability for each sample."""
        return self._predict(X)


def _balanced_per_tree(class_weight, bootstrap):
    """Whether ``class_weight`` balances each tree's bootstrap sample."""
    per_tree = isinstance(class_weight, str) and class_weight == "balanced_subsample"
    return per_tree and bool(bootstrap)
