"""Training rows for :func:`morf_rs.dask.fit`: X, y and sample_weight cut into
parts of whole rows, the same rows in each, and what each part holds."""

from __future__ import annotations

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
from dask.base import is_dask_collection


def describe_part(part, classifier):
    """The rows of a part and, for a classifier, its labels and their counts."""
    y = np.asarray(part[1])
    return len(y), np.unique(y, return_counts=True) if classifier else None


def split_rows(X, y, sample_weight, n_parts):
    """In-memory (X, y, sample_weight) cut into ``n_parts`` blocks of rows: a list
    of ``((start, stop), block)``."""
    bounds = np.linspace(0, len(X), n_parts + 1).astype(int)
    return [
        (
            (start, stop),
            tuple(_rows(values, start, stop) for values in (X, y, sample_weight)),
        )
        for start, stop in zip(bounds[:-1], bounds[1:])
    ]


def _rows(values, start, stop):
    if values is None:
        return None
    return values.iloc[start:stop] if hasattr(values, "iloc") else values[start:stop]


def row_parts(X, y, sample_weight):
    """(X, y, sample_weight) blocks of the same rows: delayed for dask input,
    one in-memory part otherwise."""
    if not is_dask_collection(X):
        return [(X, y, sample_weight)]
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-D with one sample per row, got shape {X.shape}."
            )
        X = X.rechunk({1: -1})
        rows = X.chunks[0]
        X_blocks = list(X.to_delayed().ravel())
        y_blocks = _aligned_blocks(y, rows, "y")
        w_blocks = _aligned_blocks(sample_weight, rows, "sample_weight")
    elif isinstance(X, dd.DataFrame):
        X_blocks = list(X.to_delayed())
        y_blocks = _partition_blocks(y, X, "y")
        w_blocks = _partition_blocks(sample_weight, X, "sample_weight")
    else:
        raise TypeError(
            f"X must be an array, a DataFrame, a dask array or a dask DataFrame, got "
            f"{type(X).__name__}."
        )
    return [
        dask.delayed(tuple)([x, t, w]) for x, t, w in zip(X_blocks, y_blocks, w_blocks)
    ]


def _aligned_blocks(values, rows, name):
    """Blocks of ``values`` with the row counts ``rows`` of X's blocks."""
    if values is None:
        return [None] * len(rows)
    values = da.asarray(values)
    if values.shape[0] != sum(rows):
        raise ValueError(
            f"{name} has {values.shape[0]} rows but X has {sum(rows)}; pass one per "
            "row of X."
        )
    # Whole rows in each block (a regressor's y may have several columns).
    whole_rows = {0: rows, **({1: -1} if values.ndim == 2 else {})}
    return list(values.rechunk(whole_rows).to_delayed().ravel())


def _partition_blocks(values, X, name):
    """The partitions of ``values``, which must match those of the DataFrame X."""
    if values is None:
        return [None] * X.npartitions
    if not isinstance(values, (dd.Series, dd.DataFrame)):
        raise TypeError(
            f"with a dask DataFrame X, {name} must be a dask Series partitioned as X "
            f"is, got {type(values).__name__}."
        )
    if values.npartitions != X.npartitions:
        raise ValueError(
            f"{name} has {values.npartitions} partitions but X has {X.npartitions}; "
            "partition both the same way."
        )
    return list(values.to_delayed())


def concat(blocks):
    if hasattr(blocks[0], "iloc"):
        import pandas as pd

        return pd.concat(blocks) if len(blocks) > 1 else blocks[0]
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def class_counts(label_counts):
    """The sorted classes of the whole training set and the rows of each, from
    each part's labels and counts."""
    classes = np.unique(np.concatenate([labels for labels, _ in label_counts]))
    counts = np.zeros(len(classes), dtype=np.int64)
    for labels, n in label_counts:
        counts[np.searchsorted(classes, labels)] += n
    return classes, counts
