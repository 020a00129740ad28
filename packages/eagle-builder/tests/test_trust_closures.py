"""Each definition of a builder sees its own closure, globals and defaults (the rewrite is
shared per code object, the function around it is not); what is not a plain def is refused."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import eagle
import hawk
from hawk import Param, Scalar

X = np.array([1.0, 2.0, 3.0])  # inc and dbl differ on it


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


def scaled_by(k):
    @eagle.Graph.builder
    def scaled(x):
        g = eagle.Graph()
        g.result = affine(x, k, 0.0)
        return g
    return scaled


def test_each_definition_sees_its_own_closed_over_number():
    np.testing.assert_array_equal(scaled_by(2.0)(X)(), 2 * X)
    np.testing.assert_array_equal(scaled_by(5.0)(X)(), 5 * X)


def shifted_by(offset):
    @eagle.Graph.builder
    def shifted(x):
        g = eagle.Graph()
        g.result = hawk_add(x, offset)
        return g
    return shifted


@hawk.kernel
def hawk_add(a: Scalar, b: Scalar) -> Scalar:
    return a + b


def test_each_definition_sees_its_own_closed_over_array():
    np.testing.assert_array_equal(shifted_by(np.full(3, 1.0))(X)(), X + 1)
    np.testing.assert_array_equal(shifted_by(np.full(3, 7.0))(X)(), X + 7)


def applying(kernel):
    @eagle.Graph.builder
    def apply(x):
        g = eagle.Graph()
        g.result = kernel(x)
        return g
    return apply


def test_each_definition_sees_its_own_closed_over_kernel():
    np.testing.assert_array_equal(applying(inc)(X)(), X + 1)
    np.testing.assert_array_equal(applying(dbl)(X)(), 2 * X)


def with_block(step):
    @eagle.Graph.builder
    def block(g: eagle.Graph, v):
        return step(v)

    @eagle.Graph.builder
    def outer(x):
        g = eagle.Graph()
        g.result = block(g, x)
        return g
    return outer


def test_each_definition_sees_its_own_closed_over_block_and_nested_defs():
    np.testing.assert_array_equal(with_block(inc)(X)(), X + 1)
    np.testing.assert_array_equal(with_block(dbl)(X)(), 2 * X)


def test_a_closed_over_name_is_a_live_cell_as_in_python():
    k = 2.0

    @eagle.Graph.builder
    def scaled(x):
        g = eagle.Graph()
        g.result = affine(x, k, 0.0)
        return g
    np.testing.assert_array_equal(scaled(X)(), 2 * X)
    k = 3.0  # rebound after the decoration: seen by the next recording
    np.testing.assert_array_equal(scaled(X)(), 3 * X)


def with_defaults(a, b):
    @eagle.Graph.builder
    def f(x, a=a, *, b=b):
        g = eagle.Graph()
        g.result = affine(x, a, b)
        return g
    return f


def test_each_definition_keeps_its_own_defaults():
    np.testing.assert_array_equal(with_defaults(2.0, 1.0)(X)(), 2 * X + 1)
    np.testing.assert_array_equal(with_defaults(3.0, 0.5)(X)(), 3 * X + 0.5)


def test_one_code_object_over_two_module_globals_sees_each_its_own():
    code = next(c for c in scaled_by.__code__.co_consts if getattr(c, "co_name", None) == "scaled")
    np.testing.assert_array_equal(scaled_by(2.0)(X)(), 2 * X)  # the rewrite of `code` is cached
    for factor in (4.0, 6.0):
        namespace = dict(globals(), affine=lambda x, a, b, f=factor: affine(x, f, b))
        fn = type(scaled_by)(code, namespace, "scaled", None, (_cell(1.0),))
        np.testing.assert_array_equal(eagle.Graph.builder(fn)(X)(), factor * X)


def _cell(value):
    return (lambda: value).__closure__[0]


@pytest.mark.parametrize("what", [len, functools.partial(affine, b=0.0), np.add, scaled_by(1.0)],
                         ids=["builtin", "partial", "ufunc", "builder"])
def test_what_is_not_a_plain_def_is_refused_with_what_it_takes(what):
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.builder: takes a plain Python function defined in "
                                        r"a file \(a `def`\)"):
        eagle.Graph.builder(what)
