"""morf_rs.dask on a real local cluster of worker processes: blockwise scoring of
dask arrays and dataframes, and forests grown on the workers and merged."""

import doctest
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
from distributed import (  # noqa: E402
    Client,
    LocalCluster,
    get_task_stream,
)
from sklearn.base import clone  # noqa: E402

from dask_support import grow_tasks, images, worker_processes  # noqa: E402
from morf_rs import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    IsolationForest,
    ManifoldObliqueForestClassifier,
    ManifoldObliqueForestRegressor,
    ManifoldObliqueGradientBoostingClassifier,
    ManifoldObliqueGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    SparseObliqueForestClassifier,
    SparseObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingRegressor,
)
from morf_rs import dask as morf_dask  # noqa: E402
from morf_rs._core import Forest  # noqa: E402

EXAMPLE = Path(__file__).parents[2] / "examples" / "dask_cluster.py"


@pytest.fixture(scope="module")
def client():
    cluster, client = worker_processes()
    with cluster, client:
        yield client


MODELS = [
    RandomForestClassifier(n_estimators=7, random_state=0),
    SparseObliqueForestClassifier(n_estimators=7, random_state=1, honest_fraction=0.3),
    ManifoldObliqueForestClassifier(
        n_estimators=7, image_shape=(6, 6), patch_max=3, random_state=2
    ),
]


@pytest.fixture(scope="module")
def fitted():
    X, y = images(400, 0)
    return [clone(model).fit(X, y) for model in MODELS]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("kind", ["numpy", "dask-array", "dask-dataframe"])
def test_trees_grown_on_all_workers_merge_into_the_single_machine_forest(
    client, model, kind
):
    X, y = images(300, 1)
    labels = np.array(["cat", "dog", "emu"])[y]
    single = clone(model).fit(X, labels)
    if kind == "numpy":
        X_in, y_in = X, labels
    elif kind == "dask-array":
        X_in, y_in = da.from_array(X, chunks=(70, 20)), da.from_array(labels, chunks=90)
    else:
        frame = pd.DataFrame(X, columns=[f"p{i}" for i in range(36)])
        single = clone(model).fit(frame, labels)
        X_in = dd.from_pandas(frame, npartitions=3)
        y_in = dd.from_pandas(pd.Series(labels), npartitions=3)
    distributed_model = clone(model)
    with get_task_stream(client=client) as stream:
        returned = morf_dask.fit(distributed_model, X_in, y_in, client=client)
    assert returned is distributed_model
    # The trees were split among both workers, 3 and 4 of the 7.
    grown = grow_tasks(stream.data)
    assert len({task["worker"] for task in grown}) == 2
    assert distributed_model._forest.to_bytes() == single._forest.to_bytes()
    for ours, theirs in zip(
        distributed_model.estimators_samples_, single.estimators_samples_
    ):
        np.testing.assert_array_equal(ours, theirs)
    for name in ("classes_", "n_classes_", "n_features_in_", "image_shape_"):
        if hasattr(single, name):
            np.testing.assert_array_equal(
                getattr(distributed_model, name), getattr(single, name)
            )
    if kind == "dask-dataframe":
        np.testing.assert_array_equal(
            distributed_model.feature_names_in_, single.feature_names_in_
        )
    X_test = images(50, 2)[0]
    if kind == "dask-dataframe":
        X_test = pd.DataFrame(X_test, columns=frame.columns)
    np.testing.assert_array_equal(
        distributed_model.predict_proba(X_test), single.predict_proba(X_test)
    )


def test_one_seed_is_drawn_for_all_workers(client, monkeypatch):
    """With random_state=None each fit draws a fresh seed: the driver draws it
    once, so that the workers grow trees of the same forest. (Patched here on
    the driver only; a worker drawing its own would draw at random.)"""
    X, y = images(200, 11)
    monkeypatch.setattr(RandomForestClassifier, "_draw_seed", lambda self: 12345)
    single = RandomForestClassifier(n_estimators=6).fit(X, y)
    model = RandomForestClassifier(n_estimators=6)
    morf_dask.fit(model, da.from_array(X, chunks=100), y, client=client)
    assert model._forest.to_bytes() == single._forest.to_bytes()


