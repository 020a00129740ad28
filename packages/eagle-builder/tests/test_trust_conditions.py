"""An array that is not a one-cell uint32 used as a condition is refused with the line and the
way out, whatever form the condition takes (not NumPy's "truth value ... ambiguous")."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Scalar

X = np.arange(3.0)
TWO_CELLS = np.ones(2, np.uint32)


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@eagle.Graph.builder
def if_not(x, flag):
    g = eagle.Graph()
    if not flag:
        x = inc(x)
    g.result = x
    return g


@eagle.Graph.builder
def capped_not(x, flag):
    g = eagle.Graph()
    for _ in range(3):
        if not flag:
            break
        x = inc(x)
    g.result = x
    return g


@eagle.Graph.builder
def while_not(x, flag):
    g = eagle.Graph()
    while not flag:
        x = inc(x)
    g.result = x
    return g


@eagle.Graph.builder
def match_on(x, flag):
    g = eagle.Graph()
    match flag:
        case 1:
            x = inc(x)
    g.result = x
    return g


@eagle.Graph.builder
def if_and(x, flag):
    g = eagle.Graph()
    if flag and x is not None:
        x = inc(x)
    g.result = x
    return g


@eagle.Graph.builder
def if_plain(x, flag):
    g = eagle.Graph()
    if flag:
        x = inc(x)
    g.result = x
    return g


@pytest.mark.parametrize("builder, line", [(if_not, 4), (capped_not, 5), (while_not, 4), (match_on, 4),
                                           (if_and, 4), (if_plain, 4)])
def test_a_two_cell_guard_is_refused_with_what_a_device_condition_is(builder, line):
    with pytest.raises(TypeError, match=rf"^eagle\.Graph\.builder: {builder.__name__}:{line}: the condition "
                                        r"is an array of 2 uint32; a device condition is a one-cell uint32 "
                                        r"array \(shape \(1,\)\): reduce it .* or index one cell"):
        builder(X, TWO_CELLS)


def test_a_two_cell_count_is_refused_as_a_counted_loop():
    @eagle.Graph.builder
    def counted(x, n):
        g = eagle.Graph()
        for _ in range(n):
            x = inc(x)
        g.result = x
        return g

    with pytest.raises(TypeError, match=r"counted:4: a counted device loop is for i in range\(cell\)"):
        counted(X, TWO_CELLS)


def test_one_cell_of_a_two_cell_array_is_a_device_condition():
    flags = np.array([0, 1], np.uint32)
    g = if_not(X, flags[1:])
    np.testing.assert_array_equal(g(), X)
    flags[1] = 0
    np.testing.assert_array_equal(g(), X + 1)


ONE_CELL = np.ones(1, np.uint32)


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@eagle.Graph.builder
def ternary(x, c):
    g = eagle.Graph()
    g.result = inc(x) if c else dbl(x)
    return g


@eagle.Graph.builder
def negated(x, c):
    g = eagle.Graph()
    off = not c
    g.result = dbl(x) if off is True else x
    return g


@eagle.Graph.builder
def either(x, c):
    g = eagle.Graph()
    g.result = c and inc(x)
    return g


@eagle.Graph.builder
def filtered(x, c):
    g = eagle.Graph()
    g.result = [inc(x) for _ in range(2) if c]
    return g


@eagle.Graph.builder
def asserted(x, c):
    g = eagle.Graph()
    assert c
    g.result = x
    return g


@eagle.Graph.builder
def guarded_case(x, c):
    g = eagle.Graph()
    match c:
        case 1 if x is not None:
            x = inc(x)
    g.result = x
    return g


@pytest.mark.parametrize("builder, form", [
    (ternary, r"\.\.\. if <condition> else \.\.\."), (negated, "not"), (either, "and"),
    (filtered, "a comprehension's if"), (asserted, "assert"),
    (guarded_case, "match with a guard or a case other than int literals")])
def test_a_device_condition_python_would_test_once_while_recording_is_refused(builder, form):
    with pytest.raises(TypeError, match=rf"^eagle\.Graph\.builder: {builder.__name__}:4: a device condition "
                                        rf"in `{form}` would be decided once, while recording"):
        builder(X, ONE_CELL)


def test_python_values_in_expressions_stay_python_and_device_ifs_keep_their_nested_tests():
    @eagle.Graph.builder
    def mixed(x, c, n):
        g = eagle.Graph()
        y = inc(x) if n > 1 else dbl(x)
        if not (n > 1 and c is not None) or n:
            y = dbl(y)
        if (c and n) if False else c:  # a Python choice of which device condition to test
            y = inc(y)
        g.result = [v for v in (y,) if n]
        return g

    flag = np.ones(1, np.uint32)
    g = mixed(X, flag, 2)
    np.testing.assert_array_equal(g()[0], 2 * (X + 1) + 1)
    flag[0] = 0
    np.testing.assert_array_equal(g()[0], 2 * (X + 1))
