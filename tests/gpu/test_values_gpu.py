"""Vector, matrix and quaternion kernels in a GPU graph (the driver emulation where there is no
GPU): the CPU's bits, fused and not."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

N = 2000


@hawk.kernel
def spin(p: hawk.vec3, q: hawk.quat, m: hawk.mat33) -> tuple[hawk.vec3, hawk.mat33]:
    turned = hawk.quat_rotate(q, p)
    return hawk.normalize(m @ turned + hawk.cross(p, turned)), hawk.inverse(m) * hawk.length(p)


@hawk.kernel
def settle(p: hawk.vec3, m: hawk.mat33, acc: hawk.Mutable[hawk.vec3]):
    acc = acc + hawk.solve(m, p) * hawk.determinant(m)


@eagle.Graph.builder
def chain(p, q, m, acc):
    g = eagle.Graph()
    for _ in range(2):
        p, m2 = spin(p, q, m)
        settle(p, m2, acc)
    g.result = p
    return g


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_value_kernels_on_the_gpu_give_the_cpus_bits(gpu, fuse, monkeypatch):
    rng = np.random.default_rng(0)
    p = rng.standard_normal((3, N))
    q = rng.standard_normal((4, N))
    q /= np.linalg.norm(q, axis=0)
    m = rng.standard_normal((3, 3, N)) + 3.0 * np.eye(3)[:, :, None]
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want_acc = np.zeros((3, N))
    want = chain(p, q, m, want_acc)()
    acc = gpu.asarray(np.zeros((3, N)))
    g = chain(gpu.asarray(p), gpu.asarray(q), gpu.asarray(m), acc)
    assert g.backend == "gpu" and bool(g.fused) == (fuse == "1")
    assert gpu.get(g()).tobytes() == want.tobytes()
    assert gpu.get(acc).tobytes() == want_acc.tobytes()


@hawk.struct
class Body:
    pos: hawk.vec3
    vel: hawk.vec3


@hawk.kernel
def fall(b: hawk.Mutable[Body], dt: hawk.Param) -> Body:
    b.vel = b.vel + hawk.vec3(0.0, -9.8, 0.0) * dt
    b.pos += b.vel * dt
    return Body(pos=b.pos * 2.0, vel=hawk.normalize(b.vel))


@eagle.Graph.builder
def falling(pos, vel):
    g = eagle.Graph()
    b = Body(pos=pos, vel=vel)
    for _ in range(3):
        out = fall(b, 0.05)
    g.result = out["vel"]
    return g


def test_struct_kernels_on_the_gpu_give_the_cpus_bits(gpu):
    rng = np.random.default_rng(1)
    pos, vel = rng.standard_normal((3, N)), rng.standard_normal((3, N))
    want_pos = pos.copy()
    want = falling(want_pos, vel.copy())()
    d_pos = gpu.asarray(pos)
    g = falling(d_pos, gpu.asarray(vel))
    assert g.backend == "gpu"
    assert gpu.get(g()).tobytes() == want.tobytes()
    assert gpu.get(d_pos).tobytes() == want_pos.tobytes()


@hawk.kernel
def pushed(x: hawk.vec3, g: hawk.Param[hawk.vec3], turn: hawk.Param[hawk.mat33], dt: hawk.Param) -> hawk.vec3:
    return turn @ x + g * dt


@eagle.Graph.builder
def pushes(x):
    g = eagle.Graph()
    g.result = pushed(pushed(x, (0.5, -9.8, 0.25), np.eye(3) * 0.5, 0.1), (1.0, 2.0, 3.0), np.eye(3), 0.2)
    return g


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_params_of_value_types_on_the_gpu_give_the_cpus_bits(gpu, fuse, monkeypatch):
    x = np.random.default_rng(1).standard_normal((3, N))
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    want = pushes(x)()
    g = pushes(gpu.asarray(x))
    assert g.backend == "gpu" and bool(g.fused) == (fuse == "1")
    got = gpu.get(g())
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
