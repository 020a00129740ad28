"""The language's forms used together, as ported kernels use them: vectors carried through loops,
helpers over vectors and structs, early returns of vectors, Table reads in loops and under
short-circuit guards, random draws in loops.

Each kernel is held to the NumPy reference evaluator (bit for bit, on one and two threads),
planned and in a builder graph, fused in a built graph (the unfused bits), and its derivatives
to central differences (tests/gpu/test_forms_together_gpu.py runs them on the GPU emulation).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle import extend
from hawk import Int32, Param, Scalar, Scatter, Table

N = 1500  # two blocks


def sibling(name: str) -> ModuleType:
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"hawk_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


derivatives, fused_graphs = sibling("test_derivatives"), sibling("test_fused_graphs")


@hawk.struct
class Body:
    pos: hawk.vec3
    mass: Scalar


@hawk.func
def spun(v: hawk.vec3, axis: hawk.vec3) -> hawk.vec3:
    return v + hawk.cross(axis, v) * 0.25


@hawk.func
def weight(m: Scalar) -> Scalar:
    return m * 9.81


@hawk.kernel
def orbit(x: hawk.vec3, turns: Param[Int32]) -> hawk.vec3:
    """A vector carried through a counted loop, through a helper."""
    v = x
    for i in range(turns):
        v = spun(v, hawk.vec3(0.1, 0.2, 0.3)) * 0.9 + hawk.vec3(0.01, 0.0, 0.02) * hawk.math.float64(i)
    return v


@hawk.kernel
def shrink(x: hawk.vec3) -> hawk.vec3:
    """A capped while on a vector's length; each sample stops at its own turn."""
    v = x
    while hawk.capped(hawk.length(v) > 1.0, 30):
        v = v * 0.75
    return v


@hawk.kernel
def flipped(x: hawk.vec3, s: Scalar) -> hawk.vec3:
    """Early returns of vectors: every return gives a vec3."""
    if s > 0.5:
        return x * s
    for _ in range(3):
        if hawk.dot(x, x) > 4.0:
            return -x
        x = x * 1.5
    return x + hawk.vec3(s, s, s)


@hawk.kernel
def stencil(x: Scalar, t: Table.clamp) -> Scalar:
    """Table reads at indices made from the loop index."""
    acc = x
    for j in range(3):
        acc = acc * 0.5 + t[hawk.sample() - j] * t[hawk.sample() + j]
    return acc


@hawk.kernel
def guarded(i: Int32, t: Table, x: Scalar) -> Scalar:
    """A checked Table read only where the short-circuit guard holds (never out of range)."""
    return x * 2.0 if (i >= 0 and i < 64 and t[i] > 0.0) else x


@hawk.kernel
def noisy(x: Scalar, seed: Param[Int32]) -> Scalar:
    """Random draws in a loop, a new counter each turn."""
    acc = x
    for j in range(4):
        acc = acc * 0.5 + hawk.random(seed, j)
    return acc


@hawk.func
def energy(b: Body, v: hawk.vec3) -> Scalar:
    v = v * 0.5  # a helper's vector parameter rebound, as a scalar one is
    return b.mass * hawk.length_sq(v) + hawk.dot(b.pos, v)


@hawk.kernel
def weighed(b: Body, lift: hawk.vec3) -> Scalar:
    """A struct's fields and the struct itself through helpers and vector algebra."""
    return weight(b.mass) + hawk.dot(spun(b.pos, lift), lift) + energy(b, lift)


@hawk.kernel
def settled(p: hawk.vec3, m: Scalar) -> Body:
    """Early returns of a struct."""
    if m > 0.5:
        return Body(pos=p, mass=m)
    for _ in range(2):
        if hawk.length(p) > 2.0:
            return Body(pos=-p, mass=m * 2.0)
        p = p * 1.5
    return Body(pos=p, mass=m + 1.0)


