"""eagle's own ``sin cos tan exp log pow``: each written once, run three ways.

Each function below is a fixed sequence of operations that every target
rounds the same way: ``+ - * /`` on doubles (no FMA, no contraction),
64-bit unsigned integer arithmetic, bit moves between the two, compares and
selects, and one table look-up.  No branch depends on a sample: every
condition is a mask select, so the C compiler keeps the loop over samples
vectorised.  :class:`Numpy` runs the sequence on arrays (the reference
semantics, :mod:`hawk.semantics`); :func:`c_functions` traces it once into
``static inline`` functions of the common subset of C and CUDA C, which
:mod:`hawk.emit` puts in every translation unit's prelude.  Reference, C
and CUDA therefore agree by construction, at any vector width.

The algorithms are fdlibm's (Sun, 1993; freely redistributable) made
branch-free: Cody-Waite reductions with exact products, a head and tail
reduced argument, two-step scaling for subnormal results, and for trig
arguments of magnitude ``>= HUGE`` a Payne-Hanek reduction in integer
arithmetic over a 1,280-bit table of 2/pi (exact for every double).
``float32`` functions are the ``float64`` ones rounded (one more rounding
of a result within 1 ulp of the double keeps them within 1 float ulp).
Accuracy is measured in ``docs/determinism.rst``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

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
    def table(index: Any) -> Any:
        return _TABLE[np.asarray(index).astype(np.intp)]


_TABLE = np.array(TWO_OVER_PI, np.uint64)


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


class _Tracer:
    """The operations as C statements, one ``const`` temporary each (the algorithm traced once)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def new(self, kind: str, expr: str) -> _Value:
        name = f"t{len(self.lines)}"
        self.lines.append(f"    const {'double' if kind == 'f' else 'uint64_t'} {name} = {expr};")
        return _Value(self, kind, name)

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

    def table(self, index: _Value) -> _Value:
        return self.new("u", f"(uint64_t)hk_two_over_pi[{index.text}]")


#: the functions, their arities
FUNCTIONS = {"sin": 1, "cos": 1, "tan": 1, "exp": 1, "log": 1, "pow": 2}

#: what a C or CUDA translation unit needs before the functions
C_SUPPORT = (
    "HK_FN uint64_t hk_bits(double x) { union { double d; uint64_t u; } v; v.d = x; return v.u; }\n"
    "HK_FN double hk_double(uint64_t u) { union { double d; uint64_t u; } v; v.u = u; return v.d; }\n"
    f"HK_TABLE uint32_t hk_two_over_pi[{len(TWO_OVER_PI)}] = {{\n    "
    + ",".join(f"{w:#010x}" + ("\n   " if k % 8 == 7 else "") for k, w in enumerate(TWO_OVER_PI))
    + "};\n")


def c_functions() -> str:
    """``hk_{name}_f64`` and ``hk_{name}_f32`` for every function, as C that is also CUDA C (the
    prelude defines ``HK_FN`` and ``HK_TABLE``)."""
    out = [C_SUPPORT]
    for name, arity in FUNCTIONS.items():
        tracer = _Tracer()
        params = [_Value(tracer, "f", p) for p in "xy"[:arity]]
        result = globals()[name](tracer, *params)
        out.append(f"HK_FN double hk_{name}_f64({', '.join(f'double {p}' for p in 'xy'[:arity])})\n{{\n"
                   + "\n".join(tracer.lines) + f"\n    return {result.text};\n}}\n")
        args = ", ".join(f"(double){p}" for p in "xy"[:arity])
        out.append(f"HK_FN float hk_{name}_f32({', '.join(f'float {p}' for p in 'xy'[:arity])})\n"
                   f"{{ return (float)hk_{name}_f64({args}); }}\n")
    return "".join(out)


def evaluate(name: str, *args: Any) -> Any:
    """``name`` over arrays as a kernel computes it: float32 (NumPy's promotion of the arguments)
    through the float64 function, rounded once; anything else as float64."""
    single = np.result_type(*args) == np.float32
    with np.errstate(all="ignore"):
        result = np.asarray(globals()[name](Numpy, *(np.asarray(a, np.float64) for a in args)))
    return result.astype(np.float32) if single else result
