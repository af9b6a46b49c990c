"""The axis-aligned random forests, classifier and regressor.

Each is the axis-aligned atom family (:class:`morf_rs._atoms.AxisAtoms`) times a forest
task base (:class:`morf_rs._classifier.ForestClassifier`,
:class:`morf_rs._regressor.ForestRegressor`). Its constructor takes the parameters of
both, written out and stored unchanged as scikit-learn expects, so that type checkers
and IDEs see them; its docstring documents each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from morf_rs._atoms import AxisAtoms
from morf_rs._classifier import ForestClassifier
from morf_rs._regressor import ForestRegressor

if TYPE_CHECKING:
    from morf_rs._constraints import Constraint

__all__ = [
    "RandomForestClassifier",
    "RandomForestRegressor",
]


class RandomForestClassifier(AxisAtoms, ForestClassifier):
    """Axis-aligned random forest classifier (Breiman's random forest).

    Each split thresholds a single feature, as in
    :class:`sklearn.ensemble.RandomForestClassifier`.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_features : int, float, "sqrt", "log2" or None, default='sqrt'
        Features tried per split: a count (<= n_features), a fraction in (0, 1] of
        n_features, sqrt or log2 of n_features, or n_features.
    criterion : {"gini", "entropy", "log_loss"}, default='gini'
        Impurity measure of a split ("log_loss" is "entropy").
    max_depth : int, default=None
        Maximum depth of a tree; None grows until leaves are pure.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a float is a fraction of
        n_samples).
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Least weight on each side of a split, as a fraction of the total weight of
        the tree's sample (sample weights times bootstrap counts).
    max_leaf_nodes : int or None, default=None
        Most leaves per tree (at least 2). Trees then grow best first, as
        scikit-learn's do: the leaf whose best split decreases the weighted
        impurity most is split next, until a tree has max_leaf_nodes leaves or no
        leaf may be split (max_depth and the other rules still apply). None grows
        depth first without a limit on leaves.
    min_impurity_decrease : float, default=0.0
        A node is split only if the weighted impurity decreases at least this much.
    ccp_alpha : non-negative float, default=0.0
        Minimal cost-complexity pruning: each grown tree is cut back to its
        smallest subtree minimising R(T) + ccp_alpha * n_leaves(T), with R(T) the
        weighted impurity of its leaves relative to the weight of the samples that
        grew it (honest trees: the structure part, before the leaves are filled).
        0 prunes nothing.
    max_bins : int or None, default=None
        Count a node's projections on each candidate in at most this many bins
        (2 to 65536) of equal width over their range at that node, and search
        thresholds between bins only, as histogram boosters do once per fit:
        large nodes are searched faster, and deeper nodes still split finely over
        their own range. MORF with 32 bins fitted 10,000 Fashion-MNIST images 1.3
        times faster at the same test accuracy; on some data bins cost accuracy
        (the benchmarks guide has both).
        Nodes too small for bins to pay, X with missing values, and whole-valued
        projections spanning at most max_bins values are searched exactly. None
        searches every threshold between distinct values.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample instead of the whole training set.
    oob_score : bool or callable, default=False
        Score every training sample with the trees that never saw it (out-of-bag):
        sets ``oob_score_`` (accuracy for classifiers, R^2 for regressors, or
        ``oob_score(y, prediction)`` for a callable) and ``oob_decision_function_``
        (classifiers) or ``oob_prediction_`` (regressors). Needs ``bootstrap=True``.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    honest_fraction : float in [0, 1), default=0.0
        Fraction of each tree's sample set aside to fill the leaves (honest trees);
        the rest grows the splits. 0 disables honesty.
    honest_prior : {"ignore", "uniform", "empirical"}, default='empirical'
        What a leaf that got no honest sample predicts: nothing (the tree does not
        vote), the uniform distribution (classifiers only), or the tree's whole
        sample: its class frequencies or its mean target.
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        Weights of the classes, multiplied into sample_weight. "balanced" weighs
        each class inversely to its frequency in y; "balanced_subsample" does so
        in each tree's bootstrap sample (as "balanced" without bootstrap).
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
        When True, fit adds trees to the fitted forest, up to ``n_estimators``, on the
        same data; tree i depends only on random_state and i, so 50 trees and then 50
        more give the forest of 100 grown at once, bit for bit.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
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
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised split-atom counts (see the property's documentation).
    impurity_importances_ : ndarray of shape (``n_features_in_``,)
        Impurity-weighted importances.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from morf_rs import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **ForestClassifier._parameter_constraints,
        **AxisAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: int | float | Literal["sqrt", "log2"] | None = "sqrt",
        criterion: Literal["gini", "entropy", "log_loss"] = "gini",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
        ccp_alpha: float = 0.0,
        max_bins: int | None = None,
        bootstrap: bool = True,
        oob_score: bool | Callable[[Any, Any], float] = False,
        max_samples: int | float | None = None,
        honest_fraction: float = 0.0,
        honest_prior: Literal["ignore", "uniform", "empirical"] = "empirical",
        class_weight: Mapping[Any, float]
        | Literal["balanced", "balanced_subsample"]
        | None = None,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.max_samples = max_samples
        self.honest_fraction = honest_fraction
        self.honest_prior = honest_prior
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start


class RandomForestRegressor(AxisAtoms, ForestRegressor):
    """Axis-aligned random forest regressor (Breiman's random forest).

    Each split thresholds a single feature, as in
    :class:`sklearn.ensemble.RandomForestRegressor`; splits minimise the squared
    error and leaves predict the mean target of their samples (one or several
    outputs).

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Features tried per split: a count (<= n_features), a fraction in (0, 1] of
        n_features, sqrt or log2 of n_features, or n_features.
    criterion : {"squared_error", "poisson"}, default='squared_error'
        Impurity measure of a split: the mean squared error of the targets, or
        half the mean Poisson deviance ("poisson", for counts and rates: y must be
        non-negative with a positive sum, and no split leaves a child whose
        targets sum to 0).
    max_depth : int, default=None
        Maximum depth of a tree; None grows until leaves are pure.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a float is a fraction of
        n_samples).
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Least weight on each side of a split, as a fraction of the total weight of
        the tree's sample (sample weights times bootstrap counts).
    max_leaf_nodes : int or None, default=None
        Most leaves per tree (at least 2). Trees then grow best first, as
        scikit-learn's do: the leaf whose best split decreases the weighted
        impurity most is split next, until a tree has max_leaf_nodes leaves or no
        leaf may be split (max_depth and the other rules still apply). None grows
        depth first without a limit on leaves.
    min_impurity_decrease : float, default=0.0
        A node is split only if the weighted impurity decreases at least this much.
    ccp_alpha : non-negative float, default=0.0
        Minimal cost-complexity pruning: each grown tree is cut back to its
        smallest subtree minimising R(T) + ccp_alpha * n_leaves(T), with R(T) the
        weighted impurity of its leaves relative to the weight of the samples that
        grew it (honest trees: the structure part, before the leaves are filled).
        0 prunes nothing.
    max_bins : int or None, default=None
        Count a node's projections on each candidate in at most this many bins
        (2 to 65536) of equal width over their range at that node, and search
        thresholds between bins only, as histogram boosters do once per fit:
        large nodes are searched faster, and deeper nodes still split finely over
        their own range. MORF with 32 bins fitted 10,000 Fashion-MNIST images 1.3
        times faster at the same test accuracy; on some data bins cost accuracy
        (the benchmarks guide has both).
        Nodes too small for bins to pay, X with missing values, and whole-valued
        projections spanning at most max_bins values are searched exactly. None
        searches every threshold between distinct values.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample instead of the whole training set.
    oob_score : bool or callable, default=False
        Score every training sample with the trees that never saw it (out-of-bag):
        sets ``oob_score_`` (accuracy for classifiers, R^2 for regressors, or
        ``oob_score(y, prediction)`` for a callable) and ``oob_decision_function_``
        (classifiers) or ``oob_prediction_`` (regressors). Needs ``bootstrap=True``.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    honest_fraction : float in [0, 1), default=0.0
        Fraction of each tree's sample set aside to fill the leaves (honest trees);
        the rest grows the splits. 0 disables honesty.
    honest_prior : {"ignore", "uniform", "empirical"}, default='empirical'
        What a leaf that got no honest sample predicts: nothing (the tree does not
        vote), the uniform distribution (classifiers only), or the tree's whole
        sample: its class frequencies or its mean target.
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
        When True, fit adds trees to the fitted forest, up to ``n_estimators``, on the
        same data; tree i depends only on random_state and i, so 50 trees and then 50
        more give the forest of 100 grown at once, bit for bit.

    Attributes
    ----------
    n_outputs_ : int
        Number of outputs (columns of y; 1 for a 1-D y).
    oob_score_ : float
        Out-of-bag score (only with ``oob_score``).
    oob_prediction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Out-of-bag predictions of the training samples (only with ``oob_score``).
    estimators_samples_ : list of ndarray
        Per tree, the indices of the training samples it learnt from.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.
    feature_importances_ : ndarray of shape (``n_features_in_``,)
        Normalised split-atom counts (see the property's documentation).
    impurity_importances_ : ndarray of shape (``n_features_in_``,)
        Impurity-weighted importances.
    tree_stats_ : dict of ndarray
        Per-tree max depth, number of leaves, number of nodes, mean leaf depth.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from morf_rs import RandomForestRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    >>> reg.predict(X[:2]).shape
    (2,)
    >>> reg.score(X, y) > 0.8
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **ForestRegressor._parameter_constraints,
        **AxisAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: int | float | Literal["sqrt", "log2"] | None = 1.0,
        criterion: Literal["squared_error", "poisson"] = "squared_error",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
        ccp_alpha: float = 0.0,
        max_bins: int | None = None,
        bootstrap: bool = True,
        oob_score: bool | Callable[[Any, Any], float] = False,
        max_samples: int | float | None = None,
        honest_fraction: float = 0.0,
        honest_prior: Literal["ignore", "empirical"] = "empirical",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.max_samples = max_samples
        self.honest_fraction = honest_fraction
        self.honest_prior = honest_prior
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
