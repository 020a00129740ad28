"""Control flow in kernels: helpers, loops, break/continue, early return, short-circuit and/or.

Each form is held to plain Python run sample by sample, to the NumPy reference evaluator (bit for
bit), planned and in a builder graph, fused in a built graph (the unfused bits), and its
derivatives to central differences (tests/gpu/test_flow_gpu.py runs them on the GPU emulation).
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle import extend
from hawk import Int32, Mutable, Param, Scalar
from hawk import math as hm
from hawk.ir import If, Loop, walk

N = 1500  # two blocks


# other test modules of this folder, for their helpers (the tests run in importlib mode)
derivatives, fused_graphs = (SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name(f"{name}.py"))))
                             for name in ("test_derivatives", "test_fused_graphs"))

GROWTH = 1.1


@hawk.func
def grow(v: Scalar) -> Scalar:
    return v * GROWTH + 0.05


@hawk.func
def clamped_growth(v: Scalar, lim: Param) -> Scalar:
    """A helper with an early return, a loop and another helper inside."""
    if v > lim:
        return lim * 0.5
    for _ in range(3):
        v = grow(v)
    return v


@hawk.kernel
def polynomial(x: Scalar, a: Param, k: Param[Int32]) -> Scalar:
    acc = 1.0
    for i in range(k):
        acc = acc * x + a * i
    return acc


@hawk.kernel
def walker(x: Scalar, y: Scalar) -> Scalar:
    s = y
    for i in range(2, 14, 1):
        if s > 4.0 + x:
            break
        if i % 3 == 1:
            continue
        s = s * 1.1 + hm.sin(x * s)
    return s * x


@hawk.kernel
def early(x: Scalar, y: Scalar) -> Scalar:
    if x < 0.0:
        return -x * y
    for _ in range(5):
        if x > 3.0:
            return x * y
        x = x * 1.3 + 0.2
    return x


@hawk.kernel
def newton(a: Scalar) -> Scalar:
    r = a
    while hawk.capped(abs(r * r - a) > 1e-12 * a, 60):
        r = 0.5 * (r + a / r)
    return r


@hawk.kernel
def nested(x: Scalar, n: Param[Int32]) -> Scalar:
    total = 0.0
    for i in range(n):
        for j in range(i, 0, -1):
            if j == 2:
                continue
            total = total + x / (1.0 + i + j)
    return total


@hawk.kernel
def helped(x: Scalar, lim: Param) -> Scalar:
    return clamped_growth(x, lim) + grow(x)


@hawk.kernel
def guarded(x: Scalar, y: Scalar):
    return (x > 0.0 and y / x > 1.0) or y < -1.0, hm.where(x != 0.0 and hm.log(abs(x)) > 0.0, x, y)


@hawk.kernel
def mixed(x: Scalar, p: Param) -> Scalar:
    """A loop carrying a value the same for every sample (q) beside one per sample (y)."""
    q = p
    y = x
    for _ in range(3):
        q = q * 0.9 + 0.1 * hm.sin(q)
        y = y * q + 0.1
    return y * q


@hawk.kernel
def settled(x: Scalar, m: Mutable[Scalar], p: Param) -> Param:
    """A Mutable carried by a loop, and a one-cell result a loop computes after a reduction."""
    for i in range(2):
        m = m * 0.5 + x * i
    q = p * hawk.sum(x) / 1500.0
    for _ in range(3):
        q = q * 0.5 + hm.sin(q)
    return q


@hawk.kernel
def bounded(x: Scalar, y: Scalar) -> Scalar:
    """Loops whose counts differ per sample, each under its cap."""
    acc = y
    for i in hawk.capped_range(hawk.sample() % 5, 4):
        acc = acc * 0.8 + hm.sin(x * i)
    for j in hawk.capped_range(1, hawk.sample() % 7, 3):
        acc = acc + x * j
    return acc


@hawk.func
def polar(x: Scalar, y: Scalar) -> tuple[Scalar, Scalar]:
    """Two results, from either of two returns."""
    if x < 0.0:
        return -x, y
    return hm.hypot(x, y), hm.atan2(y, x)


@hawk.struct
class Spin:
    axis: hawk.vec3
    rate: Scalar


@hawk.func
def spun(r: Scalar, t: Scalar) -> Spin:
    return Spin(axis=hawk.vec3(r, t, 1.0), rate=r * t)


@hawk.func
def spun_and_rest(r: Scalar):
    """A struct and a vector, unannotated, from a helper that unpacks another's."""
    a, b = polar(r, 0.5)
    return spun(a, b), hawk.vec3(r, b, 2.0)


