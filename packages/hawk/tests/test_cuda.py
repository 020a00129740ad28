"""The CUDA back end: every test kernel (and its derivatives) compiles to PTX with NVRTC.

NVRTC needs no GPU; where it is not installed these tests skip (the nox
session `cuda_codegen` installs it).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from hawk import cuda, runs


def sibling(name: str) -> ModuleType:
    """Another test module of this folder, for its kernels (the tests run in importlib mode)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"hawk_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


backend, calls, derivatives = sibling("test_backend"), sibling("test_calls"), sibling("test_derivatives")
tables = sibling("test_tables")

pytestmark = pytest.mark.skipif(not cuda.available(), reason="NVRTC is not installed "
                                "(pip install \"raptor-hawk[cuda12]\" or \"raptor-hawk[cuda13]\")")

x, i32, u32 = np.ones(8), np.ones(8, np.int32), np.ones(8, np.uint32)
CELL = np.zeros(1, np.uint32)

CASES = [
    (backend.float_ops, (x, x)), (backend.float32_ops, (x.astype(np.float32),) * 2 + (0.5,)),
    (backend.int_ops, (i32, i32, i32)), (backend.uint_ops, (u32, u32)), (backend.mixed_ints, (i32, u32)),
    (backend.casts, (x,)), (backend.logic, (x, x)), (backend.control, (x, 1.5)),
    (backend.transcendental, (x,)), (backend.transcendental32, (x.astype(np.float32),)),
    (backend.reductions, (x, i32)), (backend.tree, (x,)), (backend.in_place, (x, x.copy(), CELL)),
    (backend.components, (np.ones((3, 8)), np.ones((2, 8)))),
    (calls.affine, (x, 2.0, 1.0)), (calls.below, (x, 1.0, CELL)), (calls.centre, (x,)),
    (derivatives.smooth.vjp, (x, x, 1.0, x)), (derivatives.smooth.jvp, (x, x, 1.0, x, x, 1.0)),
    (derivatives.branchy.vjp, (x, x, 1.0, x)), (derivatives.reduced.vjp, (x, 1.0, x)),
    (derivatives.in_place.vjp, (x, x, CELL, i32, x)), (derivatives.vectors.jvp, (np.ones((3, 8)), 1.0,
                                                                                  np.ones((3, 8)), 1.0)),
    (tables.stencil, (x, x)), (tables.grid, (x, np.ones((4, 2)))), (tables.lookup, (x, x, i32)),
    (tables.weights.vjp, (x, np.ones((5, 3)), i32, x)), (tables.weights.jvp, (x, np.ones((5, 3)), i32, x,
                                                                              np.ones((5, 3)))),
    (tables.histogram, (x, i32, np.ones(10))), (tables.histogram.vjp, (x, i32, np.ones(10), np.ones(10))),
    (tables.placed, (x, i32, x.copy())),
]


@pytest.mark.parametrize("kernel, args", CASES, ids=[k.__name__ for k, _ in CASES])
def test_every_kernel_compiles_to_ptx(kernel, args):
    ptx = kernel.ptx(*args)
    entries = re.findall(r"__global__ void (hk_\w+_p\d+)", kernel.cuda_source(*args))
    assert re.findall(r"\.entry (hk_\w+_p\d+)", ptx) == entries  # every phase compiled
    reductions = len(kernel.ir(*args).reductions)
    if kernel.__name__.endswith("_vjp"):  # its Params' sums wait for no other: they share phases
        assert 1 <= len(entries) <= reductions + 1
    else:  # a kernel's own launch: a phase per reduction, then the last
        assert len(entries) == reductions + 1
    assert f".target sm_{cuda.default_arch().removeprefix('compute_')}" in ptx


def test_no_contraction_into_fma():
    """a * x + b stays a multiply and an add, as on the CPU (--fmad=false)."""
    ptx = calls.affine.ptx(x, 2.0, 1.0)
    assert "mul.f64" in ptx or "mul.rn.f64" in ptx
    assert "fma" not in ptx


def test_a_rejected_source_raises_with_the_log():
    with pytest.raises(cuda.NvrtcError, match="compiling broken failed"):
        cuda.compile_ptx('extern "C" __global__ void k() { undefined_thing(); }', "broken")


def test_a_fused_run_compiles_to_one_kernel_per_phase():
    """The CUDA C of a fused run (hawk.runs), from the same fused IR as the CPU's: one entry for a
    chain, two for a chain ending in a reduction, no contraction."""
    y = np.ones(8)
    chain = [calls.affine.plan(y, 2.0, 1.0)]
    chain.append(calls.affine.plan(chain[-1].outputs[0], 0.5, 0.25))
    chain.append(calls.centre.plan(chain[-1].outputs[0]))
    keys: dict[int, int] = {}

    def key(array):
        return keys.setdefault(id(array), len(keys))

    for members, entries in ((chain[:2], 1), (chain, 2)):
        ptx = cuda.compile_ptx(runs.source(members, key, lambda array: True, "cuda"), "hk_run")
        assert len(re.findall(r"\.entry hk_run_p\d+", ptx)) == entries
        assert "fma" not in ptx


def test_the_check_cells_compile_to_ptx():
    """A checked read's lock word (atomicCAS) and the keeper of a body's first error (hawk.checks)."""
    from hawk import checks

    ptx = tables.lookup.ptx(x, x, i32)
    assert "atom.global.cas.b64" in ptx or "atom.cas.b64" in ptx
    assert ".entry hk_keep_first" in cuda.compile_ptx(checks._KEEP_FIRST, "hawk_checks")
