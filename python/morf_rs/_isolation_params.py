"""The parameters of isolation forests that take scikit-learn's forms and no other
forest's: ``max_samples``, ``max_features`` (features per tree) and
``contamination``, each checked and resolved for an X of known shape."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from morf_rs._constraints import Constraint
from morf_rs._validation import check_int, check_real, is_int

__all__ = ["Contamination", "FeaturesPerTree", "MaxSamples"]

# scikit-learn's max_samples="auto": at most this many rows per tree.
_AUTO_MAX_SAMPLES = 256


@dataclass(frozen=True)
class MaxSamples(Constraint):
    """ "auto", an int count of at least 1 or a float fraction in (0, 1] of
    n_samples; resolved to the rows per tree (scikit-learn's ``max_samples_``)."""

    def check(self, name, value, context):
        n_samples = context["n_samples"]
        if isinstance(value, str):
            if value != "auto":
                raise ValueError(
                    f"{name} must be 'auto', an int count or a float fraction of "
                    f"n_samples; got {value!r}."
                )
            return min(_AUTO_MAX_SAMPLES, n_samples)
        if is_int(value):
            count = check_int(name, value, 1)
            if count > n_samples:
                warnings.warn(
                    f"max_samples ({count}) is greater than the total number of "
                    f"samples ({n_samples}). max_samples will be set to n_samples "
                    "for estimation.",
                    UserWarning,
                    stacklevel=6,
                )
            return min(count, n_samples)
        fraction = check_real(name, value, 0.0, 1.0, low_open=True)
        return max(1, int(fraction * n_samples))


@dataclass(frozen=True)
class FeaturesPerTree(Constraint):
    """scikit-learn's ``max_features`` of an isolation forest: an int count in [1,
    n_features] or a float fraction in (0, 1] of them, resolved to the features
    each tree sees, ``max(1, int(fraction * n_features))``."""

    def check(self, name, value, context):
        n_features = context["n_features"]
        if is_int(value):
            return check_int(name, value, 1, n_features)
        fraction = check_real(name, value, 0.0, 1.0, low_open=True)
        return max(1, int(fraction * n_features))


@dataclass(frozen=True)
class Contamination(Constraint):
    """ "auto" or the expected share of outliers, a float in (0, 0.5]."""

    def check(self, name, value, context):
        if isinstance(value, str):
            if value != "auto":
                raise ValueError(
                    f"{name} must be 'auto' or a float in (0, 0.5]; got {value!r}."
                )
            return value
        return check_real(name, value, 0.0, 0.5, low_open=True)

    def __iter__(self):
        # scikit-learn's estimator checks read an outlier detector's contamination
        # constraint as a list of its own constraints.
        return iter([StrOptions({"auto"}), Interval(Real, 0.0, 0.5, closed="right")])
