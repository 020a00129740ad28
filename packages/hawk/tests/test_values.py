"""Vector, matrix and quaternion values: eager, planned, in a builder graph, fused, and their
derivatives against central differences (the GPU emulation: tests/gpu/test_values_gpu.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Param, Scalar
from hawk import math as hm

N = 1500  # two blocks


def sibling(name: str):
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"hawk_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


derivatives = sibling("test_derivatives")


@hawk.kernel
def rigid(p: hawk.vec3, v: hawk.vec3, q: hawk.quat, dt: Param) -> tuple[hawk.vec3, hawk.vec3]:
    g = hawk.vec3(0.0, -9.8, 0.0)
    v2 = v + g * dt
    turned = hawk.quat_rotate(q, v2)
    return p + turned * dt, hawk.cross(turned, v2) + hawk.normalize(p) * hawk.length(v2)


@hawk.kernel
def algebra(m: hawk.mat33, b: hawk.vec3) -> tuple[hawk.mat33, hawk.vec3, Scalar]:
    inv = hawk.inverse(m)
    return inv @ m + hawk.outer(b, b), hawk.solve(m, b) + m * b, hawk.determinant(m) + hawk.trace(m)


@hawk.kernel
def quaternions(q: hawk.quat, r: hawk.quat, axis: hawk.vec3, angle: Scalar) -> hawk.quat:
    spin = hawk.quat_from_axis_angle(hawk.normalize(axis), angle)
    return hawk.normalize(q * r * hawk.quat_conjugate(spin))


@hawk.kernel
def fours(m: hawk.mat44, v: hawk.vec4) -> tuple[hawk.mat44, Scalar]:
    return hawk.inverse(m), hawk.dot(hawk.transpose(m) @ v, hawk.diag(v) * v)


@hawk.kernel
def locals_and_ifs(a: hawk.vec3, s: Scalar, acc: Mutable[hawk.vec3]) -> hawk.vec3:
    w = a * 2.0
    w.y = s
    w[2] += 1.0
    if s > 0.0:
        w = -w
    acc = hm.where(s > 0.5, a, w)
    acc.x = acc.x * s
    m = hawk.mat22(w.x, w.y, s, 1.0)
    m[1] = hawk.vec2(a.z, s)
    m[0, 1] += 1.0
    return hawk.vec3(m[0, 0], m[1][0], m[0, 1]) if s < 0.25 else hawk.cw_mul(a, w)


def planes(rng, *shapes, dtype=np.float64):
    return [rng.standard_normal((*s, N)).astype(dtype) for s in shapes]


def quaternion(rng):
    q = rng.standard_normal((4, N))
    return q / np.linalg.norm(q, axis=0)


def well_conditioned(rng, k):
    return (rng.standard_normal((k, k, N)) + 3.0 * np.eye(k)[:, :, None])


def batched(m):
    return np.moveaxis(m, -1, 0)


def test_values_match_numpy_and_the_reference():
    rng = np.random.default_rng(0)
    p, v = planes(rng, (3,), (3,))
    q = quaternion(rng)
    moved, spun = rigid(p, v, q, 0.01)
    assert moved.shape == spun.shape == (3, N)
    # the same functions outside a kernel, on component planes
    v2 = v + np.array([0.0, -9.8, 0.0])[:, None] * 0.01
    turned = hawk.quat_rotate(q, v2)
    assert np.array_equal(moved, p + turned * 0.01)
    np.testing.assert_allclose(spun, np.cross(turned, v2, axis=0)
                               + p / np.linalg.norm(p, axis=0) * np.linalg.norm(v2, axis=0), rtol=1e-12)
    for got, want in zip(rigid(p, v, q, 0.01), rigid.reference(p, v, q, 0.01), strict=True):
        assert got.tobytes() == want.tobytes()


def test_matrices_against_numpys_linear_algebra():
    rng = np.random.default_rng(1)
    m, b = well_conditioned(rng, 3), rng.standard_normal((3, N))
    product, x, scalar = algebra(m, b)
    assert product.shape == (3, 3, N)
    np.testing.assert_allclose(product, np.eye(3)[:, :, None] + b[:, None] * b[None], atol=1e-12)
    want_x = np.linalg.solve(batched(m), batched(b)[..., None])[..., 0].T
    np.testing.assert_allclose(x, want_x + np.einsum("ijn,jn->in", m, b), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scalar, np.linalg.det(batched(m)) + np.trace(m), rtol=1e-12)
    m4, v4 = well_conditioned(rng, 4), rng.standard_normal((4, N))
    inv, dot = fours(m4, v4)
    np.testing.assert_allclose(batched(inv), np.linalg.inv(batched(m4)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dot, np.einsum("jin,jn,in->n", m4, v4, v4 * v4), rtol=1e-12)
    for got, want in zip(algebra(m, b), algebra.reference(m, b), strict=True):
        assert got.tobytes() == want.tobytes()


def test_quaternion_products_follow_warps_order():
    """x, y, z, w with the real part last: i * j = k, and rotating by a quarter turn about z."""
    i, j = np.array([[1.0], [0.0], [0.0], [0.0]]), np.array([[0.0], [1.0], [0.0], [0.0]])
    axis = np.array([[0.0], [0.0], [1.0]])
    np.testing.assert_allclose(quaternions(i, j, axis, np.zeros(1)), [[0.0], [0.0], [1.0], [0.0]])
    quarter = hawk.quat_from_axis_angle(axis, np.array([np.pi / 2]))
    np.testing.assert_allclose(hawk.quat_rotate(quarter, np.array([[1.0], [0.0], [0.0]])),
                               [[0.0], [1.0], [0.0]], atol=1e-15)
    rng = np.random.default_rng(2)
    q, r, a = quaternion(rng), quaternion(rng), rng.standard_normal((3, N))
    out = quaternions(q, r, a, rng.standard_normal(N))
    np.testing.assert_allclose(np.linalg.norm(out, axis=0), 1.0, rtol=1e-14)
    assert quaternions.reference(q, r, a, np.ones(N)).tobytes() == quaternions(q, r, a, np.ones(N)).tobytes()


def test_locals_components_and_merges():
    rng = np.random.default_rng(3)
    a, s = rng.standard_normal((3, N)), rng.uniform(-1.0, 1.0, N)
    out = np.zeros((3, N))
    got = locals_and_ifs(a, s, out)
    w = a * 2.0
    w[1], w[2] = s, w[2] + 1.0
    w = np.where(s > 0.0, -w, w)
    want_out = np.where(s > 0.5, a, w)
    want_out[0] *= s
    np.testing.assert_array_equal(out, want_out)
    corner = np.stack([w[0], a[2], w[1] + 1.0])
    np.testing.assert_array_equal(got, np.where(s < 0.25, corner, a * w))
    again = np.zeros((3, N))
    assert locals_and_ifs.reference(a, s, again).tobytes() == got.tobytes()
    assert again.tobytes() == out.tobytes()


def test_float32_planes_stay_float32_and_fixed_widths_are_checked():
    rng = np.random.default_rng(4)
    p, v = planes(rng, (3,), (3,), dtype=np.float32)
    q = quaternion(rng).astype(np.float32)
    moved, _ = rigid(p, v, q, 0.01)
    assert moved.dtype == np.float32

    @hawk.kernel
    def scaled(v: hawk.vec3f) -> hawk.vec3d:
        return v * 2.0

    assert scaled(p).dtype == np.float64
    with pytest.raises(TypeError, match=r"parameter 'v' is hawk.vec3\[Float32\] \(float32\); got float64"):
        scaled(p.astype(np.float64))


def test_zero_length_and_singular_results_and_their_derivatives():
    zero = np.zeros((3, 1))
    assert np.array_equal(hawk.normalize(zero), zero) and hawk.length(zero)[0] == 0.0
    assert np.array_equal(hawk.normalize(np.zeros((4, 1))), np.zeros((4, 1)))  # a (4, n) plane: a vec4

    @hawk.kernel
    def unit(v: hawk.vec3, q: hawk.quat) -> tuple[hawk.vec3, Scalar, hawk.quat]:
        return hawk.normalize(v), hawk.length(v), hawk.normalize(q)

    n, length, q = unit(zero, np.zeros((4, 1)))
    assert np.array_equal(n, zero) and length[0] == 0.0 and q[:, 0].tolist() == [0.0, 0.0, 0.0, 1.0]
    grads = unit.vjp(zero, np.zeros((4, 1)), np.ones((3, 1)), np.ones(1), np.ones((4, 1)))
    assert np.array_equal(grads["v"], zero) and np.array_equal(grads["q"], np.zeros((4, 1)))

    @hawk.kernel
    def invert(m: hawk.mat33) -> hawk.mat33:
        return hawk.inverse(m)

    singular = np.ones((3, 3, 1))
    assert np.array_equal(invert(singular), np.zeros((3, 3, 1)))
    assert np.array_equal(invert.vjp(singular, np.ones((3, 3, 1)))["m"], np.zeros((3, 3, 1)))
    assert np.isnan(invert(np.full((3, 3, 1), np.nan))).all()


@pytest.mark.parametrize("kernel, make", [
    (rigid, lambda rng: [*planes(rng, (3,), (3,)), quaternion(rng), 0.3]),
    (algebra, lambda rng: [well_conditioned(rng, 3), rng.standard_normal((3, N))]),
    (quaternions, lambda rng: [quaternion(rng), quaternion(rng), rng.standard_normal((3, N)) + 2.0,
                               rng.standard_normal(N)]),
    (fours, lambda rng: [well_conditioned(rng, 4), rng.standard_normal((4, N))]),
    (locals_and_ifs, lambda rng: [rng.standard_normal((3, N)), rng.uniform(-1.0, 1.0, N),
                                  rng.standard_normal((3, N))]),
], ids=lambda k: getattr(k, "__name__", ""))
def test_derivatives_against_central_differences(kernel, make):
    rng = np.random.default_rng(5)
    derivatives.check(kernel, make(rng), rng, rtol=1e-5)


def test_a_graph_of_value_kernels_fuses_and_gives_the_unfused_bits(threads):
    rng = np.random.default_rng(6)
    p, v = planes(rng, (3,), (3,))
    q = quaternion(rng)

    def replay(fuse):
        first = rigid.plan(p, v, q, 0.01)
        second = rigid.plan(first.outputs[0], first.outputs[1], q, 0.02)
        g = eagle.Graph().add(first, name="first").add(second, name="second")
        g.build(fuse=fuse).launch(threads)
        return [o.copy() for o in second.outputs], g

    want, plain = replay(False)
    got, fused = replay(True)
    assert plain.fused == [] and fused.fused == [("first", "second")]
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]
    eager = rigid(*rigid(p, v, q, 0.01), q, 0.02)
    assert [a.tobytes() for a in eager] == [a.tobytes() for a in want]


def test_value_kernels_in_a_builder_graph():
    pytest.importorskip("eagle.builder")

    @eagle.Graph.builder
    def steps(p, v, q, m):
        g = eagle.Graph()
        for _ in range(3):
            p, v = rigid(p, v, q, 0.01)
        inv, _, _ = algebra(m, p)
        g.result = inv
        return g

    rng = np.random.default_rng(7)
    p, v = planes(rng, (3,), (3,))
    q, m = quaternion(rng), well_conditioned(rng, 3)
    want_p, want_v = p, v
    for _ in range(3):
        want_p, want_v = rigid(want_p, want_v, q, 0.01)
    want = algebra(m, want_p)[0]
    g = steps(p, v, q, m)
    assert g().tobytes() == want.tobytes()


def test_a_4x4_inverse_shares_its_minors():
    @hawk.kernel
    def invert4(m: hawk.mat44) -> hawk.mat44:
        return hawk.inverse(m)

    m = np.zeros((4, 4, 8))
    ops = sum(1 for _ in invert4.ir(m).body)
    assert 150 <= ops <= 400, ops  # the minors shared: a few hundred scalar ops, not thousands
    assert np.array_equal(invert4(np.broadcast_to(np.eye(4)[:, :, None], (4, 4, 8)).copy()),
                          np.broadcast_to(np.eye(4)[:, :, None], (4, 4, 8)))


REFUSALS = [
    ("def f(v: hawk.vec3) -> Scalar:\n    return v * v",
     r"a vec3 \* a vec3 is not defined; for the element-wise product write hawk.cw_mul"),
    ("def f(v: hawk.vec3) -> Scalar:\n    return v[3]", r"v\[3\] is out of range for a vec3"),
    ("def f(v: hawk.vec3, i: Scalar) -> Scalar:\n    return v[i]", r"written-out integer indices"),
    ("def f(v: hawk.vec2) -> Scalar:\n    return v.z", r"a vec2 has no component 'z'"),
    ("def f(v: hawk.vec3) -> hawk.vec3:\n    return hawk.cross(v, hawk.vec2(1.0, 2.0))",
     r"hawk.cross takes a vec3, got a vec2"),
    ("def f(v: hawk.vec3, s: Scalar) -> hawk.vec3:\n    w = v\n    if s > 0.0:\n        w = s\n    return w",
     r"'w' is a scalar and a vec3 in the two arms; give it one type in both"),
    ("def f(v: hawk.vec3) -> Scalar:\n    return v", r"the return annotation says Scalar but the kernel "
                                                     r"returns a vec3; annotate hawk.vec3"),
    ("def f(s: Scalar) -> hawk.vec3:\n    return s", r"says hawk.vec3 but the kernel returns a scalar"),
    ("def f(v: hawk.vec3):\n    v = 2.0", r"'v' is a vec3 but is assigned a scalar"),
    ("def f(v: hawk.vec3) -> Scalar:\n    return 1.0 if v else 0.0", r"a vec3 is not a condition"),
    ("def f(v: hawk.vec3) -> hawk.vec3:\n    return hawk.vec3(1.0, 2.0)", r"takes 3 scalars"),
    ("def f(m: hawk.mat33, v: hawk.vec2) -> hawk.vec2:\n    return m @ v", r"the inner sizes must agree"),
]


@pytest.mark.parametrize("source, message", REFUSALS, ids=[m[:30] for _, m in REFUSALS])
def test_refusals_name_the_fix(tmp_path, source, message):
    path = tmp_path / "refused.py"
    path.write_text("import hawk\nfrom hawk import Scalar\n\n@hawk.kernel\n" + source + "\n")
    spec = importlib.util.spec_from_file_location("refused", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(hawk.KernelSyntaxError, match=message) as err:
        spec.loader.exec_module(module)
    assert err.value.filename == str(path) and err.value.lineno >= 5


@pytest.mark.parametrize("array, message", [
    (np.zeros((2, N)), r"parameter 'p' is hawk.vec3: a plane of shape \(3, n\); got \(2, 1500\)"),
    (np.zeros((3, N), np.int32), r"parameter 'p' is hawk.vec3 \(float32 or float64\); got int32"),
    (np.zeros(N), r"a plane of shape \(3, n\); got \(1500,\)"),
])
def test_bad_value_planes_name_the_parameter(array, message):
    good = np.zeros((3, N))
    with pytest.raises((TypeError, ValueError), match=message):
        rigid(array, good, np.zeros((4, N)), 0.1)


@hawk.struct
class Body:
    pos: hawk.vec3
    vel: hawk.vec3
    mass: Scalar


@hawk.kernel
def fall(b: Mutable[Body], frame: hawk.mat33, dt: Param) -> hawk.vec3:
    b.vel = b.vel + hawk.vec3(0.0, -9.8, 0.0) * dt
    b.vel.x *= 0.5
    if b.pos.y < 0.0:
        b.vel = -b.vel
    b.pos += b.vel * dt
    return frame @ b.pos * b.mass


def bodies(rng):
    return Body(pos=rng.standard_normal((3, N)), vel=rng.standard_normal((3, N)), mass=rng.random(N) + 0.5)


def test_a_struct_is_passed_and_written_as_its_fields_planes():
    rng = np.random.default_rng(8)
    b, frame = bodies(rng), well_conditioned(rng, 3)
    pos, vel = b.pos.copy(), b.vel.copy()
    out = fall(b, frame, 0.1)
    vel = vel + np.array([0.0, -9.8, 0.0])[:, None] * 0.1
    vel[0] *= 0.5
    vel = np.where(pos[1] < 0.0, -vel, vel)
    pos = pos + vel * 0.1
    assert np.array_equal(b.vel, vel) and np.array_equal(b.pos, pos)
    np.testing.assert_allclose(out, np.einsum("ijn,jn->in", frame, pos) * b.mass, rtol=1e-12)
    assert repr(fall) == "<hawk.kernel fall(b: Mutable[Body], frame: hawk.mat33, dt: Param)>"
    assert [n for n, _ in fall.vjp.params][:3] == ["b.pos", "b.vel", "b.mass"]  # derivatives: the fields
    with pytest.raises(TypeError, match=r"parameter 'b' is a Body; pass an instance of it"):
        fall((b.pos, b.vel, b.mass), frame, 0.1)


def test_struct_gradients_against_central_differences():
    rng = np.random.default_rng(9)
    b = bodies(rng)
    b.pos[1] = np.abs(b.pos[1]) + 0.5  # away from the reflection's switch
    derivatives.check(fall, [b.pos, b.vel, b.mass, well_conditioned(rng, 3), 0.1], rng, rtol=1e-5)


def test_a_struct_kernel_in_a_builder_graph():
    pytest.importorskip("eagle.builder")

    @eagle.Graph.builder
    def falling(pos, vel, mass, frame):
        g = eagle.Graph()
        b = Body(pos=pos, vel=vel, mass=mass)
        for _ in range(3):
            out = fall(b, frame, 0.05)
        g.result = out
        return g

    rng = np.random.default_rng(10)
    b, frame = bodies(rng), well_conditioned(rng, 3)
    eager = Body(pos=b.pos.copy(), vel=b.vel.copy(), mass=b.mass.copy())
    for _ in range(3):
        want = fall(eager, frame, 0.05)
    got = falling(b.pos, b.vel, b.mass, frame)()
    assert got.tobytes() == want.tobytes() and b.pos.tobytes() == eager.pos.tobytes()


def test_struct_fields_are_per_sample_types():
    with pytest.raises(TypeError, match=r"hawk.struct: Bad.k is annotated Param; a field is a per-sample"):
        @hawk.struct
        class Bad:
            k: Param


def test_a_struct_param_is_refused_with_the_way_to_pass_one():
    # Param[hawk.vec3] is a form now (test_param_values.py); a struct as one Param is still refused
    with pytest.raises(TypeError, match=r"Param\[Body\]: a Param is a number or a vector, matrix or "
                                        r"quaternion \(Param\[hawk.vec3\]\); pass a struct.s fields"):
        Param[Body]


@hawk.kernel
def launched(p: hawk.vec3, v: hawk.vec3, m: Scalar) -> Body:
    return Body(pos=p + v * 0.1, vel=hawk.cross(v, p), mass=m * 2.0)


def test_a_returned_struct_gives_its_fields_planes_by_name():
    rng = np.random.default_rng(11)
    p, v, m = rng.standard_normal((3, N)), rng.standard_normal((3, N)), rng.random(N)
    got = launched(p, v, m)
    assert list(got) == ["pos", "vel", "mass"]
    assert np.array_equal(got["pos"], p + v * 0.1) and np.array_equal(got["mass"], m * 2.0)
    np.testing.assert_allclose(got["vel"], np.cross(v, p, axis=0), rtol=1e-12, atol=1e-15)
    derivatives.check(launched, [p, v, m], rng, rtol=1e-5)


@pytest.mark.parametrize("body, message", [
    ("return Body(pos=p, vel=p)", r"Body\(...\) gives every field once: pos, vel, mass"),
    ("return Body(pos=p, vel=p, mass=m, spin=m)", r"'spin' is not a field or is given twice"),
    ("return p", r"the return annotation says Body; return Body\(field=..., ...\) with every field"),
])
def test_a_returned_struct_names_its_fields(tmp_path, body, message):
    path = tmp_path / "refused_struct.py"
    path.write_text("import hawk\nfrom hawk import Scalar\n\n@hawk.struct\nclass Body:\n    pos: hawk.vec3\n"
                    "    vel: hawk.vec3\n    mass: Scalar\n\n@hawk.kernel\n"
                    f"def f(p: hawk.vec3, m: Scalar) -> Body:\n    {body}\n")
    spec = importlib.util.spec_from_file_location("refused_struct", path)
    with pytest.raises(hawk.KernelSyntaxError, match=message):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


@hawk.kernel
def struct_locals(p: hawk.vec3, m: Scalar) -> Body:
    b = Body(pos=p * 2.0, vel=-p, mass=m)
    if m > 0.5:
        b = Body(p, hawk.cross(p, b.pos + hawk.vec3(0.0, 1.0, 0.0)), m + 1.0)
    b.mass = b.mass * 3.0
    c = b if m < 0.25 else Body(pos=b.vel, vel=b.pos, mass=b.mass)
    c.pos = c.pos + hawk.vec3(c.vel.x)
    return c


def test_struct_locals_merge_field_by_field():
    rng = np.random.default_rng(12)
    p, m = rng.standard_normal((3, N)), rng.random(N)
    got = struct_locals(p, m)
    up = np.array([0.0, 1.0, 0.0])[:, None]
    big = m > 0.5
    pos = np.where(big, p, p * 2.0)
    vel = np.where(big, np.cross(p, p * 2.0 + up, axis=0), -p)
    mass = np.where(big, m + 1.0, m) * 3.0
    small = m < 0.25
    pos, vel = np.where(small, pos, vel), np.where(small, vel, pos)
    pos = pos + vel[0]
    assert np.array_equal(got["mass"], mass) and np.array_equal(got["vel"], vel)
    np.testing.assert_allclose(got["pos"], pos, rtol=1e-15)
    assert all(a.tobytes() == b.tobytes()
               for a, b in zip(got.values(), struct_locals.reference(p, m).values(), strict=True))
    derivatives.check(struct_locals, [p, m], rng, rtol=1e-5)
