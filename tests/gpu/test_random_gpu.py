"""hawk.random on the device: the CPU's bits (a draw depends on seed, sample and counter only).

On a machine with a GPU these run on it; elsewhere on the CPU emulation of the driver
(tests/fakecuda), where the same CUDA C runs as a host build.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
from hawk import Int32, Param, Scalar  # noqa: E402


@hawk.kernel
def draws(x: Scalar, seed: Param[Int32]):
    return (x + hawk.random(seed, 0), hawk.random.uniform32(seed, 1), hawk.random.normal(seed, 2),
            hawk.random.bits(seed, 3, 1))


def test_the_draws_give_the_cpus_bits(gpu):
    x = np.linspace(-1.0, 1.0, 3000)
    g = eagle.Graph()
    g.add(draws.plan(gpu.asarray(x), 17), name="draws")
    outputs = g._nodes[0].payload.outputs
    g.build()
    g.launch()
    for device, cpu in zip(outputs, draws(x, 17), strict=True):
        assert gpu.get(device).tobytes() == cpu.tobytes()
