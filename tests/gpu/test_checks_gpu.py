"""Checked Table reads and placing Scatters in a GPU graph: the wait of the launch that went wrong
raises the CPU's error, and the next replay starts clean (hawk.checks).

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")
from hawk import Int32, Scalar, Scatter, Table  # noqa: E402

N = 600


@hawk.kernel
def gather(x: Scalar, w: Table, k: Int32) -> Scalar:
    return x * w[k] + w[k + 1]


@hawk.kernel
def grid(x: Scalar, w: Table, k: Int32) -> Scalar:
    return x + w[k, hawk.sample() % 4]


@hawk.kernel
def placed(x: Scalar, k: Int32, y: Scatter):
    y[k] = 2.0 * x


@hawk.kernel
def shifted(x: Scalar, w: Table, k: Int32, i: Int32) -> Scalar:
    return 0.5 * x + w[k + i]


@eagle.Graph.builder
def turns(x, w, k, n):
    g = eagle.Graph()
    for i in range(n):  # a device loop: turn i reads w[k + i]
        x = shifted(x, w, k, i)
    g.result = x
    return g


@eagle.Graph.builder
def maybe(x, w, k, flag, n):
    g = eagle.Graph()
    if flag:  # a device if around a device loop: the check comes after the if
        x = gather(x, w, k)
        for i in range(n):
            x = shifted(x, w, k, i)
    g.result = x
    return g


@hawk.kernel
def rotated(x: Scalar, k: Int32, i: Int32, y: Scatter):
    y[(k + i) % 600] = x + 1.0


@eagle.Graph.builder
def rotations(x, k, y, n):
    g = eagle.Graph()
    for i in range(n):  # turn i places sample s at k[s] + i (mod 600)
        rotated(x, k, i, y)
    g.result = y
    return g


@hawk.kernel
def damped(x: Scalar) -> Scalar:
    return 0.75 * x + 0.125


@eagle.Graph.builder
def chain(x, w, k):
    g = eagle.Graph()
    x = gather(damped(damped(x)), w, k)
    g.result = damped(x)
    return g


def cpu_error(kernel, *args) -> str:
    """The message of the CPU's launch of ``kernel`` on NumPy ``args``."""
    with pytest.raises((IndexError, ValueError)) as raised:
        kernel(*args)
    return str(raised.value)


def graph(bound) -> eagle.Graph:
    g = eagle.Graph()
    g.add(bound, name="launch")
    g.build()
    assert g.backend == "gpu"
    return g


def test_a_checked_read_in_a_gpu_graph_raises_once_and_the_next_replay_is_clean(gpu):
    rng = np.random.default_rng(0)
    x, w = rng.random(N), rng.random(20)
    good = rng.integers(0, 19, N).astype(np.int32)
    bad = good.copy()
    bad[[77, 401]] = [19, -3]  # sample 77 reads w[20] (its second read), sample 401 w[-3]
    k = gpu.asarray(good)
    bound = gather.plan(gpu.asarray(x), gpu.asarray(w), k)
    g = graph(bound)
    g.launch()
    assert gpu.get(bound.outputs[0]).tobytes() == gather(x, w, good).tobytes()
    gpu.put(k, bad)
    with pytest.raises(IndexError) as raised:
        g.launch()
    assert str(raised.value) == cpu_error(gather, x, w, bad)
    assert "sample 77 read Table 'w' (shape (20,)) at index 20 on axis 0" in str(raised.value)
    gpu.put(k, good)
    g.launch()  # raises nothing: the cell was cleared
    assert gpu.get(bound.outputs[0]).tobytes() == gather(x, w, good).tobytes()


def test_a_read_out_of_range_on_the_second_axis_names_it(gpu):
    x, w = np.ones(N), np.arange(12.0).reshape(3, 4)
    k = np.zeros(N, np.int32)
    k[300:] = 3
    g = graph(grid.plan(gpu.asarray(x), gpu.asarray(w), gpu.asarray(k)))
    with pytest.raises(IndexError) as raised:
        g.launch()
    assert str(raised.value) == cpu_error(grid, x, w, k)
    assert "sample 300 read Table 'w' (shape (3, 4)) at index 3 on axis 0" in str(raised.value)


def test_a_placing_scatter_in_a_gpu_graph(gpu):
    x = np.arange(N, dtype=np.float64)
    perm = np.random.default_rng(1).permutation(N).astype(np.int32)
    want = np.zeros(N)
    placed(x, perm, want)
    k, y = gpu.asarray(perm), gpu.asarray(np.full(N, np.nan))
    g = graph(placed.plan(gpu.asarray(x), k, y))
    g.launch()
    assert gpu.get(y).tobytes() == want.tobytes()
    twice = perm.copy()
    twice[[5, 9]] = twice[3]  # samples 3, 5 and 9 write one cell; two cells are written by none
    gpu.put(k, twice)
    with pytest.raises(ValueError) as raised:
        g.launch()
    assert str(raised.value) == cpu_error(placed, x, twice, np.zeros(N))
    assert "was written by" in str(raised.value)
    gpu.put(k, perm)
    g.launch()
    assert gpu.get(y).tobytes() == want.tobytes()


