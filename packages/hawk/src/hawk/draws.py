"""Lowering of ``hawk.random`` calls: the sample index op and one draw op per call.

A draw is an IR op over (seed, sample, counter[, word]) as uint64: ``sample`` is the IR op
holding the flat index of the sample in its plane (the index the emitters loop over, the
reference's ``arange``), so a draw depends on seed, sample and counter only.
"""

from __future__ import annotations

import ast
from typing import Any

from hawk import philox
from hawk.ir import Op, Operand, Var
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


def draw(lowering: Any, op: str, args: list[Operand], node: ast.Call) -> Var:
    """``op`` of the call's (seed, counter[, word]), each an integer, as uint64."""
    spelled = SPELLED[op]
    for name, value in zip(("seed", "counter", "word"), args, strict=False):
        if is_float(value.dtype) or value.dtype == "bool":
            raise lowering.src.refuse(node, f"{spelled}: {name} is a {value.dtype}; seeds, counters and "
                                            f"words are integers (write hawk.math.uint32({name}) for a "
                                            "float you mean as one)")
    if op == "random_bits" and not (hasattr(args[2], "value") and args[2].value in (0, 1, 2, 3)):
        raise lowering.src.refuse(node, f"{spelled}: the word is one of the numbers 0, 1, 2, 3 (of the "
                                        "four words of a Philox block), written out")
    operands = [lowering.cast(args[0], "u64"), sample(lowering), *(lowering.cast(a, "u64") for a in args[1:])]
    dst = Var(philox.DRAWS[op][2], False)
    lowering.body.append(Op(dst, op, tuple(operands)))
    return dst
