"""A counted device loop's index in its body, and loops over the rows of stacked arrays (scans)."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle import _core
from eagle.extend import view
from eagle.testing import check, interpret
from hawk import Int32, Mutable, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def add_index(x: Scalar, i: Int32) -> Scalar:
    return x * 0.5 + hm.float64(i)


@hawk.kernel
def step(y: Scalar, x: Scalar) -> Scalar:
    return hm.sin(y) * 0.75 + x


@hawk.kernel
def count_over(y: Scalar, lim: hawk.Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(y > lim))


def cell(v: int) -> np.ndarray:
    return np.array([v], np.uint32)


X = np.linspace(-1.0, 1.0, 5)
XS = np.random.default_rng(1).standard_normal((6, 5))


def kinds(g: eagle.Graph) -> list[str]:
    """The kinds of the graph's nodes and of every body they hold, in order."""
    return [node.kind for top in view(g).nodes for node in top.walk()]


# ------------------------------------------------------------------- the index


@eagle.Graph.builder
def indexed(x, n):
    g = eagle.Graph()
    for i in range(n):
        x = add_index(x, i)
        x = add_index(x, 2 * i + 1)
        x = add_index(x, 10 - i)
    g.result = x
    return g


def plain_indexed(x: np.ndarray, n: int) -> np.ndarray:
    for i in range(n):
        for k in (i, 2 * i + 1, 10 - i):
            x = x * 0.5 + k
    return x


@pytest.mark.parametrize("n", [0, 1, 4])
def test_the_index_is_the_turn_in_the_body(n):
    g = indexed(X.copy(), cell(n))
    np.testing.assert_array_equal(g(), plain_indexed(X, n))
    np.testing.assert_array_equal(g(), plain_indexed(X, n))  # each launch counts from 0 again
    check(g, 2)


def test_the_count_is_read_at_every_replay():
    n = cell(2)
    g = indexed(X.copy(), n)
    first = g().copy()
    n[0] = 5
    np.testing.assert_array_equal(first, plain_indexed(X, 2))
    np.testing.assert_array_equal(g(), plain_indexed(X, 5))


def test_an_unused_index_records_nothing():
    @eagle.Graph.builder
    def counted(x, n):
        g = eagle.Graph()
        for _ in range(n):
            x = step(x, x)
        g.result = x
        return g

    assert "cell_affine" not in kinds(counted(X.copy(), cell(2)))
    assert kinds(indexed(X.copy(), cell(2))).count("cell_affine") == 5  # set, three values, advance


@hawk.kernel
def over(x: Scalar, i: Int32, at: hawk.Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(hm.where(i == at, 1, 0) + 0 * x))


@eagle.Graph.builder
def breaking(x, n, stop):
    g = eagle.Graph()
    for i in range(n):
        x = add_index(x, i)
        over(x, i, 3, stop)
        if stop:
            continue
        x = add_index(x, 100 * i)
    g.result = x
    return g


def test_continue_skips_the_rest_of_a_turn_and_the_index_still_advances():
    want = X.copy()
    for i in range(6):
        want = want * 0.5 + i
        if i != 3:
            want = want * 0.5 + 100 * i
    g = breaking(X.copy(), cell(6), cell(0))
    np.testing.assert_array_equal(g(), want)
    check(g, 1)


def test_the_index_of_each_loop_of_a_nest():
    @eagle.Graph.builder
    def nest(x, n, m):
        g = eagle.Graph()
        for i in range(n):
            for j in range(m):
                x = add_index(add_index(x, 3 * i), j)
        g.result = x
        return g

    want = X.copy()
    for i in range(3):
        for j in range(2):
            want = (want * 0.5 + 3 * i) * 0.5 + j
    np.testing.assert_array_equal(nest(X.copy(), cell(3), cell(2))(), want)


def same_bits_everywhere(monkeypatch: pytest.MonkeyPatch, run) -> None:
    """``run()`` (a builder called and replayed) gives the same bits fused or not, on 1 or 2 threads."""
    runs = []
    before = _core.num_threads()
    try:
        for fuse in ("1", "0"):
            monkeypatch.setenv("EAGLE_FUSE", fuse)
            for threads in (1, 2):
                _core.set_num_threads(threads)
                runs.append(run())
    finally:
        _core.set_num_threads(before)
    for other in runs[1:]:
        np.testing.assert_array_equal(other, runs[0])


