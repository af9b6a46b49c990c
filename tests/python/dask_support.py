"""What the dask tests share: a local cluster of worker processes, small image data,
the tasks that grew trees, and a call that must finish in time."""

import threading

import numpy as np
from distributed import Client, LocalCluster


def worker_processes():
    """A local cluster of two worker processes of one thread each, and its client."""
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return cluster, Client(cluster)


def images(n_samples, random_state):
    """6x6 byte images whose class shows in a patch of pixels."""
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 3
    X = rng.integers(0, 150, size=(n_samples, 36))
    X[:, 8:11] += 40 * y[:, None]
    return X.astype(np.uint8), y


def grow_tasks(tasks):
    """The tasks of a task stream that grew a share of the trees."""
    names = [t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in tasks]
    return [t for t, name in zip(tasks, names) if str(name).startswith("grow_share")]


def finishes_within(seconds, function, *args, **kwargs):
    """``function(*args, **kwargs)`` in a thread: its result, or the exception it
    raised; the test fails if it has not finished after ``seconds``."""
    outcome = {}

    def run():
        try:
            outcome["result"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
