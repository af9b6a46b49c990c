"""Fitting an estimator without ever exposing a half-fitted state.

A fit runs on a shallow copy of the estimator; once it has finished, the copy's
state replaces the estimator's in one assignment. Two threads fitting the same
estimator each work on their own copy, so it ends with the complete state of one
fit (the last to finish), never the attributes of one and the model of the other,
and a fit that raises or is interrupted leaves it as it was.
"""

from __future__ import annotations

import threading

# Serialises the swaps, so that parameters set meanwhile are read consistently.
_SWAP_LOCK = threading.Lock()


def fit_and_swap(estimator, fit, *args):
    """Run ``fit(copy, *args)`` on a copy of ``estimator``, then make the copy's
    state the estimator's, keeping the constructor parameters the estimator holds
    at that moment (``set_params`` called during the fit is not undone)."""
    fitted = object.__new__(type(estimator))
    fitted.__dict__.update(estimator.__dict__)
    fit(fitted, *args)
    with _SWAP_LOCK:
        current = estimator.__dict__
        state = dict(fitted.__dict__)
        for name in estimator._get_param_names():
            if name in current:
                state[name] = current[name]
        estimator.__dict__ = state
    return estimator
