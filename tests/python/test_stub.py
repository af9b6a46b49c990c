"""The type stub of the Rust extension matches the extension itself."""

import subprocess
import sys


def test_core_stub_matches_the_extension():
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "morf_rs._core"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