@hawk.kernel
def unpacked(x: Scalar, y: Scalar) -> Scalar:
    r, t = polar(x, y)
    s, v = spun_and_rest(t)
    w = spun(r, t)
    return s.rate * r + hawk.dot(s.axis, v) + hawk.length_sq(w.axis) * w.rate


def python_unpacked(x, y):
    def polar(x, y):
        return (-x, y) if x < 0 else (np.hypot(x, y), np.arctan2(y, x))
    r, t = polar(x, y)
    a, b = polar(t, 0.5)
    s_axis, s_rate, v = np.array([a, b, 1.0]), a * b, np.array([t, b, 2.0])
    w_axis, w_rate = np.array([r, t, 1.0]), r * t
    return s_rate * r + s_axis @ v + (w_axis @ w_axis) * w_rate


@hawk.func
def turned(a: Scalar, b: Scalar):
    return 0.8 * a - 0.6 * b, 0.6 * a + 0.8 * b


@hawk.kernel
def swapped(x: Scalar, y: Scalar) -> Scalar:
    for _ in range(3):
        x, y = turned(x, y)  # the parameters carried by the loop, through a helper's tuple
        x, y = y, x + 0.25 * y  # every value computed before any name is assigned, as in Python
    return x * 2.0 + y


def python_swapped(x, y):
    for _ in range(3):
        x, y = 0.8 * x - 0.6 * y, 0.6 * x + 0.8 * y
        x, y = y, x + 0.25 * y
    return x * 2.0 + y


@hawk.kernel
def rescale(v: Scalar) -> Scalar:
    return v * 0.25 + 1.0


def python_mixed(x, p):
    q, y = p, x
    for _ in range(3):
        q = q * 0.9 + 0.1 * np.sin(q)
        y = y * q + 0.1
    return y * q


def python_helped(x, lim):
    v = x
    if v > lim:
        v = lim * 0.5
    else:
        for _ in range(3):
            v = v * GROWTH + 0.05
    return v + (x * GROWTH + 0.05)


