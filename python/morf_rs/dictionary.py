"""Atom dictionaries: the families of split directions MORF's trees draw from.

At every node a tree draws ``max_features`` candidate atoms (sparse weight vectors
``a``) and splits on the best threshold of ``a @ x``. The papers' MORF draws sums over
random patches of each row reshaped to ``image_shape``; a *dictionary* mixes
families of atoms, each drawn with a probability you choose::

    from morf_rs import ManifoldObliqueForestClassifier
    from morf_rs.dictionary import AxisAligned, Patches, SignedPatches

    clf = ManifoldObliqueForestClassifier(
        image_shape=(28, 28),
        patch_min=2,
        patch_max=5,
        dictionary=[
            (SignedPatches(bands=2), 0.5),
            (Patches(), 0.25),
            (AxisAligned(), 0.25),
        ],
    )

Image families (:class:`Patches`, :class:`SignedPatches`, :class:`Bumps`,
:class:`Gabors`) lie on the estimator's ``image_shape`` and follow its ``wrap``
(cyclic axes), ``contiguous`` and zero-padding rules; their extents default to the
estimator's ``patch_min`` and ``patch_max``. :class:`AxisAligned` and
:class:`SparseOblique` are the atoms of a random forest and of SPORF, and
:class:`GraphAtoms` draws connected neighbourhoods in a graph over the features
(:func:`grid_graph` builds the graph of an image). Every family draws whole-number
weights, so projections of whole-valued X (pixels, counts) stay whole and split
search keeps its fast paths.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from morf_rs._validation import check_bool, check_int, check_real, per_axis

__all__ = [
    "AxisAligned",
    "Bumps",
    "Family",
    "Gabors",
    "GraphAtoms",
    "Patches",
    "SignedPatches",
    "SparseOblique",
    "grid_graph",
]


def __dir__():
    # What dir() and tab completion list: the families, not imports or helpers.
    return __all__


# How far the probabilities of a dictionary may sum from 1.
_PROBABILITY_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Geometry:
    """The image an estimator's rows are read as, and its default patch extents."""

    n_features: int
    image_shape: tuple
    patch_min: list
    patch_max: list
    wrap: list
    contiguous: list


class Family:
    """An atom family; see the subclasses. Use it in a dictionary as ``(family, p)``."""

    # The engine's name of the family.
    _engine_name = ""

    def _engine(self, geometry):
        """The engine's description of the family, checked against ``geometry``."""
        return {"family": self._engine_name}

    def _fields(self):
        return {}

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other):
        return type(self) is type(other) and self._fields() == other._fields()

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))


class AxisAligned(Family):
    """Single features, weight 1: the atoms of Breiman's random forest.

    Keeping them in a dictionary keeps the standard basis among the candidates (seed
    003's consistency argument), which helps where single features matter (noisy
    signals, a few informative sensors).

    Examples
    --------
    >>> from morf_rs.dictionary import AxisAligned, Patches
    >>> dictionary = [(Patches(), 0.5), (AxisAligned(), 0.5)]
    """

    _engine_name = "axis"


class SparseOblique(Family):
    """Sparse random ±1 combinations of features anywhere in the row (SPORF).

    Parameters
    ----------
    feature_combinations : float, default=1.5
        Mean number of features in an atom (at least 1).

    Examples
    --------
    >>> from morf_rs.dictionary import SparseOblique
    >>> SparseOblique(feature_combinations=2.0)
    SparseOblique(feature_combinations=2.0)
    """

    _engine_name = "oblique"

    def __init__(self, feature_combinations=1.5):
        self.feature_combinations = check_real(
            "feature_combinations", feature_combinations, 1.0
        )

    def _fields(self):
        return {"feature_combinations": self.feature_combinations}

    def _engine(self, geometry):
        return {**super()._engine(geometry), **self._fields()}


class _ImageFamily(Family):
    """A family over patches of the image; extents default to the estimator's."""

    def __init__(self, patch_min=None, patch_max=None):
        self.patch_min = patch_min
        self.patch_max = patch_max

    def _fields(self):
        return {"patch_min": self.patch_min, "patch_max": self.patch_max}

    def _extents(self, geometry):
        shape = geometry.image_shape
        extents = []
        for name, value, default in (
            ("patch_min", self.patch_min, geometry.patch_min),
            ("patch_max", self.patch_max, geometry.patch_max),
        ):
            if value is None:
                extents.append(list(default))
                continue
            values = per_axis(f"{self!r}: {name}", value, len(shape))
            extents.append(
                [
                    check_int(f"{self!r}: {name}[{k}]", v, 1)
                    for k, v in enumerate(values)
                ]
            )
        low, high = extents
        for axis, length in enumerate(shape):
            if low[axis] > high[axis]:
                raise ValueError(
                    f"{self!r}: patch_min[{axis}]={low[axis]} is larger than "
                    f"patch_max[{axis}]={high[axis]}; patch_min must be <= patch_max "
                    "on every axis."
                )
            if high[axis] > length:
                raise ValueError(
                    f"{self!r}: patch_max[{axis}]={high[axis]} is larger than "
                    f"image_shape[{axis}]={length}; patches must fit inside the image."
                )
        return low, high

    def _engine(self, geometry):
        low, high = self._extents(geometry)
        return {**super()._engine(geometry), "patch_min": low, "patch_max": high}


