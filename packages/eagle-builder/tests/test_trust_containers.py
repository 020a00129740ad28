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


REFUSED = r"changes a list, dict or object inside the device {what} at {where}; eagle cannot carry"


def test_a_dict_item_rebound_in_a_device_loop_is_refused_at_its_line():
    @eagle.Graph.builder
    def count_up(x, flag):
        g = eagle.Graph()
        state = {"x": x}
        for _ in range(10):
            if not flag:
                break
            state["x"] = inc(state["x"])
            below(state["x"], 3.0, flag)
        g.result = state["x"]
        return g

    with pytest.raises(TypeError, match=r"^eagle\.Graph\.builder: count_up:8: `state\['x'\] = \.\.\.` "
                       + REFUSED.format(what="loop", where="count_up:5")
                       + r".*assign to a plain name \(v = dbl\(v\)\)"):
        count_up(X, cell(1))


def test_a_dict_item_rebound_in_device_if_arms_is_refused():
    @eagle.Graph.builder
    def arms(x, c):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            s["v"] = dbl(s["v"])
        else:
            s["v"] = inc(s["v"])
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"arms:6: `s\['v'\] = \.\.\.` " + REFUSED.format(what="if",
                                                                                          where="arms:5")):
        arms(X, cell(1))


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
    ("s['v'] += x", r"s\['v'\] \+= \.\.\."),
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
    s = {"v": X}
    with pytest.raises(TypeError, match=rf"f:6: `{shown}` " + REFUSED.format(what="match", where="f:4")):
        module.f(X, cell(1), s, types.SimpleNamespace())
    assert list(s) == ["v"] and s["v"] is X  # refused before it ran


def test_a_change_under_a_python_if_inside_a_device_arm_is_refused():
    @eagle.Graph.builder
    def nested(x, c, on):
        g = eagle.Graph()
        s = {"v": x}
        if c:
            if on:
                s["v"] = inc(x)
        g.result = s["v"]
        return g

    with pytest.raises(TypeError, match=r"nested:7: `s\['v'\] = \.\.\.` "):
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
