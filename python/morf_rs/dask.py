"""Dask for morf_rs: scoring dask arrays and dataframes block by block, and
forests grown on the workers of a ``dask.distributed`` cluster.

A thin layer over the ordinary estimators (``pip install morf_rs[dask]``):
scoring calls the model's own methods on each block, and a distributed fit has
each worker grow its share of the trees through the model's own fit before the
driver puts them together into one ordinary model.

* :func:`predict`, :func:`predict_proba`, :func:`apply` take a dask array or
  dataframe and return a dask array, lazily: each block of rows is scored where
  it lies by the model's own method (forests and boosted models alike), and the
  model is one piece of the task graph, so each worker receives it once however
  many blocks it scores.
* :func:`fit` grows forests (boosted models are refused: each round needs the
  gradients of every row). It splits the ``n_estimators`` trees among the
  workers in consecutive ranges. Tree ``i`` depends only on
  ``(random_state, i)``, so when every worker sees the whole training set
  (``training_data="all"``) the merged forest equals the one :meth:`fit` grows
  on one machine, bit for bit. With
  ``training_data="partitions"`` each worker grows its trees on the partitions
  it holds, for training sets larger than one machine's memory.

Examples
--------
>>> import dask.array as da
>>> from dask.distributed import Client, LocalCluster
>>> from morf_rs import RandomForestClassifier
>>> from morf_rs import dask as morf_dask
>>> from morf_rs.datasets import make_bars
>>> X, y = make_bars(200, random_state=0)
>>> with LocalCluster(
...     n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
... ) as cluster, Client(cluster) as client:
...     forest = morf_dask.fit(RandomForestClassifier(random_state=0), X, y)
...     labels = morf_dask.predict(forest, da.from_array(X, chunks=50)).compute()
>>> bool((labels == forest.predict(X)).all())
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from dask.base import is_dask_collection
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "morf_rs.dask needs dask: pip install 'morf_rs[dask]' (dask[array,dataframe] "
        "and distributed)."
    ) from error

from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from morf_rs._base import BaseObliqueForest
from morf_rs._boosting import BaseGradientBoosting
from morf_rs._core import Forest
from morf_rs._dask_growth import (
    grow_shares,
    is_fitted_attribute,
    lost_rows_message,
    send_rows,
)
from morf_rs._validation import resolve_n_threads

__all__ = ["apply", "fit", "predict", "predict_proba"]


def __dir__():
    # What dir() and tab completion list: the four functions, not dask or numpy.
    return __all__


TRAINING_DATA = ("all", "partitions")


# --- Scoring -----------------------------------------------------------------


def predict_proba(model, X, *, n_jobs=1):
    """Class probabilities of every row of a dask array or dataframe, lazily.

    Parameters
    ----------
    model : fitted morf_rs classifier, forest or boosted
        Shipped to each worker once, as one piece of the task graph; its own
        ``predict_proba`` scores each block.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Rows to score; a block at a time on the worker that holds it. A numpy
        array or pandas DataFrame is scored at once, in memory.
    n_jobs : int, default=1
        Engine threads per block. One suits workers that run a task per core;
        raise it for workers with one task slot and several cores.

    Returns
    -------
    dask.array.Array of shape (n_samples, n_classes)
        float64, one chunk per block of X (row counts unknown for dataframes).

    Examples
    --------
    Without a ``dask.distributed`` client, dask's local threads score the blocks.

    >>> import dask.array as da
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs import dask as morf_dask
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(200, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> proba = morf_dask.predict_proba(forest, da.from_array(X, chunks=50))
    >>> proba.chunks
    ((50, 50, 50, 50), (2,))
    >>> bool((proba.compute() == forest.predict_proba(X)).all())
    True
    """
    if not is_classifier(model):
        raise TypeError(
            f"predict_proba needs a classifier; {type(model).__name__} predicts "
            "values: use morf_rs.dask.predict."
        )
    check_is_fitted(model)
    return _score(model, X, "predict_proba", n_jobs)


def predict(model, X, *, n_jobs=1):
    """The prediction for every row of a dask array or dataframe, lazily: a
    classifier's most probable class, a regressor's values.

    Parameters as :func:`predict_proba`, with ``model`` any fitted morf_rs
    estimator. The result is a dask array, 1-D of the dtype of
    ``model.classes_`` for a classifier; float64 of shape (n_samples,), or
    (n_samples, n_outputs) for several outputs, for a regressor.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import pandas as pd
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs import dask as morf_dask
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(200, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> frame = dd.from_pandas(pd.DataFrame(X), npartitions=4)
    >>> labels = morf_dask.predict(forest, frame).compute()
    >>> bool((labels == forest.predict(X)).all())
    True
    """
    check_is_fitted(model)
    return _score(model, X, "predict", n_jobs)


def apply(model, X, *, n_jobs=1):
    """The leaf each row reaches in every tree, lazily, as ``model.apply`` gives
    it (a forest's: int64 of shape (n_samples, n_estimators); a boosted
    model's: (n_samples, ``n_iter_``, ``n_trees_per_iteration_``)). Parameters as
    :func:`predict_proba`; a model without ``apply`` is refused with a TypeError.

    Examples
    --------
    >>> import dask.array as da
    >>> from morf_rs import RandomForestClassifier
    >>> from morf_rs import dask as morf_dask
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(200, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> morf_dask.apply(forest, da.from_array(X, chunks=50)).shape
    (200, 10)
    """
    check_is_fitted(model)
    if not hasattr(model, "apply"):
        raise TypeError(
            f"{type(model).__name__} has no apply (the leaf of each row in each "
            "tree); use morf_rs.dask.predict, or a model that has apply."
        )
    return _score(model, X, "apply", n_jobs)


def _score_block(block, scorer, method, empty):
    if len(block) == 0:  # dataframes may hold empty partitions
        return empty
    return getattr(scorer, method)(block)


def _score(model, X, method, n_jobs):
    resolve_n_threads(n_jobs)  # a bad n_jobs is refused here, not on a worker
    # The model's own method does the scoring, on n_jobs threads resolved where
    # it runs (-1: the cores of the worker that scores the block).
    scorer = _with_n_jobs(model, n_jobs)
    score = getattr(scorer, method)
    if not is_dask_collection(X):
        return score(X)
    if isinstance(X, dd.DataFrame):
        _check_n_features(model, len(X.columns))
        row = pd.DataFrame(np.zeros((1, len(X.columns))), columns=X.columns)
    elif isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-D with one sample per row, got a dask array of shape "
                f"{X.shape}."
            )
        _check_n_features(model, X.shape[1])
        # Whole rows in every block, so that a block is a set of samples.
        X = X.rechunk({1: -1})
        row = np.zeros((1, X.shape[1]), X.dtype)
    else:
        raise TypeError(
            f"X must be a dask array or dask DataFrame, got {type(X).__name__}."
        )
    # One row scored here tells the shape and dtype of each row's output, for
    # any model and method, before any block is computed.
    scored_row = score(row)
    empty = np.empty((0, *scored_row.shape[1:]), scored_row.dtype)
    # One key in the graph, computed once and fetched by each worker that needs it.
    args = (dask.delayed(scorer, pure=True), method, empty)
    if isinstance(X, dd.DataFrame):
        return X.map_partitions(_score_block, *args, meta=empty)
    # Outputs of one value per row drop X's column axis; those of more than one
    # axis per row (a booster's apply: rounds x trees per round) add axes.
    if empty.ndim == 1:
        output_axes = {"drop_axis": 1}
    else:
        output_axes = {"new_axis": list(range(2, empty.ndim))}
    return X.map_blocks(
        _score_block,
        *args,
        dtype=empty.dtype,
        chunks=(X.chunks[0], *((n,) for n in empty.shape[1:])),
        meta=empty,
        **output_axes,
    )


def _with_n_jobs(model, n_jobs):
    """``model`` scoring on ``n_jobs`` threads: a shallow copy that shares the
    fitted engine (``copy.copy`` would round-trip the engine through its bytes)."""
    scorer = object.__new__(type(model))
    scorer.__dict__.update(vars(model), n_jobs=n_jobs)
    return scorer


def _check_n_features(model, n_features):
    if n_features != model.n_features_in_:
        raise ValueError(
            f"X has {n_features} features, but {type(model).__name__} is expecting "
            f"{model.n_features_in_} features as input."
        )


# --- Distributed fit -----------------------------------------------------------


def fit(model, X, y, sample_weight=None, *, client=None, training_data="all"):
    """Grow ``model``'s trees on the workers of a dask cluster; return ``model``
    fitted, an ordinary estimator holding all the trees.

    The ``n_estimators`` trees are split among the workers in consecutive
    ranges, in proportion to their threads; each worker grows its range with
    ``n_jobs`` equal to its threads, and the driver merges the ranges in order.
    A worker that dies while growing its range is replaced: the range is grown
    again on another worker, on the same rows (dask recomputes the partitions
    the dead worker held), so the forest is the one grown without the loss.

    Parameters
    ----------
    model : morf_rs forest
        Its parameters say what to grow; it is fitted in place, as by ``fit``.
        Gradient-boosted models are refused with a ValueError: fit them on one
        machine and score them on the cluster with :func:`predict`.
    X : array-like, dask array or dask DataFrame of shape (n_samples, n_features)
    y : array-like, dask array, dask Series or dask DataFrame
        Labels of shape (n_samples,), or a regressor's values of shape
        (n_samples,) or (n_samples, n_outputs); in blocks of the same rows as
        X's when X is a dask collection.
    sample_weight : array-like, dask array or dask Series, default=None
    client : dask.distributed.Client, default=None
        The current client when None.
    training_data : {"all", "partitions"}, default="all"
        ``"all"``: every worker sees the whole training set (sent to each of
        them), and the merged forest equals ``model.fit(X, y, sample_weight)``
        on one machine, bit for bit. ``"partitions"``: each worker grows its
        trees on the blocks of rows it holds (in-memory X is cut into one block
        per worker), so no machine needs the whole set. Each tree then learns
        from one partition: its bootstrap sample and the parameters given as
        fractions (``max_samples``, ``min_samples_split``, ``min_samples_leaf``)
        are relative to that partition, ``class_weight="balanced"`` still
        weighs classes by their counts in the whole set, and the forest depends
        on which blocks each worker holds. Trees that see fewer rows are less
        accurate: on Fashion-MNIST, 2 to 8 partitions raise the test error by
        0.01 to 0.03 (``benches/dask_partitions.py``). In-memory X cut into
        partitions lives on one worker per block and cannot be recomputed: if
        that worker dies the fit stops with a ValueError naming it and its rows.

    Returns
    -------
    model : the fitted estimator

    Examples
    --------
    >>> import dask.array as da
    >>> from dask.distributed import Client, LocalCluster
    >>> from sklearn.base import clone
    >>> from morf_rs import ManifoldObliqueForestClassifier
    >>> from morf_rs import dask as morf_dask
    >>> from morf_rs.datasets import make_bars
    >>> X, y = make_bars(300, random_state=0)
    >>> forest = ManifoldObliqueForestClassifier(
    ...     n_estimators=8, image_shape=(28, 28), random_state=0
    ... )
    >>> with LocalCluster(
    ...     n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ... ) as cluster, Client(cluster) as client:
    ...     _ = morf_dask.fit(forest, da.from_array(X, chunks=100), y)
    >>> single = clone(forest).fit(X, y)  # on this machine alone
    >>> forest._forest.to_bytes() == single._forest.to_bytes()
    True
    """
    from distributed import KilledWorker, default_client
    from distributed.client import FutureCancelledError

    _check_forest(model)
    if training_data not in TRAINING_DATA:
        raise ValueError(
            f"training_data must be one of {', '.join(map(repr, TRAINING_DATA))}; "
            f"got {training_data!r}."
        )
    if model.get_params()["oob_score"] is not False:
        raise ValueError(
            "morf_rs.dask.fit does not compute out-of-bag estimates (each worker "
            "holds only its own trees); fit with oob_score=False."
        )
    if model.get_params()["warm_start"] and hasattr(model, "_forest"):
        raise ValueError(
            "morf_rs.dask.fit grows a new forest and does not add trees to a fitted "
            "one; set warm_start=False, or add trees with fit on one machine."
        )
    client = default_client() if client is None else client
    nthreads = client.nthreads()
    if not nthreads:
        raise ValueError("the dask cluster has no workers; start some, then fit.")
    futures, rows_in_memory = send_rows(
        client, X, y, sample_weight, training_data, sorted(nthreads)
    )
    try:
        fitted = grow_shares(client, model, futures, training_data, nthreads)
    except FutureCancelledError as error:
        raise ValueError(lost_rows_message(client, rows_in_memory)) from error
    except KilledWorker as error:
        raise ValueError(
            f"morf_rs.dask.fit stopped: every worker that ran {error.task!r} died "
            f"while running it ({error.allowed_failures + 1} times; the last was "
            f"{error.last_worker.address}). A task that kills each worker it runs "
            "on has usually run out of memory: give the workers more memory or "
            "fewer threads, or fit with training_data='partitions' so that each "
            "worker holds only its own rows."
        ) from error
    forest = Forest.merge([part._forest for part in fitted])
    for name in [name for name in vars(model) if is_fitted_attribute(name)]:
        delattr(model, name)
    for name, value in vars(fitted[0]).items():
        if is_fitted_attribute(name):
            setattr(model, name, value)
    model._forest = forest
    if training_data == "partitions":
        # Each tree drew its sample from its own worker's rows, not from X's.
        del model._fit_rows_
    return model


def _check_forest(model):
    if isinstance(model, BaseGradientBoosting):
        raise ValueError(
            "morf_rs.dask.fit grows forests, not gradient-boosted models: each "
            f"round of {type(model).__name__} needs the gradients of every "
            "training row, which no worker's share of the trees can stand for. Fit "
            "it on one machine (model.fit(X.compute(), y.compute()) for dask "
            "input), then score on the cluster with morf_rs.dask.predict; or grow "
            "a forest (RandomForestClassifier, ManifoldObliqueForestClassifier, "
            "...) with morf_rs.dask.fit."
        )
    if not isinstance(model, BaseObliqueForest):
        raise TypeError(
            "morf_rs.dask.fit grows the classification and regression forests of "
            "morf_rs (not isolation or unsupervised forests); got "
            f"{type(model).__module__}.{type(model).__qualname__}."
        )
