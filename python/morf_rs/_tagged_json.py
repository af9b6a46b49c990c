"""Estimator parameters and fitted attributes as JSON data, never as code.

:func:`encode` turns the values an estimator holds (numbers, strings, lists, numpy
arrays and scalars, tuples, dicts with any plain keys, a ``RandomState``, the atom
families of :mod:`morf_rs.dictionary`, scipy sparse graphs) into JSON values, and
:func:`decode` turns them back. JSON objects are used only as tags (one key naming
the kind of value), so that decoding never guesses. Anything else (a callable, an
arbitrary object) is refused with a message naming where it was found: decoding
builds only numpy arrays and the few classes named here, so a file from elsewhere
cannot run code.
"""

from __future__ import annotations

import base64
import math
import numbers

import numpy as np
import scipy.sparse as sp

from morf_rs import dictionary
from morf_rs._family import Family

__all__ = ["decode", "encode"]

# Array dtypes kept as raw bytes: booleans, integers, floats and fixed-width text.
_ARRAY_KINDS = "biufU"
# Families rebuilt by name from their constructor's fields.
_FAMILIES = {
    name: getattr(dictionary, name)
    for name in dictionary.__all__
    if isinstance(getattr(dictionary, name), type)
    and issubclass(getattr(dictionary, name), Family)
    and name != "Family"
}


def encode(value, where):
    """``value`` as JSON data; ``where`` names it in errors (e.g. "parameter x")."""
    # numpy scalars first: np.float64 is also a float, and must stay np.float64.
    if isinstance(value, (np.generic, np.ndarray)):
        return {"ndarray": _encode_array(np.asarray(value), where)}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, list):
        return [encode(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, tuple):
        return {
            "tuple": [encode(item, f"{where}[{i}]") for i, item in enumerate(value)]
        }
    if isinstance(value, dict):
        return {
            "dict": [
                [encode(key, f"{where} key"), encode(item, f"{where}[{key!r}]")]
                for key, item in value.items()
            ]
        }
    if isinstance(value, np.random.RandomState):
        return {"random_state": encode(value.get_state(), where)}
    if isinstance(value, Family) and type(value).__name__ in _FAMILIES:
        fields = value._fields()
        if isinstance(value, dictionary.GraphAtoms):
            fields["graph"] = value.graph
        return {"family": [type(value).__name__, encode(fields, where)]}
    if sp.issparse(value):
        coo = sp.coo_array(value)
        return {"sparse": encode((coo.shape, coo.row, coo.col, coo.data), where)}
    raise TypeError(
        f"cannot save {where}: a {type(value).__name__} is not data a model file "
        "holds (numbers, text, arrays, lists, atom families); set it to such a "
        "value (e.g. oob_score=True instead of a callable) before saving."
    )


def _encode_array(array, where):
    if array.dtype.kind == "O":
        if not all(isinstance(item, str) for item in array.flat):
            raise TypeError(
                f"cannot save {where}: an object array holding other than text."
            )
        return {"text": array.tolist(), "shape": list(array.shape)}
    if array.dtype.kind not in _ARRAY_KINDS:
        raise TypeError(f"cannot save {where}: an array of dtype {array.dtype}.")
    data = np.ascontiguousarray(array).tobytes()
    return {
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "data": base64.b64encode(data).decode("ascii"),
    }


def decode(value, where):
    """The value :func:`encode` gave ``value`` for; ValueError naming ``where`` if
    it is not such a value."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return [decode(item, where) for item in value]
    if not (isinstance(value, dict) and len(value) == 1):
        raise ValueError(f"{where}: {value!r:.80} is not a value a model file holds.")
    ((tag, content),) = value.items()
    if tag == "float" and content in ("inf", "-inf", "nan"):
        return float(content)
    if tag == "ndarray" and isinstance(content, dict):
        return _decode_array(content, where)
    if tag == "tuple" and isinstance(content, list):
        return tuple(decode(item, where) for item in content)
    if tag == "dict" and isinstance(content, list):
        return {key: item for key, item in (_pair(p, where) for p in content)}
    if tag == "random_state":
        state = np.random.RandomState()
        try:
            state.set_state(decode(content, where))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: not a RandomState's state ({error}).") from None
        return state
    if tag == "family" and isinstance(content, list) and len(content) == 2:
        name, fields = content
        if name not in _FAMILIES:
            raise ValueError(f"{where}: {name!r} is not an atom family of morf_rs.")
        fields = decode(fields, where)
        try:
            return _FAMILIES[name](**fields)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {name} cannot be rebuilt ({error}).") from None
    if tag == "sparse":
        shape, row, col, data = _sparse_parts(decode(content, where), where)
        return sp.csr_array((data, (row, col)), shape=shape)
    raise ValueError(f"{where}: {tag!r} is not a kind of value a model file holds.")


def _pair(pair, where):
    if not (isinstance(pair, list) and len(pair) == 2):
        raise ValueError(f"{where}: a dict entry is not a (key, value) pair.")
    key = decode(pair[0], where)
    try:
        hash(key)
    except TypeError:
        raise ValueError(f"{where}: a dict key is not hashable.") from None
    return key, decode(pair[1], where)


def _decode_array(content, where):
    shape = content.get("shape")
    if not (
        isinstance(shape, list)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
        and all(n >= 0 for n in shape)
        and len(shape) <= 32
    ):
        raise ValueError(f"{where}: an array's shape {shape!r:.80} is not valid.")
    if set(content) == {"text", "shape"}:
        items = content["text"]
        if not (isinstance(items, list) and all(isinstance(t, str) for t in items)):
            raise ValueError(f"{where}: an array of text holds other than text.")
        if len(items) != math.prod(shape):
            raise ValueError(f"{where}: an array of text does not fill its shape.")
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array.reshape(shape)
    if set(content) != {"dtype", "shape", "data"}:
        raise ValueError(f"{where}: an array lacks its dtype, shape or data.")
    try:
        dtype = np.dtype(content["dtype"])
        data = base64.b64decode(content["data"], validate=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: an array is not valid ({error}).") from None
    if dtype.kind not in _ARRAY_KINDS or dtype.str != content["dtype"]:
        raise ValueError(f"{where}: arrays of dtype {content['dtype']!r} are refused.")
    if len(data) != math.prod(shape) * dtype.itemsize:
        raise ValueError(
            f"{where}: an array of shape {tuple(shape)} and dtype {dtype} needs "
            f"{math.prod(shape) * dtype.itemsize} bytes, the file gives {len(data)}."
        )
    array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    return array[()] if array.ndim == 0 else array


def _sparse_parts(parts, where):
    if not (isinstance(parts, tuple) and len(parts) == 4):
        raise ValueError(f"{where}: a sparse graph is not (shape, row, col, data).")
    shape, row, col, data = parts
    arrays = (row, col, data)
    if not (
        isinstance(shape, tuple)
        and len(shape) == 2
        and all(isinstance(n, int) and n >= 0 for n in shape)
        and all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays)
        and len(row) == len(col) == len(data)
        and row.dtype.kind in "iu"
        and col.dtype.kind in "iu"
        and all(
            len(a) == 0 or (a.min() >= 0 and a.max() < n)
            for a, n in ((row, shape[0]), (col, shape[1]))
        )
    ):
        raise ValueError(f"{where}: a sparse graph's entries do not fit its shape.")
    return parts
