#!/usr/bin/env bash
# The GPU suite, on a machine with an NVIDIA GPU and its driver: libeagle's CUDA graphs
# (test_driver.py), eagle.Graph and the builder on device arrays (CuPy's where CuPy is
# installed), captured and eager opaque code and child graphs, and hawk's CUDA back end; then,
# with --bench, benchmarks/bench_gpu.py.  Runs from this checkout without installing it: libeagle
# is compiled into packages/eagle-graph/src/eagle/_lib (as the package build does) and the
# packages' sources go on PYTHONPATH.  Needs numpy, cffi, pluggy, pytest, pytest-timeout and the
# GPU extra of the driver's CUDA major, eagle-graph[cuda12] or [cuda13] (CuPy and NVRTC, which
# compiles eagle's and hawk's kernels): what of it is not installed is installed from the wheels
# in .whl/ (tests/gpu/fetch_wheels.sh cuda12 cuda13), with cffi, to /tmp/site.  Under 8 minutes.
# Usage: tests/gpu/run.sh [--bench] [pytest args]   (PYTHON picks the interpreter)
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
bench=0
if [[ "${1:-}" == "--bench" ]]; then bench=1; shift; fi
if ! "$PYTHON" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    echo "tests/gpu/run.sh: no CUDA driver (libcuda.so.1) on this machine; the tests would only run on the emulation" >&2
    exit 1
fi
extra="$("$PYTHON" tests/gpu/extra.py driver --name)"  # cuda12 or cuda13: the driver's CUDA major
mapfile -t missing < <("$PYTHON" tests/gpu/extra.py "$extra")
if compgen -G ".whl/*.whl" >/dev/null; then
    # the base wheels fetched (cffi, pycparser); of the GPU extras' only those of the driver's major
    base=(); for w in .whl/*.whl; do [[ "$(basename "$w")" =~ ^(cupy|nvidia) ]] || base+=("$w"); done
    pip=("$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site)
    (( ${#base[@]} )) && "${pip[@]}" "${base[@]}"
    if (( ${#missing[@]} )) && ! "${pip[@]}" --find-links .whl "${missing[@]}"; then
        echo "tests/gpu/run.sh: eagle-graph[$extra] lacks ${missing[*]}; fetch them: tests/gpu/fetch_wheels.sh $extra" >&2
    fi
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
elif (( ${#missing[@]} )); then
    echo "tests/gpu/run.sh: eagle-graph[$extra] lacks ${missing[*]}; fetch them: tests/gpu/fetch_wheels.sh $extra" >&2
fi
"$PYTHON" - <<'PY'
import importlib.util, pathlib, shutil
spec = importlib.util.spec_from_file_location("build_libeagle", "libeagle/build_libeagle.py")
builder = importlib.util.module_from_spec(spec); spec.loader.exec_module(builder)
lib = pathlib.Path("packages/eagle-graph/src/eagle/_lib")
builder.compile_libeagle(lib / builder.library_name())
(lib / "include" / "eagle").mkdir(parents=True, exist_ok=True)
shutil.copy2("libeagle/include/eagle/eagle.h", lib / "include" / "eagle" / "eagle.h")
PY
for pkg in eagle-graph hawk eagle-builder eagle-diff; do
    PYTHONPATH="$PWD/packages/$pkg/src:${PYTHONPATH:-}"
done
export PYTHONPATH EAGLE_NO_PLUGINS=1 PYTHONUNBUFFERED=1
"$PYTHON" -c 'from eagle import _nvrtc; print(_nvrtc.loaded() or "NVRTC missing")'
timeout 420 "$PYTHON" -m pytest tests/gpu tests/test_gpu_seed_*.py packages/hawk/tests/test_cuda.py -v -p no:cacheprovider \
    -o addopts="--import-mode=importlib" --timeout=120 "$@"
if (( bench )); then
    (cd benchmarks && timeout 120 "$PYTHON" bench_gpu.py --quick)
fi