def inputs(rng: np.random.Generator, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    return rng.uniform(-1.0, 4.0, n), rng.uniform(0.5, 2.0, n)


#: (kernel, its arguments from the inputs, plain Python over one sample or None)
CASES = [
    (polynomial, lambda x, y: (x, 0.7, 4), lambda x, a, k: ((((x + 0) * x + a) * x + 2 * a) * x + 3 * a)),
    (walker, lambda x, y: (x, y), walker.__wrapped__),  # the kernel's own function, as plain Python
    (early, lambda x, y: (x, y), early.__wrapped__),
    (newton, lambda x, y: (y * 4.0,), None),
    (nested, lambda x, y: (x, 5), None),
    (helped, lambda x, y: (x, 1.5), python_helped),
    (mixed, lambda x, y: (x, 0.7), python_mixed),
    (settled, lambda x, y: (x, y.copy(), 0.7), None),
    (bounded, lambda x, y: (x, y), None),
    (unpacked, lambda x, y: (x, y), python_unpacked),
    (swapped, lambda x, y: (x, y), python_swapped),
    (guarded, lambda x, y: (x - 1.0, y - 1.5), None),
]
IDS = [k.__name__ for k, _, _ in CASES]


def same(a, b) -> None:
    for u, v in zip(extend.flatten(a), extend.flatten(b), strict=True):
        assert u.dtype == v.dtype and u.tobytes() == v.tobytes()


@pytest.mark.parametrize("kernel, make, python", CASES, ids=IDS)
def test_each_form_matches_python_and_the_reference_bit_for_bit(kernel, make, python, threads):
    args = make(*inputs(np.random.default_rng(3)))
    got = kernel(*args)
    same(got, kernel.reference(*args))
    if python is not None:
        want = [python(*(a[s] if isinstance(a, np.ndarray) else a for a in args)) for s in range(N)]
        np.testing.assert_allclose(got, want, rtol=1e-12)


@hawk.kernel
def counted_by_a_cell(x: Scalar, n: Int32, cap: Param[Int32]) -> Scalar:
    for _ in range(n):
        x = x * 2.0
    while hawk.capped(x > 1.0, cap):
        x = x - 1.0
    return x


def test_counts_from_a_cell_and_a_param():
    x = np.array([0.125, 0.25, 1.0])
    np.testing.assert_array_equal(counted_by_a_cell(x, np.array([3], np.int32), 2), [1.0, 1.0, 6.0])
    np.testing.assert_array_equal(counted_by_a_cell(x, np.array([0], np.int32), 5), [0.125, 0.25, 1.0])
    with pytest.raises(hawk.KernelSyntaxError, match="the bounds of range") as info:  # a plane: at the call
        counted_by_a_cell(x, np.array([3, 1, 2], np.int32), 2)
    assert info.value.lineno == counted_by_a_cell.__wrapped__.__code__.co_firstlineno + 2  # (the decorator)


def test_a_loop_stops_per_sample_and_newton_converges():
    a = np.array([0.25, 2.0, 9.0, 1e6])
    np.testing.assert_allclose(newton(a), np.sqrt(a), rtol=1e-12)
    assert any(isinstance(s, Loop) for s in newton.ir(a).body)
    assert polynomial(np.array([2.0]), 1.0, 0)[0] == 1.0  # no turn
    assert polynomial(np.array([2.0]), 1.0, -3)[0] == 1.0


@hawk.kernel
def counted_per_sample(x: Scalar, n: Int32, cap: Param[Int32]) -> Scalar:
    total = 0.0
    for i in hawk.capped_range(n, cap):
        total = total + x ** i
    return total


def test_a_capped_range_runs_each_samples_count_up_to_the_cap():
    x, n = np.array([0.5, 2.0, 3.0, 1.5]), np.array([0, 2, 9, -1], np.int32)
    want = [sum(x[s] ** i for i in hawk.capped_range(int(n[s]), 5)) for s in range(4)]
    np.testing.assert_array_equal(counted_per_sample(x, n, 5), want)
    same(counted_per_sample(x, n, 5), counted_per_sample.reference(x, n, 5))
    grads = counted_per_sample.vjp(x, n, 5, np.ones(4))
    np.testing.assert_allclose(grads["x"], [sum(i * x[s] ** (i - 1) for i in range(1, min(max(n[s], 0), 5)))
                                            for s in range(4)], rtol=1e-12)
    assert list(hawk.capped_range(4, 2)) == [0, 1] and list(hawk.capped_range(3, 1, 5)) == []


@pytest.mark.parametrize("kernel, make, python", CASES, ids=IDS)
def test_planned_and_in_a_builder_graph(kernel, make, python):
    args = make(*inputs(np.random.default_rng(4)))
    want = kernel(*args)
    bound = kernel.plan(*args)
    eagle.Graph().add(bound, name="k").build().launch(2)
    same(list(bound.outputs), want)

    @eagle.Graph.builder
    def graph(*xs):
        g = eagle.Graph()
        g.result = kernel(*xs)
        return g

    same(graph(*args)(), want)


def chained(rng):
    x, y = inputs(rng)
    first = walker.plan(x, y)
    second = early.plan(first.outputs[0], y)
    third = helped.plan(second.outputs[0], 1.5)
    fourth = nested.plan(third.outputs[0], 4)
    return [first, second, third, fourth], [first.outputs[0], second.outputs[0]], [*third.outputs,
                                                                                  *fourth.outputs]


def chained_gaps(rng):
    """Loops of per-sample counts (hawk.capped_range), then helpers' tuples and structs."""
    x, y = inputs(rng)
    first = bounded.plan(x, y)
    second = unpacked.plan(first.outputs[0], y)
    third = bounded.plan(second.outputs[0], x)
    return [first, second, third], [first.outputs[0], second.outputs[0]], [*third.outputs]


@pytest.mark.parametrize("chain", [chained, chained_gaps], ids=["chained", "gaps"])
def test_loops_and_helpers_fuse_with_the_unfused_bits(chain, threads, monkeypatch):
    for interleave in (False, True):
        if interleave:  # every sample loop interleaved, as a long fused run is
            monkeypatch.setattr(hawk.emit, "INTERLEAVED_FROM", 0)
        want, unfused = fused_graphs.replay(chain, False)
        got, g = fused_graphs.replay(chain, True)
        assert unfused.fused == [] and g.fused
        fused_graphs.same_bytes(got, want)


@pytest.mark.parametrize("kernel, make, python", CASES[:-1], ids=IDS[:-1])
def test_gradients_agree_with_central_differences(kernel, make, python):
    rng = np.random.default_rng(5)
    x, y = inputs(rng, 300)
    derivatives.check(kernel, make(x, y), rng)


# walker jumps where a sample breaks; settled returns one cell
SMOOTH = [case for case in CASES[:-1] if case[0] not in (walker, settled)]


@pytest.mark.parametrize("kernel, make, python", SMOOTH, ids=[k.__name__ for k, _, _ in SMOOTH])
def test_eagle_diff_reverses_a_builder_graph_of_each_form(kernel, make, python):
    """In a recorded builder graph, twice (a chain through the kernel): eagle.diff.reverse against
    central differences of the whole graph."""
    first, *rest = make(*inputs(np.random.default_rng(6), 200))

    @eagle.Graph.builder
    def model(x, record=False):
        g = eagle.Graph(record=record)
        g.result = kernel(rescale(kernel(x, *rest)), *rest)
        return g

    g = model(first, record=True)
    g()
    seed = np.linspace(-1.0, 1.0, first.size)
    grad = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))["x"]
    eps = 1e-7
    fd = (model(first + eps)() - model(first - eps)()) / (2 * eps) * seed
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_a_per_sample_trip_count_is_reversed_exactly():
    """Each sample stops at its own turn: the gradient of x**m, m the turns it took."""
    x = np.array([1.5, 2.5, 3.5, 5.0])
    grads = walker.vjp(x, np.full(4, 0.75), np.ones(4))
    eps = 1e-8  # the last sample's s * x swings fast
    fd = (walker(x + eps, np.full(4, 0.75)) - walker(x - eps, np.full(4, 0.75))) / (2 * eps)
    np.testing.assert_allclose(grads["x"], fd, rtol=1e-6)


