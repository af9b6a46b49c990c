"""What isolation forests share with scikit-learn's beyond scoring: features per
tree (max_features), sample weights, warm starts, and inspecting the trees."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble._iforest import _average_path_length

from morf_rs import (
    IsolationForest,
    ManifoldObliqueIsolationForest,
    SparseObliqueIsolationForest,
)
from morf_rs.dictionary import Patches, Pooled


def images(n, seed):
    """n 8x8 noise images, the first five with a bright 3x3 patch."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8, 8))
    X[:5, 2:5, 2:5] += 2.0
    return X.reshape(n, 64)


def detectors(**kwargs):
    return [
        IsolationForest(**kwargs),
        SparseObliqueIsolationForest(feature_combinations=2.0, **kwargs),
        ManifoldObliqueIsolationForest(image_shape=(8, 8), patch_max=3, **kwargs),
    ]


def features_of_tree(detector, t):
    tree = detector.tree_structure(t)
    return set(tree.atom_features.tolist())


@pytest.mark.parametrize("detector", detectors(n_estimators=6, random_state=0))
def test_each_tree_reads_only_its_share_of_the_features(detector):
    X = images(300, seed=1)
    detector.set_params(max_features=0.125).fit(X)  # int(0.125 * 64) = 8 features
    seen = [features_of_tree(detector, t) for t in range(6)]
    assert all(1 <= len(features) <= 8 for features in seen), seen
    # Each tree draws its own features.
    assert len(set.union(*seen)) > 8
    # All the features: the same trees as without the parameter.
    everything = detector.set_params(max_features=64).fit(X).score_samples(X)
    default = detector.set_params(max_features=1.0).fit(X).score_samples(X)
    np.testing.assert_array_equal(everything, default)
    assert len(set.union(*[features_of_tree(detector, t) for t in range(6)])) > 8


def test_pooled_atoms_refuse_a_share_of_the_features():
    X = images(100, seed=2)
    pooled = Pooled(Patches(), shift_max=2)
    detector = ManifoldObliqueIsolationForest(
        image_shape=(8, 8), dictionary=pooled, max_features=0.5
    )
    with pytest.raises(ValueError, match="max_features.*pooled"):
        detector.fit(X)
    detector.set_params(max_features=1.0).fit(X)


@pytest.mark.parametrize("detector", detectors(n_estimators=8, random_state=4))
def test_zero_weights_are_absent_rows_and_equal_weights_no_weights(detector):
    X = images(300, seed=3)
    weights = np.ones(300)
    weights[100:200] = 0.0
    kept = np.r_[0:100, 200:300]
    weighted = detector.fit(X, sample_weight=weights).score_samples(X)
    assert detector.max_samples_ == 200
    alone = detector.fit(X[kept]).score_samples(X)
    np.testing.assert_array_equal(weighted, alone)
    twos = detector.fit(X, sample_weight=np.full(300, 2.0)).score_samples(X)
    np.testing.assert_array_equal(twos, detector.fit(X).score_samples(X))


def test_trees_draw_rows_in_proportion_to_their_weights():
    """Two clusters; weighting one up makes the trees learn it, the other down
    makes it look anomalous, as scikit-learn's weighted draw does."""
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (500, 2)), rng.normal(6, 1, (500, 2))])
    second = np.arange(1000) >= 500
    weights = np.where(second, 0.02, 1.0)
    detector = IsolationForest(n_estimators=50, max_samples=64, random_state=0)
    plain = detector.fit(X).score_samples(X)
    weighted = detector.fit(X, sample_weight=weights).score_samples(X)
    # Weighted, the second cluster is rare in the subsamples: its rows score
    # well below the first's; unweighted, both clusters score alike.
    assert abs(plain[second].mean() - plain[~second].mean()) < 0.02
    assert weighted[second].mean() < weighted[~second].mean() - 0.1


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.ones(10), "sample"),
        (-np.ones(50), "non-negative"),
        (np.zeros(50), "non-zero|positive weight"),
    ],
)
def test_bad_weights_say_what_to_fix(weights, match):
    with pytest.raises(ValueError, match=match):
        IsolationForest().fit(images(50, seed=6), sample_weight=weights)


