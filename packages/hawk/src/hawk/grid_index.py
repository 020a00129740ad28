"""``hawk.sample2(width)`` and Table reads in operations that vectorise.

The row and column of ``i, j = hawk.sample2(w)`` are ``k // w`` and ``k % w`` of the flat sample
index ``k`` by a width the same for every sample, exactly as hawk's integer ``//`` and ``%`` give
them (by 0: 0 and 0; floored for a negative ``w``).  hawk's integer division (``hk_floordiv_i64``)
branches and the machine has no vector integer divide, so a sample loop that divides does not
vectorise.  This lowering divides in float64 and truncates, with no branch, no ``floor`` (GCC 12
vectorises no ``floor`` under the default trapping-math rules) and no select on a value the same
for every sample (which keeps GCC from vectorising the loop): a uniform 0 or 1 multiplies instead.

    t = trunc(double(k) / double(d))    d = w, or 1 where w is 0 (IR op index_quotient)
    r = k - t * d
    a = (r != 0) * (w < 0)              the floor of a negative quotient is one lower
    i = (t - a) * (w != 0),  j = (r + a * d) * (w != 0)

Why ``t`` is exact, for ``0 <= k < 2**53`` (a sample index) and any int64 ``d != 0``:

- ``x = k / |d|`` lies in ``[q, q + 1)`` for ``q = k // |d|``; ``k`` is exact in a double, and
  so is ``|d|`` below ``2**53`` (at or above it, ``double(|d|) >= 2**53 > k``: ``x`` and its
  rounding are in ``[0, 1)``, and ``q`` is 0).
- Rounding cannot reach ``q + 1``, so truncating it gives ``q``: if ``x`` is not an integer,
  ``q + 1 - x >= 1/|d|``; with ``2**(e-1) <= q < 2**e`` (``e = 0`` for ``q = 0``) the doubles
  below ``q + 1`` are ``2**(e-53)`` apart at most, and ``|d| * 2**(e-1) <= |d| * q <= k < 2**53``
  gives ``1/|d| > 2**(e-54)``, more than half that spacing (``q = 0``: ``1/|d| > 2**-54``).  It
  cannot fall below ``q``, a double.  A negative ``d`` rounds ``-x`` to ``-fl(x)``, so ``t`` is
  ``-q``: trunc, the quotient toward zero, which ``a`` turns into the floor.
- ``|t| <= k < 2**53`` fits the int64 conversion, and ``r = k - t * d`` is then exact in int64.
"""

from __future__ import annotations

from typing import Any

from hawk.ir import Const, Operand


def row_col(lowerer: Any, flat: Operand, width: Operand) -> tuple[Operand, Operand]:
    """``flat // width`` and ``flat % width`` (see the module) for the flat sample index ``flat``
    (int64) and a uniform int64 ``width``."""
    def op(name: str, args: list[Operand], dtype: str) -> Operand:
        return lowerer.emit(name, args, dtype)

    def flag(name: str) -> Operand:  # a uniform 0 or 1
        return lowerer.cast(op(name, [width, Const(0, "i64")], "bool"), "i64")

    nonzero = flag("ne")
    divisor = op("add", [width, op("sub", [Const(1, "i64"), nonzero], "i64")], "i64")  # 0 -> 1
    # truncated: |quotient| <= flat < 2**53, so the conversion needs no clamp (hk_to_i64's
    # compares, which cost more than the integer divide they replace where nothing vectorises)
    quotient = op("index_quotient", [lowerer.cast(flat, "f64"), lowerer.cast(divisor, "f64")], "i64")
    rest = op("sub", [flat, op("mul", [quotient, divisor], "i64")], "i64")
    lower = op("mul", [lowerer.cast(op("ne", [rest, Const(0, "i64")], "bool"), "i64"), flag("lt")], "i64")
    row = op("mul", [op("sub", [quotient, lower], "i64"), nonzero], "i64")
    column = op("mul", [op("add", [rest, op("mul", [lower, divisor], "i64")], "i64"), nonzero], "i64")
    return row, column


def narrow(flat: str, table: tuple[int, ...]) -> str:
    """The C index of a Table read whose flat cell ``flat`` is in range (clamped, wrapped or
    checked): as int32 where the table has fewer than 2**31 cells, so that GCC gathers a float
    table's cells in vectors (it gathers floats by 32-bit indices only)."""
    cells = 1
    for extent in table:
        cells *= extent
    return f"(int32_t)({flat})" if cells < 2 ** 31 else flat
