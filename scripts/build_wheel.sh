#!/usr/bin/env bash
# Builds the Linux wheel to distribute: manylinux2014 (glibc >= 2.17), so that it
# installs on older distributions too (RHEL/CentOS 7 and 8, Ubuntu 18.04 and 20.04),
# not only on one as new as the build machine. maturin links through zig (the ziglang
# package) against glibc 2.17's symbols; auditwheel then reads the symbols the library
# really uses and must find them consistent with manylinux_2_17. One wheel serves every
# Python >= 3.9 (abi3).
#
#   bash scripts/build_wheel.sh           build and audit; prints the wheel's path last
#   bash scripts/build_wheel.sh --check   also install it into a fresh virtual
#                                         environment and train, predict and pickle there
#
# The wheel goes to dist/ (MORF_WHEEL_DIR); the build tools live in .venv-wheel
# (MORF_WHEEL_TOOLS). scripts/test.sh builds its test wheel with this script on Linux.
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
    --check) check=true ;;
    "") ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

out="${MORF_WHEEL_DIR:-dist}"
tools="${MORF_WHEEL_TOOLS:-.venv-wheel}"

echo "== Wheel: build tools into $tools" >&2
python3 -m venv "$tools"
"$tools/bin/python" -m pip install --quiet --upgrade pip
"$tools/bin/python" -m pip install --quiet "maturin>=1.5,<2" ziglang auditwheel

echo "== Wheel: manylinux2014 build (release)" >&2
mkdir -p "$out"
rm -f "$out"/morf_rs-*.whl
# maturin finds zig through the ziglang package of the interpreter on PATH.
PATH="$PWD/$tools/bin:$PATH" maturin build --release --zig \
    --compatibility manylinux2014 --out "$out" >&2
wheels=("$out"/morf_rs-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "expected one morf_rs wheel in $out, found: ${wheels[*]}" >&2
    exit 1
fi
wheel="${wheels[0]}"

echo "== Wheel: audit of $wheel" >&2
audit="$("$tools/bin/auditwheel" show "$wheel")"
echo "$audit" >&2
if ! tr -s ' \n' ' ' <<<"$audit" | grep -q 'consistent with the following platform tag: "manylinux_2_17_'; then
    echo "the wheel needs a newer glibc than manylinux2014's 2.17" >&2
    exit 1
fi

if "$check"; then
    echo "== Wheel: install into a fresh virtual environment and use it" >&2
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    python3 -m venv "$scratch/venv"
    "$scratch/venv/bin/python" -m pip install --quiet "$wheel"
    # Run from elsewhere, so that nothing in this checkout can be imported instead.
    (cd "$scratch" && "$scratch/venv/bin/python" - >&2) <<'EOF'
import pickle

import morf_rs
from morf_rs import ManifoldObliqueForestClassifier
from morf_rs.datasets import make_bars

X, y = make_bars(300, noise=1.0, random_state=0)
forest = ManifoldObliqueForestClassifier(
    n_estimators=20, image_shape=(28, 28), patch_min=(2, 2), patch_max=(2, 9),
    random_state=0,
).fit(X[:200], y[:200])
accuracy = forest.score(X[200:], y[200:])
assert accuracy > 0.7, accuracy
again = pickle.loads(pickle.dumps(forest))
assert (again.predict_proba(X) == forest.predict_proba(X)).all()
assert "site-packages" in morf_rs.__file__, morf_rs.__file__
print(f"morf_rs {morf_rs.__version__} from {morf_rs.__file__}: accuracy {accuracy:.2f}")
EOF
    "$scratch/venv/bin/python" -m morf_rs --help >/dev/null
fi
echo "$wheel"
