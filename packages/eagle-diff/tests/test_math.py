"""Every function of hawk.math, and the operators and reductions, through a recorded graph.

Each kernel runs inside a builder graph between two other nodes (so its
cotangent comes from a node after it and its gradient goes to one before),
and the gradient is checked against central differences at relative 1e-6.
A float32 round trip is checked with a step fit for float32.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import eagle
import hawk
from hawk import Param, Scalar
from hawk import math as hm


@hawk.kernel
def lift(x: Scalar) -> Scalar:
    return 0.5 * x + 0.75  # keeps every sample in (0.8, 1.3): log, sqrt, tan, pow are smooth there


@hawk.kernel
def spread(v: Scalar) -> Scalar:
    return v * v + v


@hawk.kernel
def f_sin(v: Scalar) -> Scalar:
    return hm.sin(v)


@hawk.kernel
def f_cos(v: Scalar) -> Scalar:
    return hm.cos(v)


@hawk.kernel
def f_tan(v: Scalar) -> Scalar:
    return hm.tan(v)


@hawk.kernel
def f_exp(v: Scalar) -> Scalar:
    return hm.exp(v)


@hawk.kernel
def f_log(v: Scalar) -> Scalar:
    return hm.log(v)


@hawk.kernel
def f_sqrt(v: Scalar) -> Scalar:
    return hm.sqrt(v)


@hawk.kernel
def f_abs(v: Scalar) -> Scalar:
    return hm.abs(v - 1.0) * v


@hawk.kernel
def f_floor(v: Scalar) -> Scalar:
    return hm.floor(4.0 * v) + v  # piecewise constant: only the + v carries a gradient


@hawk.kernel
def f_ceil(v: Scalar) -> Scalar:
    return hm.ceil(4.0 * v) * v


@hawk.kernel
def f_pow(v: Scalar, p: Param) -> Scalar:
    return hm.pow(v, p) + hm.pow(2.0 * v, v)


@hawk.kernel
def f_minimum(v: Scalar) -> Scalar:
    return hm.minimum(v, 1.05) * v


@hawk.kernel
def f_maximum(v: Scalar) -> Scalar:
    return hm.maximum(v * v, 1.1)


@hawk.kernel
def f_where(v: Scalar) -> Scalar:
    return hm.where(v > 1.0, v * v, 3.0 * v)


@hawk.kernel
def f_float64(v: Scalar) -> Scalar:
    return hm.float64(v) * 2.0


@hawk.kernel
def f_int32(v: Scalar) -> Scalar:
    return hm.float64(hm.int32(10.0 * v)) + v * v  # the integer part carries no gradient


@hawk.kernel
def f_uint32(v: Scalar) -> Scalar:
    return hm.float64(hm.uint32(10.0 * v)) * v


@hawk.kernel
def f_float32(v: Scalar) -> Scalar:
    return hm.float64(hm.float32(v)) * 3.0


@hawk.kernel
def f_operators(v: Scalar, p: Param) -> Scalar:
    return (v / (1.0 + p * v) - (v % 0.7) * v + v ** 3 - (-v)) * p


@hawk.kernel
def f_reductions(v: Scalar) -> Scalar:
    return v * hawk.sum(v) + hawk.max(v) - hawk.min(v * v)


@hawk.kernel
def f_hyperbolic(v: Scalar) -> Scalar:
    """tanh, sinh, cosh: smooth everywhere."""
    return hm.tanh(v) * hm.sinh(v) + hm.cosh(0.5 * v)


@hawk.kernel
def f_arcs(v: Scalar, p: Param) -> Scalar:
    """asin and acos inside (-1, 1), atan, atan2 off the origin, hypot."""
    u = v - 0.5
    return hm.asin(u) + hm.acos(u) * v + hm.atan(p * v) + hm.atan2(v, 1.5 - p * v) + hm.hypot(v, p)


@hawk.kernel
def f_logs(v: Scalar) -> Scalar:
    """log1p, expm1, log2, log10, exp2 and erf."""
    return hm.log1p(v) * hm.expm1(v - 1.0) + hm.log2(v) + hm.log10(3.0 * v) + hm.exp2(v) + hm.erf(v)


@hawk.kernel
def f_steps(v: Scalar) -> Scalar:
    """fmod off its jumps, sign (0), clip inside and outside its bounds, isnan/isfinite (no
    derivative: bools)."""
    kept = hm.where(hm.isfinite(v) and not hm.isnan(v), v, 0.0)
    return hm.fmod(3.0 * v, 0.7) + hm.sign(v - 1.0) * v + hm.clip(v, 0.9, 1.2) * kept


def graph_of(kernel: hawk.Kernel, *params: float):
    @eagle.Graph.builder
    def build(x, record=False):
        g = eagle.Graph(record=record)
        g.result = spread(kernel(lift(x), *params))
        return g

    return build


CASES = [(f_sin,), (f_cos,), (f_tan,), (f_exp,), (f_log,), (f_sqrt,), (f_abs,), (f_floor,), (f_ceil,),
         (f_pow, 2.5), (f_minimum,), (f_maximum,), (f_where,), (f_float64,), (f_int32,), (f_uint32,),
         (f_operators, 0.8), (f_reductions,), (f_hyperbolic,), (f_arcs, 0.6), (f_logs,), (f_steps,)]
#: the functions each of those four kernels calls
CALLS = {"f_hyperbolic": ("tanh", "sinh", "cosh"), "f_arcs": ("asin", "acos", "atan", "atan2", "hypot"),
         "f_logs": ("log1p", "expm1", "log2", "log10", "exp2", "erf"),
         "f_steps": ("fmod", "sign", "clip", "isnan", "isfinite")}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__)
def test_each_function_against_finite_differences(gradcheck, case):
    x = np.linspace(0.11, 1.07, 7)  # away from the kinks of abs, floor, ceil, minimum, maximum, where
    gradcheck(graph_of(*case), {"x": x}, {"result": np.linspace(1.0, -1.0, 7)}, ("x",))


def test_the_functions_hawk_math_has_are_all_here():
    tested = {c[0].__name__.removeprefix("f_") for c in CASES} | {"float32"}  # and the round trip below
    for case in CASES:  # each function named in CALLS is called by its kernel
        source = inspect.getsource(case[0].__wrapped__)
        assert all(f"hm.{name}(" in source for name in CALLS.get(case[0].__name__, ())), case[0].__name__
    tested |= {name for calls in CALLS.values() for name in calls}
    assert set(hm.__all__) <= tested


def test_a_float32_round_trip(numeric_gradient):
    """float32 keeps about 7 digits: a step of 1e-6 would be mostly rounding, so the check takes
    a larger step on a function that is linear there."""
    build = graph_of(f_float32)
    x = np.linspace(0.11, 1.07, 7)
    g = build(x.copy(), record=True)
    g()
    got = eagle.diff.reverse(g.record, {"result": np.ones(7)}, wrt=("x",))["x"]
    live = x.copy()
    plain = build(live)

    def run(values):
        live[...] = values["x"]
        return float(np.sum(plain()))

    np.testing.assert_allclose(got, numeric_gradient(run, {"x": x}, "x", eps=1e-2), rtol=1e-4)
