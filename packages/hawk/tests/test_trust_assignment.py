"""A parameter is always assigned: reassigning it in some arms of an if merges per sample."""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Float32, Int32, Mutable, Param, Scalar

from .test_backend import floats, same


@hawk.kernel
def clamp(x: Scalar, lo: Param) -> Scalar:
    if x < lo:
        x = lo
    return x


@hawk.kernel
def band(x: Scalar, lo: Param, hi: Param) -> Scalar:
    if x < lo:
        x = lo
    elif x > hi:
        x = hi
    elif x == 0.0:
        x = x + 0.5
    return x


@hawk.kernel
def nested(x: Scalar, y: Float32, flip: Param[Int32]) -> tuple[Scalar, Float32]:
    if flip > 0:  # uniform: one arm for every sample
        if x > 0.0:
            x = -x
            if y > 1.0:
                y = y * 2.0
    return x, y


@hawk.kernel
def promotes(x: Int32, y: Float32) -> Scalar:
    if x > 3:
        x = y  # int32 meets float32: float64, as NumPy promotes them, on both back ends
    return x


@hawk.kernel
def in_place(x: Scalar, m: Mutable[Scalar]):
    if x > 0.0:
        m = m + x
    if x < -1.0:
        x = -1.0
    m = m + x


def test_clamping_a_parameter_in_one_arm():
    x = np.array([-3.0, 0.0, 1.0, 2.5, 9.0])
    np.testing.assert_array_equal(clamp(x, 1.0), [1.0, 1.0, 1.0, 2.5, 9.0])
    np.testing.assert_array_equal(clamp(x.astype(np.float32), 1.0), np.maximum(x, 1.0).astype(np.float32))


@pytest.mark.parametrize("n", [17, 2500])
def test_merged_parameters_match_the_reference_bit_for_bit(n):
    rng = np.random.default_rng(17)
    x, y = floats(rng, n), floats(rng, n, np.float32)
    same(clamp(x, 0.25), clamp.reference(x, 0.25))
    same(band(x, -1.0, 2.0), band.reference(x, -1.0, 2.0))
    for flip in (0, 1):
        same(nested(x, y, flip), nested.reference(x, y, flip))
    k = (rng.integers(0, 8, n)).astype(np.int32)
    out = promotes(k, y)
    assert out.dtype == np.float64
    same(out, promotes.reference(k, y))
    np.testing.assert_array_equal(out, np.where(k > 3, y.astype(np.float64), k))
    m1, m2 = x.copy(), x.copy()
    in_place(x, m1)
    in_place.reference(x, m2)
    same(m1, m2)
    np.testing.assert_array_equal(m1, np.where(x > 0, 2 * x, x) + np.maximum(x, -1.0) * (x >= -1.0)
                                  - 1.0 * (x < -1.0))


def test_a_local_assigned_in_one_arm_only_is_still_refused():
    def one_arm(x: Scalar) -> Scalar:
        if x > 0:
            y = x
        return y

    with pytest.raises(hawk.KernelSyntaxError, match="'y' may be unassigned here"):
        hawk.kernel(one_arm)
