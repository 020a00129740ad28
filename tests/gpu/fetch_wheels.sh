#!/usr/bin/env bash
# Wheels a GPU machine that cannot reach PyPI may lack (its image has numpy, pytest, CuPy and
# cuda-bindings; not cffi): saved to .whl/ for tests/gpu/run.sh, for CPython ${PYVER:-3.12}.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
python3 -m pip download --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl cffi pycparser "$@"
