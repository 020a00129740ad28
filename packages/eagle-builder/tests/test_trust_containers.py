"""Lists, dicts and objects changed inside device constructs: refused at the line with what to
write, or, when a helper the builder cannot see does it, at the first use of the array that got
out; changing them under Python conditions, or around device constructs, stays plain Python."""

from __future__ import annotations

import types

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

X = np.array([0.0, 1.5])


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


def cell(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint32)


REFUSED = r"changes a list, dict or object inside the device {what} at {where}; eagle carries plain names"


@eagle.Graph.builder
def count_up(x, flag):
    g = eagle.Graph()
    state = {"x": x, "turns": None}
    for _ in range(10):
        if not flag:
            break
        state["x"] = inc(state["x"])
        below(state["x"], 3.0, flag)
    g.result = state["x"]
    return g


def test_a_dict_item_rebound_in_a_device_loop_is_carried_turn_by_turn():
    flag = cell(1)
    g = count_up(X, flag)
    np.testing.assert_array_equal(g(), [3.0, 4.5])  # as `x = inc(x)` would
    flag[0] = 0
    np.testing.assert_array_equal(g(), X)  # no turn: the item's value before the loop
    assert X.tolist() == [0.0, 1.5]  # the argument is not written


@eagle.Graph.builder
def arms(x, y, c):
    g = eagle.Graph()
    s = {"v": x, "w": [x, y]}
    w = s["w"]
    if c:
        s["v"] = dbl(s["v"])
        w[1] = inc(w[1])
    else:
        s["v"] = inc(s["v"])
    g.result = (s["v"], w[1])
    return g


@pytest.mark.parametrize("c", [0, 1])
def test_dict_and_list_items_rebound_in_device_if_arms_are_carried(c):
    flag, y = cell(c), X + 10.0
    g = arms(X, y, flag)
    for _ in range(2):  # the same graph, then the other arm
        v, w = g()
        np.testing.assert_array_equal(v, 2 * X if flag[0] else X + 1)
        np.testing.assert_array_equal(w, y + 1 if flag[0] else y)
        flag[0] = 1 - flag[0]


def test_items_carried_through_a_device_match_and_a_break_in_a_capped_loop():
    @eagle.Graph.builder
    def nested(x, k, flag):
        g = eagle.Graph()
        s = {"v": x}
        for _ in range(5):
            if not flag:
                break
            match k:
                case 1:
                    s["v"] = dbl(s["v"])
                case _:
                    s["v"] += 0.0  # an augmented item: the same array back
            below(s["v"], 2.0, flag)
            if not flag:
                break
            s["v"] = inc(s["v"])
        g.result = s["v"]
        return g

    k, flag = cell(1), cell(1)
    g = nested(np.array([0.25, 3.0]), k, flag)
    # turn 1: dbl, a sample below 2, inc; turn 2: dbl, none below 2: break before inc
    np.testing.assert_array_equal(g(), [3.0, 14.0])
    k[0], flag[0] = 0, 1  # case _: the item comes back as it was, then inc, until none is below 2
    np.testing.assert_array_equal(g(), [2.25, 5.0])


def test_an_item_a_device_construct_adds_is_refused():
    @eagle.Graph.builder
    def adds(x, c):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            s["new"] = inc(x)
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"adds:5: s gains or loses items inside the device if; eagle carries "
                                        r"the items a dict or list already has"):
        adds(X, cell(1))


def test_an_item_of_what_is_not_a_dict_or_list_is_refused():
    @eagle.Graph.builder
    def into_array(x, c, out):
        g = eagle.Graph()
        if c:
            out[0:2] = inc(x)
        g.result = x
        return g

    with pytest.raises(TypeError, match=r"into_array:4: `out\[\.\.\.\] = \.\.\.` inside the device if, where "
                                        r"out is a ndarray; eagle carries plain names and the items"):
        into_array(X, cell(1), np.zeros(2))


def test_an_item_set_in_one_arm_after_none_is_an_error_where_used():
    @eagle.Graph.builder
    def one_arm(x, c):
        g = eagle.Graph()
        s = {"v": None}
        if c:
            s["v"] = inc(x)
        g.result = s["v"]
        return g

    with pytest.raises(NameError, match=r"g.result: \"s\['v'\]\" holds None before the device construct"):
        one_arm(X, cell(1))


def test_a_list_appended_in_device_if_arms_is_refused():
    @eagle.Graph.builder
    def appends(x, c):
        g = eagle.Graph()
        acc = []
        if c:
            acc.append(dbl(x))
        else:
            acc.append(inc(x))
        g.result = acc[0]
        return g

    with pytest.raises(TypeError, match=r"appends:6: `acc\.append\(\.\.\.\)` "
                                        + REFUSED.format(what="if", where="appends:5")):
        appends(X, cell(0))


