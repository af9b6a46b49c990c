"""Declarative parameter validation, after scikit-learn's ``_parameter_constraints``.

Each estimator class maps every constructor parameter to the :class:`Constraint`
its value must meet. :func:`validate_params` checks them all in one place at fit,
in the order of the mapping, and returns the values the engine takes (a fraction of
the samples resolved to a count, ``"log_loss"`` to ``"entropy"``, ``n_jobs`` to a
number of threads). A constraint may read the number of samples and features of X
and the values checked before it (``oob_score`` needs ``bootstrap``), so the order
of a mapping matters where one parameter depends on another.

Every failure raises the ValueError or TypeError of :mod:`morf_rs._validation`,
naming the parameter and what it accepts.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from sklearn.utils import check_random_state

from morf_rs._validation import (
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_verbose,
    is_int,
    resolve_fraction_or_count,
    resolve_n_threads,
)

__all__ = [
    "AutoOrBool",
    "Bool",
    "BoolOrCallable",
    "ClassWeight",
    "Constraint",
    "CountOrFraction",
    "FamilyParameter",
    "Int",
    "MaxFeatures",
    "NJobs",
    "Needed",
    "Options",
    "RandomState",
    "Real",
    "SamplesCountOrFraction",
    "Verbose",
    "validate_params",
]

# An int bound, or the name of a quantity of the training data ("n_samples",
# "n_features") that bounds the value.
Bound = Union[int, str, None]


class Constraint:
    """What one parameter may be; see the subclasses."""

    def check(self, name: str, value: Any, context: Mapping[str, Any]) -> Any:
        """``value`` as the engine takes it; raises ValueError or TypeError.

        ``context`` holds ``n_samples`` and ``n_features`` of X and the checked
        values of the parameters before ``name`` in the mapping.
        """
        raise NotImplementedError


def _bound(bound: Bound, context: Mapping[str, Any]) -> int | None:
    return context[bound] if isinstance(bound, str) else bound


@dataclass(frozen=True)
class Int(Constraint):
    """An int in ``[low, high]`` (``high`` None: no upper limit), or None when
    ``none`` allows it."""

    low: int
    high: Bound = None
    none: bool = False

    def check(self, name, value, context):
        if value is None and self.none:
            return None
        return check_int(name, value, self.low, _bound(self.high, context))


@dataclass(frozen=True)
class Real(Constraint):
    """A finite real number between ``low`` and ``high``, each end closed unless
    said open."""

    low: float
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def check(self, name, value, context):
        return check_real(
            name,
            value,
            self.low,
            self.high,
            low_open=self.low_open,
            high_open=self.high_open,
        )


@dataclass(frozen=True)
class Options(Constraint):
    """One of ``options`` (strings); ``aliases`` maps a name to the one the engine
    knows it by."""

    options: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()

    def check(self, name, value, context):
        value = check_choice(name, value, self.options)
        return dict(self.aliases).get(value, value)


@dataclass(frozen=True)
class Bool(Constraint):
    """True or False."""

    def check(self, name, value, context):
        return check_bool(name, value)


@dataclass(frozen=True)
class Verbose(Constraint):
    """A verbosity level: a bool or an int of at least 0."""

    def check(self, name, value, context):
        return check_verbose(value)


@dataclass(frozen=True)
class NJobs(Constraint):
    """scikit-learn's n_jobs, resolved to a number of threads."""

    def check(self, name, value, context):
        return resolve_n_threads(value)


# Engine seeds come from random_state the way scikit-learn draws its trees' seeds.
_MAX_SEED = np.iinfo(np.int32).max


def draw_seed(random_state) -> int:
    """The engine's seed, drawn from ``random_state`` (None, an int seed or a
    RandomState) as scikit-learn draws the seeds of its trees."""
    if isinstance(random_state, numbers.Integral):
        return _seed_of_int(int(random_state))
    return int(check_random_state(random_state).randint(_MAX_SEED))


@functools.lru_cache(maxsize=256)
def _seed_of_int(seed: int) -> int:
    # Seeding a RandomState fills its 624-word state, a tenth of a millisecond that
    # repeated fits at one seed need not pay again; out of 0..2**32 - 1 it raises.
    return int(np.random.RandomState(seed).randint(_MAX_SEED))


@dataclass(frozen=True)
class RandomState(Constraint):
    """None, an int seed or a numpy RandomState; kept as given (the seed is drawn
    from it after every other check, so that a bad parameter consumes nothing)."""

    def check(self, name, value, context):
        try:
            if isinstance(value, numbers.Integral):
                _seed_of_int(int(value))
            else:
                check_random_state(value)
        except ValueError as error:
            raise ValueError(
                f"{name} must be None, an int seed or a numpy.random.RandomState: "
                f"{error}"
            ) from error
        return value


@dataclass(frozen=True)
class CountOrFraction(Constraint):
    """An int count in ``[1, count_high]`` or a float fraction in ``(0, 1]`` (``(0,
    1)`` when ``high_open``), or None when ``none`` allows it; kept as given."""

    count_high: Bound = None
    high_open: bool = False
    none: bool = False

    def check(self, name, value, context):
        if value is None and self.none:
            return None
        if is_int(value):
            return check_int(name, value, 1, _bound(self.count_high, context))
        return check_real(
            name, value, 0.0, 1.0, low_open=True, high_open=self.high_open
        )


