"""morf_rs.save and morf_rs.load: every estimator round trips; damaged, altered and
foreign files are refused with a ValueError saying what is wrong."""

import json
import pickle
import struct
import zlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import morf_rs
from morf_rs._estimator import BaseTreeEnsemble
from morf_rs._savefile import MAGIC, read_model_file
from morf_rs.dictionary import AxisAligned, GraphAtoms, Pooled, SignedPatches

ESTIMATORS = [
    getattr(morf_rs, name)
    for name in morf_rs.__all__
    if isinstance(getattr(morf_rs, name), type)
    and issubclass(getattr(morf_rs, name), BaseTreeEnsemble)
    and not name.startswith("Base")
]


def _data(n_samples=80, n_features=16, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features)).astype(np.float32)
    y = np.array(["cat", "dog", "emu"])[np.arange(n_samples) % 3]
    X[y == "dog", :4] += 1.5
    return X, y


def _fitted(cls, **params):
    X, y = _data()
    params = {"n_estimators": 4, "random_state": 0, "n_jobs": 1, **params}
    if "image_shape" in cls().get_params():
        params.setdefault("image_shape", (4, 4))
    is_classifier = "Classifier" in cls.__name__
    return cls(**params).fit(X, y if is_classifier else X[:, 0] + X[:, 5]), X


def _scores(model, X):
    if not hasattr(model, "predict"):  # unsupervised forests
        return model.apply(X), model.labels_
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X), model.predict(X)
    return (model.predict(X),)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_every_estimator_round_trips(cls, tmp_path):
    model, X = _fitted(cls)
    path = tmp_path / "model.morf"
    morf_rs.save(model, path)
    loaded = morf_rs.load(path)
    assert type(loaded) is cls
    assert loaded.get_params() == model.get_params()
    for before, after in zip(_scores(model, X), _scores(loaded, X)):
        np.testing.assert_array_equal(before, after)
    for name in ("classes_", "n_features_in_", "image_shape_", "train_score_"):
        if hasattr(model, name):
            np.testing.assert_array_equal(getattr(loaded, name), getattr(model, name))
    # The file holds data only: no pickle opcodes, readable JSON.
    header, model_bytes = read_model_file(path)
    assert header["class"] == cls.__name__
    assert model_bytes == getattr(model, model._model_attribute).to_bytes()


def test_parameters_that_are_not_plain_data_round_trip(tmp_path):
    graph = sp.csr_array(np.eye(16, k=1) + np.eye(16, k=-1))
    dictionary = [
        (Pooled(SignedPatches(bands=2), shift_max=(2, 3), reduce="both"), 0.4),
        (GraphAtoms(graph, max_size=4, signed=True), 0.3),
        (GraphAtoms(np.array([[0, 1], [1, 2]])), 0.1),
        (AxisAligned(), 0.2),
    ]
    model, X = _fitted(
        morf_rs.ManifoldObliqueForestClassifier,
        dictionary=dictionary,
        random_state=np.random.RandomState(7),
        class_weight={"cat": 2.0, "dog": 1.0, "emu": 0.5},
        max_features=np.float64(0.5),
    )
    morf_rs.save(model, tmp_path / "m.morf")
    loaded = morf_rs.load(tmp_path / "m.morf")
    params = loaded.get_params()
    assert params["dictionary"] == dictionary
    assert params["image_shape"] == (4, 4)  # a tuple stays a tuple
    assert params["class_weight"] == {"cat": 2.0, "dog": 1.0, "emu": 0.5}
    assert type(params["max_features"]) is np.float64
    np.testing.assert_array_equal(
        params["random_state"].get_state()[1], model.random_state.get_state()[1]
    )
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_feature_names_and_warm_start_survive(tmp_path):
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    params = {"n_estimators": 3, "random_state": 1, "n_jobs": 1}
    model = morf_rs.SparseObliqueForestClassifier(**params).fit(frame, y)
    morf_rs.save(model, tmp_path / "m.morf")
    loaded = morf_rs.load(tmp_path / "m.morf")
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    # More trees on the loaded forest give the forest fitted with them at once.
    loaded.set_params(n_estimators=6, warm_start=True).fit(frame, y)
    at_once = morf_rs.SparseObliqueForestClassifier(**{**params, "n_estimators": 6})
    at_once.fit(frame, y)
    assert loaded._forest.to_bytes() == at_once._forest.to_bytes()


