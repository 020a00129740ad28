"""The C back end against the NumPy reference evaluator of the IR.

Arithmetic, integer semantics, casts, control flow and reductions must
agree bit for bit; the transcendental functions (libm against NumPy's own)
to a few ulp.  Every kernel runs over several blocks, so the thread team
and the block cuts are part of what is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Float32, Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm
from hawk.kernel import leaves

N = 2500  # three blocks of samples


def floats(rng: np.random.Generator, n: int, dtype: type = np.float64) -> np.ndarray:
    """Random values with the awkward ones mixed in: zeros, infinities, NaN, tiny and huge."""
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    specials = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, 3e9, -3e9, 2.5, -2.5, 0.5]
    x[:len(specials)] = specials
    return rng.permutation(x).astype(dtype)


def ints(rng: np.random.Generator, n: int, dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    x = rng.integers(-50, 50, n).astype(dtype) if info.min < 0 else rng.integers(0, 100, n).astype(dtype)
    specials = [0, 1, info.max, info.min, info.max - 1, 7]
    if info.min < 0:
        specials += [-1, -7, info.min + 1]
    x[:len(specials)] = np.array(specials).astype(dtype)
    return rng.permutation(x)


def same(c_out, ref_out) -> None:
    for a, b in zip(leaves(c_out), leaves(ref_out), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)



# ------------------------------------------------------------------ kernels


@hawk.kernel
def float_ops(a: Scalar, b: Scalar):
    return (a + b, a - b, a * b, a / b, a // b, a % b, -a, abs(a), hm.floor(a), hm.ceil(b),
            hm.minimum(a, b), hm.maximum(a, b), hm.where(a < b, a, b), a * 2 + 0.5, hm.abs(b))


@hawk.kernel
def float32_ops(a: Float32, b: Float32, p: Param):
    return a + b * p, a / b, a // b, a % b, hm.minimum(a, b), a * 0.1, hm.float64(a) * 0.1


@hawk.kernel
def int_ops(a: Int32, b: Int32, e: Int32):
    return (a + b, a - b, a * b, a // b, a % b, -a, abs(a), a ** e, a / b, a < b, a == b,
            hm.minimum(a, b), a + 1, a * 2.5)


@hawk.kernel
def uint_ops(a: UInt32, b: UInt32):
    return a + b, a - b, a * b, a // b, a % b, a ** b, a > b, a + 1, a - 1


@hawk.kernel
def mixed_ints(a: Int32, b: UInt32):
    return a + b, a * b, a < b, a // b


@hawk.kernel
def casts(x: Scalar):
    return hm.int32(x), hm.uint32(x), hm.float32(x), hm.float64(hm.float32(x)), hm.int32(hm.uint32(x))


@hawk.kernel
def logic(a: Scalar, b: Scalar):
    return (a < b) and (b > 0.0), (a < b) or not (b < 0.0), not a, hm.uint32(a > b) + hm.uint32(a < b)


@hawk.kernel
def control(x: Scalar, p: Param):
    if x > p:
        y = x - p
        if y > 10.0:
            y = 10.0
    elif x < -p:
        y = x + p
    else:
        y = 0.0
    z = x if x > 0.0 else -x * 2.0
    w = x * 3.0
    if w > 1.0:
        w = hm.sqrt(w)
    return y, z, w


@hawk.kernel
def choose(x: Scalar, flag: Int32):
    # x is first read inside an arm: each arm must load it for itself
    return x * 0.5 if flag else x + 1.0


@hawk.kernel
def transcendental(x: Scalar):
    return (hm.sin(x), hm.cos(x), hm.tan(x), hm.exp(x * 0.01), hm.log(abs(x)), hm.sqrt(abs(x)),
            hm.pow(abs(x), 0.3))


@hawk.kernel
def transcendental32(x: Float32):
    return hm.sin(x), hm.exp(x * 0.01), hm.log(abs(x)), hm.sqrt(abs(x))


@hawk.kernel
def reductions(x: Scalar, flags: Int32):
    total = hawk.sum(x)
    centred = x - total / 3.0
    return (total, hawk.max(x), hawk.min(x), hawk.any(flags > 40), hawk.all(flags > -100),
            centred, hawk.sum(centred * centred), hawk.sum(flags), hawk.sum(x > 0.0))


@hawk.kernel
def tree(x: Scalar):
    return {"a": x + 1.0, "pair": (x * 2.0, [x * x])}


@hawk.kernel
def in_place(x: Scalar, y: Mutable[Scalar], count: Mutable[UInt32]):
    if x > 0.0:
        y = y + x
    count = hm.uint32(hawk.sum(x > 0.0))


@hawk.kernel
def components(v: Scalar, out: Mutable[Scalar]):
    out[0] = v[0] * v[1]
    out[1] = v[0] + v[1] + v[2]


# -------------------------------------------------------------------- tests


@pytest.mark.parametrize("n", [N, 1, 5])
def test_float_arithmetic_matches_the_reference_bit_for_bit(n):
    rng = np.random.default_rng(1)
    a, b = floats(rng, max(n, 13))[:n], floats(rng, max(n, 13))[:n]
    same(float_ops(a, b), float_ops.reference(a, b))


def test_float32_arithmetic_and_weak_scalars():
    rng = np.random.default_rng(2)
    a, b = floats(rng, N, np.float32), floats(rng, N, np.float32)
    out = float32_ops(a, b, 0.3)
    same(out, float32_ops.reference(a, b, 0.3))
    assert [o.dtype for o in out] == [np.float32] * 6 + [np.float64]
    np.testing.assert_array_equal(out[5], a * 0.1)  # NumPy's own answer: the Python float is weak


@pytest.mark.parametrize("kernel, dtypes", [(int_ops, (np.int32, np.int32, np.int32)),
                                            (uint_ops, (np.uint32, np.uint32)),
                                            (mixed_ints, (np.int32, np.uint32))])
def test_integer_semantics_match_the_reference(kernel, dtypes):
    rng = np.random.default_rng(3)
    args = [ints(rng, N, t) for t in dtypes]
    if kernel is int_ops:
        args[2] = rng.integers(-3, 40, N).astype(np.int32)  # exponents, some negative
    if kernel is uint_ops:
        args[1] = rng.integers(0, 40, N).astype(np.uint32)
    same(kernel(*args), kernel.reference(*args))


def test_integer_results_agree_with_numpy_where_numpy_defines_them():
    a = np.array([7, -7, 7, -7, 2**31 - 1], np.int32)
    b = np.array([2, 2, -2, -2, 1], np.int32)
    out = int_ops(a, b, np.array([2, 3, 0, 1, 2], np.int32))
    np.testing.assert_array_equal(out[3], a // b)  # floor division, as Python
    np.testing.assert_array_equal(out[4], a % b)
    np.testing.assert_array_equal(out[0], a + b)  # wraps
    np.testing.assert_array_equal(out[8], a / b)


def test_casts_saturate_and_send_nan_to_zero():
    x = np.array([np.nan, -1.5, 3.7, 5e9, -5e9, np.inf, -np.inf, 2.5])
    i32, u32, f32, _, _ = casts(x)
    np.testing.assert_array_equal(i32, [0, -1, 3, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2])
    np.testing.assert_array_equal(u32, [0, 0, 3, 2**32 - 1, 0, 2**32 - 1, 0, 2])
    np.testing.assert_array_equal(f32, x.astype(np.float32))
    rng = np.random.default_rng(4)
    y = floats(rng, N)
    same(casts(y), casts.reference(y))


def test_logic_and_control_flow():
    rng = np.random.default_rng(5)
    a, b = floats(rng, N), floats(rng, N)
    same(logic(a, b), logic.reference(a, b))
    same(control(a, 1.5), control.reference(a, 1.5))
    y, z, _ = control(np.array([3.0, -3.0, 0.5, 50.0]), 1.5)
    np.testing.assert_array_equal(y, [1.5, -1.5, 0.0, 10.0])
    np.testing.assert_array_equal(z, [3.0, 6.0, 0.5, 50.0])


def test_a_value_first_read_in_one_arm_is_read_in_the_other_too():
    x, flag = np.arange(1.0, 7.0), np.array([0, 0, 0, 0, 0, 1], np.int32)
    expected = np.where(flag, x * 0.5, x + 1.0)
    np.testing.assert_array_equal(choose(x, flag), expected)
    np.testing.assert_array_equal(choose.reference(x, flag), expected)


def test_transcendental_functions_agree_to_a_few_ulp():
    rng = np.random.default_rng(6)
    x = floats(rng, N)
    for c, r in zip(transcendental(x), transcendental.reference(x), strict=True):
        np.testing.assert_allclose(c, r, rtol=4e-16 * 8, atol=0, equal_nan=True)
    x32 = floats(rng, N, np.float32)
    for c, r in zip(transcendental32(x32), transcendental32.reference(x32), strict=True):
        assert c.dtype == np.float32
        np.testing.assert_allclose(c, r, rtol=3e-7 * 4, atol=0, equal_nan=True)


def test_reductions_match_the_reference_and_one_fixed_order(threads):
    rng = np.random.default_rng(7)
    x, flags = rng.standard_normal(N * 3), ints(rng, N * 3, np.int32)
    out = reductions(x, flags)
    same(out, reductions.reference(x, flags))
    assert out[0].shape == (1,) and out[5].shape == (N * 3,)
    assert out[0].dtype == np.float64 and out[7].dtype == np.int64 and out[3].dtype == np.bool_


def test_reductions_are_bit_identical_for_any_thread_count():
    from eagle import _core

    rng = np.random.default_rng(8)
    x, flags = rng.standard_normal(50_000) * 1e3, rng.integers(-99, 99, 50_000).astype(np.int32)
    before = _core.num_threads()
    results = []
    try:
        for t in (1, 2, 3, 4):
            _core.set_num_threads(t)
            results.append(reductions(x, flags))
    finally:
        _core.set_num_threads(before)
    for other in results[1:]:
        same(other, results[0])


def test_return_trees_mutables_and_components():
    x = np.array([1.0, -2.0, 3.0])
    out = tree(x)
    assert list(out) == ["a", "pair"] and isinstance(out["pair"], tuple) and isinstance(out["pair"][1], list)
    np.testing.assert_array_equal(out["pair"][1][0], x * x)
    y, count = np.array([10.0, 10.0, 10.0]), np.zeros(1, np.uint32)
    assert in_place(x, y, count) is None
    np.testing.assert_array_equal(y, [11.0, 10.0, 13.0])
    assert count[0] == 2
    v, o = np.arange(9.0).reshape(3, 3), np.zeros((2, 3))
    components(v, o)
    np.testing.assert_array_equal(o, [v[0] * v[1], v[0] + v[1] + v[2]])
    rng = np.random.default_rng(9)
    big_v, o1, o2 = rng.standard_normal((3, N)), np.zeros((2, N)), np.zeros((2, N))
    components(big_v, o1)
    components.reference(big_v, o2)
    np.testing.assert_array_equal(o1, o2)


def test_an_empty_batch_runs_and_writes_nothing():
    out = float_ops(np.zeros(0), np.zeros(0))
    assert all(o.shape == (0,) for o in out)
