"""Atom families: the dictionaries trees draw split directions from.

Each family is a mixin that declares the constraints of its own constructor
parameters and turns them into the engine's atom settings. Forest and boosted
classes take a family as their first base, so a family's parameters are declared
and checked in one place.
"""

from __future__ import annotations

import inspect
import math
from typing import ClassVar

from morf_rs._constraints import Constraint, FamilyParameter, MaxFeatures
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
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "max_features": MaxFeatures(above_n=_max_features_above_n),
    }

    def _atom_params(self, n_features):
        """Engine parameters of the atom dictionary, validated."""
        return {}


class ObliqueAtoms(AxisAtoms):
    """Sparse random ±1 combinations of features (SPORF)."""

    _atoms = "oblique"
    _max_features_above_n = True
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "feature_combinations": FamilyParameter(),
        "max_features": MaxFeatures(above_n=_max_features_above_n),
    }

    def _atom_params(self, n_features):
        return {
            "feature_combinations": check_real(
                "feature_combinations", self.feature_combinations, 1.0, 700.0
            )
        }


class PatchAtoms(AxisAtoms):
    """Sums over random patches of each row reshaped to ``image_shape`` (MORF)."""

    _atoms = "patch"
    _max_features_above_n = True
    # Checked together by _atom_params: image_shape bounds the patch extents, and
    # the dictionary's families lie on both.
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "image_shape": FamilyParameter(),
        "patch_min": FamilyParameter(),
        "patch_max": FamilyParameter(),
        "wrap": FamilyParameter(),
        "contiguous": FamilyParameter(),
        "dictionary": FamilyParameter(),
        "max_features": MaxFeatures(above_n=_max_features_above_n),
    }

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
            # (Isolation forests draw one atom per node; their max_features, the
            # features each tree sees, replaces this one.)
            parameter = inspect.signature(type(self)).parameters.get("max_features")
            if parameter is not None and self.max_features == parameter.default:
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
