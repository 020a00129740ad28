#!/usr/bin/env bash
# Wheels a GPU machine that cannot reach PyPI may lack (its image has numpy, pytest and CuPy; not
# cffi): saved to .whl/ for tests/gpu/run.sh, for CPython ${PYVER:-3.12}.  Name extras of
# eagle-graph (cuda12, cuda13: the CUDA major of that machine's driver) to fetch their requirements
# too, NVRTC and CuPy (about 100 MB each); run.sh installs only those of its driver's major.
# Usage: tests/gpu/fetch_wheels.sh [cuda12] [cuda13]
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
wanted=(cffi pycparser)
for extra in "$@"; do
    mapfile -t -O "${#wanted[@]}" wanted < <(python3 tests/gpu/extra.py "$extra" --all)
done
python3 -m pip download --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "${wanted[@]}"
