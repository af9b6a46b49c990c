"""Unsupervised forests: splits without labels, the forest similarity, clustering."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from morf_rs import (
    UnsupervisedManifoldObliqueForest,
    UnsupervisedRandomForest,
    UnsupervisedSparseObliqueForest,
)
from morf_rs._core import agglomerative_clusters, similarity_matrix

CLASSES = [
    UnsupervisedRandomForest,
    UnsupervisedSparseObliqueForest,
    UnsupervisedManifoldObliqueForest,
]
CRITERIA = ["twomeans", "fastbic"]


def _stump(criterion):
    """One tree of one split on one feature, seeing every sample."""
    return UnsupervisedRandomForest(
        n_estimators=1,
        criterion=criterion,
        max_depth=1,
        min_samples_split=2,
        max_features=1,
        random_state=0,
    )


def _twomeans_cost(left, right):
    return ((left - left.mean()) ** 2).sum() + ((right - right.mean()) ** 2).sum()


def _fastbic_cost(left, right, rounding=0.0):
    """treeple's Fast-BIC ranking of a split (see morf_rs.FastBic in the Rust
    docs), the values taken about the node's mean, of rounding variance
    ``rounding``, written from its definition."""
    values = np.concatenate([left, right])
    n = len(values)
    variance = values.var()
    eps = max(1e-7 * variance, 2 * np.pi * rounding)

    def bic(side, var):
        k = len(side)
        return -2.0 * (k * np.log(k / n) + k / 2 * np.log(2 * np.pi * var + eps))

    own = bic(left, left.var()), bic(right, right.var())
    shared = bic(left, variance), bic(right, variance)
    chosen = own if own[0] - own[1] < shared[0] - shared[1] else shared
    return -(len(left) * chosen[0] + len(right) * chosen[1])


@pytest.mark.parametrize("criterion", CRITERIA)
def test_a_split_of_a_bimodal_sample_lands_between_the_modes(criterion):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, 70), rng.normal(12, 1, 130)])
    leaves = _stump(criterion).fit(x[:, None]).apply(x[:, None])[:, 0]
    assert len(set(leaves[:70])) == 1
    assert len(set(leaves[70:])) == 1
    assert leaves[0] != leaves[-1]


@pytest.mark.parametrize(
    ("criterion", "cost"), [("twomeans", _twomeans_cost), ("fastbic", _fastbic_cost)]
)
def test_the_split_is_the_least_cost_by_a_direct_numpy_computation(criterion, cost):
    rng = np.random.default_rng(1)
    # Skewed and lumpy, so that the criteria disagree and no two thresholds tie.
    x = np.concatenate([rng.exponential(1.0, 60), rng.normal(6, 2, 25)])
    x = x.astype(np.float32)
    leaves = _stump(criterion).fit(x[:, None]).apply(x[:, None])[:, 0]
    values = np.sort(x.astype(np.float64))
    costs = [cost(values[:k], values[k:]) for k in range(1, len(values))]
    best = int(np.argmin(costs)) + 1
    expected_left = x <= (values[best - 1] + values[best]) / 2
    chosen_left = leaves == leaves[np.argmin(x)]
    np.testing.assert_array_equal(chosen_left, expected_left)


@pytest.mark.parametrize(("shift", "rounding"), [(0.0, 1 / 12), (0.25, 0.0)])
def test_fastbic_takes_whole_x_as_rounded_and_float_x_as_measured(shift, rounding):
    # A block of 30 equal values above 70 spread ones; a quarter up, not whole.
    rng = np.random.default_rng(2)
    x = np.concatenate([np.full(30, 20.0), 10.0 + rng.integers(0, 10, 70)]) + shift
    x = x.astype(np.float32)
    leaves = _stump("fastbic").fit(x[:, None]).apply(x[:, None])[:, 0]
    values = np.sort(x.astype(np.float64))
    thresholds = [k for k in range(1, len(values)) if values[k - 1] < values[k]]
    costs = [_fastbic_cost(values[:k], values[k:], rounding) for k in thresholds]
    best = thresholds[int(np.argmin(costs))]
    expected_block_side = x > (values[best - 1] + values[best]) / 2
    np.testing.assert_array_equal(leaves == leaves[0], expected_block_side)
    # Measured, the block has no spread and is cut off alone; rounded, it is not.
    assert (expected_block_side.sum() == 30) == (rounding == 0.0)


@pytest.mark.parametrize("cls", CLASSES)
def test_the_similarity_is_the_share_of_trees_sharing_a_leaf(cls):
    X, _ = make_blobs(80, centers=3, n_features=6, random_state=2)
    forest = cls(n_estimators=25, random_state=0).fit(X)
    similarity = forest.similarity_matrix(X)
    leaves = forest.apply(X)
    direct = (leaves[:, None, :] == leaves[None, :, :]).mean(axis=2)
    np.testing.assert_array_equal(similarity, direct)
    np.testing.assert_array_equal(similarity, similarity.T)
    np.testing.assert_array_equal(np.diag(similarity), 1.0)
    assert similarity.min() >= 0.0
    assert similarity.max() <= 1.0
    embedding = forest.transform(X)
    np.testing.assert_allclose((embedding @ embedding.T).toarray(), similarity)
    # Between two sets of samples too.
    cross = (forest.transform(X[:10]) @ embedding.T).toarray()
    np.testing.assert_allclose(cross, similarity[:10])


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("criterion", CRITERIA)
def test_well_separated_blobs_are_recovered(cls, criterion):
    X, y = make_blobs(150, centers=3, n_features=8, cluster_std=1.0, random_state=0)
    forest = cls(
        n_estimators=60,
        criterion=criterion,
        min_samples_split=10,
        n_clusters=3,
        random_state=0,
    )
    labels = forest.fit_predict(X)
    assert adjusted_rand_score(y, labels) > 0.9
    np.testing.assert_array_equal(labels, forest.labels_)


@pytest.mark.parametrize("cls", CLASSES)
def test_the_forest_is_the_same_for_any_number_of_threads(cls):
    X, _ = make_blobs(200, centers=4, n_features=9, random_state=3)

    def fitted(n_jobs):
        return cls(
            n_estimators=20,
            criterion="fastbic",
            bootstrap=True,
            n_jobs=n_jobs,
            random_state=5,
        ).fit(X)

    one, two = fitted(1), fitted(2)
    assert one._forest.to_bytes() == two._forest.to_bytes()
    np.testing.assert_array_equal(one.similarity_matrix(X), two.similarity_matrix(X))
    np.testing.assert_array_equal(one.labels_, two.labels_)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("bootstrap", [False, True])
def test_warm_start_grows_the_forest_grown_at_once(cls, bootstrap):
    X, _ = make_blobs(150, centers=3, n_features=9, random_state=2)
    params = {"bootstrap": bootstrap, "n_clusters": 3}
    # A RandomState draws the seed at the first fit; the added trees keep that one.
    rng = np.random.RandomState
    warm = cls(n_estimators=4, warm_start=True, random_state=rng(7), **params).fit(X)
    warm.set_params(n_estimators=10).fit(X)
    once = cls(n_estimators=10, random_state=rng(7), **params).fit(X)
    assert warm._forest.n_estimators == 10
    assert warm._forest.to_bytes() == once._forest.to_bytes()
    np.testing.assert_array_equal(warm.labels_, once.labels_)
    with pytest.warns(UserWarning, match="without increasing n_estimators"):
        warm.fit(X)
    assert warm._forest.to_bytes() == once._forest.to_bytes()
    with pytest.raises(ValueError, match="must be at least the 10 trees"):
        warm.set_params(n_estimators=5).fit(X)
    with pytest.raises(ValueError, match="forest of 9 features"):
        warm.set_params(n_estimators=12).fit(X[:, :8])


def test_a_pickled_forest_gives_the_same_similarity():
    X, _ = make_blobs(60, centers=2, n_features=5, random_state=4)
    forest = UnsupervisedSparseObliqueForest(n_estimators=10, random_state=0).fit(X)
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(
        restored.similarity_matrix(X), forest.similarity_matrix(X)
    )


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"criterion": "gini"}, ValueError, "criterion"),
        ({"n_clusters": 0}, ValueError, "n_clusters"),
        ({"min_samples_split": "cube"}, ValueError, "min_samples_split"),
        ({"min_samples_split": 1}, ValueError, "min_samples_split"),
        ({"linkage": "ward"}, ValueError, "linkage"),
        ({"n_estimators": 0}, ValueError, "n_estimators"),
        ({"max_features": "all"}, ValueError, "max_features"),
    ],
)
def test_bad_parameters_are_refused_with_their_name(params, error, match):
    X, _ = make_blobs(30, centers=2, n_features=4, random_state=0)
    with pytest.raises(error, match=match):
        UnsupervisedRandomForest(**{"n_estimators": 5, **params}).fit(X)


def test_bad_input_is_refused_with_what_to_fix():
    X, _ = make_blobs(30, centers=2, n_features=4, random_state=0)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        UnsupervisedRandomForest(n_estimators=5).fit(X_nan)
    with pytest.raises(ValueError, match="image_shape"):
        UnsupervisedManifoldObliqueForest(n_estimators=5, image_shape=(3, 3)).fit(X)
    with pytest.raises(ValueError, match="numeric"):
        UnsupervisedRandomForest(n_estimators=5).fit([["a", "b"], ["c", "d"]])
    forest = UnsupervisedRandomForest(n_estimators=5).fit(X)
    with pytest.raises(ValueError, match="features"):
        forest.similarity_matrix(X[:, :3])
    for method in (forest.apply, forest.transform, forest.similarity_matrix):
        with pytest.raises(ValueError, match="NaN"):
            method(X_nan)


@parametrize_with_checks([cls(n_estimators=20, min_samples_split=5) for cls in CLASSES])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("linkage", ["average", "complete", "single"])
def test_clusters_are_those_of_scikit_learns_agglomerative_clustering(linkage):
    """The engine's clusters and their numbers equal AgglomerativeClustering's on
    1 - similarity, also where few trees and leaves make many distances tie."""
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 70))
        leaves = rng.integers(
            0, rng.integers(1, 8), size=(n, rng.integers(1, 12))
        ).astype(np.int64)
        n_clusters = int(rng.integers(1, n + 1))
        expected = AgglomerativeClustering(
            n_clusters=n_clusters, metric="precomputed", linkage=linkage
        ).fit(1.0 - similarity_matrix(leaves, 1))
        np.testing.assert_array_equal(
            agglomerative_clusters(leaves, n_clusters, linkage, 2),
            expected.labels_,
            err_msg=f"seed {seed}",
        )


def test_a_forest_of_blobs_clusters_as_scikit_learn_clusters_its_similarity():
    X, _ = make_blobs(300, centers=4, n_features=6, random_state=1)
    forest = UnsupervisedSparseObliqueForest(
        n_estimators=30, n_clusters=4, linkage="complete", random_state=0
    ).fit(X)
    expected = AgglomerativeClustering(
        n_clusters=4, metric="precomputed", linkage="complete"
    ).fit_predict(1.0 - forest.similarity_matrix(X))
    np.testing.assert_array_equal(forest.labels_, expected)


def test_one_sample_is_one_cluster():
    forest = UnsupervisedRandomForest(n_estimators=3, n_clusters=4).fit(np.ones((1, 3)))
    np.testing.assert_array_equal(forest.labels_, [0])


def test_an_unknown_linkage_is_refused_with_the_names_it_takes():
    leaves = np.zeros((3, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="'average', 'complete' or 'single'"):
        agglomerative_clusters(leaves, 2, "ward", 1)


_BOUNDED_SIMILARITY = textwrap.dedent(
    """
    import resource
    import numpy as np
    from morf_rs._core import similarity_matrix

    leaves = np.zeros((5000, 2), dtype=np.int64)

    def data_bytes():
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmData"].split()[0]) * 1024

    # Room for the 100 MB of counts, not for the 200 MB of shares beside them.
    limit = data_bytes() + (160 << 20)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.RLIM_INFINITY))
    try:
        similarity_matrix(leaves, 1)
    except MemoryError as error:
        print("refused:", error)
    """
)


def test_a_similarity_too_large_for_the_memory_allowed_is_a_memory_error():
    """The shares were collected where an allocation that fails aborts."""
    done = subprocess.run(
        [sys.executable, "-c", _BOUNDED_SIMILARITY],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout
    assert "similarity matrix" in done.stdout
