"""Empty batches on the device: reductions write their identities and hawk kernels their cells, as
on the CPU (packages/hawk/tests/test_trust_empty.py)."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
from hawk import Mutable, Scalar, UInt32  # noqa: E402


@hawk.kernel
def extremes(x: Scalar, top: Mutable[Scalar], low: Mutable[Scalar], count: Mutable[UInt32]):
    top = hawk.max(x)
    low = hawk.min(x)
    count = hawk.math.uint32(hawk.sum(x > 0.0)) + 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint32, np.uint8])
def test_reduce_over_no_samples_gives_the_cpus_identity(gpu, dtype):
    for op in ("sum", "max", "all"):
        host = np.full(1, 7, dtype)
        eagle.Graph().add_node(eagle.reduce(np.zeros(0, dtype), host, op)).build().launch()
        out = gpu.asarray(np.full(1, 7, dtype))
        g = eagle.Graph().add_node(eagle.reduce(gpu.asarray(np.zeros(0, dtype)), out, op)).build()
        assert g.backend == "gpu"
        g.launch()
        assert gpu.get(out).tobytes() == host.tobytes(), op
        assert host[0] == {"sum": 0, "max": hawk.max(np.zeros(0, dtype)), "all": 1}[op]


def test_a_hawk_kernel_over_no_samples_writes_its_cells(gpu):
    cells = [np.full(1, 7.0), np.full(1, 7.0), np.full(1, 7, np.uint32)]
    device = [gpu.asarray(c) for c in cells]
    g = eagle.Graph()
    g.add(extremes.plan(gpu.asarray(np.zeros(0)), *device), name="extremes")
    g.build().launch()
    assert [gpu.get(d)[0] for d in device] == [-np.inf, np.inf, 3]
