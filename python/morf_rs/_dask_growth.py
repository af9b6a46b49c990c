"""Growing a forest on the workers of a dask cluster for :func:`morf_rs.dask.fit`:
sending the training rows, splitting the trees among the workers, growing each share
where its rows lie, and saying which rows were lost when a worker dies."""

from __future__ import annotations

from dask.base import is_dask_collection
from sklearn.base import clone, is_classifier

from morf_rs._dask_parts import (
    class_counts,
    concat,
    describe_part,
    row_parts,
    split_rows,
)


def send_rows(client, X, y, sample_weight, training_data, workers):
    """Futures of the training rows' parts on the workers, and for rows given in
    memory, which rows each worker holds (dask cannot recompute those if the
    worker dies)."""
    if is_dask_collection(X):
        return client.compute(row_parts(X, y, sample_weight)), {}
    if training_data == "all":
        futures = client.scatter([(X, y, sample_weight)], broadcast=True, hash=False)
        return futures, {worker: (0, len(X)) for worker in workers}
    futures, rows_held = [], {}
    for worker, (rows, part) in zip(
        workers, split_rows(X, y, sample_weight, len(workers))
    ):
        futures += client.scatter([part], workers=[worker], hash=False)
        rows_held[worker] = rows
    return futures, rows_held


def grow_shares(client, model, futures, training_data, nthreads):
    """Grow the trees of ``model`` on the workers: one model per share of the
    trees, in the order of the trees."""
    classifier = is_classifier(model)
    described = client.gather(
        client.map(describe_part, futures, classifier=classifier, pure=False)
    )
    futures = [f for f, (n_rows, _) in zip(futures, described) if n_rows > 0]
    if not futures:
        raise ValueError("X has no rows; give at least one sample.")
    # Drawn once, as fit draws it, so that every share grows trees of one forest.
    seed = model._draw_seed()
    worker_model, fixed_targets = clone(model), {}
    if classifier:
        classes, counts = class_counts([labels for _, labels in described])
        fixed_targets["classes"] = classes
        if training_data == "partitions" and _is_balanced(model.class_weight):
            # Balanced over the whole set, as one machine would balance it.
            balanced = counts.sum() / (len(classes) * counts)
            worker_model.set_params(class_weight=dict(zip(classes, balanced)))

    if training_data == "all":
        shares = [(worker, futures) for worker in sorted(nthreads)]
    else:
        shares = _parts_by_worker(client, futures)
    ranges = _tree_ranges(model.n_estimators, [nthreads[w] for w, _ in shares])
    grown = [
        # Each share runs on its worker; should that worker die, on another, where
        # dask recomputes the lost parts: tree i depends only on (seed, i) and
        # the share's rows, so the regrown range is the one that was lost.
        client.submit(
            grow_share,
            worker_model,
            parts,
            seed,
            trees,
            nthreads[worker],
            fixed_targets,
            training_data == "partitions",
            workers=[worker],
            allow_other_workers=True,
            pure=False,
        )
        for (worker, parts), trees in zip(shares, ranges)
        if trees[0] < trees[1]
    ]
    return client.gather(grown)


def lost_rows_message(client, rows_in_memory):
    present = client.nthreads()
    held = "; ".join(
        f"{worker} left the cluster holding rows {start} to {stop}"
        for worker, (start, stop) in rows_in_memory.items()
        if worker not in present
    )
    return (
        "morf_rs.dask.fit lost training rows given in memory, which only the "
        f"workers holding them had and dask cannot recompute ({held or 'cancelled'}"
        "). Fit again; or pass X and y as dask arrays or dataframes "
        "(dask.array.from_array(X, chunks=...)): dask recomputes the partitions "
        "of a lost worker on the others."
    )


def is_fitted_attribute(name):
    return name == "_forest" or (name.endswith("_") and not name.startswith("__"))


def grow_share(model, parts, seed, trees, n_threads, fixed_targets, own_rows):
    """On a worker: grow trees ``trees`` on the rows of ``parts``, in order;
    ``own_rows``: the parts are this worker's partition, not the whole set."""
    X = concat([part[0] for part in parts])
    y = concat([part[1] for part in parts])
    weights = [part[2] for part in parts]
    sample_weight = None if weights[0] is None else concat(weights)
    model.set_params(n_jobs=n_threads, verbose=0)
    try:
        return model._fit(X, y, sample_weight, seed=seed, trees=trees, **fixed_targets)
    except (ValueError, TypeError) as error:
        if not own_rows:
            raise
        # The whole set may be fine where one worker's rows are not (all their
        # weights 0, fewer rows than an int max_samples): say whose rows failed.
        kind = ValueError if isinstance(error, ValueError) else TypeError
        raise kind(
            f"the worker growing trees {trees[0]} to {trees[1] - 1} could not fit "
            f"the {len(X)} row{'' if len(X) == 1 else 's'} it holds "
            f"(training_data='partitions' fits each worker's own rows): {error}"
        ) from error


def _is_balanced(class_weight):
    return isinstance(class_weight, str) and class_weight == "balanced"


def _parts_by_worker(client, futures):
    """(worker, its parts in order) for each worker holding parts, ordered by the
    first part each holds."""
    who_has = client.who_has(futures)
    by_worker = {}
    for future in futures:
        holders = sorted(who_has[future.key])
        by_worker.setdefault(holders[0], []).append(future)
    return list(by_worker.items())


def _tree_ranges(n_estimators, weights):
    """Consecutive ranges of ``range(n_estimators)``, sized in proportion to
    ``weights``."""
    total = sum(weights)
    bounds = [0]
    cumulative = 0
    for weight in weights:
        cumulative += weight
        bounds.append(n_estimators * cumulative // total)
    return list(zip(bounds[:-1], bounds[1:]))
