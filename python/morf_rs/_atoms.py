"""Atom families: the dictionaries trees draw split directions from.

Each family is a mixin that declares its own constructor parameters and turns
them into the engine's atom settings. Classifier, regressor (and any other
ensemble of these trees) classes take a family as their first base, so a
family's parameters are declared and checked in one place.
"""

from __future__ import annotations

import inspect
import math

from morf_rs._params import MAX_FEATURES_AXIS, MAX_FEATURES_OBLIQUE, Param
from morf_rs._presets import preset
from morf_rs._validation import (
    check_int,
    check_real,
    is_int,
    per_axis_bools,
    per_axis_ints,
)
from morf_rs.dictionary import Geometry, engine_dictionary

__all__ = ["AxisAtoms", "ObliqueAtoms", "PatchAtoms"]


class AxisAtoms:
    """Single features: each split thresholds one feature (Breiman's forest)."""

    # Name of the engine's atom dictionary.
    _atoms = "axis"
    # Whether a split may use more candidate atoms than there are features.
    _max_features_above_n = False
    _atom_parameters = ()
    _max_features_param = MAX_FEATURES_AXIS
    _atom_attributes_doc = ""

    def _atom_params(self, n_features):
        """Engine parameters of the atom dictionary, validated."""
        return {}


class ObliqueAtoms(AxisAtoms):
    """Sparse random ±1 combinations of features (SPORF)."""

    _atoms = "oblique"
    _max_features_above_n = True
    _max_features_param = MAX_FEATURES_OBLIQUE
    _atom_parameters = (
        Param(
            "feature_combinations",
            1.5,
            "float",
            "Mean number of features in an atom (at least 1).",
        ),
    )

    def _atom_params(self, n_features):
        return {
            "feature_combinations": check_real(
                "feature_combinations", self.feature_combinations, 1.0
            )
        }


class PatchAtoms(AxisAtoms):
    """Sums over random patches of each row reshaped to ``image_shape`` (MORF)."""

    _atoms = "patch"
    _max_features_above_n = True
    _max_features_param = MAX_FEATURES_OBLIQUE
    _atom_parameters = (
        Param(
            "image_shape",
            None,
            "tuple of int",
            """
Shape each row of X is reshaped to (row-major); its product must be
n_features. None means one axis of length n_features.
""",
        ),
        Param(
            "patch_min",
            1,
            "int or tuple of int",
            "Smallest patch extent, per axis or one value for all axes.",
        ),
        Param(
            "patch_max",
            None,
            "int or tuple of int",
            """
Largest patch extent, per axis or one value for all axes. None takes
the square root of each axis's length, rounded down (at least patch_min):
the extents the MORF papers chose for their images and signals (5 on a
28-pixel axis, 10 on a 100-step signal), and fast on long axes. Pass the
axis lengths (image_shape) for patches up to the whole axis.
""",
        ),
        Param(
            "wrap",
            False,
            "bool or tuple of bool",
            "Whether an axis is cyclic, so that patches wrap around its end.",
        ),
        Param(
            "contiguous",
            True,
            "bool or tuple of bool",
            """
Whether patches are runs of adjacent cells along an axis; False takes
random distinct positions instead (e.g. for unordered sensors).
""",
        ),
        Param(
            "dictionary",
            None,
            '"signals", "images", family or list of (family, probability)',
            """
The atom families split directions are drawn from (see
:mod:`morf_rs.dictionary`), each with its probability (they sum to 1):
signed patches (edges, lines), bumps, Gabor-like stripes, single features,
sparse oblique combinations, neighbourhoods in a graph over the features.
Image families lie on ``image_shape`` and take ``patch_min`` and
``patch_max`` unless they set their own extents. None is the papers' MORF:
patch sums only, reproduced exactly. On images, signed patches win:
``[(SignedPatches(bands=2), 0.55), (SignedPatches(bands=3), 0.35),
(AxisAligned(), 0.1)]`` with ``max_features=56`` and ``bootstrap=False``
took Fashion-MNIST's test error from 0.120 (papers' MORF) to 0.103; see
:mod:`morf_rs.dictionary` and README.md for signals and graphs. The presets
``"signals"`` and ``"images"`` name measured mixtures (signals: pooled atoms,
translation invariant) and, unless ``max_features`` is given, their number of
candidates (see README.md, Pooled atoms and the presets).
""",
        ),
    )
    _atom_attributes_doc = """    image_shape_ : tuple of int
        The resolved image shape.
"""

    def _atom_params(self, n_features):
        shape = self._check_image_shape(n_features)
        ndim = len(shape)
        patch_min = per_axis_ints("patch_min", self.patch_min, shape)
        patch_max = (
            [
                min(length, max(low, math.isqrt(length)))
                for low, length in zip(patch_min, shape)
            ]
            if self.patch_max is None
            else per_axis_ints("patch_max", self.patch_max, shape)
        )
        for axis, (low, high, length) in enumerate(zip(patch_min, patch_max, shape)):
            if low > high:
                raise ValueError(
                    f"patch_min[{axis}]={low} is larger than patch_max[{axis}]={high}"
                    "; patch_min must be <= patch_max on every axis."
                )
            if high > length:
                raise ValueError(
                    f"patch_max[{axis}]={high} is larger than image_shape[{axis}]="
                    f"{length}; patches must fit inside the image."
                )
        self.image_shape_ = shape
        wrap = per_axis_bools("wrap", self.wrap, ndim)
        contiguous = per_axis_bools("contiguous", self.contiguous, ndim)
        image = {"image_shape": list(shape), "wrap": wrap, "contiguous": contiguous}
        if self.dictionary is None:
            return {**image, "patch_min": patch_min, "patch_max": patch_max}
        geometry = Geometry(n_features, shape, patch_min, patch_max, wrap, contiguous)
        if isinstance(self.dictionary, str):
            families, max_features = preset(self.dictionary, geometry)
            params = {
                **image,
                "atoms": "dictionary",
                "dictionary": engine_dictionary(families, geometry),
            }
            # The preset's candidates, unless max_features was set.
            default = inspect.signature(type(self)).parameters["max_features"].default
            if self.max_features == default:
                params["max_features"] = max_features
            return params
        return {
            **image,
            "atoms": "dictionary",
            "dictionary": engine_dictionary(self.dictionary, geometry),
        }

    def _check_image_shape(self, n_features):
        value = self.image_shape
        if value is None:
            return (n_features,)
        if is_int(value):
            value = (value,)
        if isinstance(value, str) or not hasattr(value, "__len__") or len(value) == 0:
            raise TypeError(
                f"image_shape must be a tuple of ints such as (28, 28), got {value!r}."
            )
        shape = tuple(
            check_int(f"image_shape[{axis}]", length, 1)
            for axis, length in enumerate(value)
        )
        if math.prod(shape) != n_features:
            raise ValueError(
                f"image_shape {shape} holds {math.prod(shape)} values but X has "
                f"{n_features} features; give an image_shape whose product is "
                "n_features (or None for one axis of length n_features)."
            )
        return shape
