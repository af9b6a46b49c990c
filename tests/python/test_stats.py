"""morf_rs.stats: per-tree out-of-bag posteriors, the metrics, the Coleman and
permutation tests."""

import doctest

import numpy as np
import pytest
from scipy.stats import entropy
from sklearn.metrics import (
    balanced_accuracy_score,
    mean_absolute_error,
    mean_squared_error,
    roc_auc_score,
    roc_curve,
)

from morf_rs import (
    GradientBoostingClassifier,
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    _core,
    stats,
)
from morf_rs.stats import coleman_test, oob_posteriors, permutation_test


def tabular(n=200, seed=0):
    """Column 0 carries the class; the others are noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def images(n=240, seed=0):
    """8x8 noise images; class 1 brightens the 3x3 patch at the top left."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 8, 8))
    X[:, :3, :3] += 0.8 * y[:, None, None]
    return X.reshape(n, -1).astype(np.float32), y


def region(rows, cols):
    grid = np.mgrid[rows, cols].reshape(2, -1)
    return np.ravel_multi_index(grid, (8, 8))


FORESTS = [
    RandomForestClassifier(n_estimators=15, random_state=3, oob_score=True),
    SparseObliqueForestClassifier(
        n_estimators=15, random_state=4, honest_fraction=0.5, oob_score=True
    ),
    ManifoldObliqueForestClassifier(
        n_estimators=15, image_shape=(8, 8), random_state=5, oob_score=True
    ),
    RandomForestRegressor(
        n_estimators=15, random_state=6, honest_fraction=0.3, oob_score=True
    ),
]


@pytest.mark.parametrize("forest", FORESTS, ids=lambda f: type(f).__name__)
def test_per_tree_posteriors_are_nan_exactly_where_the_tree_saw_the_sample(forest):
    X, y = images(120)
    posteriors = oob_posteriors(forest, X, y)
    fitted = forest.fit(X, y)
    width = 2 if hasattr(fitted, "classes_") else 1
    assert posteriors.shape == (15, 120, width)
    honest = forest.honest_fraction > 0
    for t, sample in enumerate(fitted.estimators_samples_):
        in_bag = np.zeros(120, bool)
        in_bag[sample] = True
        missing = np.isnan(posteriors[t]).any(axis=1)
        assert np.all(missing[in_bag])
        if honest:
            # An out-of-bag sample may reach a leaf no estimation row filled.
            assert np.count_nonzero(missing & ~in_bag) < np.count_nonzero(~in_bag) / 3
        else:
            np.testing.assert_array_equal(missing, in_bag)
    oob = (
        fitted.oob_decision_function_
        if width == 2
        else fitted.oob_prediction_.reshape(-1, 1)
    )
    scored = ~np.isnan(posteriors).all(axis=(0, 2))
    np.testing.assert_allclose(
        np.nanmean(posteriors[:, scored], axis=0), oob[scored], rtol=1e-12
    )


def test_metrics_match_numpy_and_scikit_learn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300)
    # Rounded, so that scores tie as forests' averaged posteriors do.
    p1 = np.round(np.clip(0.3 * y + rng.uniform(size=300) * 0.7, 0, 1), 1)
    posteriors = np.column_stack([1 - p1, p1])
    classes = y.astype(np.uint32)

    def score(metric):
        return _core.score_metric(metric, classes, posteriors)

    fpr, tpr, _ = roc_curve(y, p1, drop_intermediate=False)
    assert score("s@98") == tpr[fpr <= 0.02].max()
    assert score("auc") == pytest.approx(roc_auc_score(y, p1), rel=1e-12)
    conditional = entropy(posteriors, axis=1).mean()
    assert score("cond_entropy") == pytest.approx(conditional, rel=1e-12)
    marginal = entropy(np.bincount(y))
    assert score("mi") == pytest.approx(marginal - conditional, rel=1e-12)
    predicted = posteriors.argmax(axis=1)
    assert score("balanced_accuracy") == pytest.approx(
        balanced_accuracy_score(y, predicted), rel=1e-12
    )
    # Three classes for the class metrics that take any number.
    three = rng.dirichlet(np.ones(3), size=300)
    labels = rng.integers(0, 3, size=300)
    assert _core.score_metric(
        "balanced_accuracy", labels.astype(np.uint32), three
    ) == pytest.approx(balanced_accuracy_score(labels, three.argmax(axis=1)))
    values = rng.normal(size=(300, 2))
    predictions = values + rng.normal(size=(300, 2))
    assert _core.score_metric("mse", values, predictions) == pytest.approx(
        mean_squared_error(values, predictions), rel=1e-12
    )
    assert _core.score_metric("mae", values, predictions) == pytest.approx(
        mean_absolute_error(values, predictions), rel=1e-12
    )


