"""Each form of the builder on its own, nested, and against a NumPy reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eagle
import hawk
from eagle import _core
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def add(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@hawk.kernel
def total(x: Scalar) -> Scalar:
    return x * 0.0 + hawk.sum(x)  # not per-sample: merged by a copy


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@hawk.kernel
def over(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s > lim))


def cell(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint32)


X = np.arange(4.0)


# ------------------------------------------------------------- conditionals


@eagle.Graph.builder
def nested_ifs(x, a, b):
    g = eagle.Graph()
    if a:
        x = inc(x)
        if b:
            x = dbl(x)
        else:
            x = add(x, x)
            x = inc(x)
    g.result = x
    return g


@pytest.mark.parametrize("a, b", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_nested_device_ifs_take_the_arms_the_cells_say(a, b):
    ca, cb = cell(a), cell(b)
    g = nested_ifs(X, ca, cb)
    expected = X if not a else (2 * (X + 1) if b else 2 * (X + 1) + 1)
    np.testing.assert_array_equal(g(), expected)
    ca[0], cb[0] = 1 - a, 1 - b  # the same graph, other arms: cells are read per replay
    expected = X if a else (2 * (X + 1) if not b else 2 * (X + 1) + 1)
    np.testing.assert_array_equal(g(), expected)


def test_arguments_are_never_written_and_merges_are_in_place():
    x = X.copy()
    g = nested_ifs(x, cell(1), cell(1))
    g(3)
    np.testing.assert_array_equal(x, X)  # the graph keeps its own copy of x
    kinds = [n.kind for n in g._nodes]
    assert kinds == ["copy", "plan", "device_if"] or kinds == ["copy", "device_if"]
    # inc and dbl write the graph's copy in place: no copy node inside the arms
    arm_nodes = [n.kind for n in g._nodes[-1].payload.then.nodes()]
    assert "copy" not in arm_nodes


@eagle.Graph.builder
def not_per_sample(x, a):
    g = eagle.Graph()
    y = inc(x)
    if a:
        y = total(y)
    g.result = y
    return g


def test_a_kernel_that_is_not_per_sample_is_merged_by_a_copy():
    g = not_per_sample(X, cell(1))
    np.testing.assert_array_equal(g(), np.full(4, (X + 1).sum()))
    then = list(g._nodes[-1].payload.then.nodes())
    assert [n.kind for n in then] == ["plan", "copy"]


@eagle.Graph.builder
def switch(x, sel):
    g = eagle.Graph()
    match sel:
        case 0 | 1:
            x = inc(x)
        case 7:
            x = dbl(x)
        case _:
            pass
    g.result = x
    return g


def test_match_with_or_patterns_and_an_empty_default():
    sel = cell(0)
    g = switch(X, sel)
    for value, expected in ((0, X + 1), (1, X + 1), (7, 2 * X), (3, X)):
        sel[0] = value
        np.testing.assert_array_equal(g(), expected)


@eagle.Graph.builder
def python_match(x, mode):
    g = eagle.Graph()
    match mode:
        case 1:
            x = inc(x)
        case _:
            x = dbl(x)
    g.result = x
    return g


def test_a_python_subject_is_decided_while_recording():
    assert len(python_match(X, 1)._nodes) == 1
    np.testing.assert_array_equal(python_match(X, 1)(), X + 1)
    np.testing.assert_array_equal(python_match(X, 5)(), 2 * X)


# -------------------------------------------------------------------- loops


@eagle.Graph.builder
def counted_with_break(x, n, done):
    g = eagle.Graph()
    for _ in range(n):
        x = inc(x)
        over(x, 4.5, done)
        if done:
            break
        x = dbl(x)
    g.result = x
    return g


def test_a_counted_loop_with_a_break_stops_doing_work():
    # 0 -> 1 -> 2 -> 3 -> 6 -> 7 (done: 7 > 4.5 for all)
    np.testing.assert_array_equal(counted_with_break(np.zeros(4), cell(10), cell(0))(), np.full(4, 7.0))
    np.testing.assert_array_equal(counted_with_break(np.zeros(4), cell(1), cell(0))(), np.full(4, 2.0))


@eagle.Graph.builder
def capped_with_continue(x, flag, odd):
    g = eagle.Graph()
    for _ in range(20):
        if not flag:
            break
        x = inc(x)
        below(x, 9.0, flag)
        over(x, 3.5, odd)
        if odd:
            continue
        x = add(x, x)
    g.result = x
    return g


def reference_capped_with_continue(x):
    for _ in range(20):
        x = x + 1
        flag = (x < 9).sum()
        if (x > 3.5).sum():
            if not flag:
                break
            continue
        x = x + x
        if not flag:
            break
    return x


def test_capped_loop_with_continue_matches_python():
    x0 = np.zeros(4)
    np.testing.assert_array_equal(capped_with_continue(x0, cell(1), cell(0))(),
                                  reference_capped_with_continue(x0))


@eagle.Graph.builder
def break_when_set(x, done):
    g = eagle.Graph()
    for _ in range(30):
        if done:
            break
        x = dbl(x)
        over(x, 100.0, done)
    g.result = x
    return g


def test_a_capped_loop_that_breaks_when_the_cell_is_set():
    np.testing.assert_array_equal(break_when_set(np.ones(2), cell(0))(), [128.0, 128.0])


@eagle.Graph.builder
def python_loops(x, kernels, n):
    g = eagle.Graph()
    for k in kernels:  # unrolled
        x = k(x)
    for i in range(n):  # a Python range: unrolled too
        if i == 2:
            break
        x = inc(x)
    while n > 0:  # a Python while
        n -= 1
        if n % 2:
            continue
        x = dbl(x)
    g.result = x
    return g


def test_python_loops_unroll_with_python_break_and_continue():
    g = python_loops(X, (inc, dbl), 3)
    assert len(g._nodes) == 6  # inc, dbl; inc, inc (i = 0, 1); dbl, dbl (n = 2, 0)
    np.testing.assert_array_equal(g(), 4 * (2 * (X + 1) + 2))


@eagle.Graph.builder
def loop_in_a_branch(x, flag):
    g = eagle.Graph()
    a = inc(x)
    with g.parallel() as p:
        with p.branch() as b:
            for _ in range(50):
                if not flag:
                    break
                a = dbl(a)
                below(a, 40.0, flag)
        with p.branch() as c:
            d = add(x, x)
    g.result = (a, d)
    return g


def test_a_device_loop_inside_a_fork_branch(threads):
    a, d = loop_in_a_branch(X, cell(1))()
    np.testing.assert_array_equal(a, (X + 1) * 64)  # doubled until no sample is below 40
    np.testing.assert_array_equal(d, 2 * X)


def test_uncapped_while_warns_at_the_users_line():
    @eagle.Graph.builder
    def spin(x, flag):
        g = eagle.Graph()
        while flag:
            x = dbl(x)
            below(x, 10.0, flag)
        g.result = x
        return g

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = spin(np.ones(2), cell(1))
    assert str(caught[0].message).startswith("uncapped device loop at spin:4:")
    assert caught[0].category is eagle.builder.UncappedLoopWarning
    assert issubclass(caught[0].category, eagle.EagleWarning)
    assert caught[0].filename == __file__
    np.testing.assert_array_equal(g(), [16.0, 16.0])


# -------------------------------------------------------------------- forks


@eagle.Graph.builder
def waits(x):
    g = eagle.Graph()
    a = inc(x)
    with g.parallel() as p:
        with p.branch() as b:
            l1 = dbl(a)
            l2 = inc(l1)
        with p.branch() as w:
            w.wait(l1)
            r = add(l1, a)
        with p.branch() as v:
            s = dbl(x)
    g.result = (l2, r, s)
    return g


def test_waits_order_branches_and_the_fork_runs_as_tasks(threads):
    g = waits(X)
    if threads >= 2:
        assert g.schedule[1] == "branch_tasks"
    for _ in range(20):  # a wait that did nothing would let r read l1 before it is written
        l2, r, s = g()
        np.testing.assert_array_equal(r, 3 * (X + 1))
    np.testing.assert_array_equal(l2, 2 * (X + 1) + 1)
    np.testing.assert_array_equal(s, 2 * X)
    assert [n.kind for n in g._nodes].count("wait") == 1


def test_a_race_inside_a_nested_fork_is_refused():
    @eagle.Graph.builder
    def bad(x):
        g = eagle.Graph()
        a = dbl(x)
        with g.parallel() as p:
            with p.branch() as b:
                with b.parallel() as q:
                    with q.branch() as b1:
                        u = inc(a)
                    with q.branch() as b2:
                        v = add(u, a)
        g.result = v
        return g

    with pytest.raises(ValueError, match=r"two branches of one parallel region .* \[eagle\.Graph\.build: "
                                         r"'u' \(node 0\) and 'v' \(node 1\) are siblings"):
        bad(X)


# ----------------------------------------------------------------- refusals


def test_refusals_name_the_line_and_the_fix():
    @eagle.Graph.builder
    def combined(x, a, b):
        g = eagle.Graph()
        if a and b:
            x = inc(x)
        return g

    @eagle.Graph.builder
    def python_value(x, a):
        g = eagle.Graph()
        k = 1
        if a:
            k = 2
        return g

    @eagle.Graph.builder
    def device_break_in_python_loop(x, a):
        g = eagle.Graph()
        for _ in (1, 2, 3):
            x = inc(x)
            if a:
                break
        return g

    @eagle.Graph.builder
    def one_arm(x, a):
        g = eagle.Graph()
        if a:
            y = inc(x)
        g.result = dbl(y)
        return g

    with pytest.raises(TypeError, match="`and` of a device condition"):
        combined(X, cell(1), cell(1))
    with pytest.raises(TypeError, match=r"python_value:5: 'k' is set to a Python value inside a device if"):
        python_value(X, cell(1))
    with pytest.raises(SyntaxError, match="device_break_in_python_loop:6: a break or continue under a device "
                                          "condition needs a device loop around it; the loop at line 4"):
        device_break_in_python_loop(X, cell(1))
    with pytest.raises(NameError, match=r"dbl: 'y' is assigned in only one arm of the device construct at "
                                        r"one_arm:4"):
        one_arm(X, cell(1))
    with pytest.raises(TypeError, match="the condition is an array of 4 float64"):
        nested_ifs(X, X, cell(1))


def test_a_function_without_source_is_refused():
    scope = {"eagle": eagle}
    exec("def f(x):\n    g = eagle.Graph()\n    return g\n", scope)  # no file to read
    with pytest.raises(SyntaxError, match="its source is not available"):
        eagle.Graph.builder(scope["f"])


def test_errors_point_at_the_users_line():
    @eagle.Graph.builder
    def wrong(x):
        g = eagle.Graph()
        if True:
            y = inc(x, x)  # one argument too many: hawk says so, here
        return g

    with pytest.raises(TypeError) as info:
        wrong(X)
    frames = [(f.filename, f.lineno) for f in __import__("traceback").extract_tb(info.value.__traceback__)]
    assert (__file__, wrong.__wrapped__.__code__.co_firstlineno + 4) in frames


# ---------------------------------------------------------------- running


def test_bind_swaps_arrays_without_recording_again():
    g = nested_ifs(X, cell(1), cell(1))
    before = list(g._nodes)
    g.bind(x=X + 10.0)
    np.testing.assert_array_equal(g(), 2 * (X + 11))
    assert g._nodes == before
    with pytest.raises(TypeError, match="no parameter 'z'"):
        g.bind(z=X)


def test_replay_is_native(monkeypatch):
    """Device ifs, loops and switches replay with no Python callback."""
    from eagle._program import Program

    def no_python(self, fn):
        raise AssertionError("a Python callback in a builder graph of kernels")

    monkeypatch.setattr(Program, "callback", no_python)
    capped_with_continue(np.zeros(4), cell(1), cell(0))()
    switch(X, cell(7))()
    loop_in_a_branch(X, cell(1))()


def test_results_do_not_depend_on_the_thread_count():
    x = np.random.default_rng(0).standard_normal(10_000)
    before = _core.num_threads()
    runs = []
    try:
        for t in (1, 2):
            _core.set_num_threads(t)
            runs.append(capped_with_continue(x, cell(1), cell(0))())
    finally:
        _core.set_num_threads(before)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_print_runs_while_recording_once_per_arm(capsys):
    @eagle.Graph.builder
    def chatty(x, a):
        g = eagle.Graph()
        if a:
            print("then")
            x = inc(x)
        else:
            print("else")
        g.result = x
        return g

    g = chatty(X, cell(1))
    assert capsys.readouterr().out == "then\nelse\n"
    g(5)
    assert capsys.readouterr().out == ""


@eagle.Graph.builder
def with_copies(x, h, flag):
    g = eagle.Graph()
    y = inc(x)
    eagle.copy(y, into=h)  # a copy written in a builder is a node where it is written
    if flag:
        eagle.copy(x, into=h)
    g.result = h
    return g


def test_eagle_copy_in_a_builder_is_recorded():
    h = np.zeros(4)
    g = with_copies(X, h, cell(0))
    assert [n.kind for n in g._nodes] == ["plan", "copy", "device_if"]
    np.testing.assert_array_equal(g(), X + 1)
    g2 = with_copies(X, np.zeros(4), cell(1))
    np.testing.assert_array_equal(g2(), X)
