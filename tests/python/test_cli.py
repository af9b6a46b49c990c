"""python -m morf_rs predict and info, run as a user runs them (subprocess), and
in process where a module constant is changed or where many errors are checked (each
interpreter started costs seconds, importing scikit-learn)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import morf_rs
from morf_rs import _cli
from morf_rs.__main__ import main

PYTHON_DIR = str(Path(morf_rs.__file__).parent.parent)


def _run(*args):
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    return subprocess.run(
        [sys.executable, "-m", "morf_rs", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _only_line(stderr):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def _one_line_error(result):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    return _only_line(result.stderr)


def _one_line_error_in_process(capsys, *args):
    """The error line of ``main(args)`` run here: exit status 1 and one line (an
    unexpected exception fails the test as a traceback would)."""
    capsys.readouterr()
    assert main([str(arg) for arg in args]) == 1
    return _only_line(capsys.readouterr().err)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved classifier with text labels, the rows it scores and their scores."""
    directory = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 16)).astype(np.float32)
    y = np.array(["left", "middle", "right"])[np.digitize(X[:, 0], [-0.4, 0.4])]
    model = morf_rs.ManifoldObliqueForestClassifier(
        n_estimators=5, image_shape=(4, 4), random_state=0, n_jobs=1
    ).fit(X, y)
    morf_rs.save(model, directory / "model.morf")
    np.save(directory / "X.npy", X)
    return directory, model, X


def test_predict_proba_equals_python_and_streams_in_chunks(saved):
    directory, model, X = saved
    out = directory / "proba.npy"
    # 1,000 rows through chunks of 64: the memory-mapped input is larger than a chunk.
    result = _run(
        "predict", directory / "model.morf", directory / "X.npy", "-o", out,
        "--proba", "--n-jobs", "1", "--chunk-rows", "64",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(out), model.predict_proba(X))
    assert "scored 1,000 rows" in result.stderr
    assert result.stdout == ""


def test_predict_labels_to_npy_and_csv(saved):
    directory, model, X = saved
    for name in ("labels.npy", "labels.csv"):
        out = directory / name
        result = _run(
            "predict", directory / "model.morf", directory / "X.npy", "-o", out,
            "--quiet", "--chunk-rows", "300",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        if name.endswith(".npy"):
            labels = np.load(out)
        else:
            labels = pd.read_csv(out)["prediction"].to_numpy()
        np.testing.assert_array_equal(labels, model.predict(X))


def test_default_chunks_are_bounded_in_bytes(saved, monkeypatch, capsys):
    directory, model, X = saved
    # 16 float32 features: 640 bytes are 10 rows, so 100 chunks of the 1,000 rows.
    monkeypatch.setattr(_cli, "_CHUNK_BYTES", 640)
    seen = []
    original = _cli._read_chunks

    def counting(*args):
        n_rows, chunks = original(*args)
        return n_rows, (seen.append(len(c)) or c for c in chunks)

    monkeypatch.setattr(_cli, "_read_chunks", counting)
    out = directory / "chunked.npy"
    argv = ["predict", str(directory / "model.morf"), str(directory / "X.npy")]
    assert main([*argv, "-o", str(out), "--proba", "--n-jobs", "1"]) == 0
    assert seen == [10] * 100
    np.testing.assert_array_equal(np.load(out), model.predict_proba(X))


def test_csv_and_parquet_inputs(saved):
    directory, model, X = saved
    frame = pd.DataFrame(X[:200], columns=[f"x{i}" for i in range(16)])
    inputs = [directory / "X.csv"]
    frame.to_csv(inputs[0], index=False)
    try:
        frame.to_parquet(directory / "X.parquet")
        inputs.append(directory / "X.parquet")
    except ImportError:
        pass
    for path in inputs:
        out = directory / f"from_{path.suffix[1:]}.npy"
        result = _run(
            "predict", directory / "model.morf", path, "-o", out, "--proba",
            "--chunk-rows", "70", "--n-jobs", "1",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        expected = model.predict_proba(X[:200].astype(np.float64))
        np.testing.assert_allclose(np.load(out), expected, rtol=0, atol=0)


def test_regressor_scores_and_refuses_proba(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 6))
    model = morf_rs.GradientBoostingRegressor(n_estimators=5, random_state=0)
    model.fit(X, X[:, 0] * 2)
    morf_rs.save(model, tmp_path / "r.morf")
    np.save(tmp_path / "X.npy", X)
    result = _run("predict", tmp_path / "r.morf", tmp_path / "X.npy", "-o",
                  tmp_path / "y.npy")  # fmt: skip
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), model.predict(X))
    line = _one_line_error_in_process(
        capsys, "predict", tmp_path / "r.morf", tmp_path / "X.npy",
        "-o", tmp_path / "p.npy", "--proba",
    )  # fmt: skip
    assert "--proba needs a classifier" in line, line
    assert main(["info", str(tmp_path / "r.morf")]) == 0
    info = capsys.readouterr().out
    assert "GradientBoostingRegressor (boosted model)" in info
    assert "rounds:      5" in info


