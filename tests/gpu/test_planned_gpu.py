"""The buffer plan on device graphs: temporaries on the GPU share storage by the liveness the
host's use (inside a device loop's body too), with the bits of the unplanned build and of the
CPU, and fewer device allocations.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle import extend

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")
from hawk import Mutable, Param, Scalar, UInt32  # noqa: E402

N = 1000


@hawk.kernel
def scale(x: Scalar, c: Param) -> Scalar:
    return c * x


@hawk.kernel
def shift(x: Scalar, d: Param) -> Scalar:
    return d + x


@hawk.kernel
def positive(x: Scalar, flag: Mutable[UInt32]):
    flag = hawk.math.uint32(hawk.sum(x > 100.0) == 0)


@eagle.Graph.builder
def chain(x, flag):
    g = eagle.Graph()
    for _ in range(10):
        x = shift(scale(x, 1.0001), 0.25)
    g.result = x
    return g


@eagle.Graph.builder
def looped(x, flag):
    g = eagle.Graph()
    t = shift(scale(x, 2.0), 1.0)
    for _ in range(6):
        if not flag:
            break
        a = scale(t, 1.0001)
        b = shift(a, 0.25)
        t = shift(scale(b, 0.999), 0.5)
        positive(t, flag)
    g.result = scale(t, 1.5)
    return g


def allocations(g: eagle.Graph) -> int:
    """The device memory the nodes' planes lie in: one address per storage."""
    return len({a.__cuda_array_interface__["data"][0] for top in extend.view(g).nodes
                for node in top.walk() for _, a, _ in node.planes() if extend.on_device(a)})


@pytest.mark.parametrize("fuse", ["1", "0"])
@pytest.mark.parametrize("builder", [chain, looped], ids=["chain", "loop"])
def test_planned_device_graphs_give_the_unplanned_bits_with_fewer_allocations(gpu, builder, fuse,
                                                                              monkeypatch):
    x = np.linspace(-1.0, 1.0, N)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want = builder(x.copy(), np.ones(1, np.uint32))()  # the CPU's
    got, count = {}, {}
    for plan in ("1", "0"):
        monkeypatch.setenv("EAGLE_PLAN", plan)
        flag = gpu.asarray(np.ones(1, np.uint32))
        g = builder(gpu.asarray(x), flag)
        assert g.backend == "gpu" and g._temporaries
        got[plan], count[plan] = gpu.get(g()).tobytes(), allocations(g)
    assert got["1"] == got["0"] == want.tobytes()
    assert count["1"] < count["0"]
