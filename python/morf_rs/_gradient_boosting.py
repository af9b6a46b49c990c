"""The axis-aligned gradient-boosted models, classifier and regressor.

Each is the axis-aligned atom family (:class:`morf_rs._atoms.AxisAtoms`) times a boosted
task base (:class:`morf_rs._boosting.BoostingClassifier`,
:class:`morf_rs._boosting.BoostingRegressor`). Its constructor takes the parameters of
both, written out and stored unchanged as scikit-learn expects, so that type checkers
and IDEs see them; its docstring documents each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from morf_rs._atoms import AxisAtoms
from morf_rs._boosting import BoostingClassifier, BoostingRegressor

if TYPE_CHECKING:
    from morf_rs._constraints import Constraint

__all__ = [
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
]


class GradientBoostingClassifier(AxisAtoms, BoostingClassifier):
    """Gradient-boosted trees on single features, as scikit-learn's
    ``HistGradientBoostingClassifier`` (without missing values or categorical
    features).

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds (scikit-learn's max_iter). A round adds one tree per class,
        or one tree for two classes and for regression.
    learning_rate : float, default=0.1
        Shrinkage of every leaf value (> 0). A larger step can make the raw scores
        run away where the model grows sure of its training samples (the fit then
        raises a ValueError): on all of Fashion-MNIST (the images preset of
        ManifoldObliqueGradientBoostingClassifier), 0.15 did by round 35 where 0.1
        did not; pair a larger step with l2_regularization of about 1.
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Features drawn afresh each round and tried at every node of that round's
        trees: a count (<= n_features), a fraction in (0, 1] of n_features, sqrt
        or log2 of n_features, or n_features.
    max_leaf_nodes : int or None, default=31
        Most leaves per tree, grown best first; None for no limit.
    max_depth : int or None, default=None
        Deepest a leaf may be; None for no limit.
    min_samples_leaf : int, default=20
        Fewest samples a leaf may hold.
    l2_regularization : float, default=0.0
        L2 penalty on leaf values (>= 0).
    max_bins : int, default=255
        Most bins (2 to 256) an atom's projections are put in for split search,
        at quantiles of the round's projections.
    subsample : float in (0, 1], default=1.0
        Fraction of the samples, drawn afresh each round, that its trees learn from.
        The samples a round leaves out take leaf values fitted without them; where
        the model grows sure of its training samples, those values can run away
        (the fit then raises a ValueError): pair it with l2_regularization of about 1.
    early_stopping : "auto" or bool, default='auto'
        Hold out validation_fraction of the samples and stop when their loss has
        not improved by more than tol for n_iter_no_change rounds. "auto" turns it
        on above 10,000 samples, as scikit-learn does.
    validation_fraction : int or float, default=0.1
        Samples held out for early stopping: a fraction in (0, 1) or a count
        (stratified by class for classifiers).
    n_iter_no_change : int, default=10
        Rounds without improvement after which early stopping stops.
    tol : float, default=1e-07
        Smallest improvement of the held-out loss that counts.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into sample_weight.
    n_jobs : int, default=None
        Threads for fit and predict: None is 1, -1 all cores, -2 all but one;
        never more than the available cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.
    verbose : int, default=0
        1 or more reports the progress of fit on stderr: trees grown, time spent
        and an estimate of the time left, as a tqdm bar when tqdm is installed and
        stderr is a terminal, otherwise as a line at each tenth of the trees.
    warm_start : bool, default=False
        When True, fit adds rounds to the fitted model, up to ``n_estimators``, on
        the same data and with the same other parameters, training only the rounds
        added: round i depends only on random_state, i and the rounds before it, so
        50 rounds and then 50 more give the model of 100 fitted at once, bit for
        bit. A model that early stopping stopped gains no round.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_classes_ : int
        Number of classes.
    n_iter_ : int
        Rounds trained (fewer than n_estimators when early stopping stopped).
    n_trees_per_iteration_ : int
        Trees added per round: the number of classes, or 1 for two classes and
        for regression.
    do_early_stopping_ : bool
        Whether early stopping was used.
    train_score_ : ndarray of shape (``n_iter_`` + 1,)
        Minus the mean training loss before the first round and after each
        (higher is better, as in scikit-learn).
    validation_score_ : ndarray of shape (``n_iter_`` + 1,)
        Minus the mean loss on the held-out samples, likewise; empty without
        early stopping.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised counts of features in split atoms.
    gain_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised split gains shared among their atoms' features.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from morf_rs import GradientBoostingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BoostingClassifier._parameter_constraints,
        **AxisAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        learning_rate: float = 0.1,
        max_features: int | float | Literal["sqrt", "log2"] | None = 1.0,
        max_leaf_nodes: int | None = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        subsample: float = 1.0,
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: int | float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-07,
        class_weight: Mapping[Any, float] | Literal["balanced"] | None = None,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start


class GradientBoostingRegressor(AxisAtoms, BoostingRegressor):
    """Gradient-boosted regression trees on single features (squared error), as
    scikit-learn's ``HistGradientBoostingRegressor``.

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds (scikit-learn's max_iter). A round adds one tree per class,
        or one tree for two classes and for regression.
    learning_rate : float, default=0.1
        Shrinkage of every leaf value (> 0).
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Features drawn afresh each round and tried at every node of that round's
        trees: a count (<= n_features), a fraction in (0, 1] of n_features, sqrt
        or log2 of n_features, or n_features.
    max_leaf_nodes : int or None, default=31
        Most leaves per tree, grown best first; None for no limit.
    max_depth : int or None, default=None
        Deepest a leaf may be; None for no limit.
    min_samples_leaf : int, default=20
        Fewest samples a leaf may hold.
    l2_regularization : float, default=0.0
        L2 penalty on leaf values (>= 0).
    max_bins : int, default=255
        Most bins (2 to 256) an atom's projections are put in for split search,
        at quantiles of the round's projections.
    subsample : float in (0, 1], default=1.0
        Fraction of the samples, drawn afresh each round, that its trees learn from.
    early_stopping : "auto" or bool, default='auto'
        Hold out validation_fraction of the samples and stop when their loss has
        not improved by more than tol for n_iter_no_change rounds. "auto" turns it
        on above 10,000 samples, as scikit-learn does.
    validation_fraction : int or float, default=0.1
        Samples held out for early stopping: a fraction in (0, 1) or a count
        (stratified by class for classifiers).
    n_iter_no_change : int, default=10
        Rounds without improvement after which early stopping stops.
    tol : float, default=1e-07
        Smallest improvement of the held-out loss that counts.
    n_jobs : int, default=None
        Threads for fit and predict: None is 1, -1 all cores, -2 all but one;
        never more than the available cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.
    verbose : int, default=0
        1 or more reports the progress of fit on stderr: trees grown, time spent
        and an estimate of the time left, as a tqdm bar when tqdm is installed and
        stderr is a terminal, otherwise as a line at each tenth of the trees.
    warm_start : bool, default=False
        When True, fit adds rounds to the fitted model, up to ``n_estimators``, on
        the same data and with the same other parameters, training only the rounds
        added: round i depends only on random_state, i and the rounds before it, so
        50 rounds and then 50 more give the model of 100 fitted at once, bit for
        bit. A model that early stopping stopped gains no round.

    Attributes
    ----------
    n_iter_ : int
        Rounds trained (fewer than n_estimators when early stopping stopped).
    n_trees_per_iteration_ : int
        Trees added per round: the number of classes, or 1 for two classes and
        for regression.
    do_early_stopping_ : bool
        Whether early stopping was used.
    train_score_ : ndarray of shape (``n_iter_`` + 1,)
        Minus the mean training loss before the first round and after each
        (higher is better, as in scikit-learn).
    validation_score_ : ndarray of shape (``n_iter_`` + 1,)
        Minus the mean loss on the held-out samples, likewise; empty without
        early stopping.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised counts of features in split atoms.
    gain_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised split gains shared among their atoms' features.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from morf_rs import GradientBoostingRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = GradientBoostingRegressor(n_estimators=50, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BoostingRegressor._parameter_constraints,
        **AxisAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        learning_rate: float = 0.1,
        max_features: int | float | Literal["sqrt", "log2"] | None = 1.0,
        max_leaf_nodes: int | None = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        subsample: float = 1.0,
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: int | float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-07,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