def test_the_coleman_statistic_is_the_metric_difference_of_the_two_forests():
    X, y = tabular()
    forest = RandomForestClassifier(n_estimators=30, max_features=0.5)
    result = coleman_test(
        forest, X, y, [0], metric="auc", n_repeats=200, random_state=2
    )
    # The same forests, rebuilt from the seeds the test draws.
    rng = np.random.RandomState(2)
    seeds = rng.randint(np.iinfo(np.int32).max, size=2)
    original = oob_posteriors(forest.set_params(random_state=int(seeds[0])), X, y)
    X_permuted = X.copy()
    X_permuted[:, [0]] = X[rng.permutation(len(X))][:, [0]]
    permuted = oob_posteriors(
        forest.set_params(random_state=int(seeds[1])), X_permuted, y
    )

    def auc(posteriors):
        scored = ~np.isnan(posteriors[:, :, 0]).all(axis=0)
        return roc_auc_score(y[scored], np.nanmean(posteriors, axis=0)[scored, 1])

    assert result.statistic == pytest.approx(auc(original) - auc(permuted), abs=1e-12)
    assert result.null_distribution.shape == (200,)
    expected = (
        1 + np.count_nonzero(result.null_distribution >= result.statistic)
    ) / 201
    assert result.pvalue == expected


@pytest.mark.parametrize("metric", ["s@98", "auc", "mi", "balanced_accuracy"])
def test_a_covariate_with_signal_gets_a_small_pvalue_and_noise_does_not(metric):
    X, y = tabular(300)
    forest = RandomForestClassifier(n_estimators=40, max_features=0.5)
    signal = coleman_test(forest, X, y, [0], metric, n_repeats=300, random_state=0)
    noise = coleman_test(forest, X, y, [4, 5], metric, n_repeats=300, random_state=0)
    assert signal.pvalue < 0.05
    assert noise.pvalue > 0.05


def test_a_patch_of_an_image_is_tested_with_morf():
    X, y = images()
    forest = ManifoldObliqueForestClassifier(
        n_estimators=40, image_shape=(8, 8), honest_fraction=0.5
    )
    signal = coleman_test(
        forest,
        X,
        y,
        region(slice(0, 3), slice(0, 3)),
        "auc",
        n_repeats=300,
        random_state=1,
    )
    noise = coleman_test(
        forest,
        X,
        y,
        region(slice(5, 8), slice(5, 8)),
        "auc",
        n_repeats=300,
        random_state=1,
    )
    assert signal.pvalue < 0.05 < noise.pvalue


def test_per_tree_permutations_and_regressors():
    X, y = tabular()
    forest = SparseObliqueForestClassifier(n_estimators=20)
    result = coleman_test(
        forest, X, y, [0], "auc", n_repeats=200, permute_per_tree=True, random_state=3
    )
    assert result.pvalue < 0.05
    values = X[:, 1] + 0.3 * np.random.default_rng(0).normal(size=len(X))
    regressor = RandomForestRegressor(n_estimators=20, max_features=0.5)
    for metric in ("mse", "mae"):
        signal = coleman_test(
            regressor, X, values, [1], metric, n_repeats=200, random_state=0
        )
        noise = coleman_test(
            regressor, X, values, [3], metric, n_repeats=200, random_state=0
        )
        assert signal.statistic > 0
        assert signal.pvalue < 0.05
        assert noise.pvalue > 0.05