def test_the_same_bits_fused_or_not_and_on_any_thread_count(monkeypatch):
    x = np.random.default_rng(0).standard_normal(5000)
    same_bits_everywhere(monkeypatch, lambda: indexed(x.copy(), cell(4))())


@pytest.mark.parametrize("use, says", [
    ("param", r"affine: parameter 'b' is a Param, read once while recording, and the loop variable of the "
              r"device loop at uses:4 has no value while recording .*annotate the parameter Int32"),
    ("scalar", r"half: parameter 'x' is Scalar, and is passed the index of the device loop at uses:4, a "
               r"one-cell int32 plane: annotate it Int32"),
    ("test", r"the loop variable of the device loop at uses:4 has no value while recording"),
    ("float", r"`i \* float` with the index of the device loop at uses:4: the builder computes with it and "
              r"Python ints only"),
    ("after", r"`i \+ k` on the index of the device loop at uses:4 outside that loop"),
    ("passed after", r"add_index: parameter 'i' is passed the index of the device loop at uses:4 outside "
                     r"that loop"),
])
def test_what_needs_a_python_value_is_refused(use, says):
    @hawk.kernel
    def affine(x: Scalar, b: hawk.Param) -> Scalar:
        return x + b

    @hawk.kernel
    def half(x: Scalar) -> Scalar:
        return x * 0.5

    box = {}

    def keep(i):
        box["i"] = i

    @eagle.Graph.builder
    def uses(x, n, use):
        g = eagle.Graph()
        for i in range(n):
            if use == "param":
                x = affine(x, i)
            elif use == "scalar":
                x = half(i)
            elif use == "test":
                x = add_index(x, 1 if i else 0)
            elif use == "float":
                x = add_index(x, i * 1.5)
            else:  # after, passed after
                keep(i)  # a helper's dict, which the builder does not carry
        if use == "after":
            x = add_index(x, box["i"] + 1)
        elif use == "passed after":
            x = add_index(x, box["i"])
        g.result = x
        return g

    with pytest.raises((NameError, TypeError), match=says):
        uses(X.copy(), cell(2), use)


# ------------------------------------------------------------------- scans


@eagle.Graph.builder
def scan(y, xs, turns):
    g = eagle.Graph()
    ys = np.zeros_like(xs)
    for t in range(turns):
        y = step(y, xs[t])
        ys[t] = y
    g.result = {"y": y, "ys": ys}
    return g


def plain_scan(y: np.ndarray, xs: np.ndarray, turns: int) -> dict[str, np.ndarray]:
    ys = np.zeros_like(xs)
    for t in range(turns):
        y = step.reference(y, xs[t])
        ys[t] = y
    return {"y": y, "ys": ys}


@pytest.mark.parametrize("turns", [0, 1, 6])
def test_a_scan_over_a_python_count_is_one_loop(turns):
    g = scan(X.copy(), XS.copy(), turns)
    got, want = g(), plain_scan(X, XS, turns)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])
    assert [n.kind for n in view(g).nodes].count("device_loop") == 1
    assert kinds(g).count("plan") == 1  # one step, whatever the count
    check(g, 2)


PAST_THE_ROWS = (r"eagle.Graph.builder: scan:5: range\(turns\) asks for 50 turns, xs has 6 rows, ys has 6 "
                 r"rows: set turns to at most 6, or pass arrays of 50 rows")


def test_a_scan_over_a_cell_count_past_the_rows_raises_at_the_launch():
    turns = cell(4)
    g = scan(X.copy(), XS.copy(), turns)
    np.testing.assert_array_equal(g()["y"], plain_scan(X, XS, 4)["y"])
    turns[0] = 50
    with pytest.raises(IndexError, match=PAST_THE_ROWS):
        g()
    np.testing.assert_array_equal(g.result["y"], X)  # the launch stopped before the loop ran a turn
    with pytest.raises(IndexError, match=PAST_THE_ROWS):
        g.enqueue()
        g.synchronize()
    with pytest.raises(IndexError, match=PAST_THE_ROWS):
        interpret(g, 1)
    turns[0] = 6  # every row: the count is checked again at the next launch
    np.testing.assert_array_equal(g()["y"], plain_scan(X, XS, 6)["y"])
    with pytest.raises(IndexError, match=r"xs\[6\]|index 6 is out of bounds"):
        plain_scan(X, XS, 50)  # what Python says


