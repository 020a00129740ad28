"""eagle's own ``atan atan2 asin acos hypot``, built on :mod:`hawk.libm`.

``atan``, ``atan2``, ``asin`` and ``acos`` are fdlibm's (its constants, its reductions and its
evaluation order; the notice is :mod:`hawk.libm`'s) with every branch made a mask select, over
libm's backends.  ``hypot`` scales by a power of two, sums the squares in double-double and
corrects the square root once.  Special values are C99's, which NumPy's are: ``atan2`` of
zeros and infinities by quadrant (``atan2(±0, -0) = ±pi``, ``atan2(±inf, -inf) = ±3pi/4``),
``asin``/``acos`` NaN beyond [-1, 1], ``hypot(±inf, y) = inf`` even for a NaN ``y``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk.libm import dd_add, flip, horner, is_nan, scale, two_prod, two_sum

#: fdlibm's atan(0.5), atan(1), atan(1.5), atan(inf) as head and tail, and its polynomial
ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01,
           1.57079632679489655800e+00)
ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17,
           6.12323399573676603587e-17)
AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
      -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
      6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
      -3.65315727442169155270e-02, 1.62858201153657823623e-02)
PI, PI_LO = 3.14159265358979311600e+00, 1.2246467991473531772e-16
PIO2_HI, PIO2_LO, PIO4_HI = 1.57079632679489655800e+00, 6.12323399573676603587e-17, 7.85398163397448278999e-01
#: fdlibm's rational approximation of (asin(x) - x) / x^3 in x^2
PS = (1.66666666666666657415e-01, -3.25565818622400915405e-01, 2.01212532134862925881e-01,
      -4.00555345006794114027e-02, 7.91534994289814532176e-04, 3.47933107596021167570e-05)
QS = (1.0, -2.40339491173441421878e+00, 2.02094576023350569471e+00, -6.88283971605453293030e-01,
      7.70381505559019352791e-02)
ABSOLUTE = (1 << 63) - 1


def _abs(B: Any, x: Any) -> Any:
    return B.flt(B.bits(x) & B.u(ABSOLUTE))


def _negative(B: Any, x: Any) -> Any:
    return (B.bits(x) >> B.u(63)) == B.u(1)


def _pick(B: Any, masks: list[Any], values: list[Any]) -> Any:
    """values[j] for the first mask j that holds, values[-1] where none does."""
    out = values[-1]
    for mask, value in reversed(list(zip(masks, values, strict=False))):
        out = B.select(mask, value, out)
    return out


def atan_abs(B: Any, ax: Any) -> Any:
    """atan(ax) for ax >= 0 (inf included): fdlibm's five intervals, one division."""
    head, tail = atan_parts(B, ax)
    return head + tail


def atan_parts(B: Any, ax: Any) -> tuple[Any, Any]:
    """atan(ax) as fdlibm's last sum before it is rounded: head + tail."""
    bounds = [ax < B.f(0.4375), ax < B.f(0.6875), ax < B.f(1.1875), ax < B.f(2.4375)]
    num = _pick(B, bounds, [ax, ax * B.f(2.0) - B.f(1.0), ax - B.f(1.0), ax - B.f(1.5), B.f(-1.0)])
    den = _pick(B, bounds, [B.f(1.0), B.f(2.0) + ax, ax + B.f(1.0), B.f(1.0) + B.f(1.5) * ax, ax])
    t = num / den
    z = t * t
    w = z * z
    s = z * horner(B, w, AT[0::2]) + w * horner(B, w, AT[1::2])
    near = [_pick(B, bounds[1:], [B.f(c[j]) for j in range(4)]) for c in (ATAN_HI, ATAN_LO)]
    tail = B.select(bounds[0], B.f(0.0) - t * s, B.f(0.0) - ((t * s - near[1]) - t))
    return B.select(bounds[0], t, near[0]), tail


def atan(B: Any, x: Any) -> Any:
    return B.select(is_nan(B, x), x + x, flip(B, _negative(B, x), atan_abs(B, _abs(B, x))))


def _quadrant(B: Any, values: tuple[Any, Any, Any, Any], m: Any) -> Any:
    """values[m] for fdlibm's quadrant m = sign(y) + 2 sign(x)."""
    return _pick(B, [m == B.u(j) for j in range(3)], list(values))


def _neg(B: Any, z: Any) -> Any:
    return B.flt(B.bits(z) ^ B.u(1 << 63))


