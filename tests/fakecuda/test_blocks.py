"""fakecuda's thread blocks (shim.h): barriers that hold every thread of a block, shared memory that
is each block's own, grid-stride loops over several blocks, barriers some threads skip refused,
and a reversed schedule under which eagle's reduction keeps its bits."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
from eagle._core import CoreError

# An inclusive scan of each block's slice through two shared buffers (Hillis and Steele): every
# step reads what other threads wrote in the step before, so it needs each barrier.
SCAN = r"""
extern "C" __global__ void fk_test_scan(const long long *x, long long *y, const long long n)
{
    __shared__ long long s[2][256];
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int src = 0;
    s[0][threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    for (unsigned step = 1; step < blockDim.x; step *= 2) {
        const long long left = threadIdx.x >= step ? s[src][threadIdx.x - step] : 0;
        s[1 - src][threadIdx.x] = s[src][threadIdx.x] + left;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n)
        y[i] = s[src][threadIdx.x];
}
"""

# Only block 0 writes its shared memory; every block reads it after the barrier.
FIRST_BLOCK_WRITES = r"""
extern "C" __global__ void fk_test_first_block_writes(int *y)
{
    __shared__ int s[64];
    if (blockIdx.x == 0)
        s[threadIdx.x] = 7;
    __syncthreads();
    y[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
"""

# Each thread's linear index and its block's, read back through shared memory in reverse.
INDICES = r"""
extern "C" __global__ void fk_test_indices(unsigned *out)
{
    __shared__ unsigned s[1024];
    const unsigned n = blockDim.x * blockDim.y * blockDim.z;
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    s[t] = t;
    __syncthreads();
    out[b * n + t] = 1000 * b + s[n - 1 - t];
}
"""

# A grid-stride loop: which thread visited each sample, and how often.
STRIDE = r"""
extern "C" __global__ void fk_test_stride(unsigned *owner, unsigned *visits, const long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        owner[i] = blockIdx.x * blockDim.x + threadIdx.x;
        atomicAdd(&visits[i], 1u);
    }
}
"""

# Barriers some threads of a block skip (a return, or another barrier), and one a whole block skips.
DIVERGENT = r"""
extern "C" __global__ void fk_test_some_return(int *y)
{
    if (threadIdx.x == 3)
        return;
    __syncthreads();
    y[threadIdx.x] = 1;
}
extern "C" __global__ void fk_test_two_barriers(int *y)
{
    if (threadIdx.x < 5)
        __syncthreads();
    else
        __syncthreads();
    y[threadIdx.x] = 1;
}
extern "C" __global__ void fk_test_block_returns(int *y)
{
    if (blockIdx.x == 1)
        return;
    __syncthreads();
    y[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
"""

# The last thread to write a block's cell wins: the order threads run in decides.
LAST_WRITER = r"""
extern "C" __global__ void fk_test_last_writer(unsigned *y)
{
    y[blockIdx.x] = threadIdx.x;
}
"""


@pytest.fixture(scope="module")
def fake(cuda_driver):
    if cuda_driver is None:
        pytest.skip("a real CUDA driver is in use: the emulation is not loaded")
    return cuda_driver


def kernel(fake, source: str, name: str):
    from eagle import _cuda

    return _cuda.Module(fake.kernels(source).ptx.encode() + b"\0", 0).function(name)


def launch(function, grid, block, *args):
    from eagle import _cuda

    _cuda.launch(function, grid, block, list(args))


def device(a: np.ndarray):
    from eagle._cuda import DeviceArray

    return DeviceArray.from_host(a)


def block_scans(x: np.ndarray, threads: int) -> np.ndarray:
    return np.concatenate([np.cumsum(x[k : k + threads]) for k in range(0, len(x), threads)])


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_a_scan_through_shared_memory_needs_and_gets_its_barriers(fake, monkeypatch, order):
    monkeypatch.setenv("FAKECUDA_THREAD_ORDER", order)
    n = 3 * 256 - 40
    x = np.random.default_rng(2).integers(-1000, 1000, n)
    for source, barriers in ((SCAN, True), (SCAN.replace("__syncthreads();", ""), False)):
        y = device(np.zeros(n, np.int64))
        launch(kernel(fake, source, "fk_test_scan"), (3, 1, 1), (256, 1, 1), device(x), y, np.int64(n))
        # without its barriers the same kernel reads what other threads have not written yet
        assert np.array_equal(y.get(), block_scans(x, 256)) == barriers


def test_shared_memory_is_each_blocks_own(fake):
    y = device(np.zeros(3 * 64, np.int32))
    launch(kernel(fake, FIRST_BLOCK_WRITES, "fk_test_first_block_writes"), (3, 1, 1), (64, 1, 1), y)
    # block 0 reads its writes; the others never wrote theirs, filled with 0xff bytes
    np.testing.assert_array_equal(y.get(), np.repeat([7, -1, -1], 64))


@pytest.mark.parametrize(
    "grid, block", [((2, 3, 1), (8, 4, 2)), ((1, 2, 2), (1024, 1, 1)), ((3, 1, 1), (1, 1, 1))]
)
def test_threads_and_blocks_are_numbered_x_fastest(fake, grid, block):
    n, blocks = int(np.prod(block)), int(np.prod(grid))
    out = device(np.zeros(n * blocks, np.uint32))
    launch(kernel(fake, INDICES, "fk_test_indices"), grid, block, out)
    want = [1000 * b + (n - 1 - t) for b in range(blocks) for t in range(n)]
    np.testing.assert_array_equal(out.get(), want)


def test_a_grid_stride_loop_covers_every_sample_once_over_several_blocks(fake):
    n, grid, threads = 3 * 128 * 5 + 17, 3, 128
    owner, visits = device(np.zeros(n, np.uint32)), device(np.zeros(n, np.uint32))
    launch(kernel(fake, STRIDE, "fk_test_stride"), (grid, 1, 1), (threads, 1, 1), owner, visits, np.int64(n))
    np.testing.assert_array_equal(visits.get(), np.ones(n))
    np.testing.assert_array_equal(owner.get(), np.arange(n) % (grid * threads))


@pytest.mark.parametrize(
    "name, why",
    [
        (
            "fk_test_some_return",
            r"block \(0, 0, 0\): 127 of its 128 threads wait at the __syncthreads of "
            r"line 6, the others returned",
        ),
        ("fk_test_two_barriers", r"block \(0, 0, 0\): threads wait at the __syncthreads of lines 12 and 14"),
    ],
)
def test_a_barrier_some_threads_of_a_block_skip_fails_the_launch(fake, capfd, name, why):
    y = device(np.zeros(256, np.int32))
    with pytest.raises(CoreError, match="CUDA_ERROR_LAUNCH_FAILED"):
        launch(kernel(fake, DIVERGENT, name), (2, 1, 1), (128, 1, 1), y)
    assert re.search(f"fakecuda: kernel {name}, {why}", capfd.readouterr().err)


def test_a_barrier_a_whole_block_skips_is_kept_by_the_others(fake):
    y = device(np.zeros(3 * 32, np.int32))
    launch(kernel(fake, DIVERGENT, "fk_test_block_returns"), (3, 1, 1), (32, 1, 1), y)
    np.testing.assert_array_equal(y.get(), np.repeat([1, 0, 1], 32))


def test_the_thread_order_is_a_switch_away(fake, monkeypatch, capfd):
    function = kernel(fake, LAST_WRITER, "fk_test_last_writer")
    for order, last in (("forward", 63), ("reverse", 0)):
        monkeypatch.setenv("FAKECUDA_THREAD_ORDER", order)
        y = device(np.zeros(2, np.uint32))
        launch(function, (2, 1, 1), (64, 1, 1), y)
        np.testing.assert_array_equal(y.get(), [last, last])
    monkeypatch.setenv("FAKECUDA_THREAD_ORDER", "shuffled")
    with pytest.raises(CoreError, match="CUDA_ERROR_LAUNCH_FAILED"):
        launch(function, (1, 1, 1), (64, 1, 1), device(np.zeros(2, np.uint32)))
    assert "FAKECUDA_THREAD_ORDER is forward or reverse, not shuffled" in capfd.readouterr().err


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_the_reduction_keeps_its_bits_in_the_reversed_order(gpu, fake, monkeypatch, dtype):
    x = (np.random.default_rng(4).standard_normal(70_001) * 1e4).astype(dtype)
    want = np.zeros(1, dtype)
    eagle.Graph().add_node(eagle.reduce(x, want)).build().launch()
    monkeypatch.setenv("FAKECUDA_THREAD_ORDER", "reverse")
    out = gpu.zeros(1, dtype)
    eagle.Graph().add_node(eagle.reduce(gpu.asarray(x), out)).build().launch()
    assert gpu.get(out).tobytes() == want.tobytes()
