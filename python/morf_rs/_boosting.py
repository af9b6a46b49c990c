"""What every gradient-boosting estimator shares, and its two tasks.

A public booster combines an atom family (:mod:`morf_rs._atoms`, the same
families the forests use) with a task base here (:class:`BoostingClassifier` or
:class:`BoostingRegressor`), writes out its constructor and declares its
``_parameter_constraints`` from theirs. The engine, ``morf_rs._core.Booster``,
does the rounds, the held-out split for early stopping and the scoring; this
module checks the parameters and inputs once.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from morf_rs._constraints import (
    AutoOrBool,
    Bool,
    ClassWeight,
    Constraint,
    CountOrFraction,
    Int,
    Needed,
    NJobs,
    RandomState,
    Real,
    Verbose,
)
from morf_rs._contributions import ExplainContributions
from morf_rs._core import MAX_ESTIMATORS, Booster
from morf_rs._estimator import BaseTreeEnsemble, class_weighted
from morf_rs._inspect import InspectTrees
from morf_rs._validation import validate_X_scoring, validate_X_y

__all__ = ["BaseGradientBoosting", "BoostingClassifier", "BoostingRegressor"]

# scikit-learn's rule for early_stopping="auto".
_AUTO_EARLY_STOPPING_ABOVE = 10_000
# The checked parameters the engine boosts with, besides the atoms'.
_ENGINE_PARAMS = (
    "n_estimators",
    "learning_rate",
    "max_features",
    "max_leaf_nodes",
    "max_depth",
    "min_samples_leaf",
    "l2_regularization",
    "max_bins",
    "subsample",
    "early_stopping",
    "n_iter_no_change",
    "tol",
)


class BaseGradientBoosting(ExplainContributions, InspectTrees, BaseTreeEnsemble):
    """Shared fit, staged prediction and persistence; not meant to be used directly.

    Subclasses choose an atom family (``_atoms``, ``_atom_params``) and a task
    (``_prepare_targets``).
    """

    _model_attribute = "_booster"
    _model_type = Booster
    _model_noun = "model"
    _atoms = "axis"
    # The parameters every boosted model takes, whatever its atoms and task.
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_estimators": Int(1, MAX_ESTIMATORS),
        "learning_rate": Real(0.0, low_open=True),
        "max_leaf_nodes": Int(2, none=True),
        "max_depth": Int(1, none=True),
        "min_samples_leaf": Int(1),
        "l2_regularization": Real(0.0),
        "max_bins": Int(2, 256),
        "subsample": Real(0.0, 1.0, low_open=True),
        "early_stopping": AutoOrBool(auto_above=_AUTO_EARLY_STOPPING_ABOVE),
        "validation_fraction": Needed(
            "early_stopping", CountOrFraction(high_open=True)
        ),
        "n_iter_no_change": Int(1),
        "tol": Real(0.0),
        "n_jobs": NJobs(),
        "random_state": RandomState(),
        "verbose": Verbose(),
        "warm_start": Bool(),
    }

    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees, round after round, to (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples, one per row. float32, float64 and uint8
            C-contiguous arrays are used without a copy; anything else is
            converted once. NaN marks a missing value: a split direction
            touching one has a missing projection, and each split learns which
            side such samples go to (the larger child where it saw none).
            Infinity is refused.
        y : array-like of shape (n_samples,)
            Class labels of any type (classifiers) or numbers (regressors).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a sample of weight 0 is treated as absent.

        Returns
        -------
        self : object
            The fitted model.

        Notes
        -----
        Ctrl-C (KeyboardInterrupt) stops the fit within a fraction of a second.
        A fit that raises, interrupted or not, leaves the model as it was before.
        Two threads fitting the same model at once leave it with the complete
        result of one of the fits.
        """
        return self._fit_keeping_state_on_error(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        X, y = self._validate_training_data(X, y)
        checked = self._validate_params(*X.shape)
        n_threads = checked["n_jobs"]
        previous = None
        if checked["warm_start"] and hasattr(self, "_booster"):
            previous = self._booster
        seed = None if previous is None else self._engine_params_["random_state"]
        params = self._engine_params(checked, X.shape[1], seed=seed)
        targets, n_classes, fitted = self._prepare_targets(y)
        if previous is not None:
            self._check_warm_start(previous, params, fitted)
        sample_weight, rows = self._fit_weights(sample_weight, X, y)
        if rows is not None:
            X, targets = X[rows], targets[rows]
        # One tree per class and round for three classes or more, else one per round.
        per_round = n_classes if n_classes >= 3 else 1
        n_added = params["n_estimators"] - (
            0 if previous is None else previous.n_rounds
        )
        n_trees = max(n_added, 0) * per_round
        fit_progress = self._fit_progress(
            checked["verbose"], n_trees, n_threads, per_round
        )
        with fit_progress as progress:
            self._booster = Booster.fit(
                X,
                targets,
                n_classes,
                sample_weight,
                params,
                n_threads,
                progress,
                previous,
            )
        for name, value in fitted.items():
            setattr(self, name, value)
        self.do_early_stopping_ = params["early_stopping"]
        self._engine_params_ = params
        return self

    def _check_warm_start(self, previous, params, fitted):
        """Rounds are added only where the fitted model's fit would have made them."""
        if not hasattr(self, "_engine_params_"):
            raise ValueError(
                "this model was fitted by an older version of morf_rs and cannot "
                "take more rounds; fit it with warm_start=False."
            )
        if params["n_estimators"] < previous.n_rounds:
            raise ValueError(
                f"n_estimators={params['n_estimators']} must be at least the "
                f"{previous.n_rounds} rounds already fitted when warm_start=True; set "
                "warm_start=False to fit a new model."
            )
        changed = sorted(
            name
            for name, value in params.items()
            if name != "n_estimators" and self._engine_params_.get(name) != value
        )
        if changed:
            raise ValueError(
                "warm_start adds rounds with the parameters of the fitted model, but "
                f"these changed: {', '.join(changed)}; restore them or set "
                "warm_start=False to fit a new model."
            )
        for name, value in fitted.items():
            if not np.array_equal(getattr(self, name), value):
                raise ValueError(
                    f"warm_start adds rounds on the data of the first fit, but y gives "
                    f"other {name}; set warm_start=False to fit a new model."
                )

    def _engine_params(self, checked, n_features, seed=None):
        """What the engine boosts with, from the ``checked`` parameters; ``seed``
        (the fitted model's, for warm_start) instead of one drawn."""
        params = {name: checked[name] for name in _ENGINE_PARAMS}
        params["atoms"] = self._atoms
        if params["early_stopping"]:
            params["validation_fraction"] = checked["validation_fraction"]
        params.update(self._atom_params(n_features))
        # Drawn last so that a bad parameter does not consume a RandomState.
        params["random_state"] = self._draw_seed() if seed is None else seed
        return params

    def _raw_rounds(self, X, start, end):
        """What rounds ``start..end`` add to the raw scores of X's rows."""

        def kernel(x, n_threads, out):
            self._booster.predict_raw_rounds(x, start, end, n_threads, out)

        return self._score(X, kernel, self._booster.n_outputs, np.float64)

    def _raw(self, X):
        check_is_fitted(self)
        return self._raw_rounds(X, 0, self.n_iter_) + self._booster.baseline()

    def _staged_raw(self, X):
        """Raw scores after each round, one array per round."""
        check_is_fitted(self)
        X = validate_X_scoring(self, X)
        raw = np.tile(self._booster.baseline(), (len(X), 1))
        for r in range(self.n_iter_):
            raw = raw + self._raw_rounds(X, r, r + 1)
            yield raw

    def _n_trees(self):
        return self._booster.n_rounds * self._booster.n_outputs

    def _n_contribution_outputs(self):
        # Classes, two for a binary model (its one raw score in output 1), or 1.
        return max(self._booster.n_classes, 1)

    def apply(self, X):
        """The leaf each sample reaches in every tree, as scikit-learn's
        ``GradientBoostingClassifier.apply`` gives it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        X_leaves : ndarray of int64, shape (n_samples, rounds, trees per round)
            Rounds: ``n_iter_``; trees per round: ``n_trees_per_iteration_``.
            ``X_leaves[i, r, k]`` is the node id (as :meth:`tree_structure` and
            :meth:`decision_path` number them) of the leaf sample i reaches in
            round r's tree for output k, which is tree
            ``r * n_trees_per_iteration_ + k``. The baseline plus the leaves'
            values is the raw score (:meth:`decision_function` of classifiers).

        Examples
        --------
        >>> import numpy as np
        >>> from morf_rs import GradientBoostingClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 8))
        >>> y = X[:, :3].argmax(axis=1)
        >>> clf = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
        >>> leaves = clf.apply(X)
        >>> leaves.shape
        (300, 10, 3)
        >>> added = np.zeros((300, 3))
        >>> for r in range(clf.n_iter_):
        ...     for k in range(3):
        ...         tree = clf.tree_structure(r * clf.n_trees_per_iteration_ + k)
        ...         added[:, k] += tree.value[leaves[:, r, k], 0]
        >>> baseline = clf.decision_function(X) - added  # the same for every sample
        >>> bool(np.allclose(baseline, baseline[0]))
        True
        """
        leaves = self._leaves(X)
        return leaves.reshape(len(leaves), self.n_iter_, self.n_trees_per_iteration_)

    @property
    def n_iter_(self):
        check_is_fitted(self)
        return self._booster.n_rounds

    @property
    def n_trees_per_iteration_(self):
        check_is_fitted(self)
        return self._booster.n_outputs

    @property
    def train_score_(self):
        check_is_fitted(self)
        return -self._booster.train_loss()

    @property
    def validation_score_(self):
        check_is_fitted(self)
        return -self._booster.validation_loss()

    @property
    def feature_importances_(self):
        """How often each feature takes part in a split atom, summing to 1.

        All zeros when no tree split. For images,
        ``feature_importances_.reshape(image_shape_)`` is the importance picture.
        """
        check_is_fitted(self)
        return self._booster.split_count_importances()

    @property
    def gain_importances_(self):
        """Split gains (decreases of the training loss) shared among the features
        of each split's atom, summed and normalised to 1."""
        check_is_fitted(self)
        return self._booster.gain_importances()

    @property
    def tree_stats_(self):
        """Per-tree shape, trees in round order (one per output within a round).

        Keys: ``"max_depth"``, ``"n_leaves"``, ``"n_nodes"``, ``"mean_leaf_depth"``.
        """
        check_is_fitted(self)
        return self._booster.tree_stats()

    @staticmethod
    def _engine_shape(booster):
        return {"n_classes": booster.n_classes}


class BoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    """Log loss: binary, or softmax with one tree per class and round."""

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BaseGradientBoosting._parameter_constraints,
        "class_weight": ClassWeight(),
    }

    def _validate_training_data(self, X, y):
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        return X, y

    @staticmethod
    def _state_shape(state):
        # None, which no model has, when a regressor's state is loaded here.
        return {"n_classes": len(state["classes_"]) if "classes_" in state else None}

    def _prepare_targets(self, y):
        # One class is a constant model, as the forests make it: that class is
        # predicted with probability 1.
        classes, y_index = np.unique(y, return_inverse=True)
        y_index = np.ascontiguousarray(y_index.reshape(-1), dtype=np.uint32)
        fitted = {"classes_": classes, "n_classes_": len(classes)}
        return y_index, len(classes), fitted

    def _task_sample_weight(self, sample_weight, y):
        return class_weighted(sample_weight, y, self.class_weight)

    def decision_function(self, X):
        """Raw scores: shape (n_samples,) for two classes (the log-odds of
        ``classes_[1]``), (n_samples, n_classes) for three or more. A model fitted
        on one class scores every sample 0, shape (n_samples,)."""
        raw = self._raw(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in the order
        of ``classes_``."""
        raw = self._raw(X)  # checks that the model is fitted first
        return self._booster.transform(raw)

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class of each sample."""
        proba = self.predict_proba(X)  # checks that the model is fitted first
        return self.classes_.take(np.argmax(proba, axis=1))

    def staged_decision_function(self, X):
        """Raw scores after each round (a generator, one array per round)."""
        for raw in self._staged_raw(X):
            yield raw[:, 0] if raw.shape[1] == 1 else raw

    def staged_predict_proba(self, X):
        """Class probabilities after each round (a generator, one array per round),
        to watch accuracy grow with the rounds."""
        for raw in self._staged_raw(X):
            yield self._booster.transform(raw)

    def staged_predict(self, X):
        """Predicted classes after each round (a generator)."""
        for proba in self.staged_predict_proba(X):
            yield self.classes_.take(np.argmax(proba, axis=1))


class BoostingRegressor(RegressorMixin, BaseGradientBoosting):
    """Squared error."""

    def _validate_training_data(self, X, y):
        X, y = validate_X_y(self, X, y)
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"y must hold numbers for a regressor: {error}. Encode labels as "
                "numbers, or use the classifier for classes."
            ) from error
        if not np.all(np.isfinite(y)):
            raise ValueError(
                "y contains NaN or infinity; remove those samples or impute their "
                "targets."
            )
        return X, np.ascontiguousarray(y)

    def _prepare_targets(self, y):
        return y, 0, {}

    @staticmethod
    def _state_shape(state):
        # A regressor's model has no classes, whatever a crafted state says.
        return {"n_classes": 0}

    def predict(self, X):
        """Predicted values, shape (n_samples,)."""
        return self._raw(X)[:, 0]

    def staged_predict(self, X):
        """Predicted values after each round (a generator, one array per round)."""
        for raw in self._staged_raw(X):
            yield raw[:, 0]
