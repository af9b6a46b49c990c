"""Pickling of fitted estimators through their engine model's saved bytes."""

from __future__ import annotations


class PersistThroughBytes:
    """Pickles the fitted engine model as its versioned, checksummed bytes.

    On load the engine validates the bytes, and the estimator's own attributes must
    agree with the model they describe. Subclasses name the model's attribute
    (``_model_attribute``), its engine type (``_model_type``, with ``from_bytes`` and
    ``n_features``) and what to call it in errors (``_model_noun``), and say what the
    task's attributes are according to the model (``_engine_shape(model)``) and to the
    pickled state (``_state_shape(state)``).
    """

    def __getstate__(self):
        # object.__getstate__ returns the live __dict__ on Python >= 3.11.
        state = dict(super().__getstate__())
        if self._model_attribute in state:
            state[self._model_attribute] = state[self._model_attribute].to_bytes()
        return state

    def __setstate__(self, state):
        self._restore_state(state, "pickle")

    def _restore_state(self, state, source):
        """Set the estimator's state from ``state`` (the engine model as bytes),
        validating the bytes and checking that the attributes agree with the model;
        ``source`` names where the state came from in errors ("pickle", "file")."""
        state = dict(state)
        if self._model_attribute in state:
            model = self._model_type.from_bytes(state[self._model_attribute])
            expected = {
                **self._engine_shape(model),
                "n_features_in_": model.n_features,
            }
            found = {
                **self._state_shape(state),
                "n_features_in_": state.get("n_features_in_"),
            }
            if found != expected:
                noun = self._model_noun
                raise ValueError(
                    f"cannot load {noun} into a {type(self).__name__}: the {source} "
                    f"describes {found} but its {noun} has {expected}; the {source} "
                    "was saved from another kind of estimator (a classifier's state "
                    "loaded into a regressor, or the reverse), or altered or damaged."
                )
            state[self._model_attribute] = model
        elif any(name.endswith("_") and not name.startswith("__") for name in state):
            noun = self._model_noun
            raise ValueError(
                f"cannot load a {type(self).__name__}: the {source} holds fitted "
                f"attributes but no {noun}; it was saved from another kind of "
                "estimator (a forest's state loaded into a booster, or the reverse), "
                "or altered."
            )
        super().__setstate__(state)
