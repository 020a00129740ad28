"""Table parameters, gathers at computed indices and the sample index: eager, reference, graph."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Int32, Mutable, Param, Scalar, Table
from hawk import math as hm

N = 2500  # three blocks


@hawk.kernel
def stencil(u: Scalar, t: Table.clamp) -> Scalar:
    s = hawk.sample()
    return t[s - 1] - 2.0 * u + t[s + 1]


@hawk.kernel
def ring(u: Scalar, t: Table.wrap, k: Param[Int32]) -> Scalar:
    return u * t[hawk.sample() + k]


@hawk.kernel
def lookup(x: Scalar, w: Table, k: Int32) -> Scalar:
    if x > 0.5:
        y = x * w[k]
    else:
        y = x
    return y


@hawk.kernel
def grid(x: Scalar, t: Table.clamp) -> Scalar:
    i, j = hawk.sample2(50)
    return t[i - 1, j] + t[i + 1, j] + t[i, j - 1] + t[i, j + 1] - 4.0 * x


@hawk.kernel
def counts(k: Int32, t: Table[Int32]) -> Int32:
    return t[hm.int32(k / 2)] + hm.int32(hawk.sample())


def test_clamped_and_wrapped_neighbours():
    u = np.random.default_rng(0).random(N)
    left, right = np.r_[u[:1], u[:-1]], np.r_[u[1:], u[-1:]]
    np.testing.assert_array_equal(stencil(u, u), left - 2.0 * u + right)
    np.testing.assert_array_equal(stencil.reference(u, u), stencil(u, u))
    np.testing.assert_array_equal(ring(u, u, -3), u * np.roll(u, 3))
    np.testing.assert_array_equal(ring.reference(u, u[:7], 10), u * u[:7][(np.arange(N) + 10) % 7])


def test_a_grid_flattened_into_samples():
    x = np.random.default_rng(1).random((40, 50))
    p = np.pad(x, 1, mode="edge")
    want = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * x
    np.testing.assert_array_equal(grid(x.reshape(-1), x), want.reshape(-1))
    np.testing.assert_array_equal(grid.reference(x.reshape(-1), x), want.reshape(-1))


def test_integer_tables_and_float32():
    k = np.arange(N, dtype=np.int32) % 9
    t = (np.arange(5, dtype=np.int32) * 10)
    np.testing.assert_array_equal(counts(k, t), t[k // 2] + np.arange(N, dtype=np.int32))
    u = np.arange(N, dtype=np.float32)
    out = stencil(u, u)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, stencil.reference(u, u))


def test_a_checked_read_out_of_range_raises_naming_the_first_sample():
    x = np.linspace(0.0, 1.0, N)
    k = np.zeros(N, np.int32)
    k[[700, 2100]] = [-1, 9]
    w = np.arange(4.0)
    for call in (lookup, lookup.reference):
        with pytest.raises(IndexError, match=r"lookup: sample 2100 read Table 'w' \(shape \(4,\)\) out of "
                                             r"range at line \d+; .*Table.clamp"):
            call(x, w, k)  # sample 700 takes the arm without the read
    k[2100] = 3
    np.testing.assert_array_equal(lookup(x, w, k), lookup.reference(x, w, k))
    np.testing.assert_array_equal(lookup(x, w, k), np.where(x > 0.5, x * w[k], x))


def test_checked_reads_in_a_graph_raise_at_each_launch():
    x, k, w = np.ones(N), np.zeros(N, np.int32), np.arange(4.0)
    g = eagle.Graph()
    g.add(lookup.plan(x, w, k), name="look")
    g.build().launch()
    k[5] = 4
    with pytest.raises(IndexError, match="sample 5 read Table 'w'"):
        g.launch()
    k[5] = 0
    g.launch()  # the cell was cleared


def test_a_table_read_is_not_per_sample_and_never_written():
    assert not stencil.per_sample
    u = np.ones(8)

    @hawk.kernel
    def smooth_in_place(u: Mutable[Scalar], t: Table.clamp):
        u = 0.5 * (t[hawk.sample() - 1] + t[hawk.sample() + 1])

    with pytest.raises(ValueError, match="writes plane 'u', which it also reads whole as Table 't'"):
        smooth_in_place(u, u)
    with pytest.raises(ValueError, match="writes plane 'out', which it also reads whole as Table 't'"):
        stencil.plan(u, u, buffer=u)


def test_refusals_name_the_fix():
    with pytest.raises(hawk.KernelSyntaxError, match=r"'t' is a Table, which a kernel only reads"):
        @hawk.kernel
        def write(x: Scalar, t: Table):
            t[0] = x
    with pytest.raises(hawk.KernelSyntaxError, match=r"index 'x' of Table 't' is f64; .*int32"):
        @hawk.kernel
        def floaty(x: Scalar, t: Table) -> Scalar:
            return t[x]
    with pytest.raises(hawk.KernelSyntaxError, match=r"'t' is a Table .*read a cell of it at an index"):
        @hawk.kernel
        def whole(x: Scalar, t: Table) -> Scalar:
            return x + t
    with pytest.raises(hawk.KernelSyntaxError, match=r"i, j = hawk.sample2\(width\)"):
        @hawk.kernel
        def pair(x: Scalar) -> Scalar:
            return x + hawk.sample2(4)
    with pytest.raises(hawk.KernelSyntaxError, match=r"slices are not in hawk"):
        @hawk.kernel
        def sliced(x: Scalar, t: Table) -> Scalar:
            return t[0:2]
    with pytest.raises(hawk.KernelSyntaxError, match=r"Table of shape \(2, 3\) in this call: read it with 2"):
        stencil.ir(np.ones(4), np.ones((2, 3)))
    with pytest.raises(TypeError, match="Table 't' is a float Table"):
        stencil(np.ones(4), np.ones(4, np.int32))
    with pytest.raises(ValueError, match=r"Table 't' has shape \(0,\)"):
        stencil(np.ones(4), np.ones(0))
    with pytest.raises(TypeError, match=r"hawk\.sample: only inside a hawk kernel"):
        hawk.sample()
    assert repr(Table.clamp[Int32]) == "Table.clamp[Int32]" and repr(Table) == "Table"
