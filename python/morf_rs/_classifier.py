"""Classification: class labels in, class probabilities out."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from morf_rs._base import BaseObliqueForest
from morf_rs._core import Forest
from morf_rs._params import CLASSIFIER_CRITERION, CLASSIFIER_PARAMS
from morf_rs._validation import check_choice, scaled_to_one, validate_X_y

__all__ = ["ForestClassifier"]


class ForestClassifier(ClassifierMixin, BaseObliqueForest):
    """Shared machinery of the classifiers; not meant to be used directly."""

    _criterion_param = CLASSIFIER_CRITERION
    _task_parameters = CLASSIFIER_PARAMS
    _task_attributes_doc = """    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_classes_ : int
        Number of classes.
    oob_score_ : float
        Out-of-bag score (only with ``oob_score``).
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        Out-of-bag class probabilities of the training samples (only with
        ``oob_score``).
    estimators_samples_ : list of ndarray
        Per tree, the indices of the training samples it learnt from.
"""

    def _validate_training_data(self, X, y):
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        return X, y

    def _task_params(self):
        criterion = check_choice(
            "criterion", self.criterion, ("gini", "entropy", "log_loss")
        )
        self._check_class_weight()
        return {
            # scikit-learn treats "log_loss" and "entropy" as the same criterion.
            "criterion": "entropy" if criterion == "log_loss" else criterion,
            "honest_prior": check_choice(
                "honest_prior", self.honest_prior, ("ignore", "uniform", "empirical")
            ),
        }

    def _check_class_weight(self):
        value = self.class_weight
        if (
            value is None
            or (isinstance(value, str) and value == "balanced")
            or isinstance(value, dict)
        ):
            return
        raise ValueError(
            "class_weight must be None, 'balanced' or a dict {label: weight}; got "
            f"{value!r}."
        )

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
        if self.class_weight is None:
            return sample_weight
        class_weight = compute_sample_weight(self.class_weight, y)
        if not np.all(np.isfinite(class_weight) & (class_weight >= 0)):
            raise ValueError("class_weight must be finite and non-negative.")
        if sample_weight is None:
            return class_weight
        # Each scaled to a largest weight of 1 first, so that the product of two large
        # finite weights cannot overflow; only ratios of weights matter.
        return scaled_to_one(sample_weight) * scaled_to_one(class_weight)

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
