"""vjp and jvp kernels against central finite differences, and against each other.

For a kernel f, random cotangents c and a random direction v over every
float argument, three numbers must agree: the finite difference of
<c, f(x + h v)> along v, <vjp(x, c), v>, and <c, jvp(x, v)>.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
import hawk
from hawk import Float32, Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm
from hawk.kernel import leaves
from hawk.reference import fixed_order_sum

N = 1500  # two blocks


@hawk.kernel
def smooth(x: Scalar, y: Scalar, a: Param) -> Scalar:
    return hm.sin(x) * hm.cos(y) + hm.exp(0.1 * x) - hm.log(1.0 + y * y) + hm.sqrt(2.0 + x * x) / a


@hawk.kernel
def algebra(x: Scalar, y: Scalar, p: Param):
    return x / (1.5 + y * y), hm.pow(1.0 + x * x, p), hm.tan(0.3 * x), abs(x) * y, -x % 1.7, x ** 3


@hawk.kernel
def branchy(x: Scalar, y: Scalar, lim: Param) -> Scalar:
    if x > lim:
        z = x * y
    elif x < -lim:
        z = hm.sqrt(x * x + 1.0)
    else:
        z = y if y > 0.0 else -2.0 * y
    return hm.minimum(z, 3.0) + hm.maximum(x, y) + hm.where(y > x, x * x, y)


@hawk.kernel
def reduced(x: Scalar, w: Param) -> Scalar:
    mean = hawk.sum(x) / 1500.0
    spread = hawk.sum((x - mean) * (x - mean))
    return (x - mean) * w / hm.sqrt(spread) + hawk.max(x * w)


@hawk.kernel
def in_place(x: Scalar, y: Mutable[Scalar], flag: Mutable[UInt32], k: Int32):
    y = y * x + hm.float64(k)
    flag = hm.uint32(hawk.sum(x > 0.0))


@hawk.kernel
def vectors(v: Scalar, s: Param) -> Scalar:
    return v[0] * v[1] * s + v[2] * v[2]


@hawk.kernel
def single(x: Float32, a: Param) -> Float32:
    return hm.sin(x) * a + x * x



def outputs(kernel, args, names):
    """The float results of a call, by cotangent name (d_out…, d_<mutable>)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    floats = [o for o in leaves(kernel(*copies)) if o is not None and o.dtype.kind == "f"]
    by_param = {f"d_{n}": copies[i] for i, (n, _) in enumerate(kernel.params)}
    return [floats.pop(0) if name.startswith("d_out") else by_param[name] for name in names]


def check(kernel, args, rng, h=1e-6, rtol=2e-6):
    count = len(kernel.params)
    names = [n for n, _ in kernel.vjp.params[count:]]
    base = outputs(kernel, args, names)
    cts = [rng.standard_normal(o.shape) for o in base]
    grads = kernel.vjp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], *cts)
    direction = {name: rng.standard_normal(np.shape(arg)) if isinstance(arg, np.ndarray)
                 else float(rng.standard_normal())
                 for (name, _), arg in zip(kernel.params, args, strict=True) if name in grads}

    def shifted(step):
        return [a + step * direction[n] if n in direction else a for (n, _), a in zip(kernel.params, args,
                                                                                       strict=True)]

    def loss(xs):
        return sum(float(np.sum(c * o)) for c, o in zip(cts, outputs(kernel, xs, names), strict=True))

    fd = (loss(shifted(h)) - loss(shifted(-h))) / (2 * h)
    via_vjp = sum(float(np.sum(grads[n] * direction[n])) for n in direction)
    tangents = [direction[n] for n, _ in kernel.params if n in direction]
    _, tangent_tree = kernel.jvp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args],
                                      *tangents)
    t_leaves = [t for t in leaves(tangent_tree["result"]) if t is not None]
    t_by_name = {f"d_{k}": v for k, v in tangent_tree.items() if k != "result"}
    t_out = [t_leaves.pop(0) if name.startswith("d_out") else t_by_name[name] for name in names]
    via_jvp = sum(float(np.sum(c * t)) for c, t in zip(cts, t_out, strict=True))
    scale = max(abs(fd), 1.0)
    assert abs(via_vjp - fd) <= rtol * scale * 50, (via_vjp, fd)
    assert abs(via_jvp - via_vjp) <= 1e-9 * scale * 50, (via_jvp, via_vjp)
    return grads


