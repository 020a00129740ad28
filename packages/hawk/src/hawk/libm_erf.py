"""eagle's own ``erf``, built on :mod:`hawk.libm`: fdlibm's (its constants and its four
intervals; the notice is :mod:`hawk.libm`'s) with every branch a mask select and eagle's own
``exp``, so the same bits on every target.  ``erf(±0) = ±0``, ``erf(±inf) = ±1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk.libm import exp, flip, horner, is_nan

ERX = 8.45062911510467529297e-01
EFX, EFX8 = 1.28379167095512586316e-01, 1.02703333676410069053e+00
PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
      -5.77027029648944159157e-03, -2.37630166566501626084e-05)
QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
      1.32494738004321644526e-04, -3.96022827877536812320e-06)
PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
      3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
      -2.16637559486879084300e-03)
QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
      1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
      -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
      -8.12874355063065934246e+01, -9.81432934416914548592e+00)
SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
      6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
      6.57024977031928170135e+00, -6.04244152148580987438e-02)
RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
      -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
      -4.83519191608651397019e+02)
SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
      3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
      -2.24409524465858183362e+01)


def _high(word: int) -> float:
    """The double of high word ``word`` and a zero low word (fdlibm's interval bounds)."""
    return float(np.uint64(word << 32).view(np.float64))


def erf(B: Any, x: Any) -> Any:
    ax = B.flt(B.bits(x) & B.u((1 << 63) - 1))
    z = x * x
    small = x + x * (horner(B, z, PP) / horner(B, z, QQ))  # |x| < 0.84375
    small = B.select(ax < B.f(_high(0x3E300000)), x + B.f(EFX) * x, small)
    small = B.select(ax < B.f(_high(0x00800000)), B.f(0.125) * (B.f(8.0) * x + B.f(EFX8) * x), small)
    s = ax - B.f(1.0)
    near = B.f(ERX) + horner(B, s, PA) / horner(B, s, QA)  # |x| < 1.25
    tail_x = B.select(ax < B.f(6.0), ax, B.f(6.0))
    s = B.f(1.0) / (tail_x * tail_x)
    first = ax < B.f(_high(0x4006DB6E))
    ratio = B.select(first, horner(B, s, RA) / horner(B, s, SA), horner(B, s, RB) / horner(B, s, SB))
    zt = B.flt(B.bits(tail_x) & B.u(0xFFFFFFFF00000000))
    r = exp(B, B.f(0.0) - zt * zt - B.f(0.5625)) * exp(B, (zt - tail_x) * (zt + tail_x) + ratio)
    far = B.select(ax < B.f(6.0), B.f(1.0) - r / tail_x, B.f(1.0))  # |x| < 6, then 1 - tiny
    outer = flip(B, (B.bits(x) >> B.u(63)) == B.u(1), B.select(ax < B.f(1.25), near, far))
    y = B.select(ax < B.f(0.84375), small, outer)
    return B.select(is_nan(B, x), x + x, y)

