"""eagle's own ``expm1 exp2 log1p log2 log10 sinh cosh tanh``, built on :mod:`hawk.libm`.

Written, like libm's, once over its backends (NumPy arrays, and C that is also CUDA C), branch
free.  Each keeps its intermediate in double-double, from libm's ``exp_parts`` (exp(x) as head +
tail times 2^k) and ``log_dd`` (log(x) to about 2^-75), so that only the last rounding is a
whole half ulp.  Special values are NumPy's (C99's): the sign of a zero kept, ``expm1(-inf) =
-1``, ``log1p(-1) = -inf``, ``tanh(±inf) = ±1``, ``cosh(±inf) = inf``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk.libm import (
    _dd_constant,
    dd_add,
    dd_mul,
    exp,
    exp_parts,
    flip,
    is_nan,
    log_dd,
    pow,
    scale,
    two_prod,
    two_sum,
)

#: 1/ln 2 and 1/ln 10 as head + tail (their 64-digit decimal expansions, exact enough)
INV_LN2 = _dd_constant(int("14426950408889634073599246810018921374266459541529859341354494069"), 10 ** 64)
INV_LN10 = _dd_constant(int("4342944819032518276511289189166050822943970058036665661144537831"), 10 ** 64)
ABSOLUTE = (1 << 63) - 1
#: |x| from which e^-|x| is below half an ulp of e^|x| in sinh, cosh and tanh
LARGE = 22.0


def exp_dd(B: Any, x: Any) -> tuple[Any, Any, Any]:
    """e^x = (head + tail) 2^k, head + tail normalised (libm's exp_parts leaves the series' rest
    in its tail)."""
    head, tail, k = exp_parts(B, x)
    return (*two_sum(B, head, tail), k)


def expm1_dd(B: Any, x: Any) -> tuple[Any, Any]:
    """e^x - 1 as head + tail for x in [-746, 700]: (2^k head - 1) exact by two_sum, plus 2^k tail."""
    head, tail, k = exp_dd(B, x)
    s, e = two_sum(B, scale(B, head, k), B.f(-1.0))
    return two_sum(B, s, e + scale(B, tail, k))


def expm1(B: Any, x: Any) -> Any:
    s, e = expm1_dd(B, B.select(x > B.f(40.0), B.f(40.0), x))
    y = B.select(x > B.f(40.0), exp(B, x), s + e)  # beyond 40, the -1 is below half an ulp of e^x
    return B.select((x == B.f(0.0)) | is_nan(B, x), x + x, y)  # ±0 and NaN as they are


def exp2(B: Any, x: Any) -> Any:
    """2^x, pow's double-double path (C99's special cases: 2^-inf = 0, 2^inf = inf)."""
    return pow(B, B.f(2.0), x)


def _log_special(B: Any, x: Any, y: Any) -> Any:
    """log's special values around ``y``: NaN below 0, -inf at 0, inf at inf, NaN for NaN."""
    y = B.select(x == B.f(np.inf), x, y)
    y = B.select(x < B.f(0.0), B.f(np.nan), y)
    y = B.select(x == B.f(0.0), B.f(-np.inf), y)
    return B.select(is_nan(B, x), x + x, y)


def _finite_positive(B: Any, x: Any) -> Any:
    return B.select((x > B.f(0.0)) & (x < B.f(np.inf)), x, B.f(1.0))


def _log_times(B: Any, x: Any, c: tuple[float, float]) -> Any:
    lh, ll = log_dd(B, _finite_positive(B, x))
    return _log_special(B, x, dd_mul(B, lh, ll, B.f(c[0]), B.f(c[1]))[0])


def log2(B: Any, x: Any) -> Any:
    return _log_times(B, x, INV_LN2)


def log10(B: Any, x: Any) -> Any:
    return _log_times(B, x, INV_LN10)


def log1p(B: Any, x: Any) -> Any:
    """log(u) + ul / u for 1 + x = u + ul exactly (the next term, (ul/u)^2 / 2, is below 2^-106)."""
    u, ul = two_sum(B, B.f(1.0), x)
    lh, ll = log_dd(B, _finite_positive(B, u))
    y = _log_special(B, u, dd_add(B, lh, ll, ul / u, B.f(0.0))[0])
    return B.select(x == B.f(0.0), x, y)


def dd_div(B: Any, nh: Any, nl: Any, dh: Any, dl: Any) -> tuple[Any, Any]:
    """(nh + nl) / (dh + dl) as head + tail (one correction of the quotient)."""
    q = nh / dh
    p, pe = two_prod(B, q, dh)
    return q, ((((nh - p) - pe) + nl) - q * dl) / dh


def _half_exp(B: Any, ax: Any) -> Any:
    """e^ax / 2 for ax >= LARGE, up to overflow: (e^(ax/2))^2 2^-1, squared in double-double."""
    head, tail, k = exp_dd(B, ax * B.f(0.5))
    sh, _ = dd_mul(B, head, tail, head, tail)
    return scale(B, sh, k + k - B.u(1))


def _odd(B: Any, x: Any, y: Any) -> Any:
    """y with x's sign (y computed for |x|), NaN for NaN."""
    return B.select(is_nan(B, x), x + x, flip(B, (B.bits(x) >> B.u(63)) == B.u(1), y))


def _abs(B: Any, x: Any) -> Any:
    return B.flt(B.bits(x) & B.u(ABSOLUTE))


def sinh(B: Any, x: Any) -> Any:
    """(t + t / (t + 1)) / 2 with t = expm1(|x|), below LARGE; e^|x| / 2 from there."""
    ax = _abs(B, x)
    small = B.select(ax < B.f(LARGE), ax, B.f(0.0))
    th, tl = expm1_dd(B, small)
    d1, d2 = two_sum(B, th, B.f(1.0))
    uh, ul = dd_div(B, th, tl, d1, d2 + tl)
    y = B.select(ax < B.f(LARGE), dd_add(B, th, tl, uh, ul)[0] * B.f(0.5), _half_exp(B, ax))
    return _odd(B, x, y)


def cosh(B: Any, x: Any) -> Any:
    """(E + 1 / E) / 2 with E = e^|x| in double-double, below LARGE; e^|x| / 2 from there."""
    ax = _abs(B, x)
    head, tail, k = exp_dd(B, B.select(ax < B.f(LARGE), ax, B.f(0.0)))
    eh, el = scale(B, head, k), scale(B, tail, k)  # exact: 2^k <= 2^32
    rh, rl = dd_div(B, B.f(1.0), B.f(0.0), eh, el)
    y = B.select(ax < B.f(LARGE), dd_add(B, eh, el, rh, rl)[0] * B.f(0.5), _half_exp(B, ax))
    return B.select(is_nan(B, x), x + x, y)


def tanh(B: Any, x: Any) -> Any:
    """t / (t + 2) with t = expm1(2|x|), below LARGE; 1 from there."""
    ax = _abs(B, x)
    th, tl = expm1_dd(B, B.select(ax < B.f(LARGE), ax + ax, B.f(0.0)))
    d1, d2 = two_sum(B, th, B.f(2.0))
    qh, ql = dd_div(B, th, tl, d1, d2 + tl)
    y = B.select(ax < B.f(LARGE), qh + ql, B.f(1.0))
    return _odd(B, x, y)

