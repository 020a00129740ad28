"""Dispatch groups on the device: switch, predicated and segmented (the partition as device
kernels, grid-stride arm kernels over the device-held count) give the CPU's bits, at any logical
size and with skip=; the kernels are hawk's own tests' (test_dispatch.py).

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import eagle

pytest.importorskip("hawk")

HAWK_TESTS = Path(__file__).parents[2] / "packages" / "hawk" / "tests"
cases = SimpleNamespace(**runpy.run_path(str(HAWK_TESTS / "test_dispatch.py")))

N = 3000  # more than one block of samples


def launch(gpu, policy: str, logical: int | None = None, skip: np.ndarray | None = None) -> tuple:
    photon, m, hits = cases.inputs(N)
    d = cases.Photon(pos=gpu.asarray(photon.pos), weight=gpu.asarray(photon.weight))
    dm, dhits, out = gpu.asarray(m), gpu.asarray(hits), gpu.asarray(np.full(N, -7.0))
    bound = cases.shade.plan(d, dm, dhits, np.uint32(9), buffer=out)
    bound = bound.with_dispatch({"material": policy}, skip=None if skip is None else gpu.asarray(skip))
    g = eagle.Graph().add(bound).build()
    assert g._backend == "gpu"
    if logical is not None:
        g.set_logical_size(logical)
    g.launch()
    return gpu.get(out), gpu.get(dhits)


@pytest.mark.parametrize("policy", cases.POLICIES)
def test_every_policy_on_the_device_gives_the_reference_bits(gpu, policy):
    want = cases.reference(N)
    got = launch(gpu, policy)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("logical", [0, 1, 1500])
def test_segmented_on_the_device_runs_the_first_samples_of_a_logical_size(gpu, logical):
    want, _ = cases.reference(N)
    out, _ = launch(gpu, "segmented", logical=logical)
    assert out[:logical].tobytes() == want[:logical].tobytes() and (out[logical:] == -7.0).all()


def test_segmented_on_the_device_leaves_out_the_samples_skip_marks(gpu):
    skip = (np.arange(N) % 4 == 1).astype(np.uint8)
    want, _ = cases.reference(N)
    out, _ = launch(gpu, "segmented", skip=skip)
    live = skip == 0
    assert out[live].tobytes() == want[live].tobytes() and (out[~live] == -7.0).all()
