"""``hawk.sample2`` (hawk.grid_index's float64 row and column) on the device: the CPU's bits for
every kind of width (the driver emulation where there is no GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

from hawk import Int32, Param  # noqa: E402

N = 3000


@hawk.kernel
def rows_cols(x: Int32, w: Param[Int32]):
    i, j = hawk.sample2(w)
    return i * 7 + j


@pytest.mark.parametrize("width", [1, 3, 64, N + 5, -1, -7, 0, 2 ** 31 - 1, -2 ** 31])
def test_sample2_on_the_gpu_gives_the_cpus_bits(gpu, width):
    x = np.zeros(N, np.int32)
    g = eagle.Graph()
    bound = rows_cols.plan(gpu.asarray(x), width)
    g.add(bound, name="k")
    g.build()
    g.launch()
    got, want = gpu.get(bound.outputs[0]), rows_cols(x, width)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
