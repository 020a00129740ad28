"""eagle's own ``sin cos tan exp log pow``: each written once, run three ways.

(The other functions, in :mod:`hawk.libm_explog`, :mod:`hawk.libm_arc` and
:mod:`hawk.libm_erf`, and hawk.random's draws, :mod:`hawk.philox`, are written
on this module's helpers and backends; :data:`FUNCTIONS` lists them all.)

Each function below is a fixed sequence of operations that every target
rounds the same way: ``+ - * /`` and ``sqrt`` on doubles (no FMA, no contraction),
64-bit unsigned integer arithmetic, bit moves between the two, compares and
selects, and one table look-up.  No branch depends on a sample: every
condition is a mask select, so the C compiler keeps the loop over samples
vectorised.  :class:`Numpy` runs the sequence on arrays (the reference
semantics, :mod:`hawk.semantics`); :func:`c_functions` traces it once into
functions of the common subset of C and CUDA C, which :mod:`hawk.emit` puts
in every translation unit's prelude.  Reference, C and CUDA therefore agree
by construction, at any vector width.

The algorithms are fdlibm's made branch-free: Cody-Waite reductions with
exact products, a head and tail reduced argument, two-step scaling for
subnormal results, and for trig arguments of magnitude ``>= HUGE`` a
Payne-Hanek reduction in integer arithmetic over a 1,280-bit table of 2/pi
(exact for every double).  ``float32`` functions are the ``float64`` ones
rounded (one more rounding of a result within 1 ulp of the double keeps them
within 1 float ulp).  The accuracy measured is in ``docs/hawk.rst``.

fdlibm's notice, for its constants and algorithms: Copyright (C) 1993 by Sun
Microsystems, Inc. All rights reserved.  Developed at SunSoft, a Sun
Microsystems, Inc. business.  Permission to use, copy, modify, and distribute
this software is freely granted, provided that this notice is preserved.
"""
from __future__ import annotations

import ctypes
import functools
import importlib
import re
from collections.abc import Callable, Collection
from fractions import Fraction
from typing import Any

import numpy as np

from eagle.native import compile_library

#: |x| from which sin, cos and tan reduce by Payne-Hanek (fdlibm's medium reduction serves below)
HUGE = 1.6e6

#: bits of 2/pi, 32 to a word, after 64 zero bits (so the window of a moderate argument starts
#: inside the table): word i holds fraction bits 32 i - 63 ... 32 i - 32
TWO_OVER_PI = (
    0x00000000, 0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
    0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e,
    0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b,
    0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
    0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab)

SHIFTER = 6755399441055744.0  # adding it rounds to an integer, which then sits in the low mantissa bits
MANTISSA = (1 << 52) - 1
INF_BITS = 0x7FF0000000000000


# ------------------------------------------------------------------ backends
class Numpy:
    """The operations on NumPy arrays (float64 and uint64; masks are bool)."""

    @staticmethod
    def f(v: float) -> Any:
        return np.float64(v)

    @staticmethod
    def u(v: int) -> Any:
        return np.uint64(v)

    @staticmethod
    def bits(x: Any) -> Any:
        return np.asarray(x, np.float64).view(np.uint64)

    @staticmethod
    def flt(u: Any) -> Any:
        return np.asarray(u, np.uint64).view(np.float64)

    @staticmethod
    def select(mask: Any, a: Any, b: Any) -> Any:
        return np.where(mask, a, b)

    @staticmethod
    def sqrt(x: Any) -> Any:
        return np.sqrt(x)

    @staticmethod
    def mul32(a: Any, b: Any) -> Any:
        """The product of two values below 2^32 (exact in uint64)."""
        return a * b

    @staticmethod
    def table(index: Any) -> Any:
        return _TABLE[np.asarray(index).astype(np.intp)]

    @staticmethod
    def only(mask: Any, fn: Callable[..., tuple[Any, ...]], *args: Any) -> tuple[Any, ...]:
        """``fn(*args)`` where ``mask`` holds (zero elsewhere, which the caller's select drops):
        the same bits as everywhere, for a fraction of the work."""
        mask = np.asarray(mask)
        if not mask.any():  # the usual case for trig: no sample needs fn, only its dtypes
            return tuple(np.zeros(mask.shape, d) for d in _dtypes(fn, *(np.asarray(a).dtype for a in args)))
        parts = fn(Numpy, *(np.broadcast_to(a, mask.shape)[mask] for a in args))
        out = tuple(np.zeros(mask.shape, np.asarray(p).dtype) for p in parts)
        for o, p in zip(out, parts, strict=True):
            o[mask] = p
        return out


_TABLE = np.array(TWO_OVER_PI, np.uint64)