def test_a_checked_read_in_a_placing_scatter_names_the_index(gpu):
    x, k = np.arange(N, dtype=np.float64), np.arange(N, dtype=np.int32)[::-1].copy()
    k[450] = N
    g = graph(placed.plan(gpu.asarray(x), gpu.asarray(k), gpu.asarray(np.zeros(N))))
    with pytest.raises(IndexError) as raised:
        g.launch()
    assert str(raised.value) == cpu_error(placed, x, k, np.zeros(N))
    assert f"sample 450 wrote Scatter 'y' (shape ({N},)) at index {N} on axis 0" in str(raised.value)


def cell(v: int) -> np.ndarray:
    return np.array([v], np.uint32)


def test_the_first_turn_that_reads_out_of_range_in_a_device_loop_raises(gpu):
    rng = np.random.default_rng(2)
    x, w = rng.random(N), rng.random(20)
    k = rng.integers(0, 16, N).astype(np.int32)
    host = turns(x.copy(), w, k, cell(4))  # turns 0 … 3 read at most w[18]
    device_n = gpu.asarray(cell(4))
    device = turns(gpu.asarray(x), gpu.asarray(w), gpu.asarray(k), device_n)
    assert device.backend == "gpu"
    assert gpu.get(device()).tobytes() == host().tobytes()
    # turn 5 reads w[20] first (k = 15); turn 6 has smaller samples out of range (k = 14): the
    # CPU stops at turn 5, and the GPU names turn 5's first sample too
    first = int(np.argmax(k == 15))
    assert (k[:first] == 14).any()
    gpu.put(device_n, cell(8))
    with pytest.raises(IndexError) as raised:
        device()
    with pytest.raises(IndexError) as on_the_cpu:
        turns(x.copy(), w, k, cell(8))()
    assert str(raised.value) == str(on_the_cpu.value)
    assert f"sample {first} read Table 'w' (shape (20,)) at index 20" in str(raised.value)
    gpu.put(device_n, cell(4))
    assert gpu.get(device()).tobytes() == host().tobytes()  # clean again


def test_a_device_if_around_a_loop_checks_after_the_if(gpu):
    rng = np.random.default_rng(3)
    x, w = rng.random(N), rng.random(20)
    k = rng.integers(0, 16, N).astype(np.int32)
    flag, n = gpu.asarray(cell(1)), gpu.asarray(cell(3))
    device = maybe(gpu.asarray(x), gpu.asarray(w), gpu.asarray(k), flag, n)
    assert device.backend == "gpu"
    assert gpu.get(device()).tobytes() == maybe(x.copy(), w, k, cell(1), cell(3))().tobytes()
    gpu.put(n, cell(7))
    with pytest.raises(IndexError) as raised:
        device()
    with pytest.raises(IndexError) as on_the_cpu:
        maybe(x.copy(), w, k, cell(1), cell(7))()
    assert str(raised.value) == str(on_the_cpu.value)
    gpu.put(flag, cell(0))  # the if not taken: nothing read, nothing raised
    assert gpu.get(device()).tobytes() == x.tobytes()
    gpu.put(flag, cell(1))
    gpu.put(n, cell(2))
    assert gpu.get(device()).tobytes() == maybe(x.copy(), w, k, cell(1), cell(2))().tobytes()


def test_a_placing_scatter_in_a_device_loop_names_its_first_bad_turn(gpu):
    x = np.arange(N, dtype=np.float64)
    k = np.random.default_rng(4).permutation(N).astype(np.int32)
    k[[np.flatnonzero(k == 300)[0], np.flatnonzero(k == 599)[0]]] = k[[10, 11]]
    k[[10, 11]] = 300, 599
    y, n = gpu.asarray(np.zeros(N)), gpu.asarray(cell(3))
    device = rotations(gpu.asarray(x), gpu.asarray(k), y, n)
    assert device.backend == "gpu"
    want = rotations(x, k, np.zeros(N), cell(3))()
    assert gpu.get(device()).tobytes() == want.tobytes()
    bad = k.copy()
    bad[10] = 599  # turn i writes cell 599 + i (mod 600) twice, and leaves cell 300 + i unwritten
    device = rotations(gpu.asarray(x), gpu.asarray(bad), y, n)
    with pytest.raises(ValueError) as raised:
        device()
    with pytest.raises(ValueError) as on_the_cpu:
        rotations(x, bad, np.zeros(N), cell(3))()
    assert str(raised.value) == str(on_the_cpu.value)
    # turn 0's first cell, though turn 1's (cell 0, written twice) comes before it
    assert "Scatter 'y' cell (300,) was written by no sample" in str(raised.value)


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_a_checked_kernel_between_fused_ones_gives_the_cpus_bits(gpu, fuse, monkeypatch):
    rng = np.random.default_rng(5)
    x, w = rng.random(N), rng.random(20)
    k = rng.integers(0, 19, N).astype(np.int32)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want = chain(x.copy(), w, k)()
    device_k = gpu.asarray(k)
    g = chain(gpu.asarray(x), gpu.asarray(w), device_k)
    assert g.backend == "gpu"
    assert gpu.get(g()).tobytes() == want.tobytes()
    bad = k.copy()
    bad[123] = 25
    gpu.put(device_k, bad)
    with pytest.raises(IndexError, match=r"hawk.kernel gather: sample 123 read Table 'w' \(shape "
                                         r"\(20,\)\) at index 25 on axis 0"):
        g()
    gpu.put(device_k, k)
    assert gpu.get(g()).tobytes() == want.tobytes()
