"""The math beyond sin cos tan exp log pow on the device: the CPU's bits (hawk.libm_*).

On a machine with a GPU these run on it; elsewhere on the CPU emulation of the driver
(tests/fakecuda), where the same CUDA C runs as a host build.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
from hawk import Float32, Scalar  # noqa: E402
from hawk import math as hm  # noqa: E402


@hawk.kernel
def more(x: Scalar, y: Scalar):
    return (hm.tanh(x), hm.sinh(x), hm.cosh(x), hm.asin(x), hm.acos(x), hm.atan(x), hm.erf(x), hm.log1p(x),
            hm.expm1(x), hm.log2(x), hm.log10(x), hm.exp2(x), hm.atan2(x, y), hm.hypot(x, y), hm.fmod(x, y),
            hm.sign(x), hm.clip(x, -0.5, y), hm.isnan(x), hm.isfinite(x))


@hawk.kernel
def more32(x: Float32, y: Float32):
    return hm.tanh(x), hm.erf(x), hm.atan2(x, y), hm.hypot(x, y), hm.fmod(x, y), hm.log1p(x)


def test_the_functions_give_the_cpus_bits(gpu):
    rng = np.random.default_rng(3)
    x = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e300, -1e300, 1.0, -1.0, 710.0],
                        rng.standard_normal(3000) * 10.0 ** rng.uniform(-5, 3, 3000)])
    y = np.resize(np.concatenate([[0.0, -0.0, -1.0, 0.5, np.inf, 3.0], rng.uniform(-10, 10, 100)]), x.size)
    for kernel, args in ((more, (x, y)), (more32, (x.astype(np.float32), y.astype(np.float32)))):
        g = eagle.Graph()
        g.add(kernel.plan(*(gpu.asarray(a) for a in args)), name="math")
        outputs = g._nodes[0].payload.outputs
        g.build()
        g.launch()
        for device, cpu in zip(outputs, kernel(*args), strict=True):
            got = gpu.get(device)
            nan = np.isnan(cpu) if cpu.dtype != np.bool_ else np.zeros(cpu.shape, bool)
            if cpu.dtype != np.bool_:
                np.testing.assert_array_equal(np.isnan(got), nan)
            assert got[~nan].tobytes() == cpu[~nan].tobytes()
