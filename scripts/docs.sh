#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html, warnings as errors.
# MORF_DOCS_FAST=1 runs only the quick gallery examples (what CI does).
# Needs the docs extra: pip install ".[docs]" (or the packages it names).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
rm -rf docs/_build docs/generated docs/auto_examples
"$python" -m sphinx -W --keep-going -q -b html docs docs/_build/html "$@"
echo "docs: $(pwd)/docs/_build/html/index.html"