def test_partitions_grow_trees_on_the_rows_each_worker_holds(client):
    """Each worker grows its range of trees on its own blocks only; here the
    blocks are placed on the workers, so the result can be grown again."""
    X, y = images(600, 3)
    y = np.where(np.arange(600) < 400, 0, y)  # imbalanced: balanced weights matter
    workers = sorted(client.nthreads())
    halves = [(X[:300], y[:300]), (X[300:], y[300:])]
    futures = [
        client.scatter([part], workers=[worker])[0]
        for part, worker in zip(halves, workers)
    ]
    X_dask = da.concatenate(
        [
            da.from_delayed(f[0], shape=(300, 36), dtype=np.uint8)
            for f in map(dask.delayed, futures)
        ]
    )
    y_dask = da.concatenate(
        [
            da.from_delayed(f[1], shape=(300,), dtype=y.dtype)
            for f in map(dask.delayed, futures)
        ]
    )
    model = RandomForestClassifier(
        n_estimators=10, random_state=4, class_weight="balanced"
    )
    with get_task_stream(client=client) as stream:
        morf_dask.fit(model, X_dask, y_dask, client=client, training_data="partitions")
    by_worker = {t["worker"]: t for t in grow_tasks(stream.data)}
    assert sorted(by_worker) == workers

    # Grown again here: trees 0..5 on the first half, 5..10 on the second, each
    # with the whole set's classes and balanced weights.
    classes, counts = np.unique(y, return_counts=True)
    weights = dict(zip(classes, len(y) / (len(classes) * counts)))
    seed = np.random.RandomState(4).randint(np.iinfo(np.int32).max)
    parts = []
    for (X_part, y_part), trees in zip(halves, [(0, 5), (5, 10)]):
        part = clone(model).set_params(class_weight=weights)
        part._fit(X_part, y_part, None, seed=seed, trees=trees, classes=classes)
        parts.append(part._forest)
    assert model._forest.to_bytes() == Forest.merge(parts).to_bytes()
    np.testing.assert_array_equal(model.classes_, classes)
    with pytest.raises(AttributeError, match="unknown for a forest grown on parti"):
        model.estimators_samples_  # noqa: B018


def test_sample_weight_and_more_workers_than_trees(client):
    X, y = images(200, 5)
    weights = np.random.default_rng(0).random(200)
    weights[:20] = 0
    single = RandomForestClassifier(n_estimators=1, random_state=0).fit(X, y, weights)
    model = RandomForestClassifier(n_estimators=1, random_state=0)
    X_dask = da.from_array(X, chunks=(64, 36))
    morf_dask.fit(model, X_dask, da.from_array(y, chunks=64), weights, client=client)
    assert model._forest.to_bytes() == single._forest.to_bytes()


def test_a_partition_that_cannot_be_fitted_is_named_with_its_rows(client):
    X, y = images(200, 7)
    weights = np.r_[np.ones(100), np.zeros(100)]  # the second worker's rows weigh 0
    model = RandomForestClassifier(n_estimators=4, random_state=0)
    with pytest.raises(
        ValueError, match=r"growing trees 2 to 3 could not fit the 100 rows it holds"
    ) as error:
        morf_dask.fit(model, X, y, weights, client=client, training_data="partitions")
    assert "non-zero" in str(error.value)
    # The whole set is fine: sent to every worker, it fits as on one machine.
    single = clone(model).fit(X, y, weights)
    morf_dask.fit(model, X, y, weights, client=client)
    assert model._forest.to_bytes() == single._forest.to_bytes()


def test_fit_rejects_what_it_cannot_use(client):
    X, y = images(100, 6)
    model = RandomForestClassifier(n_estimators=4)
    with pytest.raises(ValueError, match="training_data must be one of 'all'"):
        morf_dask.fit(model, X, y, client=client, training_data="local")
    with pytest.raises(ValueError, match="y has 99 rows but X has 100"):
        morf_dask.fit(model, da.from_array(X), da.from_array(y[:-1]), client=client)
    model.set_params(min_samples_leaf=0)
    with pytest.raises(ValueError, match="min_samples_leaf"):
        morf_dask.fit(model, X, y, client=client)
    assert not hasattr(model, "_forest")
    with pytest.raises(ValueError, match="fit with oob_score=False"):
        morf_dask.fit(RandomForestClassifier(oob_score=True), X, y, client=client)
    fitted = RandomForestClassifier(n_estimators=2, warm_start=True).fit(X, y)
    trees = fitted._forest.to_bytes()
    with pytest.raises(ValueError, match="set warm_start=False"):
        morf_dask.fit(fitted.set_params(n_estimators=4), X, y, client=client)
    assert fitted._forest.to_bytes() == trees


