"""Contributions: what each feature (or each split atom) added to a prediction, as
exact TreeSHAP values over the atoms, for every forest and boosted model."""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.utils.validation import check_is_fitted

from morf_rs._validation import engine_blocks, resolve_n_threads, validate_X_scoring

__all__ = ["AtomContributions", "ExplainContributions"]


@dataclasses.dataclass(frozen=True)
class AtomContributions:
    """The exact per-atom contributions of rows: one entry per row, tree and atom
    whose contribution is not zero in every output.

    Entry ``e`` is row ``sample[e]``'s contribution from the atom that node
    ``node[e]`` of tree ``tree[e]`` splits on (the first node of the tree that
    splits on it), read with ``model.tree_structure(tree[e]).atom(node[e])``.
    A row's ``values`` summed over its entries, plus ``expected_value``, give
    the same output as :meth:`~ExplainContributions.predict_contributions`
    summed over axis 1.

    Attributes
    ----------
    sample, tree, node : ndarray of int64, shape (n_entries,)
        The row, the tree (numbered as :meth:`tree_structure` numbers them)
        and the first node of that tree splitting on the atom.
    values : ndarray of float64, shape (n_entries, n_outputs)
        The atom's contribution to each output.
    expected_value : ndarray of float64, shape (n_outputs,)
        What the model predicts knowing nothing of a row.
    """

    sample: np.ndarray
    tree: np.ndarray
    node: np.ndarray
    values: np.ndarray
    expected_value: np.ndarray


class ExplainContributions:
    """What forests and boosted models share to explain predictions.

    Subclasses name their engine model (``_model_attribute``) and may say how
    many outputs its contributions have (``_n_contribution_outputs``).
    """

    def _n_contribution_outputs(self):
        return getattr(self, self._model_attribute).n_outputs

    def predict_contributions(self, X, *, per_atom=False):
        """What each feature contributed to each sample's prediction: exact
        path-dependent TreeSHAP values (Lundberg et al. 2020) over the atoms the
        splits test, each atom's value shared among its features.

        The players of a tree are its distinct split atoms (identical atoms at
        several nodes are one player), so the values are exact; for
        axis-aligned trees they are shap's ``TreeExplainer`` values. Each
        atom's value is then shared among its features in proportion to
        ``|w_j x_j|``, the size of each feature's term in the sample's
        projection (in proportion to ``|w_j|`` where every term is 0; equally
        among the atom's missing features where the projection is missing;
        for a pooled atom, among the features of the shift that gave the
        pooled value, or equally among the window's missing features), so the
        values still sum exactly.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples; NaN marks a missing value.
        per_atom : bool, default=False
            Return the exact per-atom values (an :class:`AtomContributions`)
            instead of the per-feature ones.

        Returns
        -------
        contributions : ndarray of shape (n_samples, n_features + 1, n_outputs)
            ``contributions[i, j, k]`` is feature j's contribution to output k
            of sample i; ``contributions[i, -1, k]`` is the expected value.
            The sum over axis 1 is the model's raw output: a forest
            classifier's ``predict_proba`` (outputs: classes), a forest
            regressor's ``predict`` (outputs: regression outputs, 1 for one),
            a boosted classifier's ``decision_function`` per class (two
            classes: the one raw score, the log-odds of ``classes_[1]``, in
            output 1 and zeros in output 0), a boosted regressor's
            ``predict`` (one output). With ``per_atom=True``, an
            :class:`AtomContributions`.

        Raises
        ------
        ValueError
            For an honest forest trained with ``honest_prior="ignore"`` whose
            leaves cast no vote: its prediction is a mean over a number of
            trees that changes from sample to sample, which no sum of
            contributions equals (train it with ``"empirical"`` or
            ``"uniform"``); and for X the model cannot score.

        Examples
        --------
        >>> import numpy as np
        >>> from morf_rs import ManifoldObliqueForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 16))
        >>> y = (X.reshape(-1, 4, 4)[:, :2, :2].sum(axis=(1, 2)) > 0).astype(int)
        >>> forest = ManifoldObliqueForestClassifier(
        ...     image_shape=(4, 4), n_estimators=10, random_state=0
        ... ).fit(X, y)
        >>> contributions = forest.predict_contributions(X[:5])
        >>> contributions.shape
        (5, 17, 2)
        >>> np.allclose(contributions.sum(axis=1), forest.predict_proba(X[:5]))
        True
        >>> pixels = contributions[0, :-1, 1].reshape(4, 4)  # a map over the image
        """
        check_is_fitted(self)
        if not isinstance(per_atom, (bool, np.bool_)):
            raise TypeError(
                f"per_atom must be True or False, got {per_atom!r} of type "
                f"{type(per_atom).__name__}."
            )
        engine = getattr(self, self._model_attribute)
        n_outputs = self._n_contribution_outputs()
        if per_atom:
            return self._atom_contributions(engine, X)
        n_slots = self.n_features_in_ + 1
        flat = self._score(
            X,
            lambda x, n, out: engine.contributions(x, n, out),
            n_slots * n_outputs,
            np.float64,
        )
        return flat.reshape(len(flat), n_slots, n_outputs)

    def _atom_contributions(self, engine, X):
        X = validate_X_scoring(self, X)
        n_threads = resolve_n_threads(self.n_jobs)
        parts = []
        for rows, block in engine_blocks(X):
            part = engine.atom_contributions(block, n_threads)
            part["sample"] += rows.start or 0
            parts.append(part)
        return AtomContributions(
            **{
                name: np.concatenate([part[name] for part in parts])
                for name in ("sample", "tree", "node", "values")
            },
            expected_value=parts[0]["expected_value"]
            if parts
            else np.zeros(self._n_contribution_outputs()),
        )
