"""Loops, break/continue, early returns, short-circuit logic and helpers on the device: the CPU's bits.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda), where
the same CUDA C runs as a host build.  The kernels are hawk's own tests' (test_flow.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

_PATH = Path(__file__).resolve().parents[2] / "packages" / "hawk" / "tests" / "test_flow.py"
_SPEC = importlib.util.spec_from_file_location("hawk_tests_flow_for_gpu", _PATH)
flow = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = flow  # its @hawk.struct dataclasses look their module up
_SPEC.loader.exec_module(flow)

N = 700


def launched(gpu, kernel, args):
    """The kernel's outputs from one launch on the device (arrays copied there)."""
    g = eagle.Graph()
    g.add(kernel.plan(*(gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args)), name="k")
    outputs = g._nodes[0].payload.outputs
    g.build()
    g.launch()
    return [gpu.get(o) for o in outputs]


def same(got, want) -> None:
    for a, b in zip(got, eagle.extend.flatten(want), strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kernel, make, python", flow.CASES, ids=flow.IDS)
def test_each_form_gives_the_cpus_bits(gpu, kernel, make, python):
    args = make(*flow.inputs(np.random.default_rng(8), N))
    same(launched(gpu, kernel, args), kernel(*args))


@pytest.mark.parametrize("kernel, make, python", flow.CASES[:-1], ids=flow.IDS[:-1])
def test_each_forms_vjp_and_jvp_give_the_cpus_bits(gpu, kernel, make, python):
    """A derivative kernel enters a graph only through eagle.diff, which runs on the CPU: here its
    IR is launched as a plain kernel, so its CUDA C runs on the device."""
    args = make(*flow.inputs(np.random.default_rng(8), N))
    names = [n for n, _ in kernel.vjp.params[len(kernel.params):]]
    cts = [np.linspace(-1.0, 1.0, o.size).reshape(o.shape)
           for o in flow.derivatives.outputs(kernel, args, names)]
    tangents = [np.cos(np.arange(N)) if isinstance(a, np.ndarray) else 0.5 for a in args
                if isinstance(a, (np.ndarray, float))]
    for derived, extra in ((kernel.vjp, cts), (kernel.jvp, tangents)):
        plain = hawk.Kernel(f"{derived.__name__}_plain", derived.params, derived.ir_of)
        same(launched(gpu, plain, [*args, *extra]), derived(*args, *extra))


@eagle.Graph.builder
def chain(x, y):
    g = eagle.Graph()
    s = flow.walker(x, y)
    s = flow.early(s, y)
    g.result = flow.nested(flow.helped(s, 1.5), 4)
    return g


def test_a_fused_device_graph_of_loops_gives_the_cpus_bits(gpu, monkeypatch):
    x, y = flow.inputs(np.random.default_rng(9), N)
    monkeypatch.setenv("EAGLE_FUSE", "0")
    want = chain(x.copy(), y.copy())()
    for fuse in ("1", "0"):
        monkeypatch.setenv("EAGLE_FUSE", fuse)
        g = chain(gpu.asarray(x), gpu.asarray(y))
        assert g.backend == "gpu" and bool(g.fused) == (fuse == "1")
        assert gpu.get(g()).tobytes() == want.tobytes()
