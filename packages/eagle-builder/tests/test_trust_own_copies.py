"""An argument's own copy serves one name: a second name merging into the same argument in a later
device construct gets a copy of its own (found by the differential fuzzer: both names shared one
copy, so a dict item kept as the argument returned what a match arm had written into the other)."""

from __future__ import annotations

import numpy as np

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def bump(x: Scalar) -> Scalar:
    return x + 0.25


@eagle.Graph.builder
def two_names(x0, x1, sel, c0):
    g = eagle.Graph()
    st = {"b": x1}
    match sel:
        case 0:
            x1 = bump(x0)          # x1 merged into the graph's copy of the argument
    if c0:
        st["b"] = bump(x1)         # st['b'] (the argument too) needs a copy of its own
    g.result = (x1, st["b"])
    return g


def test_two_names_merged_into_one_argument_keep_their_own_values() -> None:
    x0, x1 = np.array([1.0]), np.array([-3.0])
    for sel, c0 in ((0, 0), (0, 1), (1, 0), (1, 1)):
        g = two_names(x0, x1, np.array([sel], np.uint32), np.array([c0], np.uint32))
        first, item = g()
        want_first = x0 + 0.25 if sel == 0 else x1
        np.testing.assert_array_equal(first, want_first)
        np.testing.assert_array_equal(item, want_first + 0.25 if c0 else x1)
    np.testing.assert_array_equal(x1, [-3.0])  # the caller's array is never written


@eagle.Graph.builder
def nested(x0, x1, sel, c0):
    g = eagle.Graph()
    st = {"b": x1}
    match sel:
        case 1:
            if c0:
                x0 = bump(x0)
            else:
                st["b"] = bump(bump(x0))   # the inner if merges st['b'] into the argument's copy ...
            x1 = bump(x0)                  # ... which the match must not give x1 too
    g.result = (x1, st["b"])
    return g


def test_a_name_merged_in_a_nested_construct_keeps_the_arguments_copy() -> None:
    x0, x1 = np.array([1.0]), np.array([-3.0])
    for sel, c0 in ((0, 0), (1, 0), (1, 1)):
        g = nested(x0, x1, np.array([sel], np.uint32), np.array([c0], np.uint32))
        first, item = g()
        inner = x0 + 0.25 if c0 else x0
        np.testing.assert_array_equal(first, inner + 0.25 if sel == 1 else x1)
        np.testing.assert_array_equal(item, x0 + 0.5 if (sel, c0) == (1, 0) else x1)


@eagle.Graph.builder
def later(x0, sel):
    g = eagle.Graph()
    st = {"a": x0}
    match sel:
        case 0:
            x0 = bump(x0)          # x0 merged into the graph's copy of the argument
    x0 = bump(x0)
    match sel:
        case 1:
            st["a"] = bump(x0)     # the argument again: its copy now holds what the first match wrote
    g.result = st["a"]
    return g


def test_a_later_construct_merging_an_argument_gets_a_fresh_copy() -> None:
    x0 = np.array([1.0])
    for sel in (0, 1, 2):
        g = later(x0, np.array([sel], np.uint32))
        np.testing.assert_array_equal(g(), x0 + 0.5 if sel == 1 else x0)  # sel 1: bump(bump(x0))


@hawk.kernel
def halve(x: Scalar) -> Scalar:
    return 0.5 - 2.0 * x


@hawk.kernel
def over(s: Scalar, lim: Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(s > lim))


@eagle.Graph.builder
def if_in_a_loop(x0, a, cnt, flag):
    g = eagle.Graph()
    for _ in range(cnt):
        if flag:
            x0 = halve(x0)           # an argument merged by an if that each turn runs again ...
        x0 = bump(x0)                # ... from the value the loop carries by then
        over(a, 0.0, flag)
    g.result = x0
    return g


@eagle.Graph.builder
def loop_in_a_loop(x0, cnt, flag):
    g = eagle.Graph()
    for _ in range(cnt):
        for _ in range(2):           # a capped device loop (its break), entered again each turn
            if not flag:
                break
            x0 = halve(x0)
        x0 = bump(x0)
    g.result = x0
    return g


def _plain(x0, inner):
    """The loops in Python: ``inner[t]`` halvings in turn ``t``."""
    for count in inner:
        for _ in range(count):
            x0 = 0.5 - 2.0 * x0
        x0 = x0 + 0.25
    return x0


def test_a_construct_inside_a_device_loop_starts_each_turn_from_the_carried_value() -> None:
    """Found by the differential fuzzer: the argument's copy was refreshed once per launch, so the
    second turn's if (or inner loop) started from what the first turn had left in it."""
    x0, cell = np.array([0.3]), lambda v: np.array([v], np.uint32)
    for turns in (1, 2, 3):
        for above in (1.0, -1.0):  # flag stays 1, or falls to 0 after the first turn
            g = if_in_a_loop(x0, np.array([above]), cell(turns), cell(1))
            want = _plain(x0.copy(), [1 if t == 0 or above > 0 else 0 for t in range(turns)])
            np.testing.assert_array_equal(g(), want)
        for flag in (0, 1):
            got = loop_in_a_loop(x0, cell(turns), cell(flag))()
            np.testing.assert_array_equal(got, _plain(x0.copy(), [2 * flag] * turns))
    np.testing.assert_array_equal(x0, [0.3])  # the caller's array is never written