def test_the_null_is_the_same_for_any_number_of_threads():
    X, y = tabular()
    results = [
        coleman_test(
            RandomForestClassifier(n_estimators=20, n_jobs=n_jobs),
            X,
            y,
            [0, 1],
            n_repeats=500,
            random_state=7,
        )
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(
        results[0].null_distribution, results[1].null_distribution
    )
    assert results[0].pvalue == results[1].pvalue
    other = coleman_test(
        RandomForestClassifier(n_estimators=20),
        X,
        y,
        [0, 1],
        n_repeats=500,
        random_state=8,
    )
    assert not np.array_equal(other.null_distribution, results[0].null_distribution)


def test_the_permutation_test_refits_per_repeat():
    X, y = tabular()
    forest = RandomForestClassifier(n_estimators=15, max_features=0.5)
    signal = permutation_test(forest, X, y, [0], "auc", n_repeats=19, random_state=0)
    assert signal.pvalue == 0.05
    assert signal.null_distribution.shape == (19,)
    assert signal.statistic > signal.null_distribution.max()
    noise = permutation_test(forest, X, y, [5], "auc", n_repeats=19, random_state=0)
    assert noise.pvalue > 0.05
    # Lower is better: p counts the permuted fits that score as low or lower.
    entropy_test = permutation_test(
        forest, X, y, [0], "cond_entropy", n_repeats=9, random_state=0
    )
    assert entropy_test.statistic < entropy_test.null_distribution.min()
    assert entropy_test.pvalue == 0.1


def test_bad_input_is_refused_with_what_to_change():
    X, y = tabular(60)
    forest = RandomForestClassifier(n_estimators=5)
    with pytest.raises(TypeError, match="forest classifier or regressor"):
        coleman_test(GradientBoostingClassifier(), X, y, [0])
    with pytest.raises(ValueError, match="bootstrap=True"):
        coleman_test(RandomForestClassifier(bootstrap=False), X, y, [0])
    with pytest.raises(ValueError, match="metric must be one of"):
        coleman_test(forest, X, y, [0], metric="accuracy")
    with pytest.raises(ValueError, match="'mse' or 'mae'"):
        coleman_test(RandomForestRegressor(), X, X[:, 0], [0], metric="auc")
    with pytest.raises(ValueError, match="regression values"):
        coleman_test(forest, X, y, [0], metric="mse")
    with pytest.raises(ValueError, match="two classes"):
        coleman_test(forest, X, np.arange(60) % 3, [0], metric="s@98")
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        coleman_test(forest, X, y, [6])
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        coleman_test(forest, X, y, [-1])
    with pytest.raises(ValueError, match="no column"):
        coleman_test(forest, X, y, [])
    with pytest.raises(ValueError, match="twice"):
        coleman_test(forest, X, y, [1, 1])
    with pytest.raises(TypeError, match="column indices"):
        coleman_test(forest, X, y, [0.5])
    with pytest.raises(ValueError, match="one entry per feature"):
        coleman_test(forest, X, y, [True, False])
    with pytest.raises(ValueError, match="n_repeats"):
        coleman_test(forest, X, y, [0], n_repeats=0)
    with pytest.raises(ValueError, match="n_repeats"):
        permutation_test(forest, X, y, [0], n_repeats=2.5)
    with pytest.raises(TypeError, match="permute_per_tree"):
        coleman_test(forest, X, y, [0], permute_per_tree="yes")
    # Too few trees: a half of them may score no sample of a class.
    with pytest.raises(ValueError, match="use more trees"):
        coleman_test(
            RandomForestClassifier(n_estimators=1),
            X[:8],
            y[:8],
            [0],
            n_repeats=50,
            random_state=0,
        )


def test_the_documented_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(stats, "morf_rs.stats"):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0
