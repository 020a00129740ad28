"""An argument's own copy serves one name: a second name merging into the same argument in a later
device construct gets a copy of its own (found by the differential fuzzer: both names shared one
copy, so a dict item kept as the argument returned what a match arm had written into the other)."""

from __future__ import annotations

import numpy as np

import eagle
import hawk
from hawk import Scalar


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