@functools.cache
def _dtypes(fn: Callable[..., tuple[Any, ...]], *args: np.dtype) -> tuple[np.dtype, ...]:
    """The dtypes of ``fn``'s results for arguments of dtypes ``args`` (fn run once, on no samples)."""
    return tuple(np.asarray(p).dtype for p in fn(Numpy, *(np.empty(0, d) for d in args)))


# ------------------------------------------------------------------ helpers
def to_f(B: Any, k: Any) -> Any:
    """A small integer (two's complement, |k| < 2^51) as a double, exactly."""
    return B.flt(k + B.bits(B.f(SHIFTER))) - B.f(SHIFTER)


def two_sum(B: Any, a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def split(B: Any, a: Any) -> tuple[Any, Any]:
    """Dekker's split into two halves of 26 bits (|a| < 2^995)."""
    c = a * B.f(134217729.0)
    hi = c - (c - a)
    return hi, a - hi


def two_prod(B: Any, a: Any, b: Any) -> tuple[Any, Any]:
    p = a * b
    ah, al = split(B, a)
    bh, bl = split(B, b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd_mul(B: Any, ah: Any, al: Any, bh: Any, bl: Any) -> tuple[Any, Any]:
    p, e = two_prod(B, ah, bh)
    e = e + (ah * bl + al * bh)
    h = p + e
    return h, e - (h - p)


def dd_add(B: Any, ah: Any, al: Any, bh: Any, bl: Any) -> tuple[Any, Any]:
    s, e = two_sum(B, ah, bh)
    e = e + (al + bl)
    h = s + e
    return h, e - (h - s)


def horner(B: Any, z: Any, coefficients: tuple[float, ...]) -> Any:
    acc = B.f(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = B.f(c) + z * acc
    return acc


def scale(B: Any, y: Any, k: Any) -> Any:
    """y * 2^k for |k| <= 1100 by two powers of two, each a normal number, so that a subnormal
    result is rounded by the last product alone (not flushed to zero, nor cut by writing k into
    the exponent bits)."""
    k1 = ((k + B.u(2048)) >> B.u(1)) - B.u(1024)
    k2 = k - k1
    return y * B.flt((k1 + B.u(1023)) << B.u(52)) * B.flt((k2 + B.u(1023)) << B.u(52))


def is_nan(B: Any, x: Any) -> Any:
    return (B.bits(x) & B.u((1 << 63) - 1)) > B.u(INF_BITS)


def flip(B: Any, mask: Any, x: Any) -> Any:
    """-x where mask holds."""
    return B.flt(B.bits(x) ^ B.select(mask, B.u(1 << 63), B.u(0)))


# ---------------------------------------------------------------------- exp
_EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
          -1.65339022054652515390e-06, 4.13813679705723846039e-08)
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e+00


def exp_parts(B: Any, x: Any) -> tuple[Any, Any, Any]:
    """exp(x) = (head + tail) 2^k, head + tail in [0.7, 1.5] before its last rounding; x is
    clamped to [-746, 710] (the callers select the results beyond)."""
    x = B.select(x > B.f(710.0), B.f(710.0), B.select(x < B.f(-746.0), B.f(-746.0), x))
    t = x * B.f(INV_LN2) + B.f(SHIFTER)
    k = B.bits(t) - B.bits(B.f(SHIFTER))
    kf = t - B.f(SHIFTER)
    hi = x - kf * B.f(LN2_HI)
    lo = kf * B.f(LN2_LO)
    r = hi - lo
    tt = r * r
    c = r - tt * horner(B, tt, _EXP_P)
    tail = (r * c) / (B.f(2.0) - c) - lo
    head, err = two_sum(B, B.f(1.0), hi)  # fdlibm's 1 - ((lo - rc/(2-c)) - hi), 1 + hi kept exact
    return head, err + tail, k


def exp(B: Any, x: Any) -> Any:
    head, tail, k = exp_parts(B, x)
    y = scale(B, head + tail, k)
    y = B.select(x > B.f(7.09782712893383973096e+02), B.f(np.inf), y)
    y = B.select(x < B.f(-7.45133219101941108420e+02), B.f(0.0), y)
    return B.select(is_nan(B, x), x + x, y)


# ---------------------------------------------------------------------- log
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)


def normalize(B: Any, x: Any) -> tuple[Any, Any, Any]:
    """x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)), for positive finite x: k as a double,
    f, and the high mantissa word of 1 + f."""
    sub = x < B.f(2.2250738585072014e-308)
    xs = B.select(sub, x * B.f(18014398509481984.0), x)  # 2^54
    ux = B.bits(xs)
    hx = ux >> B.u(32)
    k = (hx >> B.u(20)) - B.u(1023) - B.select(sub, B.u(54), B.u(0))
    hx = hx & B.u(0xFFFFF)
    i = (hx + B.u(0x95F64)) & B.u(0x100000)
    xn = B.flt(((hx | (i ^ B.u(0x3FF00000))) << B.u(32)) | (ux & B.u(0xFFFFFFFF)))
    return to_f(B, k + (i >> B.u(20))), xn - B.f(1.0), hx


def log(B: Any, x: Any) -> Any:
    dk, f, hx = normalize(B, x)
    s = f / (B.f(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * (B.f(_LG[1]) + w * (B.f(_LG[3]) + w * B.f(_LG[5])))
    t2 = z * (B.f(_LG[0]) + w * (B.f(_LG[2]) + w * (B.f(_LG[4]) + w * B.f(_LG[6]))))
    R = t2 + t1
    hfsq = B.f(0.5) * f * f
    a = dk * B.f(LN2_HI) - ((hfsq - (s * (hfsq + R) + dk * B.f(LN2_LO))) - f)
    b = dk * B.f(LN2_HI) - ((s * (f - R) - dk * B.f(LN2_LO)) - f)
    y = B.select((hx >= B.u(0x6147A)) & (hx <= B.u(0x6B851)), a, b)  # fdlibm's two forms
    y = B.select(x == B.f(np.inf), x, y)
    y = B.select(x < B.f(0.0), B.f(np.nan), y)
    y = B.select(x == B.f(0.0), B.f(-np.inf), y)
    return B.select(is_nan(B, x), x + x, y)


# ---------------------------------------------------------------- sin, cos, tan
_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
      2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
      -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
INV_PIO2 = 6.36619772367581382433e-01
#: pi/2 = P1 + P2 + P3 + P3T: three parts of 33 bits (exact products with a quotient below 2^20)
#: and a tail
PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21)
PIO2_3T = 8.47842766036889956997e-32
PIO2_HI, PIO2_LO = 1.57079632679489655800e+00, 6.12323399573676603587e-17


def reduce_medium(B: Any, ax: Any) -> tuple[Any, Any, Any]:
    """ax - n pi/2 as head + tail and n (mod 4), for 0 <= ax < HUGE: fdlibm's three parts of
    pi/2, every subtraction's error kept (they are exact only where fdlibm takes them)."""
    t = ax * B.f(INV_PIO2) + B.f(SHIFTER)
    n = B.bits(t)
    fn = t - B.f(SHIFTER)
    r = ax - fn * B.f(PIO2[0])  # exact: both within a factor 2 of each other
    tail = B.f(0.0) - fn * B.f(PIO2_3T)
    for part in PIO2[1:]:
        r, err = two_sum(B, r, B.f(0.0) - fn * B.f(part))
        tail = tail + err
    y0 = r + tail
    return y0, (r - y0) + tail, n


def _window(B: Any, word: Any, shift: Any) -> list[Any]:
    """The 192 bits of 2/pi from ``shift`` bits into table word ``word``, as six 32-bit limbs,
    least significant first (seven look-ups)."""
    words = [B.table(word + B.u(j)) for j in range(7)]
    return [(((words[j] << B.u(32)) | words[j + 1]) >> (B.u(32) - shift)) & B.u(0xFFFFFFFF)
            for j in range(5, -1, -1)]


def reduce_huge(B: Any, ax: Any) -> tuple[Any, Any, Any]:
    """ax - n pi/2 as head + tail and n (mod 4), exact to 2^-137 for any finite ax >= HUGE.

    ax = X 2^(e-52) with X a 53-bit integer; ax * 2/pi mod 4 needs the 2/pi bits from position
    e - 53 on: 192 of them (G) give X G mod 2^192 = (ax * 2/pi mod 4) * 2^190."""
    ux = B.bits(ax)
    e = (ux >> B.u(52)) - B.u(1023)
    e = B.select(ax < B.f(HUGE), B.u(20), B.select(ux >= B.u(INF_BITS), B.u(1023), e))
    m = (ux & B.u(MANTISSA)) | B.u(1 << 52)
    xh, xl = m >> B.u(32), m & B.u(0xFFFFFFFF)
    start = e + B.u(10)  # table bit of fraction position e - 53
    word, shift = start >> B.u(5), start & B.u(31)
    g = _window(B, word, shift)
    low32 = B.u(0xFFFFFFFF)
    limbs, carry = [], B.u(0)
    for c in range(6):
        a = xl * g[c]
        b = xh * g[c - 1] if c else B.u(0)
        acc = carry + (a & low32) + (b & low32)
        limbs.append(acc & low32)
        carry = (a >> B.u(32)) + (b >> B.u(32)) + (acc >> B.u(32))
    top = (limbs[5] + B.u(1 << 29)) & low32  # + 1/2: n is rounded to nearest
    n = top >> B.u(30)
    limbs[5] = top & B.u((1 << 30) - 1)
    # the fraction, limb by limb as exact doubles (the top one made signed), summed exactly
    d = [(to_f(B, limbs[5]) - B.f(2.0 ** 29)) * B.f(2.0 ** -30)]
    d += [to_f(B, limbs[5 - j]) * B.f(2.0 ** (-30 - 32 * j)) for j in range(1, 6)]
    s, err = d[5], B.f(0.0)
    for x in reversed(d[:5]):
        s, e2 = two_sum(B, x, s)
        err = err + e2
    hi = s + err
    lo = err - (hi - s)
    ph, pl = two_prod(B, hi, B.f(PIO2_HI))
    pl = pl + (hi * B.f(PIO2_LO) + lo * B.f(PIO2_HI))
    y0 = ph + pl
    return y0, pl - (y0 - ph), n


def reduce(B: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """|x| - n pi/2 (head, tail), n and whether x's sign is set (-0 included)."""
    negative = (B.bits(x) >> B.u(63)) == B.u(1)
    ax = B.flt(B.bits(x) & B.u((1 << 63) - 1))
    huge = ax >= B.f(HUGE)
    m0, m1, mn = reduce_medium(B, B.select(huge, B.f(0.0), ax))
    h0, h1, hn = B.only(huge, reduce_huge, ax)
    return (B.select(huge, h0, m0), B.select(huge, h1, m1), B.select(huge, hn, mn) & B.u(3),
            negative)


def sin_dd(B: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """sin(x + y) for |x| <= pi/4 as head and tail."""
    z = x * x
    v = z * x
    r = horner(B, z, _S[1:])
    t = (z * (B.f(0.5) * y - v * r) - y) - v * B.f(_S[0])
    s = x - t
    return s, (x - s) - t


def cos_dd(B: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """cos(x + y) for |x| <= pi/4 as head and tail (FreeBSD's form of fdlibm's kernel)."""
    z = x * x
    r = z * horner(B, z, _C)
    hz = B.f(0.5) * z
    w = B.f(1.0) - hz
    t = ((B.f(1.0) - w) - hz) + (z * r - x * y)
    c = w + t
    return c, (w - c) + t


def finish(B: Any, x: Any, y: Any) -> Any:
    """NaN for inf and NaN arguments."""
    return B.select(B.bits(x) & B.u((1 << 63) - 1) >= B.u(INF_BITS), x - x, y)


def sin(B: Any, x: Any) -> Any:
    y0, y1, n, negative = reduce(B, x)
    s, c = sin_dd(B, y0, y1)[0], cos_dd(B, y0, y1)[0]
    y = B.select((n & B.u(1)) == B.u(1), c, s)
    return finish(B, x, flip(B, negative ^ ((n & B.u(2)) == B.u(2)), y))


def cos(B: Any, x: Any) -> Any:
    y0, y1, n, _ = reduce(B, x)
    return finish(B, x, cos_reduced(B, y0, y1, n))


def cos_reduced(B: Any, y0: Any, y1: Any, n: Any) -> Any:
    """cos of a reduced argument: y0 + y1 + n pi/2."""
    s, c = sin_dd(B, y0, y1)[0], cos_dd(B, y0, y1)[0]
    y = B.select((n & B.u(1)) == B.u(1), s, c)
    return flip(B, ((n + B.u(1)) & B.u(2)) == B.u(2), y)


def tan(B: Any, x: Any) -> Any:
    """sin / cos (or -cos / sin), divided in double-double."""
    y0, y1, n, negative = reduce(B, x)
    sh, sl = sin_dd(B, y0, y1)
    ch, cl = cos_dd(B, y0, y1)
    odd = (n & B.u(1)) == B.u(1)
    nh, nl = B.select(odd, ch, sh), B.select(odd, cl, sl)
    dh, dl = B.select(odd, sh, ch), B.select(odd, sl, cl)
    q = nh / dh
    p, pe = two_prod(B, q, dh)
    q = q + ((((nh - p) - pe) + nl) - q * dl) / dh
    return finish(B, x, flip(B, negative ^ odd, q))


# ---------------------------------------------------------------------- pow
def _dd_constant(num: int, den: int) -> tuple[float, float]:
    hi = float(Fraction(num, den))
    return hi, float(Fraction(num, den) - Fraction(hi))


#: 2/(2j+3): log(1+f) = 2s + s^3 sum_j c_j s^(2j) with s = f/(2+f); three leading ones as head+tail
_ATANH = tuple(_dd_constant(2, 2 * j + 3) for j in range(15))


def log_dd(B: Any, x: Any) -> tuple[Any, Any]:
    """log(x) as head + tail, to about 2^-75 relative, for positive finite x."""
    dk, f, _ = normalize(B, x)
    dh, dl = two_sum(B, B.f(2.0), f)
    sh = f / dh
    p, pe = two_prod(B, sh, dh)
    sl = (((f - p) - pe) - sh * dl) / dh
    zh, zl = two_prod(B, sh, sh)
    zl = zl + B.f(2.0) * sh * sl
    ah, al = horner(B, zh, tuple(c for c, _ in _ATANH[3:])), B.f(0.0)
    for c, c_tail in reversed(_ATANH[:3]):
        ah, al = dd_mul(B, zh, zl, ah, al)
        ah, al = dd_add(B, B.f(c), B.f(c_tail), ah, al)
    ah, al = dd_mul(B, zh, zl, ah, al)  # s^2 P(s^2)
    ah, al = dd_mul(B, sh, sl, ah, al)  # s^3 P
    th, tl = dd_add(B, B.f(2.0) * sh, B.f(2.0) * sl, ah, al)
    return dd_add(B, dk * B.f(LN2_HI), dk * B.f(LN2_LO), th, tl)


def pow(B: Any, x: Any, y: Any) -> Any:
    """x^y with C99 Annex F's special cases."""
    sign = 1 << 63
    ax, ay = B.flt(B.bits(x) & B.u(sign - 1)), B.flt(B.bits(y) & B.u(sign - 1))
    small = ay < B.f(4503599627370496.0)  # 2^52: larger doubles are integers
    t = B.select(small, ay + B.f(4503599627370496.0), ay)
    integer = B.select(small, (t - B.f(4503599627370496.0)) == ay, ay < B.f(np.inf))
    odd = integer & (ay < B.f(9007199254740992.0)) & ((B.bits(t) & B.u(1)) == B.u(1))
    # beyond 2^64, x^y over- or underflows for every x but 1 (taken below)
    yc = B.select(ay > B.f(2.0 ** 64), B.flt(B.bits(B.f(2.0 ** 64)) | (B.bits(y) & B.u(sign))), y)
    lh, ll = log_dd(B, B.select((ax > B.f(0.0)) & (ax < B.f(np.inf)), ax, B.f(1.0)))
    wh, wl = two_prod(B, yc, lh)
    wl = wl + yc * ll
    w = wh + wl
    head, tail, k = exp_parts(B, w)
    # exp(w + c) = exp(w) (1 + c) for the residue c (dropped where w is clamped)
    c = B.select((w > B.f(-746.0)) & (w < B.f(710.0)), wl - (w - wh), B.f(0.0))
    r = scale(B, head + (tail + (head + tail) * c), k)
    negative = (B.bits(x) & B.u(sign)) == B.u(sign)
    r = B.select(negative & ~integer, B.f(np.nan), r)
    edge = (ax == B.f(0.0)) | (ax == B.f(np.inf))
    r = B.select(edge, B.select((ax == B.f(0.0)) ^ (y < B.f(0.0)), B.f(0.0), B.f(np.inf)), r)
    r = flip(B, negative & odd & ~is_nan(B, r), r)
    r = B.select(ay == B.f(np.inf), B.select(ax == B.f(1.0), B.f(1.0),
                                             B.select((ax < B.f(1.0)) ^ (y < B.f(0.0)),
                                                      B.f(0.0), B.f(np.inf))), r)
    r = B.select(is_nan(B, x) | is_nan(B, y), x + y, r)
    return B.select((ay == B.f(0.0)) | (x == B.f(1.0)), B.f(1.0), r)


# ------------------------------------------------------------------ C
class _Value:
    """A traced C value: ``kind`` f (double), u (uint64_t) or m (a mask: all ones or zero)."""

    def __init__(self, tracer: _Tracer, kind: str, text: str) -> None:
        self.tracer, self.kind, self.text = tracer, kind, text

    def _coerce(self, other: Any) -> _Value:
        if isinstance(other, _Value):
            return other
        return self.tracer.f(other) if self.kind == "f" else self.tracer.u(other)

    def _binary(self, op: str, other: Any, kinds: str) -> _Value:
        other = self._coerce(other)
        assert self.kind == other.kind and self.kind in kinds, (op, self.kind, other.kind)
        return self.tracer.new(self.kind, f"{self.text} {op} {other.text}")

    def _compare(self, op: str, other: Any) -> _Value:
        other = self._coerce(other)
        assert self.kind == other.kind != "m"
        return self.tracer.new("m", f"(uint64_t)0 - (uint64_t)({self.text} {op} {other.text})")

    def __add__(self, o: Any) -> _Value: return self._binary("+", o, "fu")
    def __sub__(self, o: Any) -> _Value: return self._binary("-", o, "fu")
    def __mul__(self, o: Any) -> _Value: return self._binary("*", o, "fu")
    def __truediv__(self, o: Any) -> _Value: return self._binary("/", o, "f")
    def __and__(self, o: Any) -> _Value: return self._binary("&", o, "um")
    def __or__(self, o: Any) -> _Value: return self._binary("|", o, "um")
    def __xor__(self, o: Any) -> _Value: return self._binary("^", o, "um")
    def __lshift__(self, o: Any) -> _Value: return self._binary("<<", o, "u")
    def __rshift__(self, o: Any) -> _Value: return self._binary(">>", o, "u")
    def __invert__(self) -> _Value: return self.tracer.new(self.kind, f"~{self.text}")
    def __lt__(self, o: Any) -> _Value: return self._compare("<", o)
    def __le__(self, o: Any) -> _Value: return self._compare("<=", o)
    def __gt__(self, o: Any) -> _Value: return self._compare(">", o)
    def __ge__(self, o: Any) -> _Value: return self._compare(">=", o)
    def __eq__(self, o: Any) -> _Value: return self._compare("==", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> _Value: return self._compare("!=", o)  # type: ignore[override]


_TEMPORARY = re.compile(r"\bt\d+\b")


class _Tracer:
    """The operations as C statements, one ``const`` temporary each (the algorithm traced once);
    ``medium``: traced for arguments that need no :meth:`only` part (|x| < HUGE for trig)."""

    def __init__(self, medium: bool = False) -> None:
        self.statements: list[tuple[str, str, str]] = []
        self.medium = medium
        self.skipped = False  # whether a medium trace left an only() part out

    def new(self, kind: str, expr: str) -> _Value:
        name = f"t{len(self.statements)}"
        self.statements.append((name, "double" if kind == "f" else "uint64_t", expr))
        return _Value(self, kind, name)

    def body(self, result: _Value) -> str:
        """The statements the result needs (an unused temporary is a -Wall warning), then the
        return."""
        live = set(_TEMPORARY.findall(result.text))
        kept = []
        for name, ctype, expr in reversed(self.statements):
            if name in live:
                live.update(_TEMPORARY.findall(expr))
                kept.append(f"    const {ctype} {name} = {expr};")
        return "\n".join([*reversed(kept), f"    return {result.text};"])

    def f(self, v: float) -> _Value:
        v = float(v)
        if v != v or v in (np.inf, -np.inf):  # no literal: by its bits
            return self.flt(self.u(int(np.float64(v).view(np.uint64))))
        return _Value(self, "f", v.hex())

    def u(self, v: int) -> _Value:
        return _Value(self, "u", f"0x{int(v):x}ull")

    def bits(self, x: _Value) -> _Value:
        return self.new("u", f"hk_bits({x.text})")

    def flt(self, u: _Value) -> _Value:
        return self.new("f", f"hk_double({u.text})")

    def select(self, mask: _Value, a: Any, b: Any) -> _Value:
        a, b = (v if isinstance(v, _Value) else mask._coerce(v) for v in (a, b))
        if a.kind == "f":
            return self.flt(self.new("u", f"(hk_bits({a.text}) & {mask.text}) | "
                                          f"(hk_bits({b.text}) & ~{mask.text})"))
        return self.new(a.kind, f"({a.text} & {mask.text}) | ({b.text} & ~{mask.text})")

    def sqrt(self, x: _Value) -> _Value:  # correctly rounded in C, CUDA and NumPy alike
        return self.new("f", f"HK_SQRT({x.text})")

    def mul32(self, a: _Value, b: _Value) -> _Value:
        """Written as a widening product of 32-bit halves, which the vectoriser makes one
        32x32 -> 64 multiply (pmuludq) instead of a 64-bit one."""
        b = a._coerce(b)
        return self.new("u", f"(uint64_t)(uint32_t){a.text} * (uint64_t)(uint32_t){b.text}")

    def table(self, index: _Value) -> _Value:
        return self.new("u", f"hk_two_over_pi[{index.text}]")

    def only(self, mask: _Value, fn: Callable[..., tuple[Any, ...]], *args: Any) -> tuple[Any, ...]:
        """Every lane computes ``fn`` (a branch would stop the vectoriser).  A medium trace gives
        zeros, which the caller's select drops where ``mask`` is clear (everywhere, for the
        arguments it serves); :meth:`body` then drops ``fn``'s statements, unused."""
        parts = fn(self, *args)
        if not self.medium:
            return parts
        self.skipped = True
        return tuple(self.f(0.0) if p.kind == "f" else self.u(0) for p in parts)


#: the functions, their arities
FUNCTIONS = {"sin": 1, "cos": 1, "tan": 1, "exp": 1, "log": 1, "pow": 2,
             "expm1": 1, "exp2": 1, "log1p": 1, "log2": 1, "log10": 1, "sinh": 1, "cosh": 1, "tanh": 1,
             "atan": 1, "atan2": 2, "asin": 1, "acos": 1, "hypot": 2, "erf": 1}
#: the module of each function defined outside this one (on its helpers)
_HOMES = {**dict.fromkeys(("expm1", "exp2", "log1p", "log2", "log10", "sinh", "cosh", "tanh"), "libm_explog"),
          **dict.fromkeys(("atan", "atan2", "asin", "acos", "hypot"), "libm_arc"), "erf": "libm_erf"}


def definition(name: str) -> Callable[..., Any]:
    """Function ``name`` over the backends."""
    home = _HOMES.get(name)
    return globals()[name] if home is None else getattr(importlib.import_module(f"hawk.{home}"), name)

#: a double's bits and back
C_BITS = (
    "HK_FN uint64_t hk_bits(double x) { union { double d; uint64_t u; } v; v.d = x; return v.u; }\n"
    "HK_FN double hk_double(uint64_t u) { union { double d; uint64_t u; } v; v.u = u; return v.d; }\n")
#: what a C or CUDA translation unit needs before the functions
C_SUPPORT = (
    "#ifdef __CUDACC__\n#define HK_SQRT sqrt\n#else\n#define HK_SQRT __builtin_sqrt\n#endif\n"  # no header
    + C_BITS +
    f"HK_TABLE uint64_t hk_two_over_pi[{len(TWO_OVER_PI)}] = {{\n    "
    + ",".join(f"{w:#010x}" + ("\n   " if k % 8 == 7 else "") for k, w in enumerate(TWO_OVER_PI))
    + "};\n")


@functools.cache  # traced once per process
def _f32(name: str, arity: int) -> str:
    """``hk_{name}_f32``: the float64 function, rounded once more."""
    args = ", ".join(f"(double){p}" for p in "xy"[:arity])
    return (f"HK_FN float hk_{name}_f32({', '.join(f'float {p}' for p in 'xy'[:arity])})\n"
            f"{{ return (float)hk_{name}_f64({args}); }}\n")


def trace(fn: Callable[..., Any], params: tuple[tuple[str, str], ...], symbol: str, ctype: str,
          medium: bool = False) -> tuple[str, bool]:
    """``HK_MATH {ctype} {symbol}(...)``: ``fn`` traced over parameters (name, kind: f for double,
    u for uint64_t), a medium trace for arguments of the medium range only; and whether the trace
    left an only() part out."""
    tracer = _Tracer(medium)
    result = fn(tracer, *(_Value(tracer, kind, p) for p, kind in params))
    signature = ", ".join(f"{'double' if kind == 'f' else 'uint64_t'} {p}" for p, kind in params)
    return (f"HK_MATH {ctype} {symbol}({signature})\n{{\n" + tracer.body(result) + "\n}\n",
            tracer.skipped)


def _function(name: str, arity: int, symbol: str, medium: bool = False) -> tuple[str, bool]:
    """``HK_MATH double {symbol}(...)``: function ``name`` traced (a medium trace: its arguments
    of the medium range only), and whether the trace left an only() part out."""
    return trace(definition(name), tuple((p, "f") for p in "xy"[:arity]), symbol, "double", medium)


@functools.cache  # traced once per process
def _c_function(name: str) -> str:
    return _function(name, FUNCTIONS[name], f"hk_{name}_f64")[0] + _f32(name, FUNCTIONS[name])


def c_functions(names: Collection[str] | None = None) -> str:
    """``hk_{name}_f64`` and ``hk_{name}_f32`` for every function (or those in ``names``: what a
    CUDA translation unit calls), as C that is also CUDA C (the prelude defines ``HK_FN``,
    ``HK_MATH`` and ``HK_TABLE``)."""
    return C_SUPPORT + "".join(_c_function(name) for name in FUNCTIONS if names is None or name in names)


#: The x86-64 vector-function ABI's unmasked variants GCC makes of a simd function of one double:
#: ISA letter, lanes, the target that passes that vector in one register.
_CLONES = (("b", 2, "sse2"), ("c", 4, "avx"), ("d", 4, "avx2"), ("e", 8, "avx512f"))
_SPLIT = "defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)"


def _medium_first(name: str) -> str:
    """``hk_{name}_f64`` and its vector clones, which run the medium-range function
    (``hk_{name}_medium_f64``) unless some lane needs the whole one (``hk_{name}_all_f64``): the
    same bits (the whole function selects the medium part's there), without the Payne-Hanek
    work every lane of the whole function does.  Where the clones are not x86-64 GCC's, the
    whole function serves."""
    f = f"hk_{name}"
    out = [f"#if {_SPLIT}\ndouble {f}_f64(double x) {{ return hk_medium(x) ? {f}_medium_f64(x) : "
           f"{f}_all_f64(x); }}\n"]
    for isa, lanes, target in _CLONES:
        v, abi = f"hk_vec_{isa}", f"_ZGV{isa}N{lanes}v_{f}"
        attribute = f'__attribute__((target("{target}")))'
        out.append(f"{attribute} {v} {abi}_medium_f64({v});\n{attribute} {v} {abi}_all_f64({v});\n"
                   f"{attribute} {v} {abi}_f64({v} x)\n{{\n"
                   f"    for (int j = 0; j < {lanes}; ++j)\n"
                   f"        if (!hk_medium(x[j])) return {abi}_all_f64(x);\n"
                   f"    return {abi}_medium_f64(x);\n}}\n")
    out.append(f"#else\nHK_SIMD double {f}_f64(double x) {{ return {f}_all_f64(x); }}\n#endif\n")
    return "".join(out)


def library_source() -> str:
    """The C of hawk's math library (:func:`load`): every function with its vector clones; sin,
    cos and tan as :func:`_medium_first` makes them; then the random draws a C kernel does not
    hold itself (:mod:`hawk.philox`)."""
    from hawk import philox  # the draws, built on this module's functions

    out = [C_SUPPORT, f"#if {_SPLIT}\n",
           *(f"typedef double hk_vec_{isa} __attribute__((vector_size({8 * lanes})));\n"
             for isa, lanes, _ in _CLONES),
           f"#endif\nHK_FN int hk_medium(double x) {{ return (hk_bits(x) & 0x{(1 << 63) - 1:x}ull) < "
           f"0x{int(np.float64(HUGE).view(np.uint64)):x}ull; }}\n"]
    for name, arity in FUNCTIONS.items():
        medium, skipped = _function(name, arity, f"hk_{name}_medium_f64", medium=True)
        if skipped:
            out += [medium, _function(name, arity, f"hk_{name}_all_f64")[0], _medium_first(name)]
        else:
            out.append(_function(name, arity, f"hk_{name}_f64")[0])
        out.append(_f32(name, arity))
    return "".join(out) + philox.c_functions(set(philox.DRAWS) - set(philox.INLINE))


#: GCC gives each float64 function vector clones (SSE2, AVX, AVX2, AVX-512), exported with it, so
#: a kernel's loop over samples that calls one stays vectorised.
_SIMD = ("#if defined(__GNUC__) && !defined(__clang__)\n"
         "#define HK_SIMD __attribute__((simd(\"notinbranch\")))\n#else\n#define HK_SIMD\n#endif\n")


def c_declarations() -> str:
    """What a C kernel needs to call the functions of hawk's math library (:func:`load`): the
    float64 ones declared with their vector clones, the float32 ones over them (``HK_FN``)."""
    return _SIMD + "".join(f"HK_SIMD double hk_{name}_f64({', '.join(['double'] * arity)});\n"
                           + _f32(name, arity) for name, arity in FUNCTIONS.items())


@functools.cache
def load() -> ctypes.CDLL:
    """hawk's math library, compiled once (cached on disk like a kernel) and loaded so that the
    kernels' libraries find its functions: compiled into every kernel instead, they cost each
    kernel that calls one about 0.4 s of compile time."""
    source = ("#include <stdint.h>\n#define HK_FN static inline\n#define HK_TABLE static const\n"
              + _SIMD + "#define HK_MATH HK_SIMD __attribute__((noinline))\n" + library_source())
    return ctypes.CDLL(str(compile_library(source, name="hawk_math")), mode=ctypes.RTLD_GLOBAL)


def evaluate(name: str, *args: Any) -> Any:
    """``name`` over arrays as a kernel computes it: float32 (NumPy's promotion of the arguments)
    through the float64 function, rounded once; anything else as float64."""
    single = np.result_type(*args) == np.float32
    with np.errstate(all="ignore"):
        result = np.asarray(definition(name)(Numpy, *(np.asarray(a, np.float64) for a in args)))
    # [()]: a scalar for scalar arguments, as a ufunc gives
    return (result.astype(np.float32) if single else result)[()]