def test_info_describes_the_model(saved):
    directory, _, _ = saved
    result = _run("info", directory / "model.morf")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "type:        ManifoldObliqueForestClassifier (forest)"
    assert "file format: 1" in lines
    assert "features:    16" in lines
    assert "image shape: (4, 4)" in lines
    assert "classes:     3: left, middle, right" in lines
    assert "trees:       5" in lines
    forest_format = morf_rs._core.FORMAT_VERSION
    assert any(line.endswith(f"(forest format {forest_format})") for line in lines)


def test_info_names_an_isolation_forest_and_its_own_format(tmp_path, capsys):
    X = np.random.default_rng(0).standard_normal((200, 16))
    model = morf_rs.ManifoldObliqueIsolationForest(
        n_estimators=3, image_shape=(4, 4), random_state=0
    ).fit(X)
    morf_rs.save(model, tmp_path / "i.morf")
    assert main(["info", str(tmp_path / "i.morf")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "type:        ManifoldObliqueIsolationForest (isolation forest)"
    assert "trees:       3" in lines
    assert any("(isolation forest format " in line for line in lines), lines


def test_bad_files_give_one_line_and_a_nonzero_exit(saved, tmp_path, capsys):
    directory, model, _ = saved
    data = (directory / "model.morf").read_bytes()
    tampered = data.replace(b'"n_features_in_":16', b'"n_features_in_":17')
    assert tampered != data
    bad = {
        "truncated.morf": (data[:-10], "truncated"),
        "magic.morf": (b"PK\x03\x04" + data[4:], "not a morf_rs model file"),
        "tampered.morf": (tampered, "checksum"),
        "pickle.morf": (__import__("pickle").dumps(model), "is a pickle"),
    }
    for name, (content, message) in bad.items():
        (tmp_path / name).write_bytes(content)
        line = _one_line_error_in_process(capsys, "info", tmp_path / name)
        assert message in line, line
    # One of them as a user's shell sees it: the process's exit status and stderr.
    line = _one_line_error(
        _run(
            "predict",
            tmp_path / "tampered.morf",
            directory / "X.npy",
            "-o",
            tmp_path / "o.npy",
        )  # fmt: skip
    )
    assert "checksum" in line, line
    assert not (tmp_path / "o.npy").exists()
    # Inputs that cannot be scored by this model.
    np.save(tmp_path / "wide.npy", np.zeros((5, 17)))
    np.save(tmp_path / "flat.npy", np.zeros(16))
    np.save(tmp_path / "objects.npy", np.array([[None] * 16]), allow_pickle=True)
    (tmp_path / "empty.csv").write_text("")
    for name, message in (
        ("wide.npy", "17 features"),
        ("flat.npy", "2-D array"),
        ("objects.npy", "cannot be read as an array of numbers"),
        ("missing.npy", "No such file"),
        ("empty.csv", "empty.csv cannot be read as CSV rows"),
    ):
        line = _one_line_error_in_process(
            capsys, "predict", directory / "model.morf", tmp_path / name,
            "-o", tmp_path / "o.npy",
        )  # fmt: skip
        assert message in line, line


def test_csv_columns_are_checked_against_the_model_feature_names(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.standard_normal((120, 3)), columns=["a", "b", "c"])
    model = morf_rs.RandomForestClassifier(n_estimators=3, random_state=0)
    model.fit(frame, (frame["a"] > 0).to_numpy())
    morf_rs.save(model, tmp_path / "m.morf")
    frame.to_csv(tmp_path / "X.csv", index=False)
    argv = ["predict", str(tmp_path / "m.morf"), str(tmp_path / "X.csv"), "-q"]
    assert main([*argv, "-o", str(tmp_path / "y.csv"), "--proba"]) == 0
    written = pd.read_csv(tmp_path / "y.csv")
    assert list(written.columns) == ["False", "True"]
    np.testing.assert_allclose(written.to_numpy(), model.predict_proba(frame))
    frame.rename(columns={"c": "z"}).to_csv(tmp_path / "X.csv", index=False)
    assert main([*argv, "-o", str(tmp_path / "y.npy")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "feature names" in err
    assert not (tmp_path / "y.npy").exists()


def test_a_failed_scoring_closes_the_csv_reader_at_once(
    saved, tmp_path, monkeypatch, capsys
):
    """Left open, the reader was closed while the interpreter exited."""
    directory, _, X = saved
    pd.DataFrame(X[:, :5]).to_csv(tmp_path / "narrow.csv", index=False)
    readers = []
    read_csv = pd.read_csv

    def tracked_read_csv(*args, **kwargs):
        readers.append(read_csv(*args, **kwargs))
        return readers[-1]

    monkeypatch.setattr(pd, "read_csv", tracked_read_csv)
    line = _one_line_error_in_process(
        capsys, "predict", directory / "model.morf", tmp_path / "narrow.csv",
        "-o", tmp_path / "y.npy",
    )  # fmt: skip
    assert "X has 5 features" in line, line
    assert len(readers) == 2  # the count of the rows, then the chunks
    assert all(reader.handles.handle.closed for reader in readers)
