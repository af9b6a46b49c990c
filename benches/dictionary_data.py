"""Data sets of the dictionary benchmark beyond the papers' simulations.

Graph data: sensors whose relations are a graph that is not a grid. Class 0 lights
up a connected group of sensors (a breadth-first ball around a random sensor),
class 1 the same number of sensors scattered at random, under Gaussian noise. Every
sensor is lit equally often in both classes, so single features (a random forest)
and random combinations (SPORF) see almost nothing; atoms that follow the graph see
the group. The same generator on an image's grid graph gives the grid case.

MNIST-1D (Greydanus, 2020): 1-D signals of 40 values in 10 classes, generated
offline by the ``mnist1d`` package with its standard arguments (4,000 training and
1,000 test signals).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def random_geometric_graph(n_nodes: int, mean_degree: float, seed: int) -> sp.csr_array:
    """Sensors uniform in the unit square, joined when closer than the radius that
    gives ``mean_degree`` neighbours on average; numbered in random order."""
    rng = np.random.default_rng(seed)
    points = rng.random((n_nodes, 2))
    radius = np.sqrt(mean_degree / (np.pi * n_nodes))
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    adjacency = (distances < radius) & ~np.eye(n_nodes, dtype=bool)
    return sp.csr_array(adjacency.astype(np.int8))


def small_world_ring(n_nodes: int, n_chords: int, seed: int) -> sp.csr_array:
    """A ring of sensors, each joined to its two neighbours, plus random chords."""
    rng = np.random.default_rng(seed)
    ring = [(i, (i + 1) % n_nodes) for i in range(n_nodes)]
    chords = [
        tuple(rng.choice(n_nodes, size=2, replace=False)) for _ in range(n_chords)
    ]
    rows, cols = np.array(ring + chords).T
    adjacency = sp.coo_array(
        (np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n_nodes, n_nodes)
    )
    adjacency = ((adjacency + adjacency.T) > 0).astype(np.int8)
    return sp.csr_array(adjacency)


def _ball(neighbours: list[np.ndarray], start: int, size: int, rng) -> np.ndarray:
    """``size`` nodes around ``start``, breadth first, ties in random order."""
    taken = {start}
    layer = [start]
    while len(taken) < size and layer:
        frontier = sorted({u for v in layer for u in neighbours[v]} - taken)
        rng.shuffle(frontier)
        layer = frontier[: size - len(taken)]
        taken.update(layer)
    return np.fromiter(taken, dtype=np.int64)


def make_graph_blobs(
    n_samples: int,
    adjacency: sp.csr_array,
    size: int = 6,
    noise: float = 0.6,
    random_state: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Class 0: a connected group of ``size`` sensors lit (value 1); class 1:
    ``size`` random sensors lit; every sensor gets N(0, noise^2) on top."""
    rng = np.random.default_rng(random_state)
    n_nodes = adjacency.shape[0]
    neighbours = np.split(adjacency.indices, adjacency.indptr[1:-1])
    y = np.arange(n_samples) % 2
    rng.shuffle(y)
    X = rng.normal(0.0, noise, size=(n_samples, n_nodes))
    for i in range(n_samples):
        if y[i] == 0:
            lit = _ball(neighbours, int(rng.integers(n_nodes)), size, rng)
        else:
            lit = rng.choice(n_nodes, size=size, replace=False)
        X[i, lit] += 1.0
    return X.astype(np.float32), y


def load_mnist1d() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MNIST-1D's standard split: X_train (4000, 40), y_train, X_test (1000, 40),
    y_test, generated offline (``pip install mnist1d``)."""
    from mnist1d.data import get_dataset_args, make_dataset

    data = make_dataset(get_dataset_args())
    as_float = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return as_float(data["x"]), data["y"], as_float(data["x_test"]), data["y_test"]