def test_short_circuit_evaluates_the_later_operand_only_where_it_decides():
    ir = guarded.ir(np.ones(3), np.ones(3))
    ifs = [s for s in walk(ir.body) if isinstance(s, If)]
    assert any(any(getattr(t, "op", "") == "div" for t in walk(s.then)) for s in ifs)  # y / x: where x > 0
    assert any(any(getattr(t, "op", "") == "log" for t in walk(s.then)) for s in ifs)
    x, y = np.array([0.0, 2.0, -3.0, 0.5]), np.array([5.0, 3.0, -2.0, 0.1])
    first, second = guarded(x, y)
    np.testing.assert_array_equal(first, ((x > 0) & (y / np.where(x > 0, x, 1) > 1)) | (y < -1))
    np.testing.assert_array_equal(second, [5.0, 2.0, -3.0, 0.1])


def make_scaled(scale: float) -> hawk.Kernel:
    @hawk.func
    def scaled(v: Scalar) -> Scalar:
        return v * scale

    @hawk.kernel
    def apply(x: Scalar) -> Scalar:
        return scaled(x) + 1.0

    return apply


def test_a_kernels_code_changes_with_the_helper_it_inlines():
    x = np.array([1.0, 2.0])
    two, three = make_scaled(2.0), make_scaled(3.0)
    np.testing.assert_array_equal(two(x), [3.0, 5.0])
    np.testing.assert_array_equal(three(x), [4.0, 7.0])
    assert two.c_source(x) != three.c_source(x)
    assert "hk_scaled" not in two.c_source(x)  # inlined: no function of its own


def test_a_helper_returns_a_value_a_tuple_or_a_struct():
    with pytest.raises(hawk.KernelSyntaxError, match=r"as_dict: a helper returns a value, a tuple of "
                                                     r"values or a @hawk\.struct, not a list or dict"):
        hawk.kernel(calls_as_dict)
    assert polar(-2.0, 1.0) == (2.0, 1.0)  # outside a kernel, the plain function


def test_a_helper_is_a_plain_function_outside_a_kernel():
    assert grow(1.0) == pytest.approx(1.15)
    assert isinstance(grow, hawk.Func)


# ----------------------------------------------------------------- refusals


def uncapped(x: Scalar) -> Scalar:
    while x > 1.0:  # mark:uncapped
        x = x / 2.0
    return x


def loop_else(x: Scalar) -> Scalar:
    for _ in range(3):  # mark:else
        x = x + 1.0
    else:
        x = 0.0
    return x


def changes_type(x: Scalar, k: Int32) -> Scalar:
    n = k
    for _ in range(3):  # mark:changes
        n = n * 0.5
    return x * n


def body_local(x: Scalar) -> Scalar:
    for _ in range(3):
        t = x * 2.0
    return t  # mark:local


def two_types(x: Scalar, k: Int32):
    if x > 0.0:
        return k
    return x  # mark:types


def falls_off(x: Scalar) -> Scalar:
    if x > 0.0:
        return x
    x = -x  # mark:falls