@pytest.mark.parametrize("detector", detectors(random_state=7, max_features=0.5))
def test_warm_start_grows_the_trees_of_one_larger_fit(detector):
    X = images(200, seed=8)
    weights = np.linspace(0.5, 2.0, 200)
    whole = clone(detector).set_params(n_estimators=12).fit(X, sample_weight=weights)
    expected = whole.score_samples(X)
    expected_tree = whole.tree_structure(11)
    detector.set_params(n_estimators=5, warm_start=True).fit(X, sample_weight=weights)
    first = detector.tree_structure(0)
    detector.set_params(n_estimators=12).fit(X, sample_weight=weights)
    np.testing.assert_array_equal(detector.score_samples(X), expected)
    np.testing.assert_array_equal(detector.tree_structure(0).threshold, first.threshold)
    last = detector.tree_structure(11)
    np.testing.assert_array_equal(last.threshold, expected_tree.threshold)
    np.testing.assert_array_equal(last.atom_features, expected_tree.atom_features)


def test_warm_start_refuses_fewer_trees_other_data_and_warns_on_as_many():
    X = images(200, seed=9)
    detector = IsolationForest(n_estimators=5, warm_start=True, random_state=None)
    detector.fit(X)
    scores = detector.score_samples(X)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        detector.fit(X)
    np.testing.assert_array_equal(detector.score_samples(X), scores)
    with pytest.raises(ValueError, match="n_estimators"):
        detector.set_params(n_estimators=3).fit(X)
    with pytest.raises(ValueError, match="features"):
        detector.set_params(n_estimators=8).fit(X[:, :10])
    with pytest.raises(ValueError, match="max_samples"):
        detector.set_params(max_samples=100).fit(X)
    # A refused fit leaves the forest as it was.
    np.testing.assert_array_equal(detector.score_samples(X), scores)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        detector.set_params(max_samples="auto").fit(X)
    assert detector.tree_stats_["n_nodes"].shape == (8,)


@pytest.mark.parametrize("detector", detectors(n_estimators=7, random_state=10))
def test_tree_structure_and_paths_give_the_scores(detector):
    X = images(250, seed=11)
    X[3, 9] = np.nan
    detector.set_params(max_samples=100).fit(X)
    leaves = detector.apply(X)
    indicator, n_nodes_ptr = detector.decision_path(X)
    assert indicator.shape == (250, n_nodes_ptr[-1])
    lengths = np.empty((250, 7))
    for t in range(7):
        tree = detector.tree_structure(t)
        assert n_nodes_ptr[t + 1] - n_nodes_ptr[t] == tree.node_count
        block = indicator[:, n_nodes_ptr[t] : n_nodes_ptr[t + 1]].toarray()
        # Each row's path runs from the root to the leaf apply gives...
        assert np.all(block[:, 0] == 1)
        assert np.all(block[np.arange(250), leaves[:, t]] == 1)
        assert np.all(tree.is_leaf[leaves[:, t]])
        # ... and the leaf's value is its depth plus c(rows it held).
        depth = block.sum(axis=1) - 1
        held = tree.n_node_samples[leaves[:, t]]
        np.testing.assert_allclose(
            tree.value[leaves[:, t], 0], depth + _average_path_length(held)
        )
        lengths[:, t] = tree.value[leaves[:, t], 0]
    c = _average_path_length(np.array([100]))[0]
    np.testing.assert_allclose(
        detector.score_samples(X), -(2.0 ** (-lengths.mean(axis=1) / c)), rtol=1e-12
    )
    with pytest.raises(ValueError, match="index"):
        detector.tree_structure(7)
