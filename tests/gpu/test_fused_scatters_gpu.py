"""Scatter sums in GPU fused runs (the driver emulation where there is no GPU): a run holding
Scatters sums them after its samples, with the CPU's bits; checked accesses and placing
Scatters stay out of GPU runs (a single GPU launch of them is refused)."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
from hawk import Int32, Scalar, Scatter, Table  # noqa: E402

N = 2000


@hawk.kernel
def damped(x: Scalar, t: Table.wrap) -> Scalar:
    return 0.999 * x + t[hawk.sample() + 1]


@hawk.kernel
def histogram(x: Scalar, k: Int32, h: Scatter.clamp):
    h[k + 2] += x - 1.0  # past the last cell: clamped to it


@hawk.kernel
def counted(x: Scalar, k: Int32, c: Scatter.wrap):
    if x < 0.0:
        c[k * 3] += 1.0


def graph(x, t, k, h, c, fuse):
    g = eagle.Graph()
    d = damped.plan(x, t)
    g.add(d, name="damped")
    g.add(histogram.plan(d.outputs[0], k, h), name="histogram")
    g.add(counted.plan(d.outputs[0], k, c), name="counted")
    return g.build(fuse=fuse)


@pytest.mark.parametrize("fuse", [True, False])
def test_scatter_sums_fuse_on_the_gpu_with_the_cpus_bits(gpu, fuse):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-5, 5, N)
    t, k = rng.standard_normal(37), rng.integers(-1, 12, N).astype(np.int32)
    h, c = np.zeros(10), np.zeros(7)
    graph(x, t, k, h, c, False).launch()
    dh, dc = gpu.asarray(np.full(10, np.nan)), gpu.asarray(np.full(7, np.nan))
    g = graph(gpu.asarray(x), gpu.asarray(t), gpu.asarray(k), dh, dc, fuse)
    assert g.backend == "gpu" and g.fused == ([("damped", "histogram", "counted")] if fuse else [])
    g.launch()
    assert gpu.get(dh).tobytes() == h.tobytes() and gpu.get(dc).tobytes() == c.tobytes()
