"""The one answer to "what is this object": a number, an array, a guard cell."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle._arrays import is_array, is_guard_cell, is_value


class FakeDevice:
    """A device array as eagle sees one: only ``__cuda_array_interface__``."""

    def __init__(self, dtype: type, shape: tuple[int, ...]) -> None:
        self.dtype, self.shape, self.size = np.dtype(dtype), shape, int(np.prod(shape))
        self.__cuda_array_interface__ = {"shape": shape, "typestr": self.dtype.str, "data": (0, False),
                                         "version": 3}


@pytest.mark.parametrize("cell", [np.zeros(1, np.uint32), np.zeros((1, 1), np.uint32),
                                  np.zeros(4, np.uint32)[2:3], FakeDevice(np.uint32, (1,))])
def test_a_guard_cell_is_one_uint32_cell_of_an_array(cell):
    assert is_array(cell) and is_guard_cell(cell)


@pytest.mark.parametrize("other", [np.uint32(0), np.zeros(2, np.uint32), np.zeros(1, np.int32),
                                   np.zeros(0, np.uint32), [0], FakeDevice(np.float32, (1,))])
def test_anything_else_is_not_a_guard_cell(other):
    assert not is_guard_cell(other)


def test_a_guard_takes_a_guard_cell_and_refuses_a_scalar():
    for cell in (np.zeros((1, 1), np.uint32), np.zeros(1, np.uint32)):
        assert eagle.SkipGuard.nonzero(cell).cell is cell
    with pytest.raises(TypeError, match=r"eagle\.SkipGuard\.nonzero: a guard is a one-cell uint32 array"):
        eagle.SkipGuard.nonzero(np.uint32(0))


def test_values_and_arrays():
    assert is_value(3) and is_value(np.float64(1.0)) and not is_value(np.zeros(1))
    assert is_array(np.zeros(3)) and not is_array(memoryview(b"ab")) and not is_array(1.0)


@pytest.mark.parametrize("array", [np.zeros(8), np.zeros(8)[3:], np.zeros((3, 4)).T, np.arange(6.0)[::-2],
                                   np.zeros(0), np.zeros(3, "M8[s]")])
def test_a_kernel_slot_holds_element_zeros_address(array):
    """By the buffer protocol where the array has a simple buffer, else by ctypes (a strided one)."""
    from eagle._slots import slots

    assert slots([array], device=False)[0].u64 == array.ctypes.data


def test_a_plan_value_reaches_its_kernel_as_its_member():
    """typed_slot passes an f64 float and an i64 int as they are; the slots hold them as that member."""
    from eagle._slots import slots, typed_slot

    for member, value in [("f64", 0.25), ("i64", -3), ("i64", (1 << 63) - 1), ("i64", True), ("f64", 2),
                          ("f32", 0.5), ("i32", 7)]:
        assert getattr(slots([typed_slot(member, value)], device=False)[0], member) == value
