#!/usr/bin/env bash
# Every check and test, Rust and Python: lint, cargo test, build and install the wheel
# into a fresh virtual environment, pytest. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase prints the seconds since the start, so a slow CI run says where it went.
phase() { echo "== $1 (${SECONDS} s)"; }

phase "Rust: format and lint"
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features python -- -D warnings
phase "Rust: tests"
cargo test --profile test-release
phase "Rust: API docs, fuzz target"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
# The fuzz target is a workspace of its own (cargo-fuzz runs it on nightly): checked
# here so that it keeps compiling against the API.
cargo check --quiet --manifest-path fuzz/Cargo.toml --bins

phase "Python: build the wheel"
venv="${MORF_TEST_VENV:-.venv-test}"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [ "$(uname -s)" = Linux ]; then
    # The wheel users get (manylinux2014, audited), so the tests run on what ships,
    # less the whole-program optimisation: fat LTO changes no result, only speed,
    # and would double the build (about 210 s against 105 s on 2 cores).
    wheel="$(CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        bash scripts/build_wheel.sh)"
    phase "Python: install the wheel and the test dependencies"
    "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel"
    "$venv/bin/python" -m pip install --quiet "$wheel[test,dask,docs,onnx,plot]" ruff
else
    "$venv/bin/python" -m pip install --quiet ".[test,dask,docs,onnx,plot]" ruff
fi
"$venv/bin/ruff" check python tests benches examples/gallery docs
"$venv/bin/ruff" format --check python tests benches examples/gallery docs

phase "Python: tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python

phase "Docs: the site, warnings as errors (quick gallery examples only)"
MORF_DOCS_FAST=1 PYTHON="$venv/bin/python" bash scripts/docs.sh
phase "All checks passed"
