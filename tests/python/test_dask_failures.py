"""morf_rs.dask when things go wrong on a real local cluster: errors raised on the
workers reach the user at once, and workers killed while growing trees are replaced
or named."""

import os
import signal
import time

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
    WorkerPlugin,
    get_task_stream,
)
from sklearn.base import clone  # noqa: E402

from dask_support import finishes_within, grow_tasks, images, worker_processes  # noqa: E402
from morf_rs import (  # noqa: E402
    RandomForestClassifier,
)
from morf_rs import _dask_growth as dask_growth  # noqa: E402
from morf_rs import dask as morf_dask  # noqa: E402
from morf_rs._core import Forest  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster, client = worker_processes()
    with cluster, client:
        yield client


@pytest.fixture
def own_client():
    """A cluster of its own, for a test that kills one of its workers."""
    cluster, client = worker_processes()
    with cluster, client:
        yield client


def causes(error):
    """The chain of ``__cause__`` of an error, at most 10 long."""
    chain = []
    while error.__cause__ is not None and len(chain) < 10:
        chain.append(error.__cause__)
        error = error.__cause__
    return chain


def test_errors_raised_on_workers_reach_the_user_at_once(client):
    """An exception raised on a worker comes back as the ValueError it is, in
    seconds. (One that was its own __cause__ made distributed's error collection
    walk an endless chain while memory grew.)"""
    X, y = images(200, 17)
    frame = pd.DataFrame(X, columns=[f"p{i}" for i in range(36)])
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(frame, y)
    # Partitions whose columns are not those their metadata promised.
    renamed = dd.from_pandas(frame, npartitions=2).map_partitions(
        lambda part: part.rename(columns={"p35": "q35"}),
        meta=frame.iloc[:0],
    )
    start = time.monotonic()
    with pytest.raises(ValueError, match="q35") as caught:
        finishes_within(60, morf_dask.predict(model, renamed).compute)
    assert caught.value not in causes(caught.value)

    with_nan = y.astype(np.float64)
    with_nan[150] = np.nan
    with pytest.raises(ValueError, match="y contains NaN") as caught:
        finishes_within(
            60,
            morf_dask.fit,
            RandomForestClassifier(n_estimators=2),
            da.from_array(X, chunks=100),
            da.from_array(with_nan, chunks=100),
            client=client,
        )
    assert caught.value not in causes(caught.value)
    assert time.monotonic() - start < 30


def kill_the_first_worker_to_start(client, task_prefix, flag):
    """Have the first worker of the cluster that starts a task whose key begins
    with ``task_prefix`` write its address to ``flag`` and SIGKILL itself (once:
    the others, and the worker the nanny starts in its place, find the flag)."""

    class KillOnStart(WorkerPlugin):
        def setup(self, worker):
            self.address = worker.address

        def transition(self, key, start, finish, **kwargs):
            name = key[0] if isinstance(key, tuple) else key
            if finish != "executing" or not str(name).startswith(task_prefix):
                return
            try:
                descriptor = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(descriptor, self.address.encode())
            os.close(descriptor)
            os.kill(os.getpid(), signal.SIGKILL)

    client.register_plugin(KillOnStart())


def test_a_worker_killed_while_growing_trees_on_all_rows_is_replaced(
    own_client, tmp_path
):
    """Its range of trees is grown again on another worker: the forest is the
    one a single machine grows."""
    X, y = images(400, 18)
    single = RandomForestClassifier(n_estimators=10, random_state=6).fit(X, y)
    workers = sorted(own_client.nthreads())
    flag = tmp_path / "killed"
    kill_the_first_worker_to_start(own_client, "grow_share", flag)
    model = RandomForestClassifier(n_estimators=10, random_state=6)
    with get_task_stream(client=own_client) as stream:
        finishes_within(
            90,
            morf_dask.fit,
            model,
            da.from_array(X, chunks=100),
            da.from_array(y, chunks=100),
            client=own_client,
        )
    killed = flag.read_text()
    assert killed in workers
    grown_on = [task["worker"] for task in grow_tasks(stream.data)]
    assert len(grown_on) == 2
    assert killed not in grown_on
    assert model._forest.to_bytes() == single._forest.to_bytes()


def test_a_worker_killed_while_growing_trees_on_its_partitions_is_replaced(
    own_client, tmp_path, monkeypatch
):
    """dask recomputes the dead worker's partitions elsewhere and its range of
    trees is grown again on them: the forest is the one grown without the kill."""
    X, y = images(600, 19)
    shares = []

    def recording_shares(client, futures):
        found = parts_by_worker(client, futures)
        shares.extend([futures.index(part) for part in parts] for _, parts in found)
        return found

    parts_by_worker = dask_growth._parts_by_worker
    monkeypatch.setattr(dask_growth, "_parts_by_worker", recording_shares)
    flag = tmp_path / "killed"
    kill_the_first_worker_to_start(own_client, "grow_share", flag)
    model = RandomForestClassifier(n_estimators=10, random_state=7)
    finishes_within(
        90,
        morf_dask.fit,
        model,
        da.from_array(X, chunks=200),
        da.from_array(y, chunks=200),
        client=own_client,
        training_data="partitions",
    )
    assert flag.exists()

    # Grown again here: each share's trees on the blocks it held.
    seed = np.random.RandomState(7).randint(np.iinfo(np.int32).max)
    bounds = np.linspace(0, 10, len(shares) + 1).astype(int)
    forests = []
    for blocks, start, stop in zip(shares, bounds[:-1], bounds[1:]):
        rows = np.concatenate([np.arange(200 * b, 200 * b + 200) for b in blocks])
        part = clone(model)
        part._fit(X[rows], y[rows], None, seed=seed, trees=(start, stop))
        forests.append(part._forest)
    assert sorted(b for blocks in shares for b in blocks) == [0, 1, 2]
    assert model._forest.to_bytes() == Forest.merge(forests).to_bytes()


def test_a_worker_killed_holding_rows_given_in_memory_is_named(own_client, tmp_path):
    """Rows scattered from memory to one worker die with it and cannot be
    recomputed: the error says which worker held which rows, and what to do."""
    X, y = images(300, 20)
    workers = sorted(own_client.nthreads())
    flag = tmp_path / "killed"
    kill_the_first_worker_to_start(own_client, "grow_share", flag)
    with pytest.raises(ValueError, match="lost training rows given in memory") as e:
        finishes_within(
            90,
            morf_dask.fit,
            RandomForestClassifier(n_estimators=6),
            X,
            y,
            client=own_client,
            training_data="partitions",
        )
    killed = flag.read_text()
    rows = "rows 0 to 150" if killed == workers[0] else "rows 150 to 300"
    assert f"{killed} left the cluster holding {rows}" in str(e.value)
    assert "pass X and y as dask arrays" in str(e.value)


def test_a_task_that_kills_every_worker_it_runs_on_gives_up_with_a_clear_error(
    tmp_path,
):
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        X, y = images(200, 21)
        kill_the_first_worker_to_start(client, "grow_share", tmp_path / "killed")
        with pytest.raises(ValueError, match="died while running it") as caught:
            finishes_within(
                90,
                morf_dask.fit,
                RandomForestClassifier(n_estimators=4),
                da.from_array(X, chunks=100),
                y,
                client=client,
            )
    assert (tmp_path / "killed").read_text() in str(caught.value)