@dataclass(frozen=True)
class SamplesCountOrFraction(Constraint):
    """An int count of at least ``minimum``, or a float fraction of n_samples
    resolved to a count (scikit-learn's min_samples_split and min_samples_leaf)."""

    minimum: int
    high_open: bool

    def check(self, name, value, context):
        return resolve_fraction_or_count(
            name, value, context["n_samples"], self.minimum, self.high_open
        )


@dataclass(frozen=True)
class SamplesCountFractionOrRoot(SamplesCountOrFraction):
    """As :class:`SamplesCountOrFraction`, or "sqrt" or "log2" of n_features (at
    least ``minimum``): treeple's min_samples_split of unsupervised trees, which
    would otherwise isolate every sample in a leaf of its own."""

    def check(self, name, value, context):
        if isinstance(value, str):
            check_choice(name, value, ("sqrt", "log2"))
            n_features = context["n_features"]
            if value == "sqrt":
                return max(self.minimum, math.isqrt(n_features))
            return max(self.minimum, int(math.log2(n_features)))
        return super().check(name, value, context)


@dataclass(frozen=True)
class MaxFeatures(Constraint):
    """Candidate atoms per split: "sqrt", "log2", None, a count or a fraction of
    n_features; past n_features only for families with more atoms than features
    (``above_n``)."""

    above_n: bool

    def check(self, name, value, context):
        if value is None or value in ("sqrt", "log2"):
            return value
        if isinstance(value, str):
            raise ValueError(
                f"{name} must be 'sqrt', 'log2', None, an int count or a float "
                f"fraction of n_features; got {value!r}."
            )
        if is_int(value):
            limit = None if self.above_n else context["n_features"]
            return check_int(name, value, 1, limit)
        high = math.inf if self.above_n else 1.0
        return check_real(name, value, 0.0, high, low_open=True)


@dataclass(frozen=True)
class BoolOrCallable(Constraint):
    """oob_score: True, False or a scorer ``f(y, prediction)``; anything but False
    needs ``requires`` (bootstrap) to be True."""

    requires: str

    def check(self, name, value, context):
        if not (callable(value) or isinstance(value, (bool, np.bool_))):
            raise TypeError(f"{name} must be True, False or a callable, got {value!r}.")
        if value is not False and not context[self.requires]:
            raise ValueError(
                "Out of bag estimation only available if bootstrap=True: without "
                "bootstrap every tree sees every sample."
            )
        return value if callable(value) else bool(value)


@dataclass(frozen=True)
class AutoOrBool(Constraint):
    """ "auto", True or False; "auto" is True above ``auto_above`` samples
    (scikit-learn's rule for early stopping)."""

    auto_above: int

    def check(self, name, value, context):
        if isinstance(value, str):
            check_choice(name, value, ("auto",))
            return context["n_samples"] > self.auto_above
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be 'auto', True or False, got {value!r}.")
        return bool(value)


@dataclass(frozen=True)
class Needed(Constraint):
    """``constraint``, whose value is used only when the parameter ``when`` was
    checked True (validation_fraction only matters with early stopping); None
    otherwise. It is checked either way, as scikit-learn does: early_stopping="auto"
    turns on with more samples, and a bad value should not wait for that to fail."""

    when: str
    constraint: Constraint

    def check(self, name, value, context):
        checked = self.constraint.check(name, value, context)
        return checked if context[self.when] else None


@dataclass(frozen=True)
class ClassWeight(Constraint):
    """None, "balanced" (with ``subsample``, also "balanced_subsample") or a dict
    {label: weight}; the weights themselves are checked against y when they are
    computed."""

    subsample: bool = False

    def check(self, name, value, context):
        names = ("balanced", "balanced_subsample") if self.subsample else ("balanced",)
        if (
            value is None
            or (isinstance(value, str) and value in names)
            or (isinstance(value, dict))
        ):
            return value
        allowed = ", ".join(repr(n) for n in names)
        raise ValueError(
            f"{name} must be None, {allowed} or a dict {{label: weight}}; got "
            f"{value!r}."
        )


@dataclass(frozen=True)
class FamilyParameter(Constraint):
    """A parameter of an atom family that the family checks together with its
    others (``image_shape`` bounds ``patch_max``; ``dictionary`` lies on both), in
    its ``_atom_params``; kept as given here."""

    def check(self, name, value, context):
        return value


def validate_params(estimator: Any, n_samples: int, n_features: int) -> dict[str, Any]:
    """Check every parameter of ``estimator`` against its class's
    ``_parameter_constraints``, in order; the checked values by name."""
    context: dict[str, Any] = {"n_samples": n_samples, "n_features": n_features}
    checked = {}
    for name, constraint in estimator._parameter_constraints.items():
        checked[name] = constraint.check(name, getattr(estimator, name), context)
        context[name] = checked[name]
    return checked
