"""The model file: :func:`save` and :func:`load`, data only, never pickle.

Layout (all integers little-endian)::

    magic           8 bytes   b"\\x93MORF-RS"
    format version  uint32    FILE_FORMAT_VERSION
    header length   uint64    n
    header          n bytes   UTF-8 JSON: {"class", "morf_rs_version",
                              "sklearn_version", "params", "attributes"}
    model length    uint64    m
    model           m bytes   the engine's versioned, checksummed bytes
                              (Forest.to_bytes / Booster.to_bytes)
    checksum        uint32    CRC-32 of everything before it

The header's values are tagged JSON (:mod:`morf_rs._tagged_json`). Loading builds
nothing but the named public estimator, numpy arrays and atom families; the engine
validates its bytes and the estimator checks that its attributes agree with them
(:class:`morf_rs._persist.PersistThroughBytes`).
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from typing import Any

import numpy as np
import sklearn

from morf_rs._estimator import BaseTreeEnsemble
from morf_rs._tagged_json import decode, encode

__all__ = ["FILE_FORMAT_VERSION", "MAGIC", "load", "read_model_file", "save"]

MAGIC = b"\x93MORF-RS"
FILE_FORMAT_VERSION = 1
_LENGTHS = struct.Struct("<IQ")  # format version, header length
_MODEL_LENGTH = struct.Struct("<Q")
_CHECKSUM = struct.Struct("<I")
_HEADER_KEYS = {"class", "morf_rs_version", "sklearn_version", "params", "attributes"}
# Fitted attributes (public or private) end in one underscore.
_ATTRIBUTE_NAME = re.compile(r"_?[a-z][a-z0-9_]*[a-z0-9]_")


def _estimator_classes():
    """The public estimators of morf_rs, by name: the only classes a file may name."""
    import morf_rs

    classes = {}
    for name in morf_rs.__all__:
        value = getattr(morf_rs, name)
        if (
            isinstance(value, type)
            and issubclass(value, BaseTreeEnsemble)
            and not name.startswith("Base")
        ):
            classes[name] = value
    return classes


def save(model: Any, path: str | os.PathLike[str]) -> None:
    """Write a fitted estimator of morf_rs to ``path`` as a model file.

    The file holds the engine's versioned, checksummed model bytes with the
    estimator's class name, parameters and fitted attributes as JSON data, never
    pickle, so :func:`load` runs no code from the file. It is written to a
    file beside it first and then renamed, so ``path`` never holds half a model.

    Parameters
    ----------
    model : estimator of morf_rs
        A fitted forest or boosted model, classifier or regressor.
    path : str or os.PathLike
        Where to write (conventionally ``*.morf``).

    Raises
    ------
    TypeError
        If ``model`` is not an estimator of morf_rs, or a parameter is not data
        (a callable ``oob_score``, for instance).
    ValueError
        If ``model`` is not fitted.
    """
    name = type(model).__name__
    if _estimator_classes().get(name) is not type(model):
        raise TypeError(
            f"save writes the estimators of morf_rs, got a {name}; pickle or joblib "
            "save other objects."
        )
    if not model.__sklearn_is_fitted__():
        raise ValueError(f"this {name} is not fitted; call fit before save.")
    state = model.__getstate__()
    params = model.get_params(deep=False)
    model_bytes = state.pop(model._model_attribute)
    sklearn_version = state.pop("_sklearn_version", sklearn.__version__)
    attributes = {key: value for key, value in state.items() if key not in params}
    import morf_rs

    header = {
        "class": name,
        "morf_rs_version": morf_rs.__version__,
        "sklearn_version": sklearn_version,
        "params": {k: encode(v, f"parameter {k}") for k, v in params.items()},
        "attributes": {k: encode(v, f"attribute {k}") for k, v in attributes.items()},
    }
    header = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    body = b"".join(
        (
            MAGIC,
            _LENGTHS.pack(FILE_FORMAT_VERSION, len(header)),
            header,
            _MODEL_LENGTH.pack(len(model_bytes)),
            model_bytes,
        )
    )
    body += _CHECKSUM.pack(zlib.crc32(body))
    path = os.fspath(path)
    partial = f"{path}.{os.getpid()}.partial"
    try:
        with open(partial, "wb") as file:
            file.write(body)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


def read_model_file(path):
    """The checked parts of a model file: (header as JSON, model bytes).

    Raises ValueError saying what is wrong with a file that is not a whole model
    file of a format this version reads; OSError if it cannot be read.
    """
    with open(path, "rb") as file:
        data = file.read()
    where = f"{os.fspath(path)!s}"
    if not data.startswith(MAGIC):
        what = "a pickle" if data[:1] == b"\x80" else "not a morf_rs model file"
        raise ValueError(
            f"{where} is {what}: model files start with {MAGIC!r}; load reads only "
            "files written by morf_rs.save."
        )
    fixed = len(MAGIC) + _LENGTHS.size
    if len(data) < fixed + _MODEL_LENGTH.size + _CHECKSUM.size:
        raise ValueError(f"{where} is truncated: it ends inside its first fields.")
    version, header_length = _LENGTHS.unpack_from(data, len(MAGIC))
    if version != FILE_FORMAT_VERSION:
        raise ValueError(
            f"{where} has model file format {version}; this morf_rs reads format "
            f"{FILE_FORMAT_VERSION}: load it with the morf_rs that saved it."
        )
    end_of_header = fixed + header_length
    if end_of_header + _MODEL_LENGTH.size + _CHECKSUM.size > len(data):
        raise ValueError(f"{where} is truncated: its header runs past the file's end.")
    (model_length,) = _MODEL_LENGTH.unpack_from(data, end_of_header)
    start = end_of_header + _MODEL_LENGTH.size
    if start + model_length + _CHECKSUM.size != len(data):
        raise ValueError(
            f"{where} is truncated or has bytes appended: its model should take "
            f"{model_length} bytes, the file holds {len(data) - start - 4}."
        )
    (checksum,) = _CHECKSUM.unpack_from(data, len(data) - _CHECKSUM.size)
    if zlib.crc32(data[: -_CHECKSUM.size]) != checksum:
        raise ValueError(f"{where} is damaged: its checksum does not match.")
    try:
        header = json.loads(data[fixed:end_of_header].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError(f"{where}: the header is not valid JSON.") from None
    if not isinstance(header, dict) or set(header) != _HEADER_KEYS:
        raise ValueError(
            f"{where}: the header must hold exactly {sorted(_HEADER_KEYS)}."
        )
    return header, data[start : start + model_length]


def load(path: str | os.PathLike[str]) -> Any:
    """Read an estimator written by :func:`save`.

    Only the public estimators of morf_rs, numpy arrays and atom families are
    built from the file's data; no code in the file runs. The engine validates
    its model bytes (version, checksum, sizes), and the fitted attributes must
    agree with the model.

    Parameters
    ----------
    path : str or os.PathLike
        A file written by :func:`save`.

    Returns
    -------
    model : estimator of morf_rs
        The fitted estimator, predicting as the saved one did.

    Raises
    ------
    ValueError
        If the file is not a whole, undamaged model file of a format this version
        of morf_rs reads, or its contents do not agree with each other.
    """
    header, model_bytes = read_model_file(path)
    where = os.fspath(path)
    try:
        return _build(header, model_bytes, where)
    except RecursionError:
        raise ValueError(f"{where}: the header nests too deeply.") from None


def _build(header, model_bytes, where):
    name = header["class"]
    cls = _estimator_classes().get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(
            f"{where}: {name!r:.80} is not an estimator of morf_rs; the file was "
            "altered or not written by morf_rs.save."
        )
    params, attributes = header["params"], header["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise ValueError(f"{where}: params and attributes must be JSON objects.")
    expected = set(cls().get_params(deep=False))
    if set(params) != expected:
        raise ValueError(
            f"{where}: the parameters of a {name} are {sorted(expected)}, the file "
            f"gives {sorted(params)}."
        )
    for key in attributes:
        if not _ATTRIBUTE_NAME.fullmatch(key) or key in expected:
            raise ValueError(f"{where}: {key!r:.80} is not a fitted attribute.")
    model = cls(**{k: decode(v, f"{where}: parameter {k}") for k, v in params.items()})
    state = dict(model.__dict__)
    state.update(
        {k: decode(v, f"{where}: attribute {k}") for k, v in attributes.items()}
    )
    _check_attributes(state, where)
    state[cls._model_attribute] = model_bytes
    if isinstance(header["sklearn_version"], str):
        # scikit-learn warns when the model was saved by another of its versions.
        state["_sklearn_version"] = header["sklearn_version"]
    try:
        model._restore_state(state, "file")
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    return model


def _check_attributes(state, where):
    """What the engine's checks do not cover: the attributes' own consistency."""
    n_features = state.get("n_features_in_")
    if not (isinstance(n_features, int) and n_features >= 1):
        raise ValueError(f"{where}: n_features_in_ must be a positive int.")
    names = state.get("feature_names_in_")
    if names is not None and not (
        isinstance(names, np.ndarray) and names.shape == (n_features,)
    ):
        raise ValueError(
            f"{where}: feature_names_in_ must name n_features_in_ features."
        )
    classes = state.get("classes_")
    if classes is not None:
        if not (isinstance(classes, np.ndarray) and classes.ndim == 1):
            raise ValueError(f"{where}: classes_ must be a 1-D array.")
        if state.get("n_classes_") != len(classes):
            raise ValueError(f"{where}: n_classes_ must be the number of classes_.")