def test_smooth_math_functions(threads):
    rng = np.random.default_rng(0)
    check(smooth, [rng.standard_normal(N), rng.standard_normal(N), 1.7], rng)


def test_arithmetic_pow_tan_abs_mod():
    rng = np.random.default_rng(1)
    check(algebra, [rng.uniform(0.2, 2.0, N) * rng.choice([-1, 1], N), rng.standard_normal(N), 1.3], rng)


def test_branches_reverse_only_the_arm_that_ran():
    rng = np.random.default_rng(2)
    check(branchy, [rng.standard_normal(N) * 2, rng.standard_normal(N), 0.7], rng)
    # sqrt(x*x + 1) is taken only where x < -lim; elsewhere its arm must contribute nothing, not NaN
    grads = branchy.vjp(np.array([5.0, -5.0, 0.1]), np.array([1.0, 1.0, 1.0]), 0.7, np.ones(3))
    assert np.isfinite(grads["x"]).all() and np.isfinite(grads["y"]).all()


def test_reductions_send_the_adjoint_to_every_sample(threads):
    rng = np.random.default_rng(3)
    check(reduced, [rng.standard_normal(N), 0.9], rng, rtol=1e-5)


def test_mutables_are_seeded_and_integers_carry_nothing():
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(N), rng.standard_normal(N), np.zeros(1, np.uint32),
            rng.integers(-3, 3, N).astype(np.int32)]
    grads = check(in_place, args, rng)
    assert set(grads) == {"x", "y"}
    assert [n for n, _ in in_place.vjp.params][4:] == ["d_y"]


def test_components_and_param_gradients():
    rng = np.random.default_rng(5)
    grads = check(vectors, [rng.standard_normal((3, N)), 0.4], rng)
    assert grads["v"].shape == (3, N) and grads["s"].shape == (1,)


def test_param_gradients_are_one_fixed_order_sum():
    rng = np.random.default_rng(6)
    x, ct = rng.standard_normal(100_000), rng.standard_normal(100_000)
    from eagle import _core
    before, runs = _core.num_threads(), []
    try:
        for t in (1, 2, 4):
            _core.set_num_threads(t)
            runs.append(smooth.vjp(x, x * 0.5, 1.3, ct))
    finally:
        _core.set_num_threads(before)
    for other in runs[1:]:
        for key in runs[0]:
            np.testing.assert_array_equal(other[key], runs[0][key])
    np.testing.assert_array_equal(smooth.vjp.reference(x, x * 0.5, 1.3, ct)["a"], runs[0]["a"])
    # d/da of sqrt(2 + x*x) / a, per sample, then eagle's one order over the samples
    per_sample = -((ct * (np.sqrt(2.0 + x * x) / 1.3)) / 1.3)
    assert runs[0]["a"][0] == fixed_order_sum(per_sample)


def test_float32_derivatives_follow_float64():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(N)
    g32 = single.vjp(x.astype(np.float32), 1.5, np.ones(N, np.float32))
    assert g32["x"].dtype == np.float32 and g32["a"].dtype == np.float64
    np.testing.assert_allclose(g32["x"], np.cos(x) * 1.5 + 2 * x, rtol=2e-5, atol=2e-5)


def test_derivative_kernels_enter_a_graph_only_through_eagle_diff():
    x = np.arange(4.0)
    bound = smooth.vjp.plan(x, x, 1.0, np.ones(4))
    with pytest.raises(TypeError, match=re.escape("'smooth_vjp' is a vjp (derivative) kernel; derivative "
                                                  "kernels enter a graph only through eagle.diff")):
        eagle.Graph().add(bound, name="smooth_vjp")


@hawk.kernel
def mixed(x: Scalar, y: Scalar, a: Param, s: Mutable) -> tuple[Scalar, Scalar, Scalar]:
    t = x  # reassigned below: only the last value reaches the first output
    t = hm.floor(y) + a
    if x > y:
        s = s * y
    return t, hm.where(x > 0.0, y, a), 0.5


def test_dependencies_follow_only_differentiable_operands():
    from hawk import derive

    ir = mixed.ir(np.ones(3), np.ones(3), 2.0, np.ones(3))
    names = {ir.slots[out].name: {ir.slots[k].name for k in ins}
             for out, ins in derive.dependencies(ir).items()}
    out0, out1, out2 = (ir.slots[k].name for k in leaves(ir.result))
    assert names[out0] == {"a"}  # floor carries none, and x's value was overwritten
    assert names[out1] == {"y", "a"}  # a where's condition carries none
    assert names[out2] == set()
    assert names["s"] == {"s", "y"}