class Patches(_ImageFamily):
    """Sums over random patches: the papers' MORF atoms (all weights 1).

    Per axis, the extent is uniform in ``[patch_min, patch_max]`` and the patch is
    placed so that every cell is equally likely to be covered, cells past the border
    being dropped (zero padding), or wrapping around cyclic axes.

    Parameters
    ----------
    patch_min, patch_max : int or tuple of int, default=None
        Smallest and largest extent per axis (or one value for all axes); None takes
        the estimator's ``patch_min`` / ``patch_max``.

    Examples
    --------
    >>> from morf_rs.dictionary import Patches
    >>> Patches(patch_min=(1, 2), patch_max=(1, 8))
    Patches(patch_min=(1, 2), patch_max=(1, 8))
    """

    _engine_name = "patches"


class SignedPatches(_ImageFamily):
    """Adjacent patches of opposite sign: edge and line detectors.

    ``bands=2`` puts two equal rectangles side by side along a random axis, weighted
    +1 and -1 (an edge); ``bands=3`` three, weighted -1, +2, -1 (a line). Each
    rectangle has the extents :class:`Patches` would draw; the bands lie along an axis
    drawn among those that can hold them (contiguous, and on a cyclic axis long enough
    for ``bands`` bands of ``patch_min`` cells, the band width being capped so that
    they do not overlap). Placement, zero padding and wrapping follow
    :class:`Patches`.

    Parameters
    ----------
    bands : {2, 3}, default=2
        Number of bands.
    patch_min, patch_max : int or tuple of int, default=None
        Extents of each band per axis; None takes the estimator's.

    Examples
    --------
    >>> from morf_rs.dictionary import SignedPatches
    >>> edges_and_lines = [(SignedPatches(bands=2), 0.5), (SignedPatches(bands=3), 0.5)]
    """

    _engine_name = "signed"

    def __init__(self, bands=2, patch_min=None, patch_max=None):
        super().__init__(patch_min, patch_max)
        self.bands = check_int("SignedPatches: bands", bands, 2, 3)

    def _fields(self):
        return {"bands": self.bands, **super()._fields()}

    def _engine(self, geometry):
        engine = {**super()._engine(geometry), "bands": self.bands}
        low = engine["patch_min"]
        if not any(
            geometry.contiguous[axis]
            and length >= self.bands
            and (not geometry.wrap[axis] or self.bands * low[axis] <= length)
            for axis, length in enumerate(geometry.image_shape)
        ):
            raise ValueError(
                f"{self!r}: no axis of image_shape {geometry.image_shape} can hold "
                f"{self.bands} bands side by side: they need a contiguous axis of at "
                f"least {self.bands} cells, and on a cyclic (wrap) axis at least "
                f"{self.bands} x patch_min cells. Lower patch_min or bands."
            )
        return engine


class Bumps(_ImageFamily):
    """Patches weighted by a Gaussian-like bump, heaviest in the middle.

    The weight of a cell is the product, over contiguous axes, of a tent
    ``1, 2, ..., 2, 1`` across the patch's extent (a 3x5 patch: rows 1, 2, 1 times
    columns 1, 2, 3, 2, 1), so the weights are whole numbers.

    Parameters
    ----------
    patch_min, patch_max : int or tuple of int, default=None
        Extents per axis; None takes the estimator's.

    Examples
    --------
    >>> from morf_rs.dictionary import Bumps
    >>> Bumps(patch_min=3, patch_max=5)
    Bumps(patch_min=3, patch_max=5)
    """

    _engine_name = "bumps"


class Gabors(_ImageFamily):
    """Gabor-like atoms: oriented stripes under a Gaussian envelope.

    Over a patch, the weight of a cell at offset ``u`` from the centre is
    ``round(2 e(u) cos(2 pi <u, n> / lambda + phi))``, a whole number in -2..2
    (zeros dropped), with ``e`` a Gaussian envelope of half the patch's extent per
    axis, ``n`` a uniformly random direction over the contiguous axes, the
    wavelength ``lambda`` between one and two times the patch's widest extent and a
    uniform phase ``phi`` (seed 003, section 7: local translation equivariance).

    Parameters
    ----------
    patch_min, patch_max : int or tuple of int, default=None
        Extents per axis; None takes the estimator's.

    Examples
    --------
    >>> from morf_rs.dictionary import Gabors
    >>> Gabors(patch_min=3, patch_max=7)
    Gabors(patch_min=3, patch_max=7)
    """

    _engine_name = "gabors"


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


def engine_dictionary(dictionary, geometry):
    """The engine's list of families, each with its probability, checked."""
    if isinstance(dictionary, Family):
        dictionary = [(dictionary, 1.0)]
    if isinstance(dictionary, (str, bytes)) or not isinstance(
        dictionary, (list, tuple)
    ):
        raise TypeError(
            "dictionary must be None, an atom family such as SignedPatches(), or a "
            f"list of (family, probability) pairs; got {dictionary!r}."
        )
    if len(dictionary) == 0:
        raise ValueError(
            "dictionary is empty; give at least one (family, probability)."
        )
    families = []
    for index, entry in enumerate(dictionary):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2):
            raise TypeError(
                f"dictionary[{index}] must be a (family, probability) pair, got "
                f"{entry!r}."
            )
        family, probability = entry
        if not isinstance(family, Family):
            raise TypeError(
                f"dictionary[{index}]: {family!r} is not an atom family; use the "
                "classes of morf_rs.dictionary, e.g. (SignedPatches(), 0.5)."
            )
        probability = check_real(
            f"dictionary[{index}] probability", probability, 0.0, 1.0
        )
        families.append({**family._engine(geometry), "probability": probability})
    total = math.fsum(f["probability"] for f in families)
    if abs(total - 1.0) > _PROBABILITY_TOLERANCE:
        raise ValueError(
            f"the probabilities of dictionary sum to {total:g}; they must sum to 1."
        )
    return families
