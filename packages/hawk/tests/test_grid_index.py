"""``hawk.sample2(width)`` through float64 (hawk.grid_index): the row and column hawk's integer
``//`` and ``%`` give, for every width (0, negative, past the samples), on the CPU, the reference
and the GPU emulation (tests/gpu/test_tables_gpu.py), in a sample loop with no integer division."""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Float32, Int32, Param, Table

N = 5000

WIDTHS = [1, 2, 3, 7, 64, 99, N - 1, N, N + 1, 10 ** 6, 2 ** 31 - 1, -1, -2, -3, -7, -N, -2 ** 31, 0]


@hawk.kernel
def by_sample2(x: Int32, w: Param[Int32]):
    i, j = hawk.sample2(w)
    return i, j


@hawk.kernel
def by_division(x: Int32, w: Param[Int32]):
    k = hawk.sample()
    return k // w, k % w


@pytest.mark.parametrize("width", WIDTHS)
def test_the_row_and_column_are_those_of_integer_division(width, threads):
    x = np.zeros(N, np.int32)
    got, want = by_sample2(x, width), by_division(x, width)
    for a, b, r in zip(got, want, by_sample2.reference(x, width), strict=True):
        assert a.dtype == b.dtype == r.dtype and a.tobytes() == b.tobytes() == r.tobytes()
    k = np.arange(N)
    if width:
        np.testing.assert_array_equal(got[0], k // width)
        np.testing.assert_array_equal(got[1], k % width)
    else:
        assert not got[0].any() and not got[1].any()


@hawk.kernel
def left(x: Float32, t: Table.clamp[Float32], w: Param[Int32]) -> Float32:
    i, j = hawk.sample2(w)
    return t[i, j - 1] + x


def test_the_sample_loop_divides_no_integer():
    x, t = np.zeros(12, np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(left(x, t, 4), t[:, [0, 0, 1, 2]].reshape(-1))
    source = left.c_source(x, t, 4)
    loops = source[source.index("EAGLE_API"):]
    assert "hk_floordiv" not in loops and "hk_mod" not in loops and "floor(" not in loops
    assert "s1[(int32_t)(" in loops  # a float table's cells gathered by 32-bit indices
