"""A name that gets an array in only some of the paths a device construct can take (one arm
after None, a device loop's body, which may run no turn) is an error where it is used, not an
array that no replay wrote."""

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
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


def test_a_name_that_was_none_before_a_device_if_and_set_in_one_arm_is_refused_where_used():
    @eagle.Graph.builder
    def none_before(x, c):
        g = eagle.Graph()
        y = None
        if c:
            y = inc(x)
        g.result = y
        return g

    with pytest.raises(NameError, match=r"g.result: 'y' holds None before the device construct at "
                                        r"none_before:5 and an array after some of its arms only"):
        none_before(X, np.zeros(1, np.uint32))


def test_a_name_first_assigned_in_a_device_loop_is_refused_after_it():
    @eagle.Graph.builder
    def first_in_loop(x, flag):
        g = eagle.Graph()
        for _ in range(3):
            if not flag:
                break
            y = inc(x)
            below(y, 2.0, flag)
        g.result = inc(y)
        return g

    with pytest.raises(NameError, match=r"inc: 'y' is assigned inside the device loop at first_in_loop:4 in "
                                        r"a part that may not run .* give it an array before the loop"):
        first_in_loop(X, np.zeros(1, np.uint32))


def test_a_name_given_an_array_before_the_loop_carries_the_last_turn_or_its_first_value():
    @eagle.Graph.builder
    def before_loop(x, flag):
        g = eagle.Graph()
        y = inc(x)
        for _ in range(3):
            if not flag:
                break
            y = inc(y)
            below(y, 3.0, flag)
        g.result = y
        return g

    flag = np.zeros(1, np.uint32)
    g = before_loop(X, flag)
    np.testing.assert_array_equal(g(), X + 1)  # no turn
    flag[0] = 1
    np.testing.assert_array_equal(g(), X + 3)  # two turns: then no sample is below 3


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@pytest.mark.parametrize("use", ["kernel", "python"])
def test_the_variable_of_a_device_loop_has_no_value_while_recording(use):
    @eagle.Graph.builder
    def counted(x, n, use):
        g = eagle.Graph()
        for i in range(n):
            if use == "python" and i == 0:  # decided in Python on a value the turns do not have
                x = inc(x)
            x = affine(x, 1.0, i) if use == "kernel" else inc(x)
        g.result = x
        return g

    with pytest.raises(NameError, match=r"the loop variable of the device loop at counted:4 has no value "
                                        r"while recording"):
        counted(X, np.array([3], np.uint32), use)
