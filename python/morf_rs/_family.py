"""The base of the atom families of :mod:`morf_rs.dictionary`."""

from __future__ import annotations

__all__ = ["Family"]


class Family:
    """An atom family; see the subclasses. Use it in a dictionary as ``(family, p)``."""

    # The engine's name of the family.
    _engine_name = ""

    def _engine(self, geometry):
        """The engine's description of the family, checked against ``geometry``."""
        return {"family": self._engine_name}

    def _fields(self):
        return {}

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other):
        return type(self) is type(other) and self._fields() == other._fields()

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))
