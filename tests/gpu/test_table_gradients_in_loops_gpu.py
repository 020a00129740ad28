"""A Table's gradient through reads in a loop (a record per turn, hawk.records) in CUDA C: the vjp
enters no graph (eagle.diff runs on the CPU), so its CUDA translation unit is built as the GPU
path builds it (NVRTC, or the driver emulation's host build) for a capped count and a loop that
breaks per sample."""

from __future__ import annotations

import re

import numpy as np
import pytest

hawk = pytest.importorskip("hawk")
from hawk import Int32, Param, Scalar, Table  # noqa: E402


@hawk.kernel
def capped_trail(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    acc = x
    for j in hawk.capped_range(k, 6):
        acc = acc * 0.5 + t[hawk.sample() - j] * acc
    return acc


@hawk.kernel
def broken(x: Scalar, t: Table.clamp) -> Scalar:
    acc = x
    for j in range(8):
        acc = acc + t[hawk.sample() + j] * 0.5
        if acc > 2.0:
            break
        acc = acc * t[hawk.sample() - j]
    return acc


@pytest.mark.parametrize("kernel, extra", [(capped_trail, (4,)), (broken, ())], ids=["capped", "break"])
def test_the_cuda_of_a_table_gradient_in_a_loop_builds(gpu, kernel, extra):
    x, t, ct = np.ones(64), np.ones(64), np.ones(64)
    source = kernel.vjp.cuda_source(x, t, *extra, ct)
    assert "threadIdx.x; i < end; i += (int64_t)blockDim.x * gridDim.x) s" in source  # records: -1 first
    assert re.search(r"_back \* \dLL\) \* n \+ i\] = hk_clamp_index", source)  # a row per turn, reversed
    from eagle import _nvrtc

    assert _nvrtc.compile_ptx(source, f"hk_{kernel.__name__}_vjp")  # the GPU path's build (patched by `gpu`)
