"""eagle's own transcendental functions on the device: the CPU's bits (hawk.libm).

On a machine with a GPU these run on it; elsewhere on the CPU emulation of the driver
(tests/fakecuda), where the same CUDA C runs as a host build.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
from hawk import Scalar  # noqa: E402
from hawk import math as hm  # noqa: E402


@hawk.kernel
def every_function(x: Scalar, y: Scalar):
    return hm.sin(x), hm.cos(x), hm.tan(x), hm.exp(x), hm.log(x), hm.pow(x, y)


def test_the_math_functions_give_the_cpus_bits(gpu):
    rng = np.random.default_rng(3)
    x = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e300, -1e300, 1.6e6, -745.0],
                        rng.standard_normal(3000) * 10.0 ** rng.uniform(-5, 8, 3000)])
    y = np.resize(np.concatenate([[0.0, -1.0, 0.5, np.inf, 3.0], rng.uniform(-10, 10, 100)]), x.size)
    g = eagle.Graph()
    g.add(every_function.plan(gpu.asarray(x), gpu.asarray(y)), name="math")
    outputs = g._nodes[0].payload.outputs
    g.build()
    g.launch()
    for device, cpu in zip(outputs, every_function(x, y), strict=True):
        got = gpu.get(device)
        nan = np.isnan(cpu)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(np.uint64), cpu[~nan].view(np.uint64))