def test_a_scan_over_a_cell_count_past_the_rows_raises_in_a_device_body():
    @eagle.Graph.builder
    def inner(y, xs, on, n):
        g = eagle.Graph()
        if on:
            for t in range(n):
                y = step(y, xs[t])
        g.result = y
        return g

    n = cell(7)
    g = inner(X.copy(), XS.copy(), cell(1), n)
    with pytest.raises(IndexError, match=r"inner:5: range\(n\) asks for 7 turns, xs has 6 rows: set n to at "
                                         r"most 6"):
        g()
    n[0] = 3
    np.testing.assert_array_equal(g(), plain_scan(X, XS, 3)["y"])


def test_a_scan_of_planes_of_several_values_per_sample():
    @hawk.kernel
    def mix(y: Scalar, v: Scalar) -> Scalar:
        return y * v[0] + v[1]

    @eagle.Graph.builder
    def stacked(y, vs):
        g = eagle.Graph()
        for t in range(vs.shape[0]):
            y = mix(y, vs[t])
        g.result = y
        return g

    vs = np.random.default_rng(2).standard_normal((4, 2, 5))
    want = X.copy()
    for t in range(4):
        want = want * vs[t, 0] + vs[t, 1]
    np.testing.assert_array_equal(stacked(X.copy(), vs)(), want)


def test_a_scan_reads_the_rows_bound_later():
    g = scan(X.copy(), XS.copy(), 6)
    other = XS[::-1].copy()
    g.bind(xs=other)
    np.testing.assert_array_equal(g()["y"], plain_scan(X, other, 6)["y"])


def test_the_same_bits_fused_or_not_and_on_any_thread_count_in_a_scan(monkeypatch):
    rng = np.random.default_rng(3)
    y0, xs = rng.standard_normal(4000), rng.standard_normal((5, 4000))
    same_bits_everywhere(monkeypatch, lambda: scan(y0.copy(), xs.copy(), 5)()["ys"])


def test_a_list_of_rows_stays_a_python_loop():
    @eagle.Graph.builder
    def unrolled(y, xs):
        g = eagle.Graph()
        rows = list(xs)
        for t in range(len(rows)):
            y = step(y, rows[t])
        g.result = y
        return g

    g = unrolled(X.copy(), XS.copy())
    assert "device_loop" not in kinds(g) and kinds(g).count("plan") == 6
    np.testing.assert_array_equal(g(), plain_scan(X, XS, 6)["y"])


@pytest.mark.parametrize("form, error, says", [
    ("long", IndexError, r"rows:4: for t in range\(7\) reads or writes rows t of stacked arrays, and xs "
                         r"has 6: loop over range\(6\)"),
    ("shifted", IndexError, r"rows:6: a device loop reads rows of a stacked array at its own index only "
                            r"\(xs\[i\]\), not at one computed from it: shift the array instead"),
    ("flat", TypeError, r"rows:8: a device loop reads rows of a stacked array \(shape \(T, n\) or "
                        r"\(T, k, n\)\) at its index; got an array of shape \(5,\)"),
    ("strided", ValueError, r"rows:10: the stacked array a device loop reads rows of is not contiguous"),
    ("wrong row", TypeError, r"rows:12: a row of the float64 array of shape \(6, 5\) is a float64 plane of "
                             r"shape \(5,\); got a float64 array of shape \(4,\)"),
])
def test_what_a_scan_cannot_do_is_refused(form, error, says):
    @eagle.Graph.builder
    def rows(y, xs, n, form):
        g = eagle.Graph()
        for t in range(n):
            if form == "shifted":
                y = step(y, xs[t + 1])
            elif form == "flat":
                y = step(y, xs[0][t])
            elif form == "strided":
                y = step(y, xs[:, ::2][t])
            elif form == "wrong row":
                xs[t] = np.zeros(4)
            else:
                y = step(y, xs[t])
        g.result = y
        return g

    with pytest.raises(error, match=says):
        rows(X.copy(), XS.copy(), 7 if form == "long" else cell(3), form)


