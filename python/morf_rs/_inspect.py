"""Inspecting fitted trees: their structure as numpy arrays and the paths of samples."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.utils.validation import check_is_fitted

from morf_rs._validation import check_int

__all__ = ["InspectTrees", "TreeStructure"]

# Padding after a path in the engine's decision paths (u32::MAX): no node.
_NO_NODE = np.iinfo(np.uint32).max


@dataclasses.dataclass(frozen=True)
class TreeStructure:
    """One fitted tree as arrays indexed by node id (the root is node 0).

    A split sends a sample whose projection on its atom,
    ``X[i, atom_features] @ atom_weights``, is ``<= threshold`` to its left
    child and the others to its right child. Node ids are those of ``apply``
    and ``decision_path``.

    Attributes
    ----------
    children_left, children_right : ndarray of int64, shape (node_count,)
        Child node ids; -1 at leaves.
    threshold : ndarray of float64, shape (node_count,)
        Split thresholds; -2 at leaves.
    atom_ptr : ndarray of int64, shape (node_count + 1,)
        The atom of node ``i`` is ``atom_features[atom_ptr[i]:atom_ptr[i + 1]]``
        with ``atom_weights`` alike (see :meth:`atom`); empty at leaves.
    atom_features : ndarray of int64
        Feature indices of every split's atom, node after node.
    atom_weights : ndarray of float32
        Their weights.
    value : ndarray of float64, shape (node_count, n_classes or n_outputs)
        Leaves' class distributions (forest classifiers), mean target values
        (forest regressors), the value a leaf adds to its output's raw score
        (boosted models, one column) or the leaf's path length (isolation
        forests: its depth plus the average path length of the rows it held);
        0 for splits and for honest leaves that cast no vote.
    votes : ndarray of bool, shape (node_count,)
        Whether the node is a leaf that votes.
    missing_go_to_left : ndarray of bool, shape (node_count,)
        Whether a split sends a sample whose projection is missing (NaN) left.
    n_node_samples : ndarray of int64, shape (node_count,)
        Training samples (each once, however often drawn) that reached the node
        while the tree grew.
    weighted_n_node_samples : ndarray of float64, shape (node_count,)
        Their total weight (forests: sample weight times bootstrap count,
        relative to the largest sample weight; boosted models: the sum of their
        hessians in the tree's round; isolation forests: their count, sample
        weights having chosen the rows).
    impurity_decrease : ndarray of float64, shape (node_count,)
        Each split's weighted impurity decrease, relative to the root's weight
        (boosted models: its gain, the decrease of the training loss); 0 at
        leaves and at an isolation forest's random splits.
    pool_reduce : ndarray of int8, shape (node_count,)
        For a split on a pooled atom (:class:`~morf_rs.dictionary.Pooled`), 1
        where it takes the maximum over its window and -1 the minimum; 0 for
        other nodes. A pooled split's atom is its base atom.
    pool_shift_low, pool_shift_high : ndarray of int64, shape (node_count, n_axes)
        The window of a pooled split: the base atom moved by every shift from
        ``pool_shift_low`` to ``pool_shift_high`` per image axis (0 elsewhere).
    pool_wrap : ndarray of bool, shape (node_count, n_axes)
        Whether a pooled split's shifted cells continue cyclically past the end
        of an image axis (False elsewhere).
    prior : ndarray of float64, shape (n_outputs,)
        A forest regressor's tree: the mean target of its sample, which the
        forest predicts (averaged over trees) where no honest leaf votes; 0 for
        other trees.
    rescales_missing_cells : bool
        How the tree projects a sample some of whose atom's features are
        missing (NaN). True (trees grown by this version): the sum over the
        present features, times the atom's total ``|weight|`` over the present
        features' ``|weight|``; missing only when every feature is. False
        (trees saved by earlier versions): missing as soon as one feature is.
    """

    children_left: np.ndarray
    children_right: np.ndarray
    threshold: np.ndarray
    atom_ptr: np.ndarray
    atom_features: np.ndarray
    atom_weights: np.ndarray
    value: np.ndarray
    votes: np.ndarray
    missing_go_to_left: np.ndarray
    n_node_samples: np.ndarray
    weighted_n_node_samples: np.ndarray
    impurity_decrease: np.ndarray
    pool_reduce: np.ndarray
    pool_shift_low: np.ndarray
    pool_shift_high: np.ndarray
    pool_wrap: np.ndarray
    prior: np.ndarray
    rescales_missing_cells: bool

    @property
    def node_count(self):
        """Number of nodes, splits and leaves."""
        return len(self.children_left)

    @property
    def is_leaf(self):
        """Boolean array: which nodes are leaves."""
        return self.children_left < 0

    def atom(self, node):
        """The split direction of node ``node``: (feature indices, weights)."""
        span = slice(self.atom_ptr[node], self.atom_ptr[node + 1])
        return self.atom_features[span], self.atom_weights[span]


class InspectTrees:
    """What forests and boosted models share to show their trees: the leaf and
    the path of each sample in every tree, and each tree's structure.

    Subclasses name their engine model (``_model_attribute``) and say how many
    trees it holds (``_n_trees``), in the engine's order: a forest's trees, or a
    boosted model's round after round, one per output within a round.
    """

    def _n_trees(self):
        raise NotImplementedError

    def _leaves(self, X, n_threads=None):
        """Leaf id per sample and tree: int64 (n_samples, trees), engine order."""
        check_is_fitted(self)
        model = getattr(self, self._model_attribute)
        return self._score(
            X,
            lambda x, n, out: model.apply(x, n, out),
            self._n_trees(),
            np.int64,
            n_threads,
        )

    def decision_path(self, X):
        """The nodes each sample passes through, as scikit-learn returns them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            ``indicator[i, j]`` is 1 where sample i passes through node j, the
            nodes of every tree one after the other (a boosted model's trees
            round after round, one per output within a round, as
            :meth:`tree_structure` numbers them).
        n_nodes_ptr : ndarray of shape (n_trees + 1,)
            The columns of tree t are ``n_nodes_ptr[t]:n_nodes_ptr[t + 1]``,
            in the node ids of :meth:`tree_structure` and :meth:`apply`.
        """
        check_is_fitted(self)
        return _decision_path(self, X)

    def tree_structure(self, index):
        """Tree ``index`` as numpy arrays: a :class:`~morf_rs.TreeStructure`
        (children, thresholds, each split's atom as feature indices and weights,
        leaf values, sample counts), to draw, export or study the trees.

        A boosted model's trees are numbered round after round, one per output
        within a round: tree ``r * n_trees_per_iteration_ + k`` is output k's
        tree of round r, whose ``value`` column is the leaf value (learning rate
        included) it adds to output k's raw score.

        Parameters
        ----------
        index : int
            The tree, from 0 to the number of trees - 1.

        Returns
        -------
        TreeStructure

        Examples
        --------
        The first splits of a MORF tree, as the patches they sum:

        >>> import numpy as np
        >>> from morf_rs import ManifoldObliqueForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 64))
        >>> y = (X.reshape(-1, 8, 8)[:, 2:5, 3:6].sum(axis=(1, 2)) > 0).astype(int)
        >>> forest = ManifoldObliqueForestClassifier(
        ...     image_shape=(8, 8), patch_min=2, patch_max=4, max_features=64,
        ...     n_estimators=10, random_state=0,
        ... ).fit(X, y)
        >>> tree = forest.tree_structure(0)
        >>> for node in (0, tree.children_left[0], tree.children_right[0]):
        ...     features, weights = tree.atom(node)
        ...     rows, cols = np.unravel_index(features, (8, 8))
        ...     print(
        ...         f"node {node}: sum of rows {rows.min()}-{rows.max()}, "
        ...         f"columns {cols.min()}-{cols.max()} <= {tree.threshold[node]:.2f}"
        ...     )
        node 0: sum of rows 0-3, columns 2-4 <= -2.70
        node 1: sum of rows 3-6, columns 4-5 <= 2.40
        node 10: sum of rows 3-5, columns 4-5 <= -1.43
        """
        check_is_fitted(self)
        index = check_int("index", index, 0, self._n_trees() - 1)
        n_axes = len(getattr(self, "image_shape_", None) or (1,))
        model = getattr(self, self._model_attribute)
        return TreeStructure(**model.tree_arrays(index, n_axes))


def _decision_path(model, X):
    """scikit-learn's ``decision_path`` of a fitted forest or boosted ``model``."""
    engine = getattr(model, model._model_attribute)
    widths = np.asarray(engine.path_widths(), dtype=np.int64)
    paths = model._score(
        X,
        lambda x, n, out: engine.decision_paths(x, n, out),
        int(widths.sum()),
        np.uint32,
    )
    n_nodes_ptr = np.concatenate([[0], np.cumsum(engine.tree_stats()["n_nodes"])])
    on_path = paths != _NO_NODE
    offsets = np.repeat(n_nodes_ptr[:-1], widths)
    indices = (paths.astype(np.int64) + offsets)[on_path]
    indptr = np.concatenate([[0], np.cumsum(on_path.sum(axis=1))])
    indicator = csr_matrix(
        (np.ones(len(indices), dtype=np.int64), indices, indptr),
        shape=(len(paths), int(n_nodes_ptr[-1])),
    )
    return indicator, n_nodes_ptr.astype(np.int64)
