"""eagle's own CUDA C (the fixed-order reductions, loop counters, switch keys) compiles with NVRTC
to PTX with one entry per kernel: checked wherever NVRTC is installed (no GPU needed)."""

from __future__ import annotations

import re

import pytest

from eagle import _gpu_kernels, _nvrtc

# Taken at collection, before the gpu fixture swaps in the emulation's host compiler.
available, compile_ptx, image_for = _nvrtc.available, _nvrtc.compile_ptx, _nvrtc.image_for

pytestmark = pytest.mark.skipif(not available(), reason="NVRTC is not installed "
                                "(pip install \"eagle-graph[cuda12]\" or \"eagle-graph[cuda13]\")")


def test_eagles_kernels_compile_to_ptx():
    ptx = compile_ptx(_gpu_kernels.source(), "eagle_kernels")
    entries = set(re.findall(r"\.entry (\w+)\(", ptx))
    reductions = {_gpu_kernels.reduce_name(d, op) for d in ("f8", "f4", "i8", "i4", "u8", "u4", "u1")
                  for op in _gpu_kernels.OPS}
    assert reductions | {"eg_loop_start", "eg_loop_turn", "eg_switch_index", "eg_chain_key"} == entries
    assert f".target sm_{_nvrtc.default_arch().removeprefix('compute_')}" in ptx
    assert "fma" not in ptx  # --fmad=false: a sum adds, as on the CPU


def test_an_older_driver_gets_a_cubin_a_newer_one_ptx():
    """PTX from an NVRTC newer than the driver does not load: a CUBIN for the device instead."""
    source = 'extern "C" __global__ void k(float *x) { x[0] = 1.0f; }'
    major, minor = _nvrtc.version()
    newer = image_for(source, "k_new", 1000 * major + 10 * minor, lambda: "sm_75")
    assert newer.endswith(b"\0") and b".entry k" in newer
    older = image_for(source, "k_old", 1000 * major + 10 * minor - 10, lambda: "sm_75")
    assert older.startswith(b"\x7fELF")  # a CUBIN is an ELF image


def test_the_compaction_kernels_compile_to_ptx():
    """eagle.simulate's gather on the device (eagle._compaction): partition, inverse and move."""
    from eagle import _compaction

    ptx = compile_ptx(_compaction._CUDA, "eagle_simulate")
    assert set(re.findall(r"\.entry (\w+)\(", ptx)) == {"eg_sim_count", "eg_sim_scan", "eg_sim_place",
                                                         "eg_sim_invert", "eg_sim_move"}
