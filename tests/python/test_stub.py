"""The type stub of the Rust extension matches the extension itself."""

import os
import subprocess
import sys

import pytest


def test_core_stub_matches_the_extension():
    pytest.importorskip("mypy.stubtest", reason="needs mypy: pip install .[test]")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "morf_rs._core"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_skipped_where_mypy_is_not_installed(tmp_path):
    # A package named mypy that fails as a missing one would stands for no mypy.
    (tmp_path / "mypy").mkdir()
    (tmp_path / "mypy" / "__init__.py").write_text(
        "raise ModuleNotFoundError('No module named mypy', name='mypy')\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
            f"{__file__}::test_core_stub_matches_the_extension",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "needs mypy" in result.stdout
