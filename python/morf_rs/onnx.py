"""Export fitted forests and boosted models to ONNX, to score them without Python.

``pip install morf_rs[onnx]`` installs what this module needs (onnx, and
onnxruntime to check or run the exported models).

:func:`to_onnx` turns a fitted forest or boosted model into an ONNX graph of
three stages:

1. **Projection.** Every distinct split atom becomes one column of a
   projection of the rows: a ``MatMul`` of X (missing values set to 0) with the
   atoms' weight matrix (the faster in ONNX Runtime), or, for a model whose
   dense matrix would not fit a file, a ``Gather`` of each atom's features
   times its weights and a ``ReduceSum``. Where a batch has missing values
   (an ``If`` skips this otherwise), a second product of the missing-value
   indicator with the atoms' membership matrix finds the projections that
   touch a missing feature (a NaN outside an atom must not leak into it, as
   NaN * 0 would in a plain ``MatMul``), and each follows its tree's rule
   (``TreeStructure.rescales_missing_cells``): trees grown by this version
   multiply the sum over the present features by the atom's total ``|w|``
   over the present ``|w|`` (a third product, of the present-value indicator
   with ``|W|``), missing where no feature is present; trees saved by
   earlier versions make the projection missing. A pooled atom is the
   maximum (or minimum) of its shifted copies' columns, gathered and reduced
   with ``ReduceMax``: over the copies not missing for the new rule, missing
   when any copy is for the old one.
2. **Trees.** An axis-aligned tree ensemble over the projection columns with
   the learned thresholds (``<=`` goes left) and the learned side for missing
   projections (``nodes_missing_value_tracks_true``).
3. **Head.** Forest classifiers: the sum of the voting leaves' class
   distributions, normalised to 1 (uniform where no honest tree votes), as
   ``predict_proba``; forest regressors: the mean of the voting leaves' values
   (the mean of the trees' priors where no tree votes), as ``predict``;
   boosted models: base score plus leaf values, then the sigmoid (two
   classes) or softmax, or the raw score of a regressor.

The trees use ``TreeEnsembleRegressor`` of the ``ai.onnx.ml`` opset 3: it
is the one that skl2onnx and onnxmltools write, so the runtimes that score
their exports (ONNX Runtime releases older than ``TreeEnsemble`` among them)
run it too, and it sums one leaf value per target, which is all the three
heads need. Its successor ``TreeEnsemble`` (``ai.onnx.ml`` opset 5, which
ONNX Runtime 1.32 also runs) adds nothing used here (set membership and
double thresholds). ``TreeEnsembleClassifier`` is not used: it would add a
ZipMap or its own post-transforms, while the heads above reproduce ours
exactly.

Agreement with the engine: the thresholds and leaf values are the engine's
float32 numbers, and a projection on a one-feature atom is the same single
rounding, so axis-aligned models agree exactly. A many-feature projection is
summed in another order than the engine's (which adds term after term in
float32), so a row whose projection lies within a few float32 ulps of a
threshold may take the other side; on whole-valued data with whole weights
(images of 0..255 with patch atoms) every sum is exact and so is the export.
Infinite values in X are undefined here (the estimators refuse them).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from morf_rs._boosting import BaseGradientBoosting, BoostingClassifier
from morf_rs._classifier import ForestClassifier
from morf_rs._regressor import ForestRegressor

if TYPE_CHECKING:
    import onnx

__all__ = ["to_onnx"]


def __dir__():
    # What dir() and tab completion list: the exporter, not its helpers.
    return __all__


# ai.onnx opset of the graph by default, and the oldest it can be written for
# (ReduceSum with its axes as an input).
_DEFAULT_OPSET = 18
_MIN_OPSET = 13
# The ai.onnx.ml opset of TreeEnsembleRegressor (see the module docstring).
_ML_OPSET = 3
# The largest dense weight and membership matrices (5 bytes per feature and atom)
# "auto" lets the MatMul projection store: protocol buffers cap a model at 2 GiB.
_DENSE_PROJECTION_LIMIT = 2**30


def _require_onnx():
    try:
        import onnx
    except ImportError as error:  # pragma: no cover - the extra is installed in CI
        raise ImportError(
            "morf_rs.onnx needs the onnx package: pip install morf_rs[onnx]"
        ) from error
    return onnx


def to_onnx(
    model: Any, *, opset: int | None = None, projection: str = "auto"
) -> onnx.ModelProto:
    """An ONNX graph that scores like the fitted forest or boosted ``model``.

    The graph has one float32 input ``X`` of shape (N, n_features), NaN
    marking missing values. Classifiers give ``label`` (N,) (the class, as
    ``predict``) and ``probabilities`` (N, n_classes) float32 (as
    ``predict_proba``, columns in the order of ``classes_``; no ZipMap);
    regressors give ``variable`` (N, n_outputs) float32 (as ``predict``).
    See :mod:`morf_rs.onnx` for how atoms, trees and links become operators
    and how closely the results agree.

    Parameters
    ----------
    model : fitted forest or boosted estimator of morf_rs
        Any classifier or regressor of the package, honest forests and pooled
        or dictionary atoms included.
    opset : int, default=None
        The ``ai.onnx`` opset to write, from 13; None: 18. The trees use
        ``ai.onnx.ml`` opset 3.
    projection : {"auto", "matmul", "gather"}, default="auto"
        How the atoms project X: one dense ``MatMul`` with the weight matrix,
        or a ``Gather`` of each atom's features and a ``ReduceSum``, which
        stores only the atoms' nonzeros but is about 10 times slower in ONNX
        Runtime and holds N x atoms x (largest atom) floats while it scores
        (score small batches). "auto" takes the ``MatMul`` unless its float32
        weights and uint8 membership matrix exceed 1 GiB.

    Returns
    -------
    onnx.ModelProto

    Raises
    ------
    TypeError
        If ``model`` is not a forest or boosted model of morf_rs.
    sklearn.exceptions.NotFittedError
        If it is not fitted.

    Examples
    --------
    >>> import numpy as np
    >>> import onnxruntime as ort
    >>> from morf_rs import ManifoldObliqueForestClassifier
    >>> from morf_rs.onnx import to_onnx
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 64)).astype(np.float32)
    >>> y = (X[:, 10:14].sum(axis=1) > 0).astype(int)
    >>> forest = ManifoldObliqueForestClassifier(
    ...     image_shape=(8, 8), n_estimators=10, random_state=0
    ... ).fit(X, y)
    >>> session = ort.InferenceSession(to_onnx(forest).SerializeToString())
    >>> label, proba = session.run(None, {"X": X[:5]})
    >>> bool(np.allclose(proba, forest.predict_proba(X[:5]), atol=1e-6))
    True
    >>> bool(np.array_equal(label, forest.predict(X[:5])))
    True
    """
    onnx = _require_onnx()
    _check_model(model)
    opset = _check_opset(opset)
    if projection not in ("auto", "matmul", "gather"):
        raise ValueError(
            f"projection must be 'auto', 'matmul' or 'gather', got {projection!r}."
        )
    from morf_rs._onnx_graph import Graph

    n_features = int(model.n_features_in_)
    shape = tuple(getattr(model, "image_shape_", None) or (n_features,))
    trees = [model.tree_structure(i) for i in range(model._n_trees())]
    atoms = _Atoms(shape)
    columns = [
        [atoms.column(tree, node) for node in range(tree.node_count)] for tree in trees
    ]
    # Pooled columns follow the plain ones, all known only now.
    columns = [[atoms.feature_id(c) for c in tree_columns] for tree_columns in columns]
    graph = Graph(onnx, opset, _ML_OPSET, n_features)
    if projection == "auto":
        dense_bytes = 5 * n_features * len(atoms.plain)
        projection = "matmul" if dense_bytes <= _DENSE_PROJECTION_LIMIT else "gather"
    features = graph.project(atoms.plain, atoms.pooled, projection)
    if isinstance(model, BaseGradientBoosting):
        _boosted_head(graph, model, trees, columns, features)
    elif isinstance(model, ForestClassifier):
        _forest_classifier_head(graph, model, trees, columns, features)
    elif isinstance(model, ForestRegressor):
        _forest_regressor_head(graph, trees, columns, features)
    else:  # pragma: no cover - every estimator is one of the three
        raise TypeError(f"to_onnx cannot export a {type(model).__name__}.")
    return graph.model(f"morf_rs {type(model).__name__}")


def _check_model(model):
    """A TypeError unless ``model`` is a morf_rs forest or boosted model, a
    NotFittedError unless it is fitted."""
    exported = (BaseGradientBoosting, ForestClassifier, ForestRegressor)
    if not isinstance(model, exported) or isinstance(model, type):
        raise TypeError(
            "to_onnx exports the classifiers and regressors of morf_rs (forests "
            "and boosted models; not isolation or unsupervised forests), got "
            f"{type(model).__name__ if not isinstance(model, type) else model!r}."
        )
    check_is_fitted(model)


def _check_opset(opset):
    if opset is None:
        return _DEFAULT_OPSET
    if isinstance(opset, bool) or not isinstance(opset, (int, np.integer)):
        raise TypeError(f"opset must be an int or None, got {opset!r}.")
    if opset < _MIN_OPSET:
        raise ValueError(f"opset must be at least {_MIN_OPSET}, got {opset}.")
    return int(opset)


class _Atoms:
    """The distinct atoms of a model's splits as projection columns: ``plain``
    lists (features, weights, rescaled) per column, ``pooled`` (sign, plain
    columns of the shifts, rescaled) per pooled column, ``rescaled`` being the
    tree's rule on missing cells; a pooled column's id follows all plain ones."""

    def __init__(self, shape):
        self.shape = shape
        self.plain = []
        self.pooled = []
        self._plain_ids = {}
        self._pooled_ids = {}

    def _plain_column(self, features, weights, rescaled):
        key = (features.tobytes(), weights.tobytes(), rescaled)
        if key not in self._plain_ids:
            self._plain_ids[key] = len(self.plain)
            self.plain.append((features, weights, rescaled))
        return self._plain_ids[key]

    def column(self, tree, node):
        """The projection column node ``node`` of ``tree`` splits on (pooled ids
        counted from 0 among pooled columns, as ``("pooled", id)``); None at
        leaves."""
        if tree.is_leaf[node]:
            return None
        features, weights = tree.atom(node)
        features = np.asarray(features, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float32)
        rescaled = bool(tree.rescales_missing_cells)
        if tree.pool_reduce[node] == 0:
            return self._plain_column(features, weights, rescaled)
        low, high = tree.pool_shift_low[node], tree.pool_shift_high[node]
        wrap = tree.pool_wrap[node]
        key = (
            features.tobytes(),
            weights.tobytes(),
            int(tree.pool_reduce[node]),
            low.tobytes(),
            high.tobytes(),
            wrap.tobytes(),
            rescaled,
        )
        if key not in self._pooled_ids:
            shifts = [
                self._plain_column(
                    self._shifted(features, shift, wrap), weights, rescaled
                )
                for shift in itertools.product(
                    *(range(lo, hi + 1) for lo, hi in zip(low, high))
                )
            ]
            self._pooled_ids[key] = len(self.pooled)
            self.pooled.append((int(tree.pool_reduce[node]), shifts, rescaled))
        return ("pooled", self._pooled_ids[key])

    def _shifted(self, features, shift, wrap):
        """``features`` moved by ``shift`` per image axis, cyclically where
        ``wrap`` (the engine's windows keep the others inside the image)."""
        coordinates = np.array(np.unravel_index(features, self.shape))
        for axis, (step, cyclic) in enumerate(zip(shift, wrap)):
            coordinates[axis] += step
            if cyclic:
                coordinates[axis] %= self.shape[axis]
        return np.ravel_multi_index(tuple(coordinates), self.shape).astype(np.int64)

    def feature_id(self, column):
        """The ensemble's input feature of a column from :meth:`column` (None at
        leaves)."""
        if isinstance(column, tuple):
            return len(self.plain) + column[1]
        return column


def _ensemble(graph, trees, columns, features, n_targets, leaf_targets, base=None):
    """A TreeEnsembleRegressor summing, per target, what ``leaf_targets(t, tree,
    node)`` gives ((target, value) pairs) at the leaves of every tree."""
    nodes = {
        k: []
        for k in (
            "treeids",
            "nodeids",
            "featureids",
            "modes",
            "values",
            "truenodeids",
            "falsenodeids",
            "missing",
        )
    }
    targets = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t, (tree, tree_columns) in enumerate(zip(trees, columns)):
        for node in range(tree.node_count):
            nodes["treeids"].append(t)
            nodes["nodeids"].append(node)
            if tree.is_leaf[node]:
                for key, value in zip(
                    (
                        "featureids",
                        "modes",
                        "values",
                        "truenodeids",
                        "falsenodeids",
                        "missing",
                    ),
                    (0, "LEAF", 0.0, 0, 0, 0),
                ):
                    nodes[key].append(value)
                for target, weight in leaf_targets(t, tree, node):
                    targets["treeids"].append(t)
                    targets["nodeids"].append(node)
                    targets["ids"].append(target)
                    targets["weights"].append(weight)
                continue
            nodes["featureids"].append(tree_columns[node])
            nodes["modes"].append("BRANCH_LEQ")
            nodes["values"].append(float(np.float32(tree.threshold[node])))
            nodes["truenodeids"].append(int(tree.children_left[node]))
            nodes["falsenodeids"].append(int(tree.children_right[node]))
            nodes["missing"].append(int(tree.missing_go_to_left[node]))
    return graph.tree_ensemble(features, nodes, targets, n_targets, base)


def _forest_classifier_head(graph, model, trees, columns, features):
    n_classes = len(model.classes_)

    def leaf_targets(t, tree, node):
        if not tree.votes[node]:
            return []
        return [(k, float(v)) for k, v in enumerate(tree.value[node]) if v != 0]

    sums = _ensemble(graph, trees, columns, features, n_classes, leaf_targets)
    graph.classifier_outputs(graph.normalised(sums, n_classes), model.classes_)


def _forest_regressor_head(graph, trees, columns, features):
    n_outputs = trees[0].value.shape[1]

    # One more target counts the votes, which honest trees may withhold.
    def leaf_targets(t, tree, node):
        if not tree.votes[node]:
            return []
        values = [(k, float(v)) for k, v in enumerate(tree.value[node])]
        return [*values, (n_outputs, 1.0)]

    sums = _ensemble(graph, trees, columns, features, n_outputs + 1, leaf_targets)
    prior = np.mean([tree.prior for tree in trees], axis=0)
    graph.output("variable", graph.vote_mean(sums, n_outputs, prior), n_outputs)


def _boosted_head(graph, model, trees, columns, features):
    n_outputs = int(model._booster.n_outputs)

    def leaf_targets(t, tree, node):
        return [(t % n_outputs, float(tree.value[node, 0]))]

    base = np.asarray(model._booster.baseline(), dtype=np.float64)
    raw = _ensemble(graph, trees, columns, features, n_outputs, leaf_targets, base)
    if isinstance(model, BoostingClassifier):
        probabilities = graph.link(raw, len(model.classes_))
        graph.classifier_outputs(probabilities, model.classes_)
    else:
        graph.output("variable", raw, n_outputs)
