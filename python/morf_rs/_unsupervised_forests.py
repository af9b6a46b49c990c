"""The public unsupervised forests: an atom family (:mod:`morf_rs._atoms`) times
:class:`morf_rs._unsupervised.UnsupervisedForest`. Each constructor writes out its
parameters, stored unchanged as scikit-learn expects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from morf_rs._atoms import AxisAtoms, ObliqueAtoms, PatchAtoms
from morf_rs._unsupervised import UnsupervisedForest

if TYPE_CHECKING:
    from morf_rs._constraints import Constraint
    from morf_rs._family import Family

__all__ = [
    "UnsupervisedManifoldObliqueForest",
    "UnsupervisedRandomForest",
    "UnsupervisedSparseObliqueForest",
]


class UnsupervisedRandomForest(AxisAtoms, UnsupervisedForest):
    """Unsupervised random forest: axis-aligned trees grown without labels.

    Each split thresholds one feature where the node's values fall best into two
    groups (treeple's ``UnsupervisedRandomForest``). Samples that share leaves in
    many trees are alike: :meth:`similarity_matrix` is the share of trees in which
    two samples share a leaf, :meth:`fit_predict` clusters by it and
    :meth:`transform` embeds samples so that inner products give it.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidate atoms per split: a count, a fraction of n_features, sqrt or log2
        of n_features, or n_features.
    criterion : {"twomeans", "fastbic"}, default="twomeans"
        How a split of a node's projected values is judged: "twomeans" keeps
        the threshold of least within-side sum of squared deviations (the
        one-dimensional 2-means objective); "fastbic" the one of least BIC of a
        two-component Gaussian mixture fitted by hard assignment (Fast-BIC).
    max_depth : int, default=None
        Maximum depth of a tree; None grows until the other rules stop.
    min_samples_split : int, float, "sqrt" or "log2", default="sqrt"
        Fewest samples a node needs to be split: a count, a fraction of
        n_samples, or the square root or log2 of n_features (at least 2), as
        treeple. Trees grown down to single samples would put each sample in a
        leaf of its own, alike to no other.
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    bootstrap : bool, default=False
        Grow each tree on a bootstrap sample instead of the whole training set.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    n_clusters : int, default=2
        Number of clusters of :meth:`fit_predict` and ``labels_``; with fewer
        training samples than that, each sample is a cluster of its own.
    linkage : {"average", "complete", "single"}, default="average"
        Linkage of the agglomerative clustering at distance 1 - similarity.
    n_jobs : int, default=None
        Threads for fit, apply and the similarity: None is 1, -1 all cores, -2 all
        but one; never more than the available cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.
    warm_start : bool, default=False
        Refit adds trees to the fitted forest (up to ``n_estimators``, on the
        data and settings of the first fit) and clusters again with all of them:
        the forest grown at once with as many trees.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training sample (see :meth:`fit_predict`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from morf_rs import UnsupervisedRandomForest
    >>> X, y = make_blobs(150, centers=3, n_features=4, random_state=0)
    >>> forest = UnsupervisedRandomForest(
    ...     n_estimators=50, min_samples_split=10, n_clusters=3, random_state=0
    ... )
    >>> adjusted_rand_score(y, forest.fit_predict(X)) > 0.9
    True
    >>> forest.similarity_matrix(X[:5]).shape
    (5, 5)
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **UnsupervisedForest._parameter_constraints,
        **AxisAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_features: int | float | Literal["sqrt", "log2"] | None = "sqrt",
        criterion: Literal["twomeans", "fastbic"] = "twomeans",
        max_depth: int | None = None,
        min_samples_split: int | float | Literal["sqrt", "log2"] = "sqrt",
        min_samples_leaf: int | float = 1,
        bootstrap: bool = False,
        max_samples: int | float | None = None,
        n_clusters: int = 2,
        linkage: Literal["average", "complete", "single"] = "average",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.n_clusters = n_clusters
        self.linkage = linkage
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.warm_start = warm_start


class UnsupervisedSparseObliqueForest(ObliqueAtoms, UnsupervisedForest):
    """Unsupervised sparse oblique forest (SPORF atoms, treeple's
    ``UnsupervisedObliqueRandomForest``).

    Split directions are sparse random combinations of features with weights
    +1 or -1; each split is chosen where the node's projections fall best into
    two groups. See :class:`UnsupervisedRandomForest` for what the forest gives.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    feature_combinations : float, default=1.5
        Mean number of features per candidate direction.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidate atoms per split: a count, a fraction of n_features, sqrt or log2
        of n_features, or n_features.
    criterion : {"twomeans", "fastbic"}, default="twomeans"
        How a split of a node's projected values is judged: "twomeans" keeps
        the threshold of least within-side sum of squared deviations (the
        one-dimensional 2-means objective); "fastbic" the one of least BIC of a
        two-component Gaussian mixture fitted by hard assignment (Fast-BIC).
    max_depth : int, default=None
        Maximum depth of a tree; None grows until the other rules stop.
    min_samples_split : int, float, "sqrt" or "log2", default="sqrt"
        Fewest samples a node needs to be split: a count, a fraction of
        n_samples, or the square root or log2 of n_features (at least 2), as
        treeple. Trees grown down to single samples would put each sample in a
        leaf of its own, alike to no other.
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    bootstrap : bool, default=False
        Grow each tree on a bootstrap sample instead of the whole training set.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    n_clusters : int, default=2
        Number of clusters of :meth:`fit_predict` and ``labels_``; with fewer
        training samples than that, each sample is a cluster of its own.
    linkage : {"average", "complete", "single"}, default="average"
        Linkage of the agglomerative clustering at distance 1 - similarity.
    n_jobs : int, default=None
        Threads for fit, apply and the similarity: None is 1, -1 all cores, -2 all
        but one; never more than the available cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.
    warm_start : bool, default=False
        Refit adds trees to the fitted forest (up to ``n_estimators``, on the
        data and settings of the first fit) and clusters again with all of them:
        the forest grown at once with as many trees.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training sample (see :meth:`fit_predict`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from morf_rs import UnsupervisedSparseObliqueForest
    >>> X, y = make_blobs(100, centers=2, n_features=5, random_state=0)
    >>> forest = UnsupervisedSparseObliqueForest(
    ...     n_estimators=30, criterion="fastbic", random_state=0
    ... ).fit(X)
    >>> similarity = forest.similarity_matrix(X)
    >>> bool((similarity == similarity.T).all() and (similarity.diagonal() == 1).all())
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **UnsupervisedForest._parameter_constraints,
        **ObliqueAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        feature_combinations: float = 1.5,
        max_features: int | float | Literal["sqrt", "log2"] | None = "sqrt",
        criterion: Literal["twomeans", "fastbic"] = "twomeans",
        max_depth: int | None = None,
        min_samples_split: int | float | Literal["sqrt", "log2"] = "sqrt",
        min_samples_leaf: int | float = 1,
        bootstrap: bool = False,
        max_samples: int | float | None = None,
        n_clusters: int = 2,
        linkage: Literal["average", "complete", "single"] = "average",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.feature_combinations = feature_combinations
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.n_clusters = n_clusters
        self.linkage = linkage
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.warm_start = warm_start


class UnsupervisedManifoldObliqueForest(PatchAtoms, UnsupervisedForest):
    """Unsupervised manifold oblique forest (MORF atoms).

    Each row of X is read as a row-major array of shape ``image_shape``; split
    directions are sums over random patches of it (or atoms of a
    ``dictionary``), so that the similarity of images or signals sees their
    structure. See :class:`UnsupervisedRandomForest` for what the forest gives.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    image_shape : tuple of int, default=None
        Shape each row of X is reshaped to (row-major); its product must be
        n_features. None means one axis of length n_features.
    patch_min : int or tuple of int, default=1
        Smallest patch extent, per axis or one value for all axes.
    patch_max : int or tuple of int, default=None
        Largest patch extent, per axis or one value for all axes. None takes the
        square root of each axis's length, rounded down (at least patch_min).
    wrap : bool or tuple of bool, default=False
        Whether an axis is cyclic, so that patches wrap around its end.
    contiguous : bool or tuple of bool, default=True
        Whether patches are runs of adjacent cells along an axis.
    dictionary : str, family or list of (family, probability), default=None
        The atom families split directions are drawn from (see
        :mod:`morf_rs.dictionary`); None is patch sums only.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidate atoms per split: a count, a fraction of n_features, sqrt or log2
        of n_features, or n_features.
    criterion : {"twomeans", "fastbic"}, default="twomeans"
        How a split of a node's projected values is judged: "twomeans" keeps
        the threshold of least within-side sum of squared deviations (the
        one-dimensional 2-means objective); "fastbic" the one of least BIC of a
        two-component Gaussian mixture fitted by hard assignment (Fast-BIC).
    max_depth : int, default=None
        Maximum depth of a tree; None grows until the other rules stop.
    min_samples_split : int, float, "sqrt" or "log2", default="sqrt"
        Fewest samples a node needs to be split: a count, a fraction of
        n_samples, or the square root or log2 of n_features (at least 2), as
        treeple. Trees grown down to single samples would put each sample in a
        leaf of its own, alike to no other.
    min_samples_leaf : int or float, default=1
        Fewest samples on each side of a split (a float is a fraction of
        n_samples).
    bootstrap : bool, default=False
        Grow each tree on a bootstrap sample instead of the whole training set.
    max_samples : int or float, default=None
        Size of each tree's sample (a float is a fraction of n_samples); None uses
        n_samples.
    n_clusters : int, default=2
        Number of clusters of :meth:`fit_predict` and ``labels_``; with fewer
        training samples than that, each sample is a cluster of its own.
    linkage : {"average", "complete", "single"}, default="average"
        Linkage of the agglomerative clustering at distance 1 - similarity.
    n_jobs : int, default=None
        Threads for fit, apply and the similarity: None is 1, -1 all cores, -2 all
        but one; never more than the available cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees; the same int gives the same forest for any n_jobs.
    warm_start : bool, default=False
        Refit adds trees to the fitted forest (up to ``n_estimators``, on the
        data and settings of the first fit) and clusters again with all of them:
        the forest grown at once with as many trees.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training sample (see :meth:`fit_predict`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names, when X was a DataFrame with string column names.
    image_shape_ : tuple of int
        The resolved image shape.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs import UnsupervisedManifoldObliqueForest
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 8, 8)).astype(np.float32)
    >>> X[:30, :, :4] += 3.0  # bright left halves, then bright right halves
    >>> X[30:, :, 4:] += 3.0
    >>> X = X.reshape(60, 64)
    >>> forest = UnsupervisedManifoldObliqueForest(
    ...     n_estimators=30, image_shape=(8, 8), n_clusters=2, random_state=0
    ... )
    >>> labels = forest.fit_predict(X)
    >>> len(set(labels[:30])) == 1 and len(set(labels[30:])) == 1
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        **UnsupervisedForest._parameter_constraints,
        **PatchAtoms._parameter_constraints,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        image_shape: int | Sequence[int] | None = None,
        patch_min: int | Sequence[int] = 1,
        patch_max: int | Sequence[int] | None = None,
        wrap: bool | Sequence[bool] = False,
        contiguous: bool | Sequence[bool] = True,
        dictionary: str | Family | Sequence[tuple[Family, float]] | None = None,
        max_features: int | float | Literal["sqrt", "log2"] | None = "sqrt",
        criterion: Literal["twomeans", "fastbic"] = "twomeans",
        max_depth: int | None = None,
        min_samples_split: int | float | Literal["sqrt", "log2"] = "sqrt",
        min_samples_leaf: int | float = 1,
        bootstrap: bool = False,
        max_samples: int | float | None = None,
        n_clusters: int = 2,
        linkage: Literal["average", "complete", "single"] = "average",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.image_shape = image_shape
        self.patch_min = patch_min
        self.patch_max = patch_max
        self.wrap = wrap
        self.contiguous = contiguous
        self.dictionary = dictionary
        self.max_features = max_features
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.n_clusters = n_clusters
        self.linkage = linkage
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.warm_start = warm_start
