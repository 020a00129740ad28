"""Philox4x32-10, and hawk's random draws made from it, written once and run three ways.

Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11; Random123's constants) is a keyed bijection
of a 128-bit counter: 32x32 -> 64-bit products, XOR and adds, exact in NumPy's uint64, C and CUDA
alike.  As :mod:`hawk.libm` does for its functions, each draw below is a fixed sequence of
backend operations that :class:`hawk.libm.Numpy` runs on arrays (the reference) and
:func:`hawk.libm.trace` prints as C that is also CUDA C, so every target gives the same bits.

Counter layout, version :data:`LAYOUT` (frozen: a change is a new version, documented in
``docs/hawk.rst``)::

    key     = (seed mod 2^32, seed div 2^32 mod 2^32)            seed as a uint64
    counter = (sample mod 2^32, sample div 2^32, counter mod 2^32, counter div 2^32 mod 2^32)

with ``sample`` the flat index of the sample in its plane and ``counter`` the user's, as a uint64.
One block gives four 32-bit words w0 ... w3; the draws use them so:

- ``uniform``: ``(w0 >> 11) 2^-21 + w1 2^-53``, a float64 in [0, 1) on the 2^-53 grid (exact);
- ``uniform32``: ``(w0 >> 8) 2^-24``, a float32 in [0, 1) on the 2^-24 grid (exact);
- ``normal``: Box-Muller on hawk's own log and cos, ``sqrt(-2 log u1) cos(2 pi u2)`` with
  ``u1 = (w0 >> 11) 2^-21 + (w1 + 1) 2^-53`` in (0, 1] and ``u2`` the uniform of w2, w3;
- ``bits``: word ``w`` itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from hawk import libm

#: the version of the counter layout above
LAYOUT = 1

M0, M1 = 0xD2511F53, 0xCD9E8D57  # the round multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # the key's Weyl increments
ROUNDS = 10
LOW = 0xFFFFFFFF


def block(B: Any, counter: tuple[Any, Any, Any, Any], key: tuple[Any, Any]) -> tuple[Any, Any, Any, Any]:
    """Philox4x32-10 of a counter of four 32-bit words under a key of two (values below 2^32 in
    uint64)."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + B.u(W0)) & B.u(LOW), (k1 + B.u(W1)) & B.u(LOW)
        p0, p1 = B.mul32(c0, B.u(M0)), B.mul32(c2, B.u(M1))
        c0, c1, c2, c3 = ((p1 >> B.u(32)) ^ c1 ^ k0, p1 & B.u(LOW), (p0 >> B.u(32)) ^ c3 ^ k1,
                          p0 & B.u(LOW))
    return c0, c1, c2, c3


def words(B: Any, seed: Any, sample: Any, counter: Any) -> tuple[Any, Any, Any, Any]:
    """The block of (seed, sample, counter), all uint64, in layout :data:`LAYOUT`."""
    low, high = B.u(LOW), B.u(32)
    return block(B, (sample & low, sample >> high, counter & low, counter >> high),
                 (seed & low, seed >> high))


def _unit(B: Any, high: Any, low: Any, plus: float = 0.0) -> Any:
    """((high >> 11) 2^32 + low + plus) 2^-53: exact, each part an integer below 2^53."""
    whole = libm.to_f(B, high >> B.u(11)) * B.f(2.0 ** 32) + (libm.to_f(B, low) + B.f(plus))
    return whole * B.f(2.0 ** -53)


def uniform(B: Any, seed: Any, sample: Any, counter: Any) -> Any:
    w = words(B, seed, sample, counter)
    return _unit(B, w[0], w[1])


def uniform32(B: Any, seed: Any, sample: Any, counter: Any) -> Any:
    """A double that a float holds exactly."""
    return libm.to_f(B, words(B, seed, sample, counter)[0] >> B.u(8)) * B.f(2.0 ** -24)


def normal(B: Any, seed: Any, sample: Any, counter: Any) -> Any:
    w = words(B, seed, sample, counter)
    radius = B.sqrt(libm.log(B, _unit(B, w[0], w[1], 1.0)) * B.f(-2.0))
    y0, y1, n = libm.reduce_medium(B, _unit(B, w[2], w[3]) * B.f(2 * np.pi))  # below 2 pi: medium
    return radius * libm.cos_reduced(B, y0, y1, n)


def bits(B: Any, seed: Any, sample: Any, counter: Any, word: Any) -> Any:
    """Word ``word`` (mod 4) of the block."""
    w = words(B, seed, sample, counter)
    which = word & B.u(3)
    return B.select(which == B.u(0), w[0], B.select(which == B.u(1), w[1],
                                                     B.select(which == B.u(2), w[2], w[3])))


#: IR op -> (draw, the C type of its result, its hawk dtype)
DRAWS: dict[str, tuple[Callable[..., Any], str, str]] = {
    "random_uniform": (uniform, "double", "f64"),
    "random_uniform32": (uniform32, "float", "f32"),
    "random_normal": (normal, "double", "f64"),
    "random_bits": (bits, "uint32_t", "u32"),
}


def _params(op: str) -> tuple[tuple[str, str], ...]:
    return tuple((p, "u") for p in ("seed", "sample", "counter", "word")[:4 if op == "random_bits" else 3])


@functools.cache  # traced once per process
def _c_function(op: str) -> str:
    fn, ctype, _ = DRAWS[op]
    return libm.trace(fn, _params(op), f"hk_{op}", ctype)[0]


def c_functions(ops: Collection[str] | None = None) -> str:
    """``hk_{op}``: every draw (or those in ``ops``) as C that is also CUDA C (``HK_MATH``: see
    :mod:`hawk.libm`)."""
    return "".join(_c_function(op) for op in DRAWS if ops is None or op in ops)


#: The draws that are integer arithmetic and exact conversions only, which a C kernel holds
#: itself (:func:`c_functions`): GCC vectorises a call to a vector clone only where every lane
#: makes it, so a draw under a per-sample ``if`` would keep the loop scalar.
INLINE = ("random_uniform", "random_uniform32", "random_bits")


def c_declarations() -> str:
    """What a C kernel needs to call the other draws, hawk's math library's (``HK_SIMD``: libm's)."""
    return "".join(f"HK_SIMD {ctype} hk_{op}({', '.join(['uint64_t'] * len(_params(op)))});\n"
                   for op, (_, ctype, _) in DRAWS.items() if op not in INLINE)


def call(op: str, args: list[str]) -> str:
    """The C of IR op ``op`` over operands ``args`` (seed, sample, counter[, word], any integers)."""
    return f"hk_{op}({', '.join(f'(uint64_t){a}' for a in args)})"


def evaluate(op: str, *args: Any) -> Any:
    """IR op ``op`` over arrays of integers (two's complement taken mod 2^64), as a kernel draws."""
    fn, _, dtype = DRAWS[op]
    operands = [np.asarray(a).astype(np.uint64) for a in args]
    with np.errstate(all="ignore"):
        result = np.asarray(fn(libm.Numpy, *operands))
    return result.astype({"f64": np.float64, "f32": np.float32, "u32": np.uint32}[dtype])[()]
