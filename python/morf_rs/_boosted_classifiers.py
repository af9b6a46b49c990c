"""The public oblique gradient-boosted classifiers: manifold (patch) and sparse oblique.

Each class is an atom family (:mod:`morf_rs._atoms`) times a task base
(:class:`morf_rs._boosting.BoostingClassifier`). Its constructor takes the parameters of
both, written out and stored unchanged as scikit-learn expects, so that type
checkers and IDEs see them; its docstring documents each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from morf_rs._atoms import ObliqueAtoms, PatchAtoms
from morf_rs._boosting import BoostingClassifier

if TYPE_CHECKING:
    from morf_rs._constraints import Constraint
    from morf_rs._family import Family

__all__ = [
    "ManifoldObliqueGradientBoostingClassifier",
    "SparseObliqueGradientBoostingClassifier",
]


class ManifoldObliqueGradientBoostingClassifier(PatchAtoms, BoostingClassifier):
    """Gradient-boosted trees whose splits are patches of an image or signal.

    Each round draws ``max_features`` atoms from the patch dictionary of each
    row reshaped to ``image_shape`` (as :class:`ManifoldObliqueForestClassifier`
    does at every node), bins every sample's projection on them once, and grows
    one tree per class (one for two classes) best first on the gradients and
    hessians of the log loss, as LightGBM and scikit-learn's
    ``HistGradientBoostingClassifier`` do over single features.

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
    image_shape : tuple of int, default=None
        Shape each row of X is reshaped to (row-major); its product must be
        n_features. None means one axis of length n_features.
    patch_min : int or tuple of int, default=1
        Smallest patch extent, per axis or one value for all axes.
    patch_max : int or tuple of int, default=None
        Largest patch extent, per axis or one value for all axes. None takes
        the square root of each axis's length, rounded down (at least patch_min):
        the extents the MORF papers chose for their images and signals (5 on a
        28-pixel axis, 10 on a 100-step signal), and fast on long axes. Pass the
        axis lengths (image_shape) for patches up to the whole axis.
    wrap : bool or tuple of bool, default=False
        Whether an axis is cyclic, so that patches wrap around its end.
    contiguous : bool or tuple of bool, default=True
        Whether patches are runs of adjacent cells along an axis; False takes
        random distinct positions instead (e.g. for unordered sensors).
    dictionary : str, family or list of (family, probability), default=None
        The atom families split directions are drawn from (see
        :mod:`morf_rs.dictionary`), each with its probability (they sum to 1):
        signed patches (edges, lines), bumps, Gabor-like stripes, single features,
        sparse oblique combinations, neighbourhoods in a graph over the features.
        Image families lie on ``image_shape`` and take ``patch_min`` and
        ``patch_max`` unless they set their own extents. None is the papers' MORF:
        patch sums only, reproduced exactly. On images, signed patches win:
        ``[(SignedPatches(bands=2), 0.55), (SignedPatches(bands=3), 0.35),
        (AxisAligned(), 0.1)]`` with ``max_features=56`` took the forests'
        Fashion-MNIST test error from 0.120 (papers' MORF) to 0.103; see
        :mod:`morf_rs.dictionary` and README.md for signals and graphs. The presets
        ``"signals"`` and ``"images"`` name measured mixtures (signals: pooled atoms,
        translation invariant) and, unless ``max_features`` is given, their number of
        candidates (see README.md, Pooled atoms and the presets).
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Atoms drawn afresh each round and tried at every node of that round's
        trees: a count, a fraction of n_features, sqrt or log2 of n_features, or
        n_features. May exceed n_features; fit time grows with it.
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
    image_shape_ : tuple of int
        The resolved image shape.

    Examples
    --------
    >>> from morf_rs import ManifoldObliqueGradientBoostingClassifier
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(400, random_state=0)
    >>> clf = ManifoldObliqueGradientBoostingClassifier(
    ...     n_estimators=30, image_shape=(28, 28), patch_max=(2, 9), random_state=0
    ... ).fit(X, y)
    >>> X_test, y_test = make_bars(500, random_state=1)
    >>> clf.score(X_test, y_test) > 0.9
    True
    >>> accuracy_by_round = [(p.argmax(1) == y_test).mean()
    ...                      for p in clf.staged_predict_proba(X_test)]
    >>> len(accuracy_by_round) == clf.n_iter_
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BoostingClassifier._parameter_constraints,
        **PatchAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        learning_rate: float = 0.1,
        image_shape: int | Sequence[int] | None = None,
        patch_min: int | Sequence[int] = 1,
        patch_max: int | Sequence[int] | None = None,
        wrap: bool | Sequence[bool] = False,
        contiguous: bool | Sequence[bool] = True,
        dictionary: str | Family | Sequence[tuple[Family, float]] | None = None,
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
        self.image_shape = image_shape
        self.patch_min = patch_min
        self.patch_max = patch_max
        self.wrap = wrap
        self.contiguous = contiguous
        self.dictionary = dictionary
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


class SparseObliqueGradientBoostingClassifier(ObliqueAtoms, BoostingClassifier):
    """Gradient-boosted trees whose splits are sparse ±1 combinations of features
    (SPORF's atoms), drawn afresh each round.

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
    feature_combinations : float, default=1.5
        Mean number of features in an atom, in [1, 700].
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Atoms drawn afresh each round and tried at every node of that round's
        trees: a count, a fraction of n_features, sqrt or log2 of n_features, or
        n_features. May exceed n_features; fit time grows with it.
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
    >>> import numpy as np
    >>> from morf_rs import SparseObliqueGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 4))
    >>> y = (X[:, 0] > X[:, 1]).astype(int)  # one oblique boundary
    >>> clf = SparseObliqueGradientBoostingClassifier(
    ...     n_estimators=50, feature_combinations=2.0, max_features=20, random_state=0
    ... ).fit(X[:500], y[:500])
    >>> clf.score(X[500:], y[500:]) > 0.9
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **BoostingClassifier._parameter_constraints,
        **ObliqueAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        learning_rate: float = 0.1,
        feature_combinations: float = 1.5,
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
        self.feature_combinations = feature_combinations
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
