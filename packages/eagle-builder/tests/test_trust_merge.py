"""A name rebound in a device construct is merged into the array it held before only when
nothing else still means that array's old value: a later read in the same arm, another name, a
block's caller, a hand-made graph's user; otherwise into a copy, so every holder sees what Python
would show it."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

X = np.arange(3.0)


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
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


def cell(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint32)


def both_arms(builder, *args, expect):
    """Replay with the cell (the last argument) at 1, then at 0: ``expect(taken)`` each time."""
    flag = args[-1]
    g = builder(*args)
    for taken in (1, 0):
        flag[0] = taken
        for got, want in zip(g(), expect(taken), strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_read_of_the_old_array_after_the_new_value_in_the_same_arm_sees_the_old_value():
    @eagle.Graph.builder
    def later_read(x0, c):
        g = eagle.Graph()
        x = inc(x0)
        z = x
        if c:
            x2 = dbl(x)
            z = add(x, x2)  # x is still the old value here
            x = x2
        g.result = (x, z)
        return g

    both_arms(later_read, X, cell(1), expect=lambda t: (2 * (X + 1), 3 * (X + 1)) if t else (X + 1, X + 1))


def test_another_name_for_the_old_array_keeps_the_old_value_inside_and_after_the_construct():
    @eagle.Graph.builder
    def alias(x0, c):
        g = eagle.Graph()
        x = inc(x0)
        keep = x
        if c:
            x = dbl(x)
            y = inc(keep)
        else:
            y = inc(keep)
        g.result = (x, y, keep)
        return g

    both_arms(alias, X, cell(1),
              expect=lambda t: (2 * (X + 1) if t else X + 1, X + 2, X + 1))


def test_two_names_for_one_array_rebound_in_one_arm_get_an_array_each():
    @eagle.Graph.builder
    def two_names(x, c):
        g = eagle.Graph()
        a = x
        b = x
        if c:
            a = dbl(a)
            b = inc(b)
        g.result = (a, b)
        return g

    both_arms(two_names, X, cell(1), expect=lambda t: (2 * X, X + 1) if t else (X, X))


@eagle.Graph.builder
def doubled_if(g: eagle.Graph, v, c):
    if c:
        v = dbl(v)
    return v


def test_a_block_does_not_merge_into_what_its_caller_passed():
    @eagle.Graph.builder
    def caller(x, c):
        g = eagle.Graph()
        y = inc(x)
        w = doubled_if(g, y, c)
        g.result = (y, w)
        return g

    both_arms(caller, X, cell(1), expect=lambda t: (X + 1, 2 * (X + 1) if t else X + 1))


def test_a_block_on_a_hand_made_graph_does_not_write_the_users_array():
    g, x, flag = eagle.Graph(), X.copy(), cell(1)
    out = doubled_if(g, x, flag)
    g.build()
    g.launch()
    np.testing.assert_array_equal(out, 2 * X)
    np.testing.assert_array_equal(x, X)  # the user's array, as it was


def test_a_name_kept_before_a_device_loop_keeps_the_value_it_had():
    @eagle.Graph.builder
    def kept(x0, flag):
        g = eagle.Graph()
        x = inc(x0)
        first = x
        for _ in range(5):
            if not flag:
                break
            x = inc(x)
            below(add(x, first), 4.0, flag)  # first: the value before the loop, every turn
        g.result = (first, x)
        return g

    flag = cell(1)
    g = kept(X, flag)
    first, x = g()
    np.testing.assert_array_equal(first, X + 1)
    # x + first: [3, 5, 7] has a sample below 4, [4, 6, 8] none: two turns
    np.testing.assert_array_equal(x, X + 3)


def test_an_item_carried_by_a_loop_leaves_the_argument_it_started_from_to_other_reads():
    @eagle.Graph.builder
    def from_dict(x, flag):
        g = eagle.Graph()
        state = {"x": x}
        for _ in range(5):
            if not flag:
                break
            state["x"] = add(state["x"], x)  # x: the argument, every turn
            below(state["x"], 4.0, flag)
        g.result = state["x"]
        return g

    flag = cell(1)
    g = from_dict(np.array([1.0, 2.0]), flag)
    np.testing.assert_array_equal(g(), [4.0, 8.0])  # [2, 4] and [3, 6] have a sample below 4; [4, 8] none


def test_a_loop_body_reading_the_old_array_after_its_new_value_sees_the_old_value():
    @eagle.Graph.builder
    def in_loop(x0, flag):
        g = eagle.Graph()
        x = inc(x0)
        for _ in range(5):
            if not flag:
                break
            x2 = dbl(x)
            below(add(x, x2), 13.0, flag)  # 3 * the turn's starting x
            x = x2
        g.result = x
        return g

    flag = cell(1)
    g = in_loop(np.array([1.0]), flag)  # x: 2 -> 4 (6 < 13) -> 8 (12 < 13) -> 16 (24: stop)
    np.testing.assert_array_equal(g(), [16.0])


@pytest.mark.parametrize("arm", [0, 1])
def test_in_place_merges_stay_in_place_where_nothing_else_holds_the_array(arm):
    @eagle.Graph.builder
    def plain(x0, c):
        g = eagle.Graph()
        x = inc(x0)
        if c:
            x = dbl(x)
        g.result = x
        return g

    g = plain(X, cell(arm))
    assert [n.kind for n in g._nodes] == ["plan", "device_if"]  # no copy: dbl writes x's array
    np.testing.assert_array_equal(g(), 2 * (X + 1) if arm else X + 1)


@hawk.kernel
def same_cell(flag: UInt32) -> UInt32:
    return flag * hm.uint32(1)


def test_a_guard_name_rebound_in_its_device_loop_is_the_guard_the_loop_reads():
    @eagle.Graph.builder
    def rebound(x, flag):
        g = eagle.Graph()
        for _ in range(10):
            if not flag:
                break
            x = inc(x)
            f = same_cell(flag)
            below(x, 3.0, f)
            flag = f  # the next turn tests the new cell, as Python would
        g.result = x
        return g

    flag = cell(1)
    np.testing.assert_array_equal(rebound(np.array([0.0, 1.5]), flag)(), [3.0, 4.5])
    assert flag[0] == 1  # the argument itself is not written