@hawk.kernel
def histogram(x: Scalar, h: Scatter.clamp):
    """A Scatter written in a loop (unrolled: each turn's additions kept, in statement order)."""
    for j in range(3):
        h[hawk.math.int32(x * 4.0) + j] += x * hawk.math.float64(j + 1)


@hawk.kernel
def counted_stencil(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    """Table reads in a loop whose count is known only when it runs."""
    acc = x
    for j in range(k):
        acc = acc * 0.5 + t[hawk.sample() - j]
    return acc


def inputs(rng: np.random.Generator, n: int = N) -> dict[str, object]:
    table = rng.standard_normal(n)
    return {
        "vectors": rng.standard_normal((3, n)),
        "big": rng.standard_normal((3, n)) * 5.0,
        "scalars": rng.uniform(0.0, 1.0, n),
        "table": table,
        "indices": rng.integers(-8, 72, n).astype(np.int32),
        "small": rng.standard_normal(64),
        "body": Body(pos=rng.standard_normal((3, n)), mass=rng.uniform(0.5, 2.0, n)),
    }


#: (kernel, its arguments from the inputs, differentiable by central differences)
CASES = [
    (orbit, lambda d: (d["vectors"], 4), True),
    (shrink, lambda d: (d["big"],), False),  # the turn a sample stops at jumps
    (flipped, lambda d: (d["vectors"], d["scalars"]), False),
    (stencil, lambda d: (d["scalars"], d["table"]), True),
    (guarded, lambda d: (d["indices"], d["small"], d["scalars"]), True),
    (noisy, lambda d: (d["scalars"], 7), True),
    (weighed, lambda d: (d["body"], d["vectors"]), True),
    (settled, lambda d: (d["vectors"], d["scalars"]), False),
]
IDS = [k.__name__ for k, _, _ in CASES]


def same(a, b) -> None:
    fused_graphs.same_bytes(extend.flatten(a), extend.flatten(b))


@pytest.mark.parametrize("kernel, make, smooth", CASES, ids=IDS)
def test_each_kernel_matches_the_reference_bit_for_bit(kernel, make, smooth, threads):
    args = make(inputs(np.random.default_rng(1)))
    same(kernel(*args), kernel.reference(*args))


def test_a_scatter_in_a_loop_keeps_every_turn():
    x = np.random.default_rng(4).uniform(0.0, 2.0, N)
    h = np.full(12, np.nan)
    histogram(x, h)
    want = np.zeros(12)
    for j in range(3):
        np.add.at(want, np.clip((x * 4.0).astype(np.int32) + j, 0, 11), x * (j + 1))
    np.testing.assert_allclose(h, want, rtol=1e-12)
    again = np.full(12, np.nan)
    histogram.reference(x, again)
    assert again.tobytes() == h.tobytes()


def test_a_table_gradient_through_a_loop_of_a_count_known_when_it_runs_is_refused():
    x, t = np.ones(8), np.ones(8)
    assert np.array_equal(counted_stencil(x, t, 3), counted_stencil.reference(x, t, 3))
    with pytest.raises(ValueError, match=r"counted_stencil.vjp: the gradient of a Table read in a loop: "
                                         r"its loop runs a value known only when it runs"):
        counted_stencil.vjp(x, t, 3, np.ones(8))
    grads = counted_stencil.vjp_of(wrt=("x",))(x, t, 3, np.ones(8))  # the other inputs' gradients
    np.testing.assert_allclose(grads["x"], np.full(8, 0.125))


def test_the_forms_compute_what_they_say():
    d = inputs(np.random.default_rng(2), 64)
    b, lift = d["body"], d["vectors"]
    want = b.mass * 9.81 + np.sum((b.pos + np.cross(lift, b.pos, axis=0) * 0.25) * lift, axis=0) \
        + b.mass * np.sum((lift * 0.5) ** 2, axis=0) + np.sum(b.pos * lift * 0.5, axis=0)
    np.testing.assert_allclose(weighed(b, lift), want, rtol=1e-12)
    out = settled(d["vectors"], d["scalars"])
    assert list(out) == ["pos", "mass"] and out["pos"].shape == (3, 64)
    assert np.all(np.linalg.norm(shrink(d["big"]), axis=0) <= 1.0 + 1e-12)
    i, t, x = d["indices"], d["small"], d["scalars"]
    inside = (i >= 0) & (i < 64)
    want = np.where(inside & (t[np.clip(i, 0, 63)] > 0.0), x * 2.0, x)
    np.testing.assert_array_equal(guarded(i, t, x), want)
    drawn = noisy(np.zeros(64), 7)
    assert len(np.unique(drawn)) == 64 and np.array_equal(drawn, noisy(np.zeros(64), 7))


@pytest.mark.parametrize("kernel, make, smooth", CASES, ids=IDS)
def test_planned_and_in_a_builder_graph(kernel, make, smooth):
    args = make(inputs(np.random.default_rng(3)))
    want = kernel(*args)
    if not isinstance(args[0], Body) and kernel is not settled:  # a struct is spread by the call
        bound = kernel.plan(*args)
        eagle.Graph().add(bound, name="k").build().launch(2)
        same(list(bound.outputs), [want])

    @eagle.Graph.builder
    def graph(*xs):
        g = eagle.Graph()
        g.result = kernel(*xs)
        return g

    same(graph(*args)(), want)


def chained(rng):
    d = inputs(rng)
    first = orbit.plan(d["vectors"], 3)
    second = shrink.plan(first.outputs[0])
    third = flipped.plan(second.outputs[0], d["scalars"])
    fourth = noisy.plan(d["scalars"], 5)
    fifth = stencil.plan(fourth.outputs[0], d["table"])
    return [first, second, third, fourth, fifth], [first.outputs[0], second.outputs[0]], \
        [*third.outputs, *fifth.outputs]


def test_the_forms_fuse_with_the_unfused_bits(threads):
    want, unfused = fused_graphs.replay(chained, False)
    got, g = fused_graphs.replay(chained, True)
    assert unfused.fused == [] and g.fused
    fused_graphs.same_bytes(got, want)


@pytest.mark.parametrize("kernel, make, smooth", [c for c in CASES if c[2] and c[0] is not weighed],
                         ids=[c[0].__name__ for c in CASES if c[2] and c[0] is not weighed])
def test_gradients_agree_with_central_differences(kernel, make, smooth):
    rng = np.random.default_rng(5)
    derivatives.check(kernel, make(inputs(rng, 300)), rng)


def test_eagle_diff_reverses_a_builder_graph_of_the_forms_together():
    """A recorded builder graph of a vector loop through a helper, a vector reduction and a
    stencil through a Table in a loop: eagle.diff.reverse against central differences of the
    whole graph, for the vectors and for the Table."""
    rng = np.random.default_rng(7)
    x, t = rng.standard_normal((3, 200)), rng.standard_normal(200)

    @eagle.Graph.builder
    def model(x, t, record=False):
        g = eagle.Graph(record=record)
        v = orbit(x, 3)
        g.result = stencil(hawk_length(v), t)
        return g

    g = model(x, t, record=True)
    g()
    seed = rng.standard_normal(200)
    grads = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x", "t"))
    for name, arg in (("x", x), ("t", t)):
        direction = rng.standard_normal(arg.shape)
        eps = 1e-6
        up = {"x": x, "t": t, name: arg + eps * direction}
        down = {"x": x, "t": t, name: arg - eps * direction}
        fd = float(np.sum((model(**up)() - model(**down)()) * seed)) / (2 * eps)
        np.testing.assert_allclose(float(np.sum(grads[name] * direction)), fd, rtol=1e-6)


@hawk.kernel
def hawk_length(v: hawk.vec3) -> Scalar:
    return hawk.length(v)
