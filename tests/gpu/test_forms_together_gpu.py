"""The language's forms used together (vectors carried through loops and helpers, Table reads
in loops, random draws in loops, early returns of vectors) in a GPU graph (the driver emulation
where there is no GPU): the CPU's bits, fused and not."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

N = 2000


@hawk.func
def spun(v: hawk.vec3, axis: hawk.vec3) -> hawk.vec3:
    return v + hawk.cross(axis, v) * 0.25


@hawk.kernel
def orbit(x: hawk.vec3) -> hawk.vec3:
    v = x
    for i in range(3):
        v = spun(v, hawk.vec3(0.1, 0.2, 0.3)) * 0.9 + hawk.vec3(0.01, 0.0, 0.02) * hawk.math.float64(i)
    return v


@hawk.kernel
def flipped(x: hawk.vec3, s: hawk.Scalar) -> hawk.vec3:
    if s > 0.5:
        return x * s
    while hawk.capped(hawk.dot(x, x) < 4.0, 5):
        x = x * 1.5
    return x


@hawk.kernel
def stencil(v: hawk.vec3, t: hawk.Table.clamp, seed: hawk.Param[hawk.Int32]) -> hawk.Scalar:
    acc = v.x
    for j in range(3):
        acc = acc * 0.5 + t[hawk.sample() - j] * hawk.random(seed, j)
    return acc


@eagle.Graph.builder
def step(x, s, t):
    g = eagle.Graph()
    y = flipped(orbit(x), s)
    g.result = stencil(y, t, 11)
    return g


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_the_forms_together_on_the_gpu_give_the_cpus_bits(gpu, fuse, monkeypatch):
    rng = np.random.default_rng(0)
    x, s, t = rng.standard_normal((3, N)), rng.uniform(0.0, 1.0, N), rng.standard_normal(N)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want = step(x, s, t)()
    g = step(gpu.asarray(x), gpu.asarray(s), gpu.asarray(t))
    assert g.backend == "gpu"
    assert gpu.get(g()).tobytes() == want.tobytes()