def float_step(x: Scalar) -> Scalar:
    for _ in range(0, 3, 0):  # mark:step
        x = x + 1.0
    return x


@hawk.func
def ping(v: Scalar) -> Scalar:
    return pong(v) + 1.0


@hawk.func
def pong(v: Scalar) -> Scalar:
    return ping(v) * 2.0  # mark:cycle


def recursive(x: Scalar) -> Scalar:
    return ping(x)


@hawk.func
def broken_helper(v: Scalar) -> Scalar:
    return v & 1  # mark:helper


def calls_broken(x: Scalar) -> Scalar:
    return broken_helper(x) * 2.0  # mark:caller


def per_sample_param(x: Scalar) -> Scalar:
    return clamped_growth(x, x)  # mark:param


def tuple_in_an_expression(x: Scalar) -> Scalar:
    return polar(x, x) * 2.0  # mark:tuple


def too_many_names(x: Scalar) -> Scalar:
    a, b, c = polar(x, x)  # mark:names
    return a + b + c


@hawk.func
def as_dict(v: Scalar):
    return {"v": v}


def calls_as_dict(x: Scalar) -> Scalar:
    return as_dict(x)


def per_sample_range(x: Scalar) -> Scalar:
    for _ in range(hawk.sample()):  # mark:range
        x = x + 1.0
    return x


def per_sample_cap(x: Scalar) -> Scalar:
    for _ in hawk.capped_range(3, hawk.sample()):  # mark:cap
        x = x + 1.0
    return x


def float_bound(x: Scalar) -> Scalar:
    for _ in hawk.capped_range(x, 3):  # mark:bound
        x = x + 1.0
    return x


REFUSED = [
    (uncapped, "uncapped", "hawk.kernel: uncapped: a `while` in a kernel states its cap: write `while "
                           "hawk.capped(cond, 100):`"),
    (loop_else, "else", "`else` on a loop is not in hawk; set a flag where the loop breaks"),
    (changes_type, "changes", "the loop changes 'n' from i32 to f64: a local carried from turn to turn keeps "
                              "one type"),
    (body_local, "local", "'t' may be unassigned here: it is assigned in the body of the loop at line"),
    (two_types, "types", "this return gives a f64 value but the return at line"),
    (falls_off, "falls", "some samples reach the end without a return"),
    (float_step, "step", "the step of range(a, b, step) is a nonzero integer"),
    (recursive, "cycle", "hawk.func: pong: ping -> pong -> ping: a helper may not call itself"),
    (calls_broken, "helper", "hawk.func: broken_helper: the operator BitAnd is not in hawk"),
    (per_sample_param, "param", "parameter 'lim' of clamped_growth is annotated Param (one value for all "
                                "samples) but is given a value that differs per sample"),
    (float_bound, "bound", "the bounds of hawk.capped_range(n, cap) are integers"),
    (tuple_in_an_expression, "tuple", "polar returns 2 values: unpack them on a line of their own, `a, b = "
                                      "polar(...)`"),
    (too_many_names, "names", "3 names are assigned 2 values; write as many names as the helper returns"),
]


def line_of(mark: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(f"# mark:{mark}"))


@pytest.mark.parametrize("fn, mark, message", [
    (per_sample_range, "range", "for a per-sample count, state a cap: `for i in hawk.capped_range(n, cap):`"),
    (per_sample_cap, "cap", "the cap of hawk.capped_range(n, cap) must be integers the same for every "
                            "sample")])
def test_a_per_sample_count_is_refused_at_the_call_naming_capped_range(fn, mark, message):
    kernel = hawk.kernel(fn)  # at decoration no plane's shape is known
    with pytest.raises(hawk.KernelSyntaxError) as info:
        kernel(np.ones(3))
    assert message in str(info.value) and info.value.lineno == line_of(mark)


@pytest.mark.parametrize("fn, mark, message", REFUSED, ids=[m for _, m, _ in REFUSED])
def test_refusals_name_the_line_and_the_fix(fn, mark, message):
    with pytest.raises(hawk.KernelSyntaxError) as info:
        hawk.kernel(fn)
    err = info.value
    assert message in str(err)
    assert err.filename == __file__
    assert err.lineno == line_of(mark)
    if mark in ("helper", "cycle"):  # the helper's line, and where the kernel called it
        assert f"(called from {fn.__name__} at {__file__}:" in str(err)
    if mark == "helper":
        assert f"{__file__}:{line_of('caller')})" in str(err)