def test_the_kernels_of_a_turn_fuse_around_the_index_and_the_rows(monkeypatch):
    @eagle.Graph.builder
    def turns(y, xs, ys):
        g = eagle.Graph()
        for t in range(xs.shape[0]):
            y = step(y, xs[t])
            y = add_index(y, t + 1)  # its cell and the row are made at the start of the turn
            y = add_index(y, 2 * t)
            ys[t] = y
        g.result = ys
        return g

    g = turns(X.copy(), XS.copy(), np.zeros_like(XS))
    assert g.fused == [("step", "add_index", "add_index")]
    monkeypatch.setenv("EAGLE_FUSE", "0")
    unfused = turns(X.copy(), XS.copy(), np.zeros_like(XS))
    assert unfused.fused == []
    np.testing.assert_array_equal(g(), unfused())
    check(g, 1)


def test_a_row_of_an_array_the_body_writes_is_moved_where_it_is_read():
    @eagle.Graph.builder
    def rewrites(y, xs):
        g = eagle.Graph()
        for t in range(xs.shape[0]):
            y = step(y, xs[t])
            xs[t] = y
            y = step(y, xs[t])  # the row just written
        g.result = y
        return g

    want = X.copy()
    for t in range(XS.shape[0]):
        want = step.reference(want, XS[t])
        want = step.reference(want, want)
    np.testing.assert_array_equal(rewrites(X.copy(), XS.copy())(), want)


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@pytest.mark.parametrize("on", [0, 1])
def test_items_set_at_a_python_loop_variable_inside_a_device_arm_are_carried(on):
    @eagle.Graph.builder
    def items(x, c):
        g = eagle.Graph()
        acc = {0: x, 1: x}
        if c:
            for k in range(2):
                acc[k] = inc(acc[k])
        g.result = (acc[0], acc[1])
        return g

    got = items(X.copy(), cell(on))()
    np.testing.assert_array_equal(got[0], X + on)
    np.testing.assert_array_equal(got[1], X + on)


def test_an_array_item_set_at_a_python_loop_variable_inside_a_device_arm_is_refused():
    @eagle.Graph.builder
    def into_array(x, c, out):
        g = eagle.Graph()
        if c:
            for k in range(2):
                out[k] = inc(x)
        g.result = x
        return g

    with pytest.raises(TypeError, match=r"into_array:6: `<array>\[\.\.\.\] = \.\.\.` changes a list, dict or "
                                        r"object inside the device if at into_array:4"):
        into_array(X.copy(), cell(1), np.zeros(2))  # one dimension: no rows to step through


def test_a_python_loop_that_tests_its_variable_stays_a_python_loop():
    @eagle.Graph.builder
    def first_turn(y, xs):
        g = eagle.Graph()
        for t in range(xs.shape[0]):
            if t == 0:  # a Python value of t: the loop is unrolled, as any Python loop
                y = inc(y)
            for _ in range(t):
                y = inc(y)
            y = step(y, xs[t])
        g.result = y
        return g

    want = X.copy()
    for t in range(XS.shape[0]):
        want = want + (1.0 if t == 0 else 0.0) + t
        want = step.reference(want, XS[t])
    g = first_turn(X.copy(), XS.copy())
    assert "device_loop" not in kinds(g)
    np.testing.assert_allclose(g(), want, rtol=1e-15)


@eagle.Graph.builder
def capped_indexed(x, flag, xs):
    g = eagle.Graph()
    for i in range(6):
        if not flag:
            break
        x = add_index(x, i)
        x = step(x, xs[i])
        count_over(x, 4.0, flag)
    g.result = x
    return g


def test_a_capped_loop_reads_its_index_and_rows():
    want, flag = X.copy(), 1
    for i in range(6):
        if not flag:
            break
        want = step.reference(want * 0.5 + i, XS[i])
        flag = int((want > 4.0).sum())
    g = capped_indexed(X.copy(), cell(1), XS.copy())
    np.testing.assert_array_equal(g(), want)
    check(g, 1)


def test_a_capped_loop_past_the_rows_is_refused():
    says = r"capped_indexed:8: the device loop at capped_indexed:4 runs up to 6 turns and reads rows"
    with pytest.raises(IndexError, match=says + r" of an array of 4 rows"):
        capped_indexed(X.copy(), cell(1), XS[:4].copy())
