#!/usr/bin/env bash
# The GPU tests of libeagle's CUDA graphs, on a machine with an NVIDIA GPU and its driver.
# Builds libeagle from this checkout (the tests' own fixture does) and runs tests/gpu in under
# 8 minutes.  Usage: tests/gpu/run.sh [pytest args]   (PYTHON picks the interpreter)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    echo "tests/gpu/run.sh: no CUDA driver (libcuda.so.1) on this machine; pytest tests/gpu runs them on the CPU emulation (tests/fakecuda)" >&2
    exit 1
fi
"$PYTHON" -c 'import cffi, pytest' 2>/dev/null || "$PYTHON" -m pip install -q cffi pytest pytest-timeout
exec timeout 480 "$PYTHON" -m pytest tests/gpu -v -p no:cacheprovider -o addopts="--import-mode=importlib" \
    --timeout=120 -x "$@"