@pytest.mark.parametrize("statement, shown", [
    ("o.v += x", r"o\.v \+= \.\.\."),
    ("del s['v']", r"del s\['v'\]"),
    ("o.v = inc(x)", r"o\.v = \.\.\."),
    ("s.update(v=inc(x))", r"s\.update\(\.\.\.\)"),
    ("w = s.pop('v')", r"s\.pop\(\.\.\.\)"),
])
def test_each_in_place_change_is_refused_in_a_device_match(statement, shown, tmp_path):
    source = ("import eagle\n\n@eagle.Graph.builder\ndef f(x, c, s, o):\n    g = eagle.Graph()\n"
              f"    match c:\n        case 1:\n            {statement}\n    g.result = x\n    return g\n")
    path = tmp_path / "changes.py"
    path.write_text(source)
    module = types.ModuleType("changes")
    module.__file__ = str(path)
    module.inc = inc
    exec(compile(source, str(path), "exec"), module.__dict__)
    s, o = {"v": X}, types.SimpleNamespace()
    with pytest.raises(TypeError, match=rf"f:6: `{shown}` " + REFUSED.format(what="match", where="f:4")):
        module.f(X, cell(1), s, o)
    assert list(s) == ["v"] and s["v"] is X and not vars(o)  # refused before it ran


def test_a_change_under_a_python_if_inside_a_device_arm_is_refused():
    @eagle.Graph.builder
    def nested(x, c, on):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            if on:
                s.update(v=inc(x))
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"nested:7: `s\.update\(\.\.\.\)` "):
        nested(X, cell(1), True)


def put(s, v):
    s["v"] = v  # a helper the builder does not rewrite


def test_an_array_a_helper_carries_out_of_an_arm_is_refused_where_it_is_used():
    @eagle.Graph.builder
    def helper(x, c):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            put(s, dbl(s["v"]))
        else:
            put(s, inc(s["v"]))  # reads the other arm's array: refused here
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"'inc' uses an array computed inside the device if at helper:5, "
                                        r"outside that arm or loop body"):
        helper(X, cell(1))


def test_an_array_a_helper_carries_out_of_a_device_loop_into_the_result_is_refused():
    @eagle.Graph.builder
    def loop(x, flag):
        g = eagle.Graph()
        s = {"v": x}
        for _ in range(3):
            if not flag:
                break
            put(s, inc(x))
        g.result = {"out": [s["v"]]}
        return g

    with pytest.raises(TypeError, match=r"'g.result' uses an array computed inside the device loop at "
                                        r"loop:5"):
        loop(X, cell(1))


def test_a_view_of_an_arms_array_carried_out_by_a_helper_is_refused():
    @eagle.Graph.builder
    def view(x, c):
        g = eagle.Graph()
        s = {"v": x[:1]}
        if c:
            put(s, dbl(x)[:1])
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"'g.result' uses an array computed inside the device if at view:5"):
        view(X, cell(0))


def test_a_name_a_nested_function_rebinds_in_an_arm_is_refused_where_it_is_used():
    @eagle.Graph.builder
    def nested(x, c):
        g = eagle.Graph()

        def step():
            nonlocal x
            x = inc(x)
        if c:
            step()
        g.result = dbl(x)
        return g

    with pytest.raises(TypeError, match=r"'dbl' uses an array computed inside the device if at nested:8"):
        nested(X, cell(0))


def test_containers_changed_under_python_conditions_and_around_device_ones_stay_python():
    @eagle.Graph.builder
    def python(x, n, c):
        g = eagle.Graph()
        s, acc = {"v": x}, []
        if n > 1:  # decided in Python: plain Python
            s["v"] = dbl(s["v"])
        for _ in range(n):
            acc.append(inc(acc[-1] if acc else s["v"]))
        v = s["v"]
        if c:  # a device if over a plain name; the dict is filled after it
            v = dbl(v)
        s["v"] = v
        g.result = (s["v"], acc[-1])
        return g

    flag = cell(1)
    g = python(X, 2, flag)
    np.testing.assert_array_equal(g()[0], 4 * X)
    np.testing.assert_array_equal(g()[1], 2 * X + 2)
    flag[0] = 0
    np.testing.assert_array_equal(g()[0], 2 * X)


@eagle.Graph.builder
def parts_of(g: eagle.Graph, v):
    parts = []  # the block's own list: the device if is its caller's
    parts.append(inc(v))
    parts.append(dbl(parts[0]))
    return parts[-1]


def test_a_block_called_in_a_device_arm_keeps_its_own_lists():
    @eagle.Graph.builder
    def caller(x, c):
        g = eagle.Graph()
        if c:
            x = parts_of(g, x)
        g.result = x
        return g

    flag = cell(1)
    g = caller(X, flag)
    np.testing.assert_array_equal(g(), 2 * (X + 1))
    flag[0] = 0
    np.testing.assert_array_equal(g(), X)


def test_an_array_a_nested_construct_merges_still_belongs_to_the_outer_arm():
    @eagle.Graph.builder
    def nested_escape(x, c, d):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            y = inc(x)
            if d:
                y = dbl(y)
            put(s, y)  # a helper carries the outer arm's array out
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"'g.result' uses an array computed inside the device if at "
                                        r"nested_escape:5"):
        nested_escape(X, cell(1), cell(1))
