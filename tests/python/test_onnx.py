"""ONNX export: ONNX Runtime scores the exported models as the engine does."""

import gzip
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import morf_rs
from morf_rs import datasets
from morf_rs.dictionary import Bumps, Gabors, Patches, Pooled, SignedPatches

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from morf_rs.onnx import to_onnx  # noqa: E402

FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
# Float32 sums of a few trees' leaf values, and of the engine's float64 ones.
TOLERANCE = 1e-5


def _session(model, **options):
    exported = to_onnx(model, **options)
    onnx.checker.check_model(exported, full_check=True)
    settings = ort.SessionOptions()
    settings.intra_op_num_threads = 1
    return ort.InferenceSession(exported.SerializeToString(), settings)


def _scores(model, X, **options):
    """(ONNX Runtime's outputs, the model's own) for X: (label, probabilities)
    of classifiers, (values,) of regressors."""
    outputs = _session(model, **options).run(None, {"X": X})
    if hasattr(model, "predict_proba"):
        return outputs, (model.predict(X), model.predict_proba(X))
    values = model.predict(X).reshape(len(X), -1)
    return outputs, (values,)


def _disagreements(model, X, **options):
    """Rows whose exported scores differ from the model's by more than float32
    rounding, or whose label differs outside ties."""
    ours, theirs = _scores(model, X, **options)
    scores = ours[-1].astype(np.float64)
    expected = theirs[-1]
    assert scores.shape == expected.shape
    scale = np.maximum(1.0, np.abs(expected))
    wrong = np.any(np.abs(scores - expected) > TOLERANCE * scale, axis=1)
    if len(ours) == 2:
        top_two = np.sort(expected, axis=1)[:, -2:]
        tied = top_two[:, 1] - top_two[:, 0] <= TOLERANCE
        wrong |= (ours[0] != theirs[0]) & ~tied
    return np.flatnonzero(wrong)


def _with_missing(X, rate=0.1, seed=0):
    X = np.array(X, dtype=np.float32)
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


@pytest.fixture(scope="module")
def circle():
    X, y = datasets.make_circle(300, random_state=0)
    return X.astype(np.float32), y


def _circle_models():
    """Every estimator on the circle's 100 cells (whole-valued 0/1), with atoms
    of whole weights: patches, signed patches, pooled maxima and minima over
    the cyclic axis, sparse +-1 combinations and single features."""
    image = {"image_shape": (100,), "wrap": True, "patch_min": 3, "patch_max": 12}
    small = {"n_estimators": 8, "random_state": 0}
    pooled = [
        (Pooled(Patches(), shift_min=2, shift_max=6, reduce="both"), 0.5),
        (SignedPatches(bands=2), 0.5),
    ]
    forests = [
        morf_rs.ManifoldObliqueForestClassifier(**image, **small),
        morf_rs.ManifoldObliqueForestClassifier(**image, **small, dictionary=pooled),
        morf_rs.ManifoldObliqueForestClassifier(
            **image, **small, honest_fraction=0.5, honest_prior="ignore"
        ),
        morf_rs.SparseObliqueForestClassifier(**small),
        morf_rs.RandomForestClassifier(**small),
        morf_rs.ManifoldObliqueForestRegressor(**image, **small, dictionary=pooled),
        morf_rs.ManifoldObliqueForestRegressor(
            **image, **small, honest_fraction=0.5, honest_prior="ignore"
        ),
        morf_rs.SparseObliqueForestRegressor(**small),
        morf_rs.RandomForestRegressor(**small),
    ]
    boosted = [
        morf_rs.ManifoldObliqueGradientBoostingClassifier(**image, **small),
        morf_rs.SparseObliqueGradientBoostingClassifier(**small),
        morf_rs.GradientBoostingClassifier(**small),
        morf_rs.ManifoldObliqueGradientBoostingRegressor(
            **image, **small, dictionary=pooled
        ),
        morf_rs.SparseObliqueGradientBoostingRegressor(**small),
        morf_rs.GradientBoostingRegressor(**small),
    ]
    return forests + boosted


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize(
    "model", _circle_models(), ids=lambda m: type(m).__name__.replace("Oblique", "")
)
def test_every_model_scores_as_the_engine_on_whole_valued_data(model, circle, missing):
    X, y = circle
    if missing:
        X = _with_missing(X)
    if "Regressor" in type(model).__name__:
        # A target of several levels, so that leaves hold other values than 0/1.
        y = y * 3.0 + np.nansum(X[:, :10], axis=1)
    model.fit(X, y)
    assert len(_disagreements(model, X)) == 0