@pytest.mark.parametrize("index", range(len(MODELS)))
def test_blockwise_scoring_equals_scoring_in_memory(client, fitted, index):
    model = fitted[index]
    X, _ = images(500, 7)
    # Blocks split along rows and columns; columns are joined back per block.
    X_dask = da.from_array(X, chunks=(120, 20))
    frame = pd.DataFrame(X)
    frame_dask = dd.from_pandas(frame, npartitions=4)
    # A filter that leaves the first partition (rows 0 to 124) empty, as
    # filters of dataframes often do.
    frame_dask = frame_dask.map_partitions(lambda part: part[part.index >= 130])
    for method in ("predict_proba", "predict", "apply"):
        expected = getattr(model, method)(X)
        result = getattr(morf_dask, method)(model, X_dask)
        assert isinstance(result, da.Array)
        np.testing.assert_array_equal(result.compute(), expected)
        from_frame = getattr(morf_dask, method)(model, frame_dask)
        assert isinstance(from_frame, da.Array)
        np.testing.assert_array_equal(from_frame.compute(), expected[130:])
        # In-memory X is scored at once.
        np.testing.assert_array_equal(getattr(morf_dask, method)(model, X), expected)


def test_scoring_is_lazy_and_ships_the_model_once(fitted):
    model = fitted[2]

    def never_called():
        raise AssertionError("X was computed before it was asked for")

    X_lazy = da.from_delayed(
        dask.delayed(never_called)(), shape=(100, 36), dtype=np.float32
    )
    proba = morf_dask.predict_proba(model, X_lazy)
    assert proba.shape == (100, 3)

    # Ten blocks, one model: the graph holds it in one task, which the blocks'
    # tasks name, rather than in each of them. Each task is pickled on its own,
    # as it travels to a worker.
    X = da.ones((1000, 36), chunks=(100, 36), dtype=np.float32)
    graph = dict(morf_dask.predict_proba(model, X).__dask_graph__())
    model_bytes = len(pickle.dumps(model))
    task_bytes = {key: len(pickle.dumps(task)) for key, task in graph.items()}
    scoring = [n for key, n in task_bytes.items() if key[0].startswith("_score_block")]
    assert len(scoring) == 10
    assert max(scoring) < model_bytes / 10
    assert sum(n >= model_bytes for n in task_bytes.values()) == 1


def test_scoring_rejects_what_it_cannot_use(fitted):
    model = fitted[0]
    with pytest.raises(ValueError, match="2-D"):
        morf_dask.predict(model, da.zeros(36, chunks=10))
    with pytest.raises(ValueError, match="X has 35 features"):
        morf_dask.predict_proba(model, da.zeros((10, 35)))
    with pytest.raises(ValueError, match="X has 2 features"):
        morf_dask.apply(model, dd.from_pandas(pd.DataFrame(np.zeros((4, 2))), 2))
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        morf_dask.predict(model, dd.from_pandas(pd.Series(np.zeros(4)), 2))
    with pytest.raises(ValueError, match="not fitted"):
        morf_dask.predict(RandomForestClassifier(), da.zeros((4, 36)))


def test_example_trains_on_a_cluster_and_scores_a_lazy_array():
    result = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--rows",
            "30000",
            "--block-rows",
            "7000",
            "--train",
            "300",
            "--trees",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "grew 10 trees on 2 workers" in result.stdout
    assert "scoring 30,000 images" in result.stdout
    accuracy = float(result.stdout.split("accuracy: ")[1].split()[0])
    assert accuracy > 0.9


def test_scoring_resolves_n_jobs_where_blocks_are_scored(fitted):
    model = fitted[1]
    X = images(300, 9)[0]
    expected = model.predict_proba(X)
    for n_jobs in (-1, 2, None):
        result = morf_dask.predict_proba(
            model, da.from_array(X, chunks=100), n_jobs=n_jobs
        )
        np.testing.assert_array_equal(result.compute(), expected)
    with pytest.raises(ValueError, match="n_jobs=0"):
        morf_dask.predict(model, da.from_array(X), n_jobs=0)
    with pytest.raises(TypeError, match="n_jobs must be None or an int"):
        morf_dask.apply(model, X, n_jobs="all")


