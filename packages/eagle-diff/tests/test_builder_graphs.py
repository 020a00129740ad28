"""Gradients of builder graphs against central finite differences (relative 1e-6).

Every form a builder records: forks with waits, capped device loops with
data-dependent exits (break at the top, mid-body break, continue), counted
and nested loops, if/elif/else and match on cells, arguments written in
place, Params, buffers, result trees.  Data stay away from the thresholds,
so a small step never changes which arm runs or how many turns a loop takes.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def half(x: Scalar) -> Scalar:
    return 0.5 * x


@hawk.kernel
def shrink(x: Scalar) -> Scalar:
    return 0.1 * x


@hawk.kernel
def add(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


@hawk.kernel
def soft(x: Scalar) -> Scalar:
    return x + 0.1 * hm.sin(x)


@hawk.kernel
def grow(x: Scalar) -> Scalar:
    return 1.5 * x + 0.1 * hm.sin(x)


@hawk.kernel
def wave(v: Scalar) -> Scalar:
    return hm.sin(v) * v


@hawk.kernel
def merge(s: Scalar, t: Scalar) -> Scalar:
    return s - t


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def blend(s: Scalar, y: Mutable[Scalar]) -> None:
    y = 0.5 * y + s * s


@hawk.kernel
def accumulate(s: Scalar, r: Scalar, u: Scalar, y: Mutable[Scalar]) -> None:
    y = s + r * u


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@hawk.kernel
def over(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s > lim))


@hawk.kernel
def rotate(p: Scalar, a: Param) -> tuple[Scalar, Scalar]:
    return p[0] * hm.cos(a) - p[1] * hm.sin(a), p[0] * hm.sin(a) + p[1] * hm.cos(a)


@hawk.kernel
def pull(p: Scalar, q: Mutable[Scalar]) -> None:
    q[0] = q[0] + p[0] * p[1]
    q[1] = q[1] * p[0]


def cell(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint32)


def ramp(lo: float, hi: float, n: int = 6) -> np.ndarray:
    return np.linspace(lo, hi, n)


# ------------------------------------------------------------ forks and waits


@eagle.Graph.builder
def twice(g: eagle.Graph, v):
    return square(square(v))


@eagle.Graph.builder
def settle(g: eagle.Graph, s, l, flag):  # noqa: E741
    for _ in range(50):
        if not flag:
            break
        s = merge(s, square(l))  # one buffer, in place; the square is loop-local
        over(s, 1.0, flag)
    return s


@eagle.Graph.builder
def forked(x, flag, y, record=False):
    g = eagle.Graph(record=record)
    a = half(x)
    with g.parallel() as p:
        with p.branch() as b:
            l = inc(a)  # noqa: E741
            l2 = shrink(l)
        with p.branch() as w:
            w.wait(l)
            r = soft(l)
        with p.branch() as c:
            r2 = twice(c, a)
            with c.parallel() as q:
                with q.branch() as b1:
                    u = soft(r2)
                with q.branch() as b2:
                    v = dbl(r2)
    s = settle(g, x, l2, flag)  # x seeds the loop's state: the graph's own copy of it
    accumulate(s, r, u, y)
    g.result = {"s": s, "v": v}
    return g


def test_forks_waits_and_a_loop_of_many_turns(gradcheck):
    x, y = ramp(1.2, 1.95), ramp(-0.5, 0.5)
    recorded = forked(x.copy(), cell(1), y.copy(), record=True)
    recorded()
    assert 5 < recorded.record._forward.tapes[0].turns < 50  # the loop ran many turns and left early
    seeds = {"result": {"s": ramp(1.0, 2.0), "v": ramp(0.5, -0.5)}, "y": ramp(0.3, 0.9)}
    gradcheck(forked, {"x": x, "flag": cell(1), "y": y}, seeds, ("x", "y"))


def test_a_loop_that_runs_no_turn(gradcheck):
    x, y = ramp(0.1, 0.9), ramp(-0.5, 0.5)  # every sample already below the limit
    gradcheck(forked, {"x": x, "flag": cell(0), "y": y}, {"result": {"s": np.ones(6), "v": np.ones(6)}},
              ("x",))


# ------------------------------------------------------------------ loops


@eagle.Graph.builder
def capped(x, flag, record=False):
    g = eagle.Graph(record=record)
    for _ in range(50):
        if not flag:
            break
        x = grow(x)
        below(x, 100.0, flag)
    g.result = x
    return g


@eagle.Graph.builder
def early_exit(x, flag, done, record=False):
    g = eagle.Graph(record=record)
    for _ in range(20):
        if not flag:
            break
        x = inc(x)
        over(x, 5.5, done)
        if done:
            break  # mid-body break: the rest of the turn is skipped, the loop left
        x = square(x)
        below(x, 50.0, flag)
    g.result = x
    return g


@eagle.Graph.builder
def skipping(x, flag, skip, record=False):
    g = eagle.Graph(record=record)
    for _ in range(30):
        if not flag:
            break
        x = grow(inc(x))
        below(x, 60.0, flag)
        over(x, 25.0, skip)
        if skip:
            continue  # the rest of this turn only
        x = dbl(x)
    g.result = x
    return g


@eagle.Graph.builder
def counted(x, n, record=False):
    g = eagle.Graph(record=record)
    for _ in range(n):
        x = grow(inc(x))
    g.result = x
    return g


@eagle.Graph.builder
def nested(x, n, flag, record=False):
    g = eagle.Graph(record=record)
    for _ in range(10):
        if not flag:
            break
        for _ in range(n):  # a counted loop in each turn of a capped one
            x = grow(x)
        if flag:
            x = soft(x)
        below(x, 30.0, flag)
    g.result = x
    return g


@eagle.Graph.builder
def loop_in_an_arm(x, c, flag, record=False):
    g = eagle.Graph(record=record)
    if c:  # a loop inside an arm, an if inside the loop
        for _ in range(20):
            if not flag:
                break
            x = grow(x)
            if flag:
                x = soft(soft(x))
            below(x, 40.0, flag)
    else:
        x = soft(x)
    g.result = x
    return g


@pytest.mark.parametrize(("build", "arrays"), [
    (capped, {"x": ramp(0.5, 1.5, 5), "flag": cell(1)}),
    (early_exit, {"x": ramp(0.1, 0.4, 5), "flag": cell(1), "done": cell(0)}),
    (skipping, {"x": ramp(0.1, 0.3, 5), "flag": cell(1), "skip": cell(0)}),
    (counted, {"x": ramp(0.1, 0.3, 5), "n": cell(4)}),
    (counted, {"x": ramp(0.1, 0.3, 5), "n": cell(0)}),
    (nested, {"x": ramp(1.1, 1.3, 5), "n": cell(2), "flag": cell(1)}),
    (loop_in_an_arm, {"x": ramp(0.5, 1.5, 5), "c": cell(1), "flag": cell(1)}),
    (loop_in_an_arm, {"x": ramp(0.5, 1.5, 5), "c": cell(0), "flag": cell(1)}),
], ids=["capped", "mid-body-break", "continue", "counted", "counted-zero", "nested", "loop-in-an-arm",
        "other-arm"])
def test_device_loops(gradcheck, build, arrays):
    gradcheck(build, arrays, {"result": ramp(1.0, 2.0, 5)}, ("x",))


def test_a_loop_keeps_its_turns_up_to_the_cap_and_no_more():
    x = ramp(0.5, 1.5, 5)
    g = capped(x.copy(), cell(1), record=True)
    g()
    tape = g.record._forward.tapes[0]
    v, turns = x.copy(), 0
    while (v < 100.0).any():
        v, turns = 1.5 * v + 0.1 * np.sin(v), turns + 1
    assert tape.turns == turns == 13
    per_turn = x.nbytes + 4  # x and the guard cell are carried from turn to turn
    assert tape.nbytes == 16 * per_turn  # grown by doubling
    assert g.record.memory()["loops"] == tape.nbytes


# ------------------------------------------------------------ conditionals


@eagle.Graph.builder
def choose(x, flag, which, record=False):
    g = eagle.Graph(record=record)
    if flag:
        x = square(x)
    elif which:
        x = wave(x)
    else:
        x = add(x, x)
    g.result = inc(x)
    return g


@pytest.mark.parametrize(("flag", "which"), [(1, 0), (0, 1), (0, 0)])
def test_if_elif_else_reverses_the_arm_that_ran(gradcheck, flag, which):
    x = ramp(0.3, 1.7)
    grads = gradcheck(choose, {"x": x, "flag": cell(flag), "which": cell(which)}, {"result": np.ones(6)},
                      ("x",))
    expected = 2 * x if flag else (np.cos(x) * x + np.sin(x)) if which else np.full(6, 2.0)
    np.testing.assert_allclose(grads["x"], expected, rtol=1e-12)


@eagle.Graph.builder
def self_guarded(x, flag, record=False):
    g = eagle.Graph(record=record)
    if flag:
        x = square(x)
        below(x, -1.0, flag)  # the arm clears its own guard
    if flag:
        x = dbl(x)  # so this one never runs
    g.result = x
    return g


def test_an_arm_that_rewrites_its_cell_is_reversed_as_it_ran(gradcheck):
    grads = gradcheck(self_guarded, {"x": ramp(0.3, 1.7), "flag": cell(1)}, {"result": np.ones(6)}, ("x",))
    np.testing.assert_allclose(grads["x"], 2 * ramp(0.3, 1.7), rtol=1e-12)


@eagle.Graph.builder
def chooser(x, sel, record=False):
    g = eagle.Graph(record=record)
    match sel:
        case 0:
            x = dbl(x)
        case 2 | 3:
            x = wave(x)
        case _:
            x = square(x)
    g.result = x
    return g


@pytest.mark.parametrize("sel", [0, 2, 3, 5])
def test_match_reverses_the_case_that_ran(gradcheck, sel):
    gradcheck(chooser, {"x": ramp(0.1, 0.3, 5), "sel": cell(sel)}, {"result": np.ones(5)}, ("x",))


# --------------------------------------------------- arguments, Params, buffers


@eagle.Graph.builder
def written(x, y, a, record=False):
    g = eagle.Graph(record=record)
    s = affine(x, a, 0.5, buffer=True)
    blend(s, y)  # y: an argument written in place
    g.result = wave(s)
    return g


def test_an_argument_written_in_place_is_seeded_and_differentiated(gradcheck):
    arrays = {"x": ramp(0.1, 0.9), "y": ramp(-1.0, 1.0)}
    grads = gradcheck(written, arrays, {"y": ramp(0.5, 1.5), "result": np.ones(6)}, ("x", "y", "s"), a=1.5)
    np.testing.assert_allclose(grads["y"], 0.5 * ramp(0.5, 1.5), rtol=1e-12)  # y's value before the run


def test_seeding_or_differentiating_a_buffer(gradcheck):
    arrays = {"x": ramp(0.1, 0.9), "y": ramp(-1.0, 1.0)}
    grads = gradcheck(written, arrays, {"s": np.ones(6)}, ("x", "s"), a=1.5)
    np.testing.assert_allclose(grads["x"], np.full(6, 1.5), rtol=1e-12)
    np.testing.assert_array_equal(grads["s"], np.ones(6))


@eagle.Graph.builder
def tree(x, record=False):
    g = eagle.Graph(record=record)
    v = affine(x, 2.0, 1.0)
    g.result = {"v": v, "sq": (square(v), [wave(v)])}
    return g


def test_a_result_tree_is_seeded_and_differentiated_as_a_tree(gradcheck):
    seeds = {"result": {"v": np.ones(6), "sq": (ramp(0.0, 1.0), [ramp(1.0, -1.0)])}}
    grads = gradcheck(tree, {"x": ramp(0.1, 0.9)}, seeds, ("x",))
    r = eagle.diff.reverse(_run(tree(ramp(0.1, 0.9), record=True)).record, seeds, wrt=("result",))
    assert list(r["result"]) == ["v", "sq"] and isinstance(r["result"]["sq"][1], list)
    np.testing.assert_array_equal(r["result"]["sq"][0], ramp(0.0, 1.0))
    assert grads["x"].shape == (6,)


@eagle.Graph.builder
def planes(p, q, record=False):
    g = eagle.Graph(record=record)
    u, v = rotate(p, 0.3)
    pull(p, q)
    g.result = (u, v)
    return g


def test_planes_of_several_values_per_sample(gradcheck):
    arrays = {"p": np.arange(1.0, 7.0).reshape(2, 3) / 7, "q": np.arange(6.0).reshape(2, 3) / 5 + 1}
    gradcheck(planes, arrays, {"result": (np.ones(3), ramp(0.0, 1.0, 3)), "q": np.ones((2, 3))}, ("p", "q"))


def _run(g: eagle.Graph) -> eagle.Graph:
    g()
    return g


# ------------------------------------------------------------ the contract


def test_the_reverse_pass_writes_nothing_the_user_sees():
    x, y = ramp(1.2, 1.95), ramp(-0.5, 0.5)
    g = forked(x, cell(1), y, record=True)
    g()
    before = ({k: v.copy() for k, v in g.result.items()}, x.copy(), y.copy())
    first = eagle.diff.reverse(g.record, {"result": {"s": np.ones(6), "v": np.ones(6)}}, wrt=("x", "y"))
    again = eagle.diff.reverse(g.record, {"result": {"s": np.ones(6), "v": np.ones(6)}}, wrt=("x", "y"))
    for k in ("s", "v"):
        np.testing.assert_array_equal(g.result[k], before[0][k])
    np.testing.assert_array_equal(x, before[1])
    np.testing.assert_array_equal(y, before[2])
    for k in ("x", "y"):
        np.testing.assert_array_equal(first[k], again[k])  # a pass can be run again: no state left
        assert first[k] is not again[k]


def test_the_record_describes_the_last_run():
    x, flag = ramp(0.5, 1.5, 5), cell(1)
    g = capped(x, flag, record=True)
    g()
    first = eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"]
    x[:], flag[0] = ramp(0.2, 0.6, 5), 1  # new values, more turns
    g.bind(x=x)  # the same array: bind lowers again, and the graph has a new Record
    g()
    second = eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"]
    assert not np.allclose(first, second)
    fresh = capped(x.copy(), cell(1), record=True)
    fresh()
    np.testing.assert_array_equal(second, eagle.diff.reverse(fresh.record, {"result": np.ones(5)},
                                                             wrt=("x",))["x"])


def test_float32_planes_get_float32_gradients():
    x64 = ramp(0.5, 1.5, 5)
    grads = {}
    for dtype in (np.float64, np.float32):
        g = capped(x64.astype(dtype), cell(1), record=True)
        g()
        grads[dtype] = eagle.diff.reverse(g.record, {"result": np.ones(5, dtype)}, wrt=("x",))["x"]
    assert grads[np.float32].dtype == np.float32
    np.testing.assert_allclose(grads[np.float32], grads[np.float64], rtol=1e-4)


@hawk.kernel
def constant(x: Scalar) -> Scalar:
    t = x  # read, but the value does not depend on it
    return 0.25


@hawk.kernel
def cube(x: Scalar) -> Scalar:
    return x * x * x


@hawk.kernel
def split_pair(x: Scalar, y: Scalar) -> tuple[Scalar, Scalar]:
    return hm.floor(x) + 0.5, x * y


def test_a_value_that_depends_on_no_input_cuts_the_path_without_nan():
    """x**27 overflows to inf; a kernel whose value ignores it gives a zero gradient (as JAX's
    symbolic zeros do), not the 0 * inf = NaN its vjp would make of a zero adjoint."""

    @eagle.Graph.builder
    def model(x, record=False):
        g = eagle.Graph(record=record)
        for _ in range(3):
            x = cube(x)
        g.result = constant(x)
        return g

    g = model(np.array([1e12, 0.5]), record=True)
    np.testing.assert_array_equal(g(), [0.25, 0.25])
    grads = eagle.diff.reverse(g.record, {"result": np.ones(2)}, wrt=("x",))
    np.testing.assert_array_equal(grads["x"], [0.0, 0.0])


def test_outputs_carry_only_the_inputs_they_depend_on():
    """floor(x) + 0.5 carries no derivative of x or y; with y overflowed upstream, the gradient
    through the first output alone is finite zeros, and through the second x's is y."""

    def model(pick):
        @eagle.Graph.builder
        def build(x, y, record=False):
            g = eagle.Graph(record=record)
            y = cube(cube(y))
            g.result = split_pair(x, y)[pick]
            return g
        return build

    x, y = np.array([1.5, 2.5]), np.array([1e40, 2.0])
    first = model(0)(x, y, record=True)
    np.testing.assert_array_equal(first(), [1.5, 2.5])
    grads = eagle.diff.reverse(first.record, {"result": np.ones(2)}, wrt=("x", "y"))
    np.testing.assert_array_equal(grads["x"], [0.0, 0.0])
    np.testing.assert_array_equal(grads["y"], [0.0, 0.0])
    second = model(1)(x, y, record=True)
    second()
    grads = eagle.diff.reverse(second.record, {"result": np.ones(2)}, wrt=("x",))
    np.testing.assert_array_equal(grads["x"], [np.inf, 2.0 ** 9])