FORMS = [
    (smooth, lambda rng: [rng.standard_normal(N), rng.standard_normal(N), 1.7]),
    (algebra, lambda rng: [rng.uniform(0.2, 2.0, N), rng.standard_normal(N), 1.3]),
    (branchy, lambda rng: [rng.standard_normal(N) * 2, rng.standard_normal(N), 0.7]),
    (reduced, lambda rng: [rng.standard_normal(N), 0.9]),
    (in_place, lambda rng: [rng.standard_normal(N), rng.standard_normal(N), np.zeros(1, np.uint32),
                            rng.integers(-3, 3, N).astype(np.int32)]),
    (vectors, lambda rng: [rng.standard_normal((3, N)), 0.4]),
    (single, lambda rng: [rng.standard_normal(N).astype(np.float32), 1.5]),
]


@pytest.mark.parametrize("kernel, make", FORMS, ids=[k.__name__ for k, _ in FORMS])
def test_a_vjp_of_some_gradients_gives_the_full_vjps_bits(kernel, make):
    """Each input alone, each cotangent alone: the restricted vjp's gradients are the full vjp's
    (with the other cotangents zero), bit for bit; it returns only what was asked."""
    rng = np.random.default_rng(8)
    args = make(rng)
    count = len(kernel.params)
    cts = {name: rng.standard_normal(o.shape).astype(o.dtype)
           for name, o in zip([n for n, _ in kernel.vjp.params[count:]],
                              outputs(kernel, args, [n for n, _ in kernel.vjp.params[count:]]), strict=True)}
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    full = kernel.vjp(*fresh, *cts.values())
    for name in full:
        only = kernel.vjp_of(wrt=(name,))(*[a.copy() if isinstance(a, np.ndarray) else a for a in args],
                                          *cts.values())
        assert list(only) == [name]
        np.testing.assert_array_equal(only[name], full[name])
    for seed in cts:
        vjp = kernel.vjp_of(seeded=(seed[len("d_"):],))
        assert [n for n, _ in vjp.params[count:]] == [seed]
        some = vjp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], cts[seed])
        zeroed = [ct if name == seed else np.zeros_like(ct) for name, ct in cts.items()]
        alone = kernel.vjp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], *zeroed)
        for name in alone:
            np.testing.assert_array_equal(some[name], alone[name])


def test_a_vjp_without_its_params_stays_per_sample():
    """A Param's gradient is a cross-sample sum; left out, a per-sample kernel's vjp keeps no
    reduction (one phase), and its IR keeps only what reaches the gradient asked for."""
    from hawk.ir import Op, walk

    x = np.linspace(0.5, 1.5, N)
    assert not smooth.vjp.per_sample
    only = smooth.vjp_of(wrt=("x",))
    assert only.per_sample
    ir = only.ir(x, x, 1.7, np.ones(N))
    assert not any(isinstance(s, Op) and s.op == "sum" for s in walk(ir.body))
    assert [s.name for s in ir.slots if s.role == "write"] == ["grad_x"]
    np.testing.assert_array_equal(only(x, x, 1.7, np.ones(N))["x"], smooth.vjp(x, x, 1.7, np.ones(N))["x"])
    # nothing of y's adjoint is left: d/dy of cos(y), log(1 + y*y) is never taken
    assert not any(isinstance(s, Op) and s.op == "sin" for s in walk(ir.body))


@pytest.mark.parametrize("kernel, make", FORMS, ids=[k.__name__ for k, _ in FORMS])
def test_a_zero_gradient_is_plus_zero(kernel, make):
    """Adjoints start from a copy of their first contribution (no 0 + c on every value), so an
    adjoint may be -0 inside; a gradient is stored as 0 + its total, +0 for every zero: the same
    bits however the adjoints were accumulated (fused or not)."""
    rng = np.random.default_rng(9)
    args = make(rng)
    count = len(kernel.params)
    names = [n for n, _ in kernel.vjp.params[count:]]
    cts = [np.full(o.shape, -0.0, o.dtype) for o in outputs(kernel, args, names)]
    grads = kernel.vjp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], *cts)
    for name, grad in grads.items():
        zeros = grad == 0
        assert zeros.all() and not np.signbit(grad[zeros]).any(), name
