"""What every gradient-boosting estimator shares, and its two tasks.

A public booster combines an atom family (:mod:`morf_rs._atoms`, the same
families the forests use) with a task base here (:class:`BoostingClassifier` or
:class:`BoostingRegressor`); its ``__init__`` and parameter docs are built from
the parameter groups of both (:mod:`morf_rs._params`). The engine,
``morf_rs._core.Booster``, does the rounds, the held-out split for early
stopping and the scoring; this module checks the parameters and inputs once.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from morf_rs._core import MAX_ESTIMATORS, Booster
from morf_rs._params import (
    BOOSTING_PARAMS,
    CLASSIFIER_PARAMS,
    LEARNING_RATE,
    MAX_FEATURES_BOOSTING_AXIS,
    MAX_FEATURES_BOOSTING_OBLIQUE,
    N_ROUNDS,
    RUN_PARAMS,
    complete_estimator_class,
)
from morf_rs._persist import PersistThroughBytes
from morf_rs._progress import fit_progress
from morf_rs._swap import fit_and_swap
from morf_rs._validation import (
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_verbose,
    is_int,
    resolve_n_threads,
    resolve_sample_weight,
    scaled_to_one,
    score_blocks,
    validate_X_scoring,
    validate_X_y,
)

__all__ = ["BaseGradientBoosting", "BoostingClassifier", "BoostingRegressor"]

_MAX_SEED = np.iinfo(np.int32).max
# scikit-learn's rule for early_stopping="auto".
_AUTO_EARLY_STOPPING_ABOVE = 10_000

_SHARED_ATTRIBUTES_DOC = """    n_iter_ : int
        Rounds trained (fewer than n_estimators when early stopping stopped).
    n_trees_per_iteration_ : int
        Trees added per round: the number of classes, or 1 for two classes and
        for regression.
    do_early_stopping_ : bool
        Whether early stopping was used.
    train_score_ : ndarray of shape (n_iter_ + 1,)
        Minus the mean training loss before the first round and after each
        (higher is better, as in scikit-learn).
    validation_score_ : ndarray of shape (n_iter_ + 1,)
        Minus the mean loss on the held-out samples, likewise; empty without
        early stopping.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Normalised counts of features in split atoms.
    gain_importances_ : ndarray of shape (n_features_in_,)
        Normalised split gains shared among their atoms' features.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.
