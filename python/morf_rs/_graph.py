"""Graph atoms and graphs for :mod:`morf_rs.dictionary`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.sparse as sp

from morf_rs._family import Family
from morf_rs._validation import check_bool, check_int, per_axis

__all__ = ["GraphAtoms", "grid_graph"]


class GraphAtoms(Family):
    """Connected neighbourhoods in a graph over the features (sensors, meshes, ...).

    An atom is a random feature and a connected neighbourhood of it whose size is
    uniform in ``[min_size, max_size]``: all features within ``h`` edges, then a
    random part of those at ``h + 1`` (breadth first), all weighted +1. With
    ``signed=True``, half the atom (rounded up) is grown that way with weight +1 and
    the rest with weight -1 from a random feature next to it: two adjacent regions of
    opposite sign. A graph without edges gives a random forest's atoms; a cycle gives
    wrapping 1-D patches (seed 003, Fig. 1).

    Parameters
    ----------
    graph : scipy sparse matrix or array-like of shape (n_edges, 2)
        The adjacency, of shape (n_features, n_features) (any nonzero entry is an
        edge), or the list of edges as pairs of feature indices. Edges are
        undirected; self-loops are ignored.
    min_size, max_size : int, default=1 and 8
        Bounds of the number of features in an atom.
    signed : bool, default=False
        Two adjacent regions weighted +1 and -1 instead of one weighted +1.

    Examples
    --------
    >>> import numpy as np
    >>> from morf_rs.dictionary import GraphAtoms
    >>> ring = np.array([(i, (i + 1) % 50) for i in range(50)])
    >>> GraphAtoms(ring, min_size=2, max_size=6)
    GraphAtoms(graph=<50 edges>, min_size=2, max_size=6, signed=False)
    """

    _engine_name = "graph"

    def __init__(self, graph, min_size=1, max_size=8, signed=False):
        self.graph = graph
        self.min_size = check_int("GraphAtoms: min_size", min_size, 1)
        self.max_size = check_int("GraphAtoms: max_size", max_size, self.min_size)
        self.signed = check_bool("GraphAtoms: signed", signed)
        self._n_nodes, self._edges = _edge_array(graph)

    def _fields(self):
        return {
            "graph": _Shown(f"<{len(self._edges)} edges>"),
            "min_size": self.min_size,
            "max_size": self.max_size,
            "signed": self.signed,
        }

    def __eq__(self, other):
        return (
            super().__eq__(other)
            and self._n_nodes == other._n_nodes
            and np.array_equal(self._edges, other._edges)
        )

    __hash__ = Family.__hash__

    def _engine(self, geometry):
        n_features = geometry.n_features
        if self._n_nodes is not None and self._n_nodes != n_features:
            raise ValueError(
                f"{self!r}: the graph has {self._n_nodes} nodes but X has "
                f"{n_features} features; give one node per feature."
            )
        if len(self._edges) and int(self._edges.max()) >= n_features:
            bad = self._edges[np.any(self._edges >= n_features, axis=1)][0]
            raise ValueError(
                f"{self!r}: edge ({bad[0]}, {bad[1]}) names a feature beyond the "
                f"{n_features} features of X (indices 0..{n_features - 1})."
            )
        if self.max_size > n_features:
            raise ValueError(
                f"{self!r}: max_size={self.max_size} exceeds the {n_features} "
                "features of X."
            )
        return {
            **super()._engine(geometry),
            "n_nodes": n_features,
            "edges": self._edges,
            "min_size": self.min_size,
            "max_size": self.max_size,
            "signed": self.signed,
        }


class _Shown(str):
    """A string that shows as itself in a repr."""

    def __repr__(self):
        return str(self)


def _edge_array(graph):
    """(number of nodes or None for an edge list, edges as a (m, 2) uint32 array)."""
    if sp.issparse(graph):
        if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
            raise ValueError(
                f"GraphAtoms: an adjacency matrix must be square, got shape "
                f"{graph.shape}."
            )
        if graph.shape[0] >= 2**32:
            raise ValueError("GraphAtoms: at most 2^32 - 1 nodes are supported.")
        coo = sp.coo_array(graph)
        keep = coo.data != 0
        edges = np.stack([coo.row[keep], coo.col[keep]], axis=1)
        return graph.shape[0], np.ascontiguousarray(edges, dtype=np.uint32)
    try:
        edges = np.asarray(graph)
    except (TypeError, ValueError) as error:
        raise TypeError(_GRAPH_TYPE_ERROR.format(graph=type(graph).__name__)) from error
    if edges.size == 0:
        return None, np.zeros((0, 2), dtype=np.uint32)
    if edges.ndim != 2 or edges.shape[1] != 2:
        raise ValueError(
            "GraphAtoms: an edge list must have shape (n_edges, 2), got shape "
            f"{edges.shape}; for an adjacency matrix pass a scipy.sparse matrix "
            "(scipy.sparse.csr_array(dense))."
        )
    if not np.issubdtype(edges.dtype, np.integer):
        raise TypeError(_GRAPH_TYPE_ERROR.format(graph=f"array of {edges.dtype}"))
    if edges.min() < 0 or edges.max() >= 2**32:
        raise ValueError(
            "GraphAtoms: edges must name features by their index, 0 to n_features - 1."
        )
    return None, np.ascontiguousarray(edges, dtype=np.uint32)


_GRAPH_TYPE_ERROR = (
    "GraphAtoms: graph must be a scipy.sparse adjacency matrix or an array-like of "
    "(feature, feature) index pairs, got {graph}."
)


def grid_graph(shape, wrap=False, diagonal=False):
    """The adjacency of a grid of cells, as a scipy sparse array.

    Cells are numbered row-major, as the features of an image of ``shape`` are.
    Each cell is joined to the cells one step away along an axis, and with
    ``diagonal=True`` to every cell one step away along several axes (8 neighbours
    in 2-D). ``wrap`` (one bool, or one per axis) joins the ends of cyclic axes.

    Examples
    --------
    >>> from morf_rs.dictionary import grid_graph
    >>> adjacency = grid_graph((28, 28), diagonal=True)
    >>> adjacency.shape, int(adjacency.sum()) // 2
    ((784, 784), 2970)
    """
    shape = tuple(check_int(f"shape[{k}]", d, 1) for k, d in enumerate(shape))
    wrap = [
        check_bool(f"wrap[{k}]", w)
        for k, w in enumerate(per_axis("wrap", wrap, len(shape)))
    ]
    coords = np.indices(shape).reshape(len(shape), -1)
    n = math.prod(shape)
    rows, cols = [], []
    for step in itertools.product((-1, 0, 1), repeat=len(shape)):
        if not any(step) or (not diagonal and sum(map(abs, step)) != 1):
            continue
        moved = coords + np.array(step)[:, None]
        inside = np.ones(n, dtype=bool)
        for axis, length in enumerate(shape):
            if wrap[axis]:
                moved[axis] %= length
            else:
                inside &= (moved[axis] >= 0) & (moved[axis] < length)
        rows.append(np.flatnonzero(inside))
        cols.append(np.ravel_multi_index(moved[:, inside], shape))
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    # A cyclic axis of length 1 meets itself, one of length 2 meets its other cell
    # from both sides: no self-loops, and repeated edges summed then reset to 1.
    apart = rows != cols
    adjacency = sp.csr_array(
        (np.ones(int(apart.sum()), dtype=np.int8), (rows[apart], cols[apart])),
        shape=(n, n),
    )
    adjacency.data[:] = 1
    return adjacency
