"""The ``gpu`` fixture (tests/conftest.py) other tests build on: device arrays, and eagle's CUDA C
compilation, which on the emulation becomes a host build of the same source."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

KERNEL = """
extern "C" __global__ void axpy(double a, const double *x, double *y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


def test_arrays_round_trip(gpu):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = gpu.asarray(a)
    assert d.shape == (3, 4) and d.dtype == np.float32 and d.size == 12 and len(d) == 3
    assert d.__cuda_array_interface__["version"] == 3
    assert d.__cuda_array_interface__["typestr"] == "<f4"
    from eagle._cuda import device_of

    assert device_of(d) == 0
    np.testing.assert_array_equal(gpu.get(d), a)
    np.testing.assert_array_equal(gpu.get(gpu.zeros((2, 2), np.int32)), np.zeros((2, 2), np.int32))


def test_a_device_array_reshapes_to_a_view_of_its_memory(cuda_driver):
    from eagle._cuda import DeviceArray

    d = DeviceArray.from_host(np.arange(12, dtype=np.float32))
    r = d.reshape(3, -1)
    assert r.shape == (3, 4) and r.base is d and d.reshape((12,)).shape == (12,)
    assert r.__cuda_array_interface__["data"] == d.__cuda_array_interface__["data"]
    np.testing.assert_array_equal(r.get(), np.arange(12, dtype=np.float32).reshape(3, 4))
    r.set(np.ones((3, 4)))
    np.testing.assert_array_equal(d.get(), np.ones(12))  # one memory
    for bad in ((5, -1), (2, 2), (-1, -1)):
        with pytest.raises(ValueError, match=r"DeviceArray.reshape: 12 elements cannot take the shape"):
            d.reshape(*bad)


def test_eagle_compiled_cuda_runs(gpu):
    """CUDA C compiled the way eagle compiles its kernels, loaded and run with the installed libeagle."""
    from eagle import _core, _nvrtc

    if not _nvrtc.available():
        pytest.skip("no NVRTC to compile CUDA C for the GPU")
    ffi, lib = _core.ffi, _core.lib
    image = _nvrtc.compile_ptx(KERNEL, "axpy.cu")
    module, fn = ffi.new("void **"), ffi.new("void **")
    _core.check(lib.eagle_cuda_module_load(0, image.encode() + b"\0", module), "module_load")
    _core.check(lib.eagle_cuda_module_function(0, module[0], b"axpy", fn), "module_function")
    n = 300
    x, y = gpu.asarray(np.arange(n, dtype=np.float64)), gpu.asarray(np.ones(n))
    args = ffi.new("eagle_arg[4]")
    args[0].f64, args[3].i64 = 2.0, n
    args[1].u64 = x.__cuda_array_interface__["data"][0]
    args[2].u64 = y.__cuda_array_interface__["data"][0]
    g = lib.eagle_gpu_graph_new()
    try:
        grid, block = ffi.new("uint32_t[3]", [3, 1, 1]), ffi.new("uint32_t[3]", [128, 1, 1])
        _core.check(lib.eagle_gpu_add_kernel(g, fn[0], grid, block, 0, args, 4), "add_kernel")
        _core.check(lib.eagle_gpu_instantiate(g, 0, 0), "instantiate")
        _core.check(lib.eagle_gpu_launch(g, 1), "launch")
    finally:
        lib.eagle_gpu_graph_free(g)
    np.testing.assert_array_equal(gpu.get(y), 2.0 * np.arange(n) + 1.0)


def test_a_library_that_is_no_driver_is_named(libeagle_path, libeagle_cdef_text):
    """EAGLE_LIBCUDA naming a library without the driver API: the message names that library."""
    script = (
        "import sys, cffi\n"
        "ffi = cffi.FFI(); ffi.cdef(sys.argv[2]); lib = ffi.dlopen(sys.argv[1])\n"
        "print(lib.eagle_cuda_open(0, ffi.NULL), ffi.string(lib.eagle_last_error()).decode())\n"
    )
    env = dict(os.environ, EAGLE_LIBCUDA="libm.so.6")
    result = subprocess.run([sys.executable, "-c", script, str(libeagle_path), libeagle_cdef_text],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "libm.so.6 does not answer cuDriverGetVersion" in result.stdout