def test_fit_needs_workers():
    with (
        LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        X, y = images(50, 10)
        with pytest.raises(ValueError, match="no workers"):
            morf_dask.fit(RandomForestClassifier(), X, y, client=client)


def test_examples_in_the_docstrings_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    tests = finder.find(morf_dask, globs={})
    assert sum(len(test.examples) for test in tests) >= 25
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


def test_namespace_shows_the_four_functions():
    star = {}
    exec("from morf_rs.dask import *", star)
    public = ["apply", "fit", "predict", "predict_proba"]
    assert sorted(k for k in star if k != "__builtins__") == public
    assert sorted(dir(morf_dask)) == public


def test_without_dask_the_import_says_what_to_install():
    code = (
        "import sys\n"
        "sys.modules['dask'] = None\n"
        "try:\n"
        "    import morf_rs.dask\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert "pip install 'morf_rs[dask]'" in result.stdout, result.stderr


def test_a_share_refuses_labels_outside_the_classes_it_is_given():
    X, y = images(60, 12)
    model = RandomForestClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="not among the classes"):
        model._fit(X, y, None, trees=(0, 1), classes=np.array([0, 1]))
    model._fit(X, y, None, trees=(0, 1), classes=np.array([0, 1, 2, 3]))
    assert model.n_classes_ == 4
    assert model._forest.n_estimators == 1


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_regressors_grow_on_workers_and_score_blockwise(client, n_outputs):
    X, labels = images(300, 13)
    rng = np.random.default_rng(13)
    values = X[:, 8:10].astype(np.float64) + rng.normal(size=(300, 2))
    y = values[:, 0] if n_outputs == 1 else values
    models = [
        RandomForestRegressor(n_estimators=5, random_state=3),
        ManifoldObliqueForestRegressor(
            n_estimators=5, image_shape=(6, 6), patch_max=3, random_state=4
        ),
    ]
    for model in models:
        single = clone(model).fit(X, y)
        # y's blocks split along outputs too: each share gets whole rows.
        y_dask = da.from_array(y, chunks=(70, 1) if n_outputs == 2 else 70)
        morf_dask.fit(model, da.from_array(X, chunks=(90, 36)), y_dask, client=client)
        assert model._forest.to_bytes() == single._forest.to_bytes()
        assert model.n_outputs_ == n_outputs
        predicted = morf_dask.predict(model, da.from_array(X, chunks=(80, 36)))
        assert predicted.shape == y.shape
        np.testing.assert_array_equal(predicted.compute(), single.predict(X))
    with pytest.raises(TypeError, match="predict_proba needs a classifier"):
        morf_dask.predict_proba(models[0], da.from_array(X))


BOOSTERS = [
    GradientBoostingClassifier(n_estimators=4, random_state=0),
    SparseObliqueGradientBoostingClassifier(n_estimators=4, random_state=1),
    ManifoldObliqueGradientBoostingClassifier(
        n_estimators=4, image_shape=(6, 6), patch_max=3, random_state=2
    ),
    GradientBoostingRegressor(n_estimators=4, random_state=3),
    SparseObliqueGradientBoostingRegressor(n_estimators=4, random_state=4),
    ManifoldObliqueGradientBoostingRegressor(
        n_estimators=4, image_shape=(6, 6), patch_max=3, random_state=5
    ),
]


@pytest.mark.parametrize("booster", BOOSTERS, ids=lambda m: type(m).__name__)
def test_boosters_score_blockwise_as_in_memory(client, booster):
    X, y = images(300, 14)
    booster = clone(booster).fit(X, y)
    X_test = images(240, 15)[0]
    X_dask = da.from_array(X_test, chunks=(70, 20))
    frame_dask = dd.from_pandas(pd.DataFrame(X_test), npartitions=3)
    methods = ["predict", "apply"]
    if hasattr(booster, "predict_proba"):
        methods.append("predict_proba")
    for method in methods:
        expected = getattr(booster, method)(X_test)
        for X_in in (X_dask, frame_dask):
            result = getattr(morf_dask, method)(booster, X_in, n_jobs=-1)
            assert isinstance(result, da.Array)
            np.testing.assert_array_equal(result.compute(), expected)
        np.testing.assert_array_equal(
            getattr(morf_dask, method)(booster, X_test), expected
        )
    # The call's n_jobs scores, not the model's, which is left as it was.
    expected = booster.predict(X_test)
    booster.set_params(n_jobs=0)  # refused if it were used
    np.testing.assert_array_equal(
        morf_dask.predict(booster, X_dask).compute(), expected
    )
    assert booster.n_jobs == 0


@pytest.mark.parametrize("booster", BOOSTERS, ids=lambda m: type(m).__name__)
def test_fit_refuses_boosters_at_once_and_says_what_to_do(client, booster):
    X, y = images(100, 16)
    model = clone(booster)
    with (
        get_task_stream(client=client) as stream,
        pytest.raises(ValueError, match=r"Fit it on one machine \(model\.fit"),
    ):
        morf_dask.fit(model, da.from_array(X, chunks=50), y, client=client)
    assert stream.data == []
    assert not hasattr(model, "_booster")


def test_fit_refuses_what_is_not_a_morf_rs_forest(client):
    from sklearn.ensemble import RandomForestClassifier as SklearnForest

    X, y = images(100, 16)
    with pytest.raises(TypeError, match="forests of morf_rs .*; got sklearn.ensemble"):
        morf_dask.fit(SklearnForest(), X, y, client=client)
    isolation = IsolationForest(n_estimators=2)
    with pytest.raises(TypeError, match="not isolation or unsupervised forests"):
        morf_dask.fit(isolation, X, None, client=client)