def test_three_classes_and_string_labels(circle):
    X, y = circle
    names = np.array(["cat", "dog", "emu"])[(np.arange(len(y)) + y) % 3]
    X = _with_missing(X, rate=0.05)
    for model in (
        morf_rs.ManifoldObliqueForestClassifier(
            image_shape=(100,), n_estimators=5, random_state=0
        ),
        morf_rs.ManifoldObliqueGradientBoostingClassifier(
            image_shape=(100,), n_estimators=5, random_state=0
        ),
    ):
        model.fit(X, names)
        (label, probabilities), (expected_label, expected) = _scores(model, X)
        assert probabilities.shape == (len(X), 3)
        np.testing.assert_allclose(probabilities, expected, atol=TOLERANCE)
        assert label.tolist() == expected_label.tolist()


def test_multi_output_regression(circle):
    X, y = circle
    targets = np.column_stack([y, X[:, :20].sum(axis=1)])
    model = morf_rs.ManifoldObliqueForestRegressor(
        image_shape=(100,), n_estimators=5, random_state=0
    ).fit(X, targets)
    (values,), (expected,) = _scores(model, X)
    assert values.shape == (len(X), 2)
    np.testing.assert_allclose(values, expected, rtol=TOLERANCE)


@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_rows_no_honest_tree_votes_for(circle, task):
    """A lone honest tree leaves some rows without a vote: the classifier gives
    them the uniform distribution, the regressor its tree's prior."""
    X, y = circle
    # Few rows fill the leaves of a tree grown on many: some stay empty.
    settings = {"n_estimators": 1, "honest_fraction": 0.1, "honest_prior": "ignore"}
    if task == "classifier":
        model = morf_rs.RandomForestClassifier(**settings, random_state=0).fit(X, y)
    else:
        model = morf_rs.RandomForestRegressor(**settings, random_state=0)
        model.fit(X, y + X[:, 0])
    structure = model.tree_structure(0)
    unvoted = ~structure.votes[model.apply(X)[:, 0]]
    if task == "classifier":
        assert np.all(model.predict_proba(X)[unvoted] == 0.5)
    else:
        assert np.all(model.predict(X)[unvoted] == structure.prior[0])
    assert unvoted.any()
    assert len(_disagreements(model, X)) == 0


@pytest.mark.parametrize("projection", ["matmul", "gather"])
def test_a_missing_value_only_spoils_the_atoms_it_lies_in(circle, projection):
    """The projection must not spread a NaN to atoms without its feature (a plain
    MatMul would: NaN * 0 is NaN), and must make the atoms with it missing."""
    X, y = circle
    model = morf_rs.ManifoldObliqueForestClassifier(
        image_shape=(100,), n_estimators=8, random_state=0
    ).fit(_with_missing(X), y)
    rows = np.repeat(X[:50], 2, axis=0)
    rows[::2, 7] = np.nan  # one missing cell per even row
    assert len(_disagreements(model, rows, projection=projection)) == 0


def _load_fashion_mnist(n_train, n_test):
    """The first rows of Fashion-MNIST's test file (pixels 0..255, float32)."""
    images = FASHION_MNIST / "t10k-images-idx3-ubyte.gz"
    labels = FASHION_MNIST / "t10k-labels-idx1-ubyte.gz"
    if not images.is_file():
        pytest.skip(
            "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"
        )
    with gzip.open(images) as f:
        X = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(labels) as f:
        y = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    n = n_train + n_test
    X = X[:n].astype(np.float32)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:n]


@pytest.mark.parametrize("projection", ["matmul", "gather"])
def test_fashion_mnist_agrees_exactly(projection):
    """Pixel sums of whole patches are exact in any order: every row agrees."""
    X, y, X_test, _ = _load_fashion_mnist(600, 300)
    X_test = np.vstack([X_test, _with_missing(X_test, rate=0.05)])
    image = {"image_shape": (28, 28), "random_state": 0}
    for model in (
        morf_rs.ManifoldObliqueForestClassifier(n_estimators=10, **image),
        morf_rs.ManifoldObliqueGradientBoostingClassifier(n_estimators=5, **image),
    ):
        model.fit(X, y)
        assert len(_disagreements(model, X_test, projection=projection)) == 0


def test_real_weights_on_real_data_agree_but_for_rare_rows():
    """Gabor atoms on noisy signals: float32 sums in ONNX Runtime's order may
    put a projection a few ulps from a threshold on its other side."""
    X, y = datasets.make_impulse(400, random_state=0)
    X = X.astype(np.float32)
    model = morf_rs.ManifoldObliqueForestClassifier(
        image_shape=(100,),
        dictionary=[(Gabors(), 0.5), (Bumps(), 0.5)],
        n_estimators=10,
        random_state=0,
    ).fit(X, y)
    X_test, _ = datasets.make_impulse(2000, random_state=1)
    wrong = _disagreements(model, X_test.astype(np.float32))
    assert len(wrong) <= 0.002 * len(X_test)


