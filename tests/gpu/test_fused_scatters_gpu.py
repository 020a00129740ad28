"""Scatters and checked reads in GPU fused runs (the driver emulation where there is no GPU): a
run holding Scatters sums or places them after its samples, with the CPU's bits; a run whose
checked reads or placing Scatters go wrong raises at the wait the error of the first launch
that went wrong, as the CPU's fused and unfused graphs do."""

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


@hawk.kernel
def first(x: Scalar, k: Int32, t: Table) -> Scalar:
    return x + t[k]


@hawk.kernel
def second(y: Scalar, k: Int32, t: Table) -> Scalar:
    return y * t[k + 1] - t[k]


@hawk.kernel
def placed(y: Scalar, k: Int32, s: Scatter):
    s[k] = y


def checked(x, t, k1, k2, kp, s, fuse):
    g = eagle.Graph()
    a = first.plan(x, k1, t)
    g.add(a, name="first")
    b = second.plan(a.outputs[0], k2, t)
    g.add(b, name="second")
    g.add(placed.plan(b.outputs[0], kp, s), name="placed")
    g.result = (b.outputs[0], s)
    return g.build(fuse=fuse)


def _error(g, kind):
    with pytest.raises(kind) as caught:
        g.launch()
    return str(caught.value)


@pytest.mark.parametrize("bad", [None, "second", "both", "placed"])
def test_checked_reads_and_placing_scatters_fuse_on_the_gpu_with_the_cpus_bits_and_errors(gpu, bad):
    rng = np.random.default_rng(4)
    x, t = rng.random(N), rng.standard_normal(40)
    k1, k2 = (rng.integers(0, 39, N).astype(np.int32) for _ in range(2))
    kp = rng.permutation(N).astype(np.int32)
    if bad in ("second", "both"):
        k2[7] = -3
    if bad == "both":
        k1[900] = 40  # the first launch's error, though its sample comes after the second's
    if bad == "placed":
        kp[11] = kp[12]
    host = [checked(x, t, k1, k2, kp, np.zeros(N), fuse) for fuse in (True, False)]
    on = gpu.asarray
    g = checked(on(x), on(t), on(k1), on(k2), on(kp), on(np.full(N, np.nan)), True)
    assert g.backend == "gpu" and g.fused == host[0].fused == [("first", "second", "placed")]
    if bad is None:
        want = host[1].launch().result
        got = g.launch().result
        assert all(gpu.get(a).tobytes() == b.tobytes() for a, b in zip(got, want, strict=True))
        return
    kind = ValueError if bad == "placed" else IndexError
    message = _error(g, kind)
    assert message == _error(host[0], kind) == _error(host[1], kind)
    assert message.startswith({"second": "hawk.kernel second: sample 7",
                               "both": "hawk.kernel first: sample 900",
                               "placed": "hawk.kernel placed: Scatter 's'"}[bad])
