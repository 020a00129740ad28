"""Lowering of ``hawk.random`` calls: the sample index op and one draw op per call.

A draw is an IR op over (seed, sample, counter[, word]) as uint64: ``sample`` is the IR op
holding the flat index of the sample in its plane (the index the emitters loop over, the
reference's ``arange``), so a draw depends on seed, sample and counter only.
"""

from __future__ import annotations

import ast
from typing import Any

from hawk import philox
from hawk.ir import Const, Op, Operand, Var
from hawk.types import is_float

#: IR op -> how a kernel spells it
SPELLED = {"random_uniform": "hawk.random.uniform", "random_uniform32": "hawk.random.uniform32",
           "random_normal": "hawk.random.normal", "random_bits": "hawk.random.bits"}


def sample(lowering: Any) -> Var:
    """The ``sample`` op's var, made once where the lowering's names reach."""
    key = "\0sample"
    if key not in lowering.env:
        var = Var("i64", False, "sample")
        lowering.body.append(Op(var, "sample", ()))
        lowering.env[key] = var
    return lowering.env[key]


def call(lowering: Any, found: tuple[str, int], node: ast.Call) -> Var:
    """A draw's call: its positional (seed, counter[, word]) and an optional ``sample=``, the index
    of the sample whose draw it is (by default this sample's own)."""
    op, arity = found
    what = ast.unparse(node.func)
    if any(k.arg != "sample" for k in node.keywords):
        raise lowering.src.refuse(node, f"{what} takes one keyword, sample= (the index of the sample "
                                        "whose draw it is)")
    if len(node.args) != arity:
        names = "seed, counter, word" if arity == 3 else "seed, counter"
        raise lowering.src.refuse(node, f"{what} takes {arity} arguments ({names}) and sample=, got "
                                        f"{len(node.args)}")
    args = [lowering.expr(a) for a in node.args]
    at = [lowering.expr(k.value) for k in node.keywords]
    return draw(lowering, op, args, at[0] if at else None, node)


def draw(lowering: Any, op: str, args: list[Operand], at: Operand | None, node: ast.Call) -> Var:
    """``op`` of (seed, sample, counter[, word]), each an integer, as uint64; ``at``: the sample
    (None: this one)."""
    spelled = SPELLED[op]
    named = [("seed", args[0]), ("counter", args[1]), *(("word", a) for a in args[2:])]
    for name, value in [*named, *((("sample", at),) if at is not None else ())]:
        if is_float(value.dtype) or value.dtype == "bool":
            raise lowering.src.refuse(node, f"{spelled}: {name} is a {value.dtype}; seeds, counters, words "
                                            f"and samples are integers (write hawk.math.int32({name}) for "
                                            "a float you mean as one)")
    if op == "random_bits" and not (hasattr(args[2], "value") and args[2].value in (0, 1, 2, 3)):
        raise lowering.src.refuse(node, f"{spelled}: the word is one of the numbers 0, 1, 2, 3 (of the "
                                        "four words of a Philox block), written out")
    index = sample(lowering) if at is None else lowering.cast(at, "u64")
    operands = [lowering.cast(args[0], "u64"), index, *(lowering.cast(a, "u64") for a in args[1:])]
    # the draw of a sample named by uniform values is the same for every sample
    dst = Var(philox.DRAWS[op][2], all(isinstance(o, Const) or o.uniform for o in operands))
    lowering.body.append(Op(dst, op, tuple(operands)))
    return dst
