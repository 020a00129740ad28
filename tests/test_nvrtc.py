"""eagle's own CUDA C (the fixed-order reductions, loop counters, switch keys) compiles with NVRTC
to PTX with one entry per kernel: checked wherever NVRTC is installed (no GPU needed)."""

from __future__ import annotations

import re

import pytest

from eagle import _gpu_kernels, _nvrtc

# Taken at collection, before the gpu fixture swaps in the emulation's host compiler.
available, compile_ptx = _nvrtc.available, _nvrtc.compile_ptx

pytestmark = pytest.mark.skipif(not available(), reason="NVRTC is not installed "
                                "(pip install \"eagle-graph[gpu]\")")


def test_eagles_kernels_compile_to_ptx():
    ptx = compile_ptx(_gpu_kernels.source(), "eagle_kernels")
    entries = set(re.findall(r"\.entry (\w+)\(", ptx))
    reductions = {_gpu_kernels.reduce_name(d, op) for d in ("f8", "f4", "i8", "i4", "u8", "u4", "u1")
                  for op in _gpu_kernels.OPS}
    assert reductions | {"eg_loop_start", "eg_loop_turn", "eg_switch_index"} == entries
    assert f".target sm_{_nvrtc.default_arch().removeprefix('compute_')}" in ptx
    assert "fma" not in ptx  # --fmad=false: a sum adds, as on the CPU
