"""Annotations and folded numbers: found where the kernel's names live, and fixed at decoration.

This module imports no hawk type at module level, and its annotations are
strings (``from __future__ import annotations``): each kernel's types come
from the function that defines it.
"""

from __future__ import annotations

import numpy as np
import pytest

import hawk

SCALE = 2.0


def test_annotations_imported_inside_a_function():
    def make():
        from hawk import Param, Scalar

        @hawk.kernel
        def affine(x: Scalar, a: Param) -> Scalar:
            return a * x

        return affine

    np.testing.assert_array_equal(make()(np.arange(3.0), 2.0), [0.0, 2.0, 4.0])


def test_an_annotation_that_names_nothing_says_so_and_where():
    def make():
        @hawk.kernel
        def f(x: Nowhere) -> Nowhere:  # noqa: F821  mark:nowhere
            return x

    with pytest.raises(hawk.KernelSyntaxError) as info:
        make()
    err = info.value
    assert str(err).startswith("hawk.kernel: f: the annotation 'Nowhere' of parameter 'x' cannot be read "
                               "(NameError: name 'Nowhere' is not defined); import what it names at "
                               "module level")
    assert err.filename == __file__
    assert "mark:nowhere" in open(__file__).read().splitlines()[err.lineno - 1]


def factory(k: float):
    from hawk import Scalar

    @hawk.kernel
    def scaled(x: Scalar) -> Scalar:
        return x * k

    return scaled


def test_each_closure_folds_its_own_numbers():
    x = np.ones(3)
    two, five = factory(2.0), factory(5.0)
    np.testing.assert_array_equal(two(x), 2.0 * x)
    np.testing.assert_array_equal(five(x), 5.0 * x)  # not the first factory's compiled kernel
    np.testing.assert_array_equal(factory(2.5)(x.astype(np.float32)), np.full(3, 2.5, np.float32))


def test_a_module_number_is_folded_as_it_was_at_decoration():
    global SCALE
    from hawk import Scalar

    @hawk.kernel
    def times(x: Scalar) -> Scalar:
        return x * SCALE

    x = np.ones(2)
    before = SCALE
    try:
        SCALE = 3.0  # a signature compiled now must agree with one compiled before
        np.testing.assert_array_equal(times(x), [2.0, 2.0])
        np.testing.assert_array_equal(times(x.astype(np.float32)), np.full(2, 2.0, np.float32))
    finally:
        SCALE = before