REGRESSORS = [
    morf_rs.RandomForestRegressor,
    morf_rs.ManifoldObliqueForestRegressor,
    morf_rs.GradientBoostingRegressor,
    morf_rs.ManifoldObliqueGradientBoostingRegressor,
]


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("scale", [2.0**-100, 2.0**70])
def test_regressors_of_very_large_or_small_targets_round_trip(cls, scale, tmp_path):
    # Scaling y by a power of two grows the same trees (every cost scales exactly);
    # their decreases scale by its square: beyond float32 for 2^70 (under it for
    # 2^-100), which must neither break saving nor the importances, nor the boosted
    # models' split search, whose costs are float32.
    X, _ = _data()
    y = X[:, 0] * 3.0 - X[:, 1] + np.sin(X[:, 2])
    params = {"n_estimators": 4, "random_state": 0}
    if "image_shape" in cls().get_params():
        params["image_shape"] = (4, 4)
    if "l2_regularization" in cls().get_params():
        # A penalty scales the same way; early stopping's tol must be read in y's
        # units squared.
        params.update(n_estimators=30, l2_regularization=1.0, early_stopping=True)
        params.update(n_iter_no_change=2, tol=1e-2)
    plain = cls(**params).fit(X, y)
    if "tol" in params:
        params["tol"] *= scale**2  # the loss is in y's units squared
    scaled = cls(**params).fit(X, y * scale)
    np.testing.assert_array_equal(scaled.predict(X), plain.predict(X) * scale)
    name = (
        "gain_importances_"
        if hasattr(plain, "gain_importances_")
        else ("impurity_importances_")
    )
    expected = getattr(plain, name)
    assert expected.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(getattr(scaled, name), expected, rtol=1e-12)
    decreases = scaled.tree_structure(0).impurity_decrease
    np.testing.assert_allclose(
        decreases, plain.tree_structure(0).impurity_decrease * scale**2, rtol=1e-12
    )
    morf_rs.save(scaled, tmp_path / "m.morf")
    loaded = morf_rs.load(tmp_path / "m.morf")
    np.testing.assert_array_equal(loaded.predict(X), scaled.predict(X))
    np.testing.assert_array_equal(getattr(loaded, name), getattr(scaled, name))


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_what_cannot_be_saved_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not fitted"):
        morf_rs.save(morf_rs.RandomForestClassifier(), tmp_path / "m.morf")
    with pytest.raises(TypeError, match="estimators of morf_rs"):
        morf_rs.save(object(), tmp_path / "m.morf")
    model, _ = _fitted(morf_rs.RandomForestClassifier, oob_score=lambda y, p: 0.0)
    with pytest.raises(TypeError, match="parameter oob_score"):
        morf_rs.save(model, tmp_path / "m.morf")
    assert not list(tmp_path.iterdir())  # nothing half written


def _rewrite(path, edit_header=None, edit_model=None, version=1):
    """Write the file at path again with its header or model bytes changed and a
    valid checksum, as someone altering it on purpose would."""
    header, model_bytes = read_model_file(path)
    if edit_header is not None:
        edit_header(header)
    if edit_model is not None:
        model_bytes = edit_model(model_bytes)
    text = json.dumps(header).encode()
    body = (
        MAGIC
        + struct.pack("<IQ", version, len(text))
        + text
        + struct.pack("<Q", len(model_bytes))
        + model_bytes
    )
    path.write_bytes(body + struct.pack("<I", zlib.crc32(body)))


