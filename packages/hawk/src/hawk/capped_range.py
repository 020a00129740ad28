"""``for i in hawk.capped_range(n, cap):``, a counted loop whose count is known only when it runs.

The loop is lowered as ``for i in range(cap):`` that breaks once ``i >= n``: a loop of a number
of turns, which is what a Table's gradient needs to record a row per turn
(:mod:`hawk.records`), run as nothing past ``n``.  Here ``n`` is the same for every sample (a
``Param[Int32]``, a one-cell value) and ``cap`` a number.
"""

from __future__ import annotations

import ast
from typing import Any

from hawk.ir import Const, Var
from hawk.types import promote


def capped_range(n: int, cap: int) -> range:
    """``for i in hawk.capped_range(n, cap):`` in a kernel: ``i = 0, 1, …``, ``min(n, cap)`` turns,
    ``n`` known only when the kernel runs, ``cap`` a number.  A loop whose turns read a Table
    needs the cap for that Table's gradient (a record per turn).  Outside a kernel it is
    ``range(min(n, cap))``.

    >>> from hawk import Int32, Param, Scalar, Table
    >>> @hawk.kernel
    ... def trail(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    ...     acc = x
    ...     for j in hawk.capped_range(k, 8):
    ...         acc = acc * 0.5 + t[hawk.sample() - j]
    ...     return acc
    >>> x = np.zeros(4)
    >>> t = np.array([1.0, 2.0, 4.0, 8.0])
    >>> trail(x, t, 2)
    array([1.5, 2. , 4. , 8. ])
    >>> trail.vjp(x, t, 2, np.ones(4))["t"]      # the reads of both turns, to their cells
    array([2.5, 1.5, 1.5, 0.5])
    """
    return range(min(n, cap))


def lowered(lowerer: Any, node: ast.For) -> bool:
    """Lower ``node`` when it loops over ``hawk.capped_range(n, cap)``; False for another loop."""
    call = node.iter
    if not (isinstance(call, ast.Call) and lowerer.resolve(call.func) is capped_range):
        return False
    src = lowerer.src
    if len(call.args) != 2 or call.keywords or not isinstance(node.target, ast.Name):
        raise src.refuse(node, "write `for i in hawk.capped_range(n, cap):`, one name, a count and a cap")
    cap = lowerer.expr(call.args[1])
    if not (isinstance(cap, Const) and isinstance(cap.value, int) and not isinstance(cap.value, bool)
            and cap.value >= 0):
        raise src.refuse(call.args[1], "the cap of hawk.capped_range(n, cap) is a number written out "
                                       "(or a number from the module), at least 0")
    count = lowerer.expr(call.args[0])
    lowerer.uniform_count(count, call.args[0], "the count of hawk.capped_range(n, cap)")
    hidden = f"{lowerer.frame}count·{node.lineno}·{node.col_offset}"  # no name of the kernel's
    lowerer.env[hidden] = count
    stop = ast.If(ast.Compare(ast.Name(node.target.id, ast.Load()), [ast.GtE()],
                              [ast.Name(hidden, ast.Load())]), [ast.Break()], [])
    loop = ast.For(node.target, call, [stop, *node.body], [])
    for made in (stop, loop):
        ast.copy_location(made, node)
    ast.fix_missing_locations(loop)
    dtype = promote("wi", count.dtype)

    def turn(index: Var) -> None:
        lowerer.assign(node.target, lowerer.cast(index, dtype), node)

    lowerer.loop(loop, loop.body, Const(cap.value, "wi"), turn)
    return True
