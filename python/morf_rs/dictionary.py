"""Atom dictionaries: the families of split directions MORF's trees draw from.

At every node a tree draws ``max_features`` candidate atoms (sparse weight vectors
``a``) and splits on the best threshold of ``a @ x``. The papers' MORF draws sums over
random patches of each row reshaped to ``image_shape``; a *dictionary* mixes
families of atoms, each drawn with a probability you choose::

    from morf_rs import ManifoldObliqueForestClassifier
    from morf_rs.dictionary import AxisAligned, Patches, SignedPatches

    # Recommended for images: edges, lines and a few single pixels, with twice
    # the default number of candidates (Fashion-MNIST test error 0.103 on
    # 60,000 images against 0.115 for a random forest and 0.120 for the
    # papers' MORF; see README.md).
    images = ManifoldObliqueForestClassifier(
        image_shape=(28, 28),
        patch_min=2,
        patch_max=5,
        max_features=56,
        bootstrap=False,
        dictionary=[
            (SignedPatches(bands=2), 0.55),
            (SignedPatches(bands=3), 0.35),
            (AxisAligned(), 0.1),
        ],
    )
    # Recommended for signals: patch sums and single features beside them.
    signals = ManifoldObliqueForestClassifier(
        max_features=1.0,
        bootstrap=False,
        dictionary=[
            (Patches(), 0.3),
            (AxisAligned(), 0.3),
            (SignedPatches(bands=2), 0.25),
            (SignedPatches(bands=3), 0.15),
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

import math
from dataclasses import dataclass

from morf_rs._family import Family
from morf_rs._graph import GraphAtoms, grid_graph
from morf_rs._validation import check_int, check_real, per_axis

__all__ = [
    "AxisAligned",
    "Bumps",
    "Family",
    "Gabors",
    "GraphAtoms",
    "Patches",
    "Pooled",
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
        Mean number of features in an atom, in [1, 700].

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


class Pooled(Family):
    """An image family's atoms pooled over a window of shifts: translation invariance.

    A pooled atom projects a row to the maximum (``reduce="max"``) or minimum
    (``"min"``) of its base atom's response over a window of shifts, so it finds a
    pattern anywhere in the window rather than at one place. Per axis the window
    holds a number of shifts uniform in ``[shift_min, shift_max]``. Along an axis
    that does not wrap, it is cut to the shifts that keep the whole base atom inside
    the image (nothing is padded), so ``shift_max=None`` pools over every position
    the atom fits at (global pooling); along a cyclic (``wrap``) axis shifted cells
    continue around the end. Axes that are not contiguous are not shifted. A response
    touching a missing value makes the pooled value missing. Images of at most 4
    axes.

    A pooled value costs one plain projection per shift (summed side by side along
    the last axis); a model with pooled atoms is stored as base atoms and windows.

    Parameters
    ----------
    family : Patches, SignedPatches, Bumps or Gabors
        The base atoms.
    shift_min : int or tuple of int, default=1
        Fewest shifts per axis (or one value for all axes).
    shift_max : int, tuple of int or None, default=None
        Most shifts per axis; None: the whole axis.
    reduce : {"max", "min", "both"}, default="max"
        The maximum, the minimum, or either with equal chance for each atom.

    Examples
    --------
    >>> from morf_rs.dictionary import Pooled, SignedPatches
    >>> Pooled(SignedPatches(bands=2), shift_min=4, shift_max=8, reduce="both")
    Pooled(family=SignedPatches(bands=2, patch_min=None, patch_max=None), \
shift_min=4, shift_max=8, reduce='both')
    """

    _engine_name = "pooled"

    def __init__(self, family, shift_min=1, shift_max=None, reduce="max"):
        if not isinstance(family, _ImageFamily):
            raise TypeError(
                "Pooled needs an image family (Patches, SignedPatches, Bumps or "
                f"Gabors) to pool, got {family!r}."
            )
        if reduce not in ("max", "min", "both"):
            raise ValueError(
                f"Pooled: reduce must be 'max', 'min' or 'both', got {reduce!r}."
            )
        self.family = family
        self.shift_min = shift_min
        self.shift_max = shift_max
        self.reduce = reduce

    def _fields(self):
        return {
            "family": self.family,
            "shift_min": self.shift_min,
            "shift_max": self.shift_max,
            "reduce": self.reduce,
        }

    def _engine(self, geometry):
        shape = geometry.image_shape
        if len(shape) > 4:
            raise ValueError(
                f"{self!r}: pooled atoms shift along at most 4 image axes; "
                f"image_shape {shape} has {len(shape)}."
            )
        bounds = []
        for name, value in (
            ("shift_min", self.shift_min),
            ("shift_max", self.shift_max),
        ):
            values = per_axis(f"{self!r}: {name}", value, len(shape))
            bounds.append(
                [
                    length
                    if v is None
                    else check_int(f"{self!r}: {name}[{k}]", v, 1, length)
                    for k, (v, length) in enumerate(zip(values, shape))
                ]
            )
        low, high = bounds
        for axis in range(len(shape)):
            if low[axis] > high[axis]:
                raise ValueError(
                    f"{self!r}: shift_min[{axis}]={low[axis]} is larger than "
                    f"shift_max[{axis}]={high[axis]}."
                )
        return {
            **super()._engine(geometry),
            "base": self.family._engine(geometry),
            "shift_min": low,
            "shift_max": high,
            "reduce": self.reduce,
        }


def engine_dictionary(dictionary, geometry):
    """The engine's list of families, each with its probability, checked."""
    if isinstance(dictionary, Family):
        dictionary = [(dictionary, 1.0)]
    if isinstance(dictionary, (str, bytes)) or not isinstance(
        dictionary, (list, tuple)
    ):
        raise TypeError(
            'dictionary must be None, a preset ("signals", "images"), an atom family '
            "such as SignedPatches(), or a "
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


# Defined in private modules, documented and pickled under this one.
for _public in (Family, GraphAtoms, grid_graph):
    _public.__module__ = __name__