@pytest.fixture
def saved(tmp_path):
    model, _ = _fitted(morf_rs.ManifoldObliqueForestClassifier)
    path = tmp_path / "m.morf"
    morf_rs.save(model, path)
    return path


def _set(key, value, section="attributes"):
    def edit(header):
        header[section][key] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h.update({"class": "BaseObliqueForest"}), "not an estimator"),
        (lambda h: h.update({"class": "posix.system"}), "not an estimator"),
        (
            lambda h: h.update({"class": "ManifoldObliqueGradientBoostingClassifier"}),
            "parameters of a",
        ),
        (lambda h: h.pop("params"), "exactly"),
        (_set("n_tree", 3, "params"), "parameters of a"),
        (_set("n_features_in_", 15), "n_features_in_"),
        (_set("n_classes_", 2), "n_classes_"),
        (_set("classes_", ["a", "b"]), "classes_"),
        (_set("__class__", "x"), "not a fitted attribute"),
        (_set("fit", 1), "not a fitted attribute"),
        (_set("n_features_in_", {"pickle": "x"}), "not a kind of value"),
        (
            _set("classes_", {"ndarray": {"dtype": "|O", "shape": [1], "data": ""}}),
            "refused",
        ),
        (
            _set("classes_", {"ndarray": {"dtype": "<i8", "shape": [3], "data": ""}}),
            "needs 24 bytes",
        ),
        (
            _set(
                "classes_",
                {"ndarray": {"dtype": "<i8", "shape": [2], "data": "AAAAAAAAAAA="}},
            ),
            "needs 16 bytes",
        ),
    ],
)
def test_altered_headers_are_refused(saved, edit, message):
    _rewrite(saved, edit_header=edit)
    with pytest.raises(ValueError, match=message):
        morf_rs.load(saved)


def test_model_bytes_of_another_kind_are_refused(saved, tmp_path):
    regressor, _ = _fitted(morf_rs.ManifoldObliqueForestRegressor)
    other = regressor._forest.to_bytes()
    _rewrite(saved, edit_model=lambda _: other)
    with pytest.raises(ValueError, match="cannot load forest"):
        morf_rs.load(saved)
    booster, _ = _fitted(morf_rs.ManifoldObliqueGradientBoostingClassifier)
    morf_rs.save(booster, saved)
    _rewrite(saved, edit_model=lambda _: other)
    with pytest.raises(ValueError, match="m.morf: cannot load .*missing header"):
        morf_rs.load(saved)


def test_damaged_and_foreign_files_are_refused(saved, tmp_path):
    data = saved.read_bytes()
    assert b'"verbose":0' in data
    cases = {
        "truncated": data[: len(data) // 2],
        "no model": data[:20],
        "appended": data + b"\0",
        # A change that leaves the header valid: only the checksum tells.
        "flipped": data.replace(b'"verbose":0', b'"verbose":1'),
        "magic": b"\x93NUMPY" + data[6:],
        "pickle": pickle.dumps(morf_rs.load(saved)),
        "empty": b"",
    }
    messages = {
        "truncated": "truncated",
        "no model": "truncated",
        "appended": "appended",
        "flipped": "checksum",
        "magic": "not a morf_rs model file",
        "pickle": "is a pickle",
        "empty": "not a morf_rs model file",
    }
    for name, content in cases.items():
        path = tmp_path / f"{name}.morf"
        path.write_bytes(content)
        with pytest.raises(ValueError, match=messages[name]):
            morf_rs.load(path)


def test_damaged_model_bytes_are_refused_by_the_engine(saved):
    _rewrite(saved, edit_model=lambda b: b[:-5] + bytes([b[-5] ^ 0xFF]) + b[-4:])
    with pytest.raises(ValueError, match="checksum mismatch"):
        morf_rs.load(saved)


def test_other_format_versions_are_refused(saved):
    _rewrite(saved, version=2)
    with pytest.raises(ValueError, match="format 2; this morf_rs reads format 1"):
        morf_rs.load(saved)
