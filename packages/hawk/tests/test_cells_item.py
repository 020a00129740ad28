"""A kernel's final phase that only stores cells (a reduction's result, a flag) is one small item
on the running thread, not a pass of the team over the samples (issue 19): the reduction's
partials are the only team region, with one barrier."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle import _core
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def total(x: Scalar, out: Mutable[Scalar]) -> None:
    out = hawk.sum(x)


@hawk.kernel
def below(x: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(x < lim))


@hawk.kernel
def centred(x: Scalar) -> Scalar:
    return x - hawk.sum(x)  # its final phase stores a plane: it stays a pass over the samples


@hawk.kernel
def mark(x: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(lim > 0.5)  # x only sets the sample count: flag is a cell


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("n", [3 * _core.BLOCK + 5, 8 * _core.BLOCK])
def test_a_reductions_cell_store_opens_no_team_region(threads, n, fuse):
    x, out, flag = np.linspace(0, 1, n), np.zeros(1), np.full(1, 9, np.uint32)
    g = eagle.Graph()
    g.add(total.plan(x, out))
    g.add(below.plan(x, 0.5, flag))
    g.build(fuse=fuse).launch()
    assert out[0] == _core.lib.eagle_sum_f64(_core.ffi.cast("double *", x.ctypes.data), n)
    assert flag[0] == np.count_nonzero(x < 0.5)
    # each kernel's partials: one barrier each on a team (fused, the two reductions share one
    # phase: one barrier), none on one thread; the cell stores add none
    assert g._program.stats() == ({"regions": 1, "barriers": 1 if fuse else 2} if threads > 1 else
                                  {"regions": 0, "barriers": 0})


def test_a_final_phase_that_stores_a_plane_still_runs_over_the_samples(threads):
    n = 4 * _core.BLOCK
    x = np.linspace(0, 1, n)
    y = centred(x)
    assert np.array_equal(y, centred.reference(x))
    assert not centred.plan(x).plan.compiled.phased.cells_only
    assert total.plan(x, np.zeros(1)).plan.compiled.phased.cells_only


def test_a_kernel_that_only_writes_cells_runs_once_at_any_logical_size(threads):
    flag = np.zeros(1, np.uint32)
    x = np.zeros(4 * _core.BLOCK)
    g = eagle.Graph()
    g.add(mark.plan(x, 0.75, flag))
    g.build()
    assert mark.plan(x, 0.75, flag).plan.compiled.phased.cells_only
    for size in (0, 1, x.size):
        flag[0] = 7
        g.set_logical_size(size).launch()
        assert flag[0] == 1
        assert g._program.stats() == {"regions": 0, "barriers": 0}