def atan2(B: Any, y: Any, x: Any) -> Any:
    ax, ay = _abs(B, x), _abs(B, y)
    m = (B.bits(y) >> B.u(63)) | ((B.bits(x) >> B.u(62)) & B.u(2))
    inf = B.f(np.inf)
    q = ay / ax
    # the quotient's rounding error, carried through atan's derivative (NaN beyond two_prod's range:
    # dropped there, where it no longer matters)
    p, pe = two_prod(B, q, ax)
    dq = (((ay - p) - pe) / ax) / (B.f(1.0) + q * q)
    dq = B.select(is_nan(B, dq), B.f(0.0), dq)
    big = q > B.f(2.0 ** 60)  # |y| >> |x|: pi/2 on either side
    head, tail = atan_parts(B, q)
    tail = tail + dq
    tiny = (q < B.f(2.0 ** -60)) & _negative(B, x)
    head = B.select(big, B.f(PIO2_HI + 0.5 * PI_LO), B.select(tiny, B.f(0.0), head))
    tail = B.select(big | tiny, B.f(0.0), tail)
    z = head + tail
    # pi - z in double-double: the angle beside pi keeps atan's accuracy
    d, e = two_sum(B, B.f(PI), B.f(0.0) - head)
    left = d + ((e - tail) + B.f(PI_LO))
    m = B.select(big, m & B.u(1), m)
    r = _quadrant(B, (z, _neg(B, z), left, _neg(B, left)), m)
    edges = [
        (ax == inf, _quadrant(B, (B.f(0.0), B.f(-0.0), B.f(PI), B.f(-PI)), m)),
        (ay == inf, flip(B, _negative(B, y), B.f(PIO2_HI))),
        ((ax == inf) & (ay == inf), _quadrant(B, (B.f(PIO4_HI), B.f(-PIO4_HI), B.f(3.0 * PIO4_HI),
                                                     B.f(-3.0 * PIO4_HI)), m)),
        (ax == B.f(0.0), flip(B, _negative(B, y), B.f(PIO2_HI))),
        (ay == B.f(0.0), _quadrant(B, (y, y, B.f(PI), B.f(-PI)), m)),
    ]
    for mask, value in edges:  # later ones take precedence, as fdlibm tests them first
        r = B.select(mask, value, r)
    return B.select(is_nan(B, x) | is_nan(B, y), x + y, r)


def _ratio(B: Any, t: Any) -> Any:
    """fdlibm's R(t) = p(t) / q(t)."""
    return (t * horner(B, t, PS)) / horner(B, t, QS)


def _clear_low(B: Any, s: Any) -> Any:
    return B.flt(B.bits(s) & B.u(0xFFFFFFFF00000000))


def asin(B: Any, x: Any) -> Any:
    ax = _abs(B, x)
    small = x * x
    inner = x + x * _ratio(B, small)  # |x| < 0.5
    t = (B.f(1.0) - ax) * B.f(0.5)
    s = B.sqrt(t)
    r = _ratio(B, t)
    near_one = B.f(PIO2_HI) - (B.f(2.0) * (s + s * r) - B.f(PIO2_LO))  # |x| >= 0.975
    w = _clear_low(B, s)
    c = (t - w * w) / (s + w)
    p = B.f(2.0) * s * r - (B.f(PIO2_LO) - B.f(2.0) * c)
    middle = B.f(PIO4_HI) - (p - (B.f(PIO4_HI) - B.f(2.0) * w))
    outer = flip(B, _negative(B, x), B.select(ax >= B.f(0.975), near_one, middle))
    y = B.select(ax < B.f(0.5), inner, outer)
    y = B.select(ax == B.f(1.0), x * B.f(PIO2_HI) + x * B.f(PIO2_LO), y)
    y = B.select(ax > B.f(1.0), B.f(np.nan), y)
    return B.select(is_nan(B, x), x + x, y)


def acos(B: Any, x: Any) -> Any:
    inner = B.f(PIO2_HI) - (x - (B.f(PIO2_LO) - x * _ratio(B, x * x)))  # |x| < 0.5
    zn = (B.f(1.0) + x) * B.f(0.5)  # x < -0.5
    sn = B.sqrt(zn)
    below = B.f(PI) - B.f(2.0) * (sn + (_ratio(B, zn) * sn - B.f(PIO2_LO)))
    zp = (B.f(1.0) - x) * B.f(0.5)  # x > 0.5
    sp = B.sqrt(zp)
    df = _clear_low(B, sp)
    c = (zp - df * df) / (sp + df)
    above = B.f(2.0) * (df + (_ratio(B, zp) * sp + c))
    y = B.select(_abs(B, x) < B.f(0.5), inner, B.select(x < B.f(0.0), below, above))
    y = B.select(x == B.f(1.0), B.f(0.0), B.select(x == B.f(-1.0), B.f(PI + 2.0 * PIO2_LO), y))
    y = B.select(_abs(B, x) > B.f(1.0), B.f(np.nan), y)
    return B.select(is_nan(B, x), x + x, y)


def hypot(B: Any, x: Any, y: Any) -> Any:
    """sqrt(x^2 + y^2) without overflow or underflow on the way, within 1 ulp."""
    ax, ay = _abs(B, x), _abs(B, y)
    a, b = B.select(ax >= ay, ax, ay), B.select(ax >= ay, ay, ax)
    big, tiny = a > B.f(2.0 ** 500), a < B.f(2.0 ** -500)
    k = B.select(big, B.u(-600 % 2 ** 64), B.select(tiny, B.u(600), B.u(0)))
    a, b = scale(B, a, k), scale(B, b, k)  # exact for a; b may round only where b^2 is negligible
    sh, sl = dd_add(B, *two_prod(B, a, a), *two_prod(B, b, b))
    r = B.sqrt(sh)
    p, pe = two_prod(B, r, r)
    r = r + (((sh - p) - pe) + sl) / (r + r)
    h = scale(B, B.select(a == B.f(0.0), B.f(0.0), r), B.u(0) - k)
    h = B.select(is_nan(B, x) | is_nan(B, y), x + y, h)
    return B.select((ax == B.f(np.inf)) | (ay == B.f(np.inf)), B.f(np.inf), h)

