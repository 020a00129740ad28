"""Fused runs in the GPU lowering: one CUDA kernel per phase of a run, the CPU's bits.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda),
where the fused CUDA C runs as a host build.  NVRTC's compilation of the same source is
checked in packages/hawk/tests/test_cuda.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle import extend

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")
from hawk import Mutable, Param, Scalar, UInt32  # noqa: E402

N = 3000


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return x * a + b


@hawk.kernel
def damp(x: Scalar) -> Scalar:
    return x - x * x * 0.01


@hawk.kernel
def settled(x: Scalar, flag: Mutable[UInt32]):
    flag = hawk.math.uint32(hawk.sum(x > 2.0))


@eagle.Graph.builder
def chain(x, flag):
    g = eagle.Graph()
    for k in range(4):
        x = affine(x, 1.0001, 0.25 * k)
        x = damp(x)
    settled(x, flag)
    g.result = x
    return g


@eagle.Graph.builder
def loop(x, flag):
    g = eagle.Graph()
    for _ in range(50):
        if not flag:
            break
        x = damp(affine(x, 1.5, 0.125))
        settled(x, flag)
    g.result = x
    return g


@pytest.mark.parametrize("builder", [chain, loop], ids=["chain", "loop"])
def test_fused_device_graphs_give_the_cpus_bits(gpu, builder, monkeypatch):
    x = np.linspace(-1.0, 1.0, N)
    want_flag = np.ones(1, np.uint32)
    monkeypatch.setenv("EAGLE_FUSE", "0")
    want = builder(x.copy(), want_flag)()
    for fuse in ("1", "0"):
        monkeypatch.setenv("EAGLE_FUSE", fuse)
        flag = gpu.asarray(np.ones(1, np.uint32))
        g = builder(gpu.asarray(x), flag)
        assert g.backend == "gpu"
        assert bool(g.fused) == (fuse == "1")  # a loop body's run is listed too
        assert all(run.where.startswith("body of" if builder is loop else "stage") for run in g.fused_runs)
        assert gpu.get(g()).tobytes() == want.tobytes()
        assert gpu.get(flag).tobytes() == want_flag.tobytes()


@eagle.Graph.builder
def loop_temporaries(x, flag):
    """A capped loop whose body makes three temporaries, each written in a turn before it is read."""
    g = eagle.Graph()
    for _ in range(50):
        if not flag:
            break
        a = affine(x, 1.5, 0.125)
        b = damp(a)
        c = affine(b, 1.0, 0.0)
        x = damp(c)
        settled(x, flag)
    g.result = x
    return g


def allocations(g: eagle.Graph) -> int:
    """The device memory the nodes' planes lie in: one address per storage."""
    return len({a.__cuda_array_interface__["data"][0] for top in extend.view(g).nodes
                for node in top.walk() for _, a, _ in node.planes() if extend.on_device(a)})


@pytest.mark.parametrize("fuse", ["1", "0"])
@pytest.mark.parametrize("builder", [chain, loop_temporaries], ids=["chain", "loop"])
def test_planned_device_graphs_give_the_unplanned_bits_with_fewer_allocations(gpu, builder, fuse,
                                                                              monkeypatch):
    """The buffer plan on a device graph (a loop body's temporaries too): the temporaries share
    device storage, with the bits of the unplanned build and of the CPU."""
    x = np.linspace(-1.0, 1.0, N)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want = builder(x.copy(), np.ones(1, np.uint32))()
    got, count = {}, {}
    for plan in ("1", "0"):
        monkeypatch.setenv("EAGLE_PLAN", plan)
        g = builder(gpu.asarray(x), gpu.asarray(np.ones(1, np.uint32)))
        assert g.backend == "gpu" and g._temporaries
        got[plan], count[plan] = gpu.get(g()).tobytes(), allocations(g)
    assert got["1"] == got["0"] == want.tobytes()
    assert count["1"] < count["0"]