def test_opsets():
    X, y = datasets.make_circle(100, random_state=0)
    model = morf_rs.ManifoldObliqueForestClassifier(
        image_shape=(100,),
        dictionary=Pooled(Patches(patch_min=2, patch_max=4), reduce="both"),
        n_estimators=3,
        random_state=0,
    ).fit(X, y)
    for opset in (13, 17, 18, 21):
        exported = to_onnx(model, opset=opset)
        assert {o.domain: o.version for o in exported.opset_import} == {
            "": opset,
            "ai.onnx.ml": 3,
        }
        assert len(_disagreements(model, X.astype(np.float32), opset=opset)) == 0


def test_the_graph_has_one_input_and_the_named_outputs():
    X, y = datasets.make_circle(100, random_state=0)
    classifier = morf_rs.RandomForestClassifier(n_estimators=2).fit(X, y)
    regressor = morf_rs.GradientBoostingRegressor(n_estimators=2).fit(X, y * 1.5)
    for model, outputs in (
        (classifier, ["label", "probabilities"]),
        (regressor, ["variable"]),
    ):
        graph = to_onnx(model).graph
        assert [i.name for i in graph.input] == ["X"]
        dims = graph.input[0].type.tensor_type.shape.dim
        assert dims[1].dim_value == 100
        assert graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
        assert [o.name for o in graph.output] == outputs
        assert not [n for n in graph.node if n.op_type == "ZipMap"]


def test_bad_input_is_refused_clearly():
    X, y = datasets.make_circle(50, random_state=0)
    with pytest.raises(NotFittedError):
        to_onnx(morf_rs.RandomForestClassifier())
    with pytest.raises(TypeError, match="classifiers and regressors of morf_rs"):
        to_onnx(object())
    with pytest.raises(TypeError, match="classifiers and regressors of morf_rs"):
        to_onnx(morf_rs.RandomForestClassifier)
    sklearn_forest = pytest.importorskip("sklearn.ensemble").RandomForestClassifier
    with pytest.raises(TypeError, match="classifiers and regressors of morf_rs"):
        to_onnx(sklearn_forest(n_estimators=2).fit(X, y))
    # Isolation forests show their trees as forests do, but score otherwise.
    with pytest.raises(TypeError, match="not isolation or unsupervised forests"):
        to_onnx(morf_rs.IsolationForest(n_estimators=2).fit(X))
    with pytest.raises(TypeError, match="not isolation or unsupervised forests"):
        to_onnx(morf_rs.UnsupervisedRandomForest(n_estimators=2).fit(X))
    model = morf_rs.RandomForestClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="opset must be at least 13"):
        to_onnx(model, opset=12)
    with pytest.raises(TypeError, match="opset must be an int"):
        to_onnx(model, opset="18")
    with pytest.raises(ValueError, match="projection must be"):
        to_onnx(model, projection="dense")


def test_docstring_examples():
    import doctest

    import morf_rs.onnx

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(morf_rs.onnx):
        runner.run(test)
    assert runner.failures == 0
    assert runner.tries > 0


def test_the_module_exports_only_the_exporter():
    import morf_rs.onnx

    assert morf_rs.onnx.__all__ == ["to_onnx"]
    assert dir(morf_rs.onnx) == ["to_onnx"]


def test_trees_without_splits():
    X, _ = datasets.make_circle(60, random_state=0)
    X = X.astype(np.float32)
    constant = np.full(len(X), 2.5)
    for model in (
        morf_rs.RandomForestRegressor(n_estimators=3, random_state=0),
        morf_rs.GradientBoostingRegressor(n_estimators=3, random_state=0),
    ):
        model.fit(X, constant)
        assert model.tree_structure(0).node_count == 1
        (values,), (expected,) = _scores(model, _with_missing(X))
        np.testing.assert_allclose(values, expected, rtol=TOLERANCE)
        np.testing.assert_allclose(values, 2.5, rtol=TOLERANCE)


def test_one_class_exports_probability_one():
    X, _ = datasets.make_circle(60, random_state=0)
    X = X.astype(np.float32)
    for model in (
        morf_rs.RandomForestClassifier(n_estimators=3, random_state=0),
        morf_rs.GradientBoostingClassifier(n_estimators=3, random_state=0),
    ):
        model.fit(X, ["only"] * len(X))
        (label, probabilities), (expected_label, expected) = _scores(model, X)
        np.testing.assert_array_equal(probabilities, np.ones((len(X), 1)))
        np.testing.assert_array_equal(expected, probabilities)
        assert label.tolist() == expected_label.tolist() == ["only"] * len(X)