"""


class BaseGradientBoosting(PersistThroughBytes, BaseEstimator):
    """Shared fit, staged prediction and persistence; not meant to be used directly.

    Subclasses choose an atom family (``_atoms``, ``_atom_parameters``,
    ``_atom_params``) and a task (``_task_parameters``, ``_prepare_targets``).
    """

    _model_attribute = "_booster"
    _model_type = Booster
    _model_noun = "model"
    _atoms = "axis"
    _max_features_above_n = True
    _atom_parameters = ()
    _atom_attributes_doc = ""
    _task_parameters = ()
    _task_attributes_doc = ""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    @classmethod
    def _parameters(cls):
        """Every constructor parameter, in signature order."""
        max_features = (
            MAX_FEATURES_BOOSTING_OBLIQUE
            if cls._max_features_above_n
            else MAX_FEATURES_BOOSTING_AXIS
        )
        return (
            N_ROUNDS,
            LEARNING_RATE,
            *cls._atom_parameters,
            max_features,
            *BOOSTING_PARAMS,
            *cls._task_parameters,
            *RUN_PARAMS,
        )

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        complete_estimator_class(cls, _SHARED_ATTRIBUTES_DOC)

    def _atom_params(self, n_features):
        return {}

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
        return fit_and_swap(self, type(self)._fit, X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        previous = None
        if check_bool("warm_start", self.warm_start) and hasattr(self, "_booster"):
            previous = self._booster
        X, y = self._validate_training_data(X, y)
        n_threads = resolve_n_threads(self.n_jobs)
        seed = None if previous is None else self._engine_params_["random_state"]
        params = self._engine_params(*X.shape, seed=seed)
        targets, n_classes, fitted = self._prepare_targets(y)
        if previous is not None:
            self._check_warm_start(previous, params, fitted)
        sample_weight = resolve_sample_weight(
            sample_weight, X, y, self._task_sample_weight
        )
        if sample_weight is not None and not np.all(sample_weight > 0):
            keep = sample_weight > 0
            X, targets, sample_weight = X[keep], targets[keep], sample_weight[keep]
        verbose = check_verbose(self.verbose)
        # One tree per class and round for three classes or more, else one per round.
        per_round = n_classes if n_classes >= 3 else 1
        n_rounds = params["n_estimators"] - (
            0 if previous is None else previous.n_rounds
        )
        n_trees = max(n_rounds, 0) * per_round
        label = type(self).__name__
        with fit_progress(verbose, label, n_trees, n_threads, per_round) as progress:
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

    def _engine_params(self, n_samples, n_features, seed=None):
        early_stopping = self.early_stopping
        if isinstance(early_stopping, str):
            check_choice("early_stopping", early_stopping, ("auto",))
            early_stopping = n_samples > _AUTO_EARLY_STOPPING_ABOVE
        elif not isinstance(early_stopping, (bool, np.bool_)):
            raise TypeError(
                f"early_stopping must be 'auto', True or False, got {early_stopping!r}."
            )
        params = {
            "n_estimators": check_int(
                "n_estimators", self.n_estimators, 1, MAX_ESTIMATORS
            ),
            "learning_rate": check_real(
                "learning_rate", self.learning_rate, 0.0, low_open=True
            ),
            "atoms": self._atoms,
            "max_features": self._check_max_features(n_features),
            "max_leaf_nodes": None
            if self.max_leaf_nodes is None
            else check_int("max_leaf_nodes", self.max_leaf_nodes, 2),
            "max_depth": None
            if self.max_depth is None
            else check_int("max_depth", self.max_depth, 1),
            "min_samples_leaf": check_int("min_samples_leaf", self.min_samples_leaf, 1),
            "l2_regularization": check_real(
                "l2_regularization", self.l2_regularization, 0.0
            ),
            "max_bins": check_int("max_bins", self.max_bins, 2, 256),
            "subsample": check_real(
                "subsample", self.subsample, 0.0, 1.0, low_open=True
            ),
            "early_stopping": bool(early_stopping),
            "n_iter_no_change": check_int("n_iter_no_change", self.n_iter_no_change, 1),
            "tol": check_real("tol", self.tol, 0.0),
        }
        if early_stopping:
            params["validation_fraction"] = self._check_validation_fraction()
        params.update(self._atom_params(n_features))
        # Drawn last so that a bad parameter does not consume a RandomState.
        params["random_state"] = (
            int(check_random_state(self.random_state).randint(_MAX_SEED))
            if seed is None
            else seed
        )
        return params

    def _check_validation_fraction(self):
        value = self.validation_fraction
        if is_int(value):
            return check_int("validation_fraction", value, 1)
        return check_real(
            "validation_fraction", value, 0.0, 1.0, low_open=True, high_open=True
        )

    def _check_max_features(self, n_features):
        value = self.max_features
        if value is None or value in ("sqrt", "log2"):
            return value
        if isinstance(value, str):
            raise ValueError(
                "max_features must be 'sqrt', 'log2', None, an int count or a float "
                f"fraction of n_features; got {value!r}."
            )
        limit = None if self._max_features_above_n else n_features
        if is_int(value):
            return check_int("max_features", value, 1, limit)
        high = np.inf if self._max_features_above_n else 1.0
        return check_real("max_features", value, 0.0, high, low_open=True)

    def _task_sample_weight(self, sample_weight, y):
        return sample_weight

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_booster")

    def _raw_rounds(self, X, start, end):
        """What rounds ``start..end`` add to the raw scores of X's rows."""

        def kernel(x, n_threads, out):
            self._booster.predict_raw_rounds(x, start, end, n_threads, out)

        n_threads = resolve_n_threads(self.n_jobs)
        n_outputs = self._booster.n_outputs
        return score_blocks(self, X, kernel, n_outputs, np.float64, n_threads)

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

    _task_parameters = CLASSIFIER_PARAMS
    _task_attributes_doc = """    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_classes_ : int
        Number of classes.
"""

    def _validate_training_data(self, X, y):
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        return X, y

    @staticmethod
    def _state_shape(state):
        # None, which no model has, when a regressor's state is loaded here.
        return {"n_classes": len(state["classes_"]) if "classes_" in state else None}

    def _prepare_targets(self, y):
        classes, y_index = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"y has only one class ({classes[0]!r}); a classifier needs samples "
                "of at least 2 classes."
            )
        y_index = np.ascontiguousarray(y_index.reshape(-1), dtype=np.uint32)
        fitted = {"classes_": classes, "n_classes_": len(classes)}
        return y_index, len(classes), fitted

    def _task_sample_weight(self, sample_weight, y):
        if self.class_weight is None:
            return sample_weight
        if not (
            (isinstance(self.class_weight, str) and self.class_weight == "balanced")
            or isinstance(self.class_weight, dict)
        ):
            raise ValueError(
                "class_weight must be None, 'balanced' or a dict {label: weight}; "
                f"got {self.class_weight!r}."
            )
        class_weight = compute_sample_weight(self.class_weight, y)
        if not np.all(np.isfinite(class_weight) & (class_weight >= 0)):
            raise ValueError("class_weight must be finite and non-negative.")
        if sample_weight is None:
            return class_weight
        return scaled_to_one(sample_weight) * scaled_to_one(class_weight)

    def decision_function(self, X):
        """Raw scores: shape (n_samples,) for two classes (the log-odds of
        ``classes_[1]``), (n_samples, n_classes) otherwise."""
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
