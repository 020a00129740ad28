"""The math beyond sin cos tan exp log pow: tanh sinh cosh asin acos atan atan2 erf log1p expm1
log2 log10 exp2 hypot (eagle's own, hawk.libm_*), fmod sign clip isnan isfinite (exact).

Bits: a kernel gives the reference's bits and hawk.math's outside a kernel, in float64 and
float32, eagerly, planned, in a builder graph and fused (hawk.libm's own test builds the C of
every function at every flag).  Accuracy: within 1 ulp of mpmath's value over wide ranges.
Special values: NumPy's.  Derivatives: vjp and jvp against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle import extend
from hawk import Int32, Param, Scalar, UInt32, libm
from hawk import math as hm

SMOOTH = ("tanh", "sinh", "cosh", "asin", "acos", "atan", "erf", "log1p", "expm1", "log2", "log10", "exp2")
BINARY = ("atan2", "hypot")
NUMPY = {"tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos,
         "atan": np.arctan, "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2, "log10": np.log10,
         "exp2": np.exp2, "atan2": np.arctan2, "hypot": np.hypot}
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 5e-324, -5e-324,
                     1e-310, 2.2250738585072014e-308, 1e-300, 1e300, -1e300, 1.7976931348623157e308, 700.0,
                     710.0, 710.4758600739439, 711.0, -745.0, -746.0, 22.0, -22.0, 6.0, 0.84375, 1.25,
                     0.975, 0.4375, 2.4375, 1023.0, 1024.0, -1074.0, -1075.0, -1.0000000000000002])


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert got.dtype == want.dtype and got[~nan].tobytes() == want[~nan].tobytes()


def arguments(seed: int, n: int = 3000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    spread = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
    return np.concatenate([SPECIALS, rng.uniform(-3, 3, n), spread,
                           rng.integers(0, 2 ** 64, n, dtype=np.uint64).view(np.float64)])


@hawk.kernel
def unary(x: Scalar):
    return (hm.tanh(x), hm.sinh(x), hm.cosh(x), hm.asin(x), hm.acos(x), hm.atan(x), hm.erf(x), hm.log1p(x),
            hm.expm1(x), hm.log2(x), hm.log10(x), hm.exp2(x), hm.sign(x), hm.isnan(x), hm.isfinite(x))


@hawk.kernel
def binary(x: Scalar, y: Scalar):
    return hm.atan2(x, y), hm.hypot(x, y), hm.fmod(x, y), hm.clip(x, -0.5, y)


@hawk.kernel
def integers(a: Int32, b: Int32, u: UInt32):
    return (hm.fmod(a, b), hm.sign(a), hm.clip(a, -3, b), hm.isnan(a), hm.isfinite(a), hm.sign(u),
            hm.fmod(u, 7))


UNARY = (*SMOOTH, "sign", "isnan", "isfinite")


def test_kernels_give_the_references_bits_and_hawk_maths(threads):
    x = arguments(1)
    y = np.resize(arguments(2), x.size)
    with np.errstate(all="ignore"):
        for kernel, args, names in ((unary, (x,), UNARY), (binary, (x, y), (*BINARY, "fmod", "clip"))):
            for name, got, ref in zip(names, kernel(*args), kernel.reference(*args), strict=True):
                same_bits(got, ref)
                extra = (-0.5,) if name == "clip" else ()
                same_bits(got, np.asarray(getattr(hm, name)(args[0], *extra, *args[1:])))
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        for kernel, args in ((unary, (x32,)), (binary, (x32, y32))):  # Scalar: the planes' float32
            for got, ref in zip(kernel(*args), kernel.reference(*args), strict=True):
                assert got.dtype in (np.float32, np.bool_)
                same_bits(got, ref)


def test_the_exact_functions_are_numpys():
    x = arguments(3)
    y = np.resize(arguments(4), x.size)
    with np.errstate(all="ignore"):
        sign, isnan, isfinite = unary(x)[12:]
        same_bits(sign, np.sign(x))
        np.testing.assert_array_equal(isnan, np.isnan(x))
        np.testing.assert_array_equal(isfinite, np.isfinite(x))
        _, _, fmod, clip = binary(x, y)
        same_bits(fmod, np.fmod(x, y))
        same_bits(clip, np.clip(x, -0.5, y))
        rng = np.random.default_rng(5)
        a, b = rng.integers(-50, 50, 999).astype(np.int32), rng.integers(-6, 6, 999).astype(np.int32)
        a[:3], b[:3] = [np.iinfo(np.int32).min, 7, -7], [-1, 0, 3]
        u = rng.integers(0, 9, 999).astype(np.uint32)
        want = (np.fmod(a, b), np.sign(a), np.clip(a, -3, b), np.isnan(a), np.isfinite(a), np.sign(u),
                np.fmod(u, np.uint32(7)))
        for got, ref, w in zip(integers(a, b, u), integers.reference(a, b, u), want, strict=True):
            np.testing.assert_array_equal(got, ref)
            assert got.dtype == w.dtype and np.array_equal(got, w)


def test_special_values_are_numpys():
    """±0 keep their sign, infinities and NaN as C99 (NumPy) gives them: compared where NumPy is
    exact (a result that is 0, ±inf, NaN, ±1 or ±pi/2 family), and the argument is special."""
    s = SPECIALS
    with np.errstate(all="ignore"):
        for name in (n for n in SMOOTH if n in NUMPY):
            got, want = libm.evaluate(name, s), NUMPY[name](s)
            exact = np.isnan(want) | np.isinf(want) | (want == 0) | (np.abs(s) < 1e-300)
            same_bits(got[exact], want[exact])
        sx, sy = (a.ravel() for a in np.meshgrid(s, s))
        for name in BINARY:
            got, want = libm.evaluate(name, sx, sy), NUMPY[name](sx, sy)
            exact = np.isnan(want) | np.isinf(want) | (want == 0) | ~np.isfinite(sx) | ~np.isfinite(sy) | \
                (sx == 0) | (sy == 0)
            same_bits(got[exact], want[exact])
    assert libm.evaluate("erf", np.array([np.inf, -np.inf, -0.0])).tolist() == [1.0, -1.0, -0.0]
    assert np.signbit(libm.evaluate("erf", np.array([-0.0])))[0]
    assert libm.evaluate("hypot", np.array([np.inf]), np.array([np.nan]))[0] == np.inf


#: function -> ranges: (low, high) uniform, ("log", low, high) log-spread of both signs, ("abs", ...)
RANGES = {
    "tanh": [(-1.0, 1.0), (-25.0, 25.0), ("log", 1e-300, 1e-5)],
    "sinh": [(-1.0, 1.0), (-30.0, 30.0), (-710.0, 710.0)],
    "cosh": [(-1.0, 1.0), (-30.0, 30.0), (-710.0, 710.0)],
    "asin": [(-1.0, 1.0), ("log", 1e-300, 1e-3)],
    "acos": [(-1.0, 1.0), ("log", 1e-300, 1e-3)],
    "atan": [(-3.0, 3.0), ("log", 1e-300, 1e300)],
    "erf": [(-1.0, 1.0), (-6.0, 6.0), ("log", 1e-300, 1e-3)],
    "log1p": [(-1.0, 1.0), ("abs", 1e-300, 1e300)],
    "expm1": [(-1.0, 1.0), (-40.0, 709.0), ("log", 1e-300, 1e-5)],
    "log2": [(0.5, 2.0), ("abs", 1e-300, 1e300), ("abs", 5e-324, 2e-308)],
    "log10": [(0.5, 2.0), ("abs", 1e-300, 1e300)],
    "exp2": [(-1.0, 1.0), (-1074.0, 1023.0)],
    "atan2": [((-10.0, 10.0), (-10.0, 10.0)), (("log", 1e-300, 1e300), ("log", 1e-300, 1e300))],
    "hypot": [((-10.0, 10.0), (-10.0, 10.0)), (("log", 1e-300, 1e300), ("log", 1e-300, 1e300)),
              (("log", 5e-324, 1e-300), ("log", 5e-324, 1e-300))],
}


def draw(rng: np.random.Generator, spec: tuple, n: int) -> np.ndarray:
    if spec[0] in ("log", "abs"):
        magnitude = np.exp(rng.uniform(np.log(spec[1]), np.log(spec[2]), n))
        return magnitude * (rng.choice([-1.0, 1.0], n) if spec[0] == "log" else 1.0)
    return rng.uniform(spec[0], spec[1], n)


def exact(name: str, args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """mpmath's value at 200 bits as a head and a tail (doubles; the tail's own error is far below
    an ulp of the head)."""
    import mpmath

    fn = {"tanh": mpmath.tanh, "sinh": mpmath.sinh, "cosh": mpmath.cosh, "asin": mpmath.asin,
          "acos": mpmath.acos, "atan": mpmath.atan, "erf": mpmath.erf, "log1p": mpmath.log1p,
          "expm1": mpmath.expm1, "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10,
          "exp2": lambda x: mpmath.power(2, x), "atan2": mpmath.atan2,
          "hypot": lambda a, b: mpmath.sqrt(a * a + b * b)}[name]
    head, tail = np.zeros(args[0].size), np.zeros(args[0].size)
    with mpmath.workprec(200):
        for k, point in enumerate(zip(*(a.tolist() for a in args), strict=True)):
            value = fn(*map(mpmath.mpf, point))
            head[k] = float(value) if mpmath.isfinite(value) else np.nan
            tail[k] = float(value - mpmath.mpf(head[k])) if np.isfinite(head[k]) else 0.0
    return head, tail


def ulp_error(name: str, args: tuple[np.ndarray, ...], dtype: type) -> float:
    """Max |eagle - exact| / ulp(exact) where the exact value is finite, nonzero and within the
    type; zero arguments skipped (mpmath has no signed zero, so its atan2(-0, x) is not C99's)."""
    with np.errstate(all="ignore"):
        args = tuple(np.clip(a, -3e38, 3e38).astype(dtype) for a in args)
        got = libm.evaluate(name, *args).astype(np.float64)
        head, tail = exact(name, tuple(a.astype(np.float64) for a in args))
        info = np.finfo(dtype)
        nonzero = np.all([a != 0 for a in args], 0)
        kept = np.isfinite(head) & (head != 0) & (np.abs(head) <= info.max) & nonzero
        exponent = np.maximum(np.floor(np.log2(np.abs(head[kept]))), info.minexp)
        error = np.abs((got[kept] - head[kept]) - tail[kept]) / 2.0 ** (exponent - info.nmant)
        return float(np.max(error, initial=0.0))  # none kept: a float32 beyond its range


@pytest.mark.parametrize("name", list(RANGES))
def test_every_function_is_within_one_ulp(name):
    pytest.importorskip("mpmath")
    rng = np.random.default_rng(sorted(RANGES).index(name))
    for spec in RANGES[name]:
        specs = spec if isinstance(spec[0], tuple) else (spec,)
        args = tuple(draw(rng, s, 300) for s in specs)
        for dtype in (np.float64, np.float32):
            assert ulp_error(name, args, dtype) <= 1.0, (name, spec, dtype)


# ------------------------------------------------------------ derivatives
@hawk.kernel
def smooth(x: Scalar, y: Scalar, p: Param) -> Scalar:
    """Every smooth function, at arguments inside its domain."""
    u = x * 0.4  # in (-1, 1): asin, acos
    return (hm.tanh(x) * p + hm.sinh(u) + hm.cosh(u) + hm.asin(u) * hm.acos(u) + hm.atan(x * y)
            + hm.erf(x) + hm.log1p(abs(x)) + hm.expm1(u) + hm.log2(abs(y) + 0.5) + hm.log10(abs(x) + 1.0)
            + hm.exp2(u) + hm.atan2(y, x + 3.0) + hm.hypot(x, y + 2.5) + hm.fmod(x * 3.0, y + 2.5)
            + hm.clip(x, -0.5, p) + hm.sign(x) * y)


def central(kernel, args: tuple, k: int, h: float = 1e-6) -> np.ndarray:
    up, down = list(args), list(args)
    up[k], down[k] = args[k] + h, args[k] - h
    return (kernel(*up) - kernel(*down)) / (2 * h)


def test_the_derivatives_match_central_differences():
    rng = np.random.default_rng(8)
    n = 500
    x, y = rng.uniform(-2.2, 2.2, n), rng.uniform(-2.0, 2.0, n)
    x = np.where(np.abs(np.abs(x) - 0.5) < 1e-3, x + 0.01, x)  # away from clip's bound
    args = (x, y, 0.7)
    grads = smooth.vjp(*args, np.ones(n))
    numeric = [central(smooth, args, k) for k in range(2)]
    away = np.abs(np.fmod(x * 3.0, y + 2.5)) > 1e-4  # off fmod's jumps
    for name, want in zip(("x", "y"), numeric, strict=True):
        np.testing.assert_allclose(grads[name][away], want[away], rtol=2e-6, atol=2e-6)
    assert np.isclose(grads["p"], (central(smooth, args, 2)).sum(), rtol=1e-6)
    _, tangents = smooth.jvp(*args, np.ones(n), np.zeros(n), 0.0)
    np.testing.assert_allclose(tangents["result"][away], numeric[0][away], rtol=2e-6, atol=2e-6)


@hawk.kernel
def clipped(x: Scalar) -> Scalar:
    return hm.clip(x, -1.0, 1.0)


@hawk.kernel
def signed(x: Scalar) -> Scalar:
    return hm.sign(x) + x


@hawk.kernel
def hypotenuse(x: Scalar, y: Scalar) -> Scalar:
    return hm.hypot(x, y)


@hawk.kernel
def remainder(x: Scalar, y: Scalar) -> Scalar:
    return hm.fmod(x, y)


def test_the_documented_derivatives_at_the_edges():
    """clip: 1 inside, 0 outside, half at a bound; sign: 0; hypot at the origin: 0; fmod:
    d/dx = 1, d/dy = -trunc(x / y)."""
    x = np.array([-2.0, -1.0, 0.0, -0.0, 1.0, 2.0, np.nan])
    ones = np.ones_like(x)
    assert clipped.vjp(x, ones)["x"][:6].tolist() == [0.0, 0.5, 1.0, 1.0, 0.5, 0.0]
    assert signed.vjp(x, ones)["x"][:6].tolist() == [1.0] * 6
    grads = hypotenuse.vjp(np.array([0.0, 3.0]), np.array([0.0, 4.0]), np.ones(2))
    assert grads["x"].tolist() == [0.0, 0.6] and grads["y"].tolist() == [0.0, 0.8]
    grads = remainder.vjp(np.array([7.0, -7.0, 7.5]), np.array([3.0, 3.0, -2.0]), np.ones(3))
    assert grads["x"].tolist() == [1.0, 1.0, 1.0] and grads["y"].tolist() == [-2.0, 2.0, 3.0]


# ------------------------------------------------------------ graphs
@hawk.kernel
def first(x: Scalar, p: Param) -> Scalar:
    return hm.tanh(x * p) + hm.atan2(x, p) + hm.erf(x)


@hawk.kernel
def second(x: Scalar) -> Scalar:
    return hm.log1p(abs(x)) * hm.hypot(x, 2.0) + hm.clip(hm.expm1(x), -1.0, 1.0) + hm.sign(x)


def test_planned_and_fused_graphs_give_the_eager_bits(threads):
    x = np.linspace(-3.0, 3.0, 2500)
    outs = []
    for fuse in (False, True):
        g = eagle.Graph()
        a = first.plan(x, 1.5)
        b = second.plan(a.outputs[0])
        g.add(a, name="first").add(b, name="second")
        extend.declare_temporaries(g, a.outputs)
        g.build(fuse=fuse).launch()
        assert bool(g.fused) == fuse
        outs.append(b.outputs[0].copy())
    assert outs[0].tobytes() == outs[1].tobytes() == second(first(x, 1.5)).tobytes()


@eagle.Graph.builder
def chain(x, p):
    g = eagle.Graph()
    g.result = second(first(x, p))
    return g


def test_a_builder_graph_gives_the_eager_bits():
    x = np.linspace(-3.0, 3.0, 3000)
    assert chain(x, 1.5).launch().result.tobytes() == second(first(x, 1.5)).tobytes()


def test_a_bool_sign_is_refused():
    with pytest.raises(hawk.KernelSyntaxError, match=r"hawk\.math\.sign: x is a bool"):
        @hawk.kernel
        def bool_sign(x: Scalar) -> Scalar:
            return hm.sign(x > 0.0)


@pytest.mark.skipif(not hawk.cuda.available(),
                    reason="NVRTC is not installed "
                           "(pip install \"raptor-hawk[cuda12]\" or \"raptor-hawk[cuda13]\")")
def test_the_functions_compile_to_ptx():
    x = np.ones(8)
    for kernel, args in ((unary, (x,)), (binary, (x, x)), (smooth.vjp, (x, x, 1.0, x)),
                         (smooth.jvp, (x, x, 1.0, x, x, 1.0))):
        ptx = kernel.ptx(*args)
        assert ".entry" in ptx and "fma.rn" not in ptx


@eagle.Graph.builder
def recorded(x, p, record=False):
    g = eagle.Graph(record=record)
    g.result = second(first(x, p))
    return g


@pytest.mark.parametrize("fuse", [False, True])
def test_eagle_diff_reverse_matches_central_differences(fuse):
    pytest.importorskip("eagle.diff")
    import eagle.diff

    n = 200
    x = np.linspace(-2.0, 2.0, n) + 0.003  # off sign's and clip's kinks
    g = recorded(x, 1.5, record=True)
    g()
    grads = eagle.diff.reverse(g.record, {"result": np.ones(n)}, wrt=("x",), fuse=fuse)
    h = 1e-6
    numeric = (second(first(x + h, 1.5)) - second(first(x - h, 1.5))) / (2 * h)
    smooth_part = np.abs(hm.expm1(first(x, 1.5))) < 0.999  # clip's bounds
    np.testing.assert_allclose(grads["x"][smooth_part], numeric[smooth_part], rtol=1e-6, atol=1e-7)
