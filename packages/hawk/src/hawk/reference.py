"""The NumPy reference evaluator of the IR: what the back ends are tested against.

Every per-sample value is an array over all samples; an ``if`` on a
per-sample condition runs both arms under masks and keeps, per sample, what
the taken arm assigned.  Sums add in eagle's fixed order (libeagle's
``eagle_sum_*``, the one definition of that order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eagle.extend import ffi, lib
from hawk import tables
from hawk.ir import (
    REDUCTIONS,
    Const,
    Gather,
    If,
    KernelIR,
    Load,
    Loop,
    Op,
    Operand,
    ScatterAdd,
    Stmt,
    Store,
    Var,
)
from hawk.semantics import OPS, cast_array
from hawk.types import NUMPY, strong


def component(arg: np.ndarray, comp: int) -> np.ndarray:
    """Component ``comp`` of a plane ``(k, n)`` or, for a matrix, ``(r, c, n)`` (row-major): a view."""
    return arg.reshape(-1, arg.shape[-1])[comp] if arg.ndim > 2 else arg[comp]


def fixed_order_sum(x: np.ndarray) -> Any:
    """The sum of a 1-D array in eagle's fixed order (integers wrap)."""
    x = np.ascontiguousarray(x)
    if x.dtype == np.float64:
        return np.float64(lib.eagle_sum_f64(ffi.from_buffer("double[]", x), x.size))
    if x.dtype == np.float32:
        return np.float32(lib.eagle_sum_f32(ffi.from_buffer("float[]", x), x.size))
    with np.errstate(over="ignore"):
        return x.sum(dtype=x.dtype)


def reduce_samples(op: str, x: Any) -> Any:
    """``op`` over an array's values as a kernel reduces them; over no values, its identity
    (sum 0, max the dtype's lowest value or -inf, min its highest or +inf, any False, all True),
    as libeagle gives.  The max of bools is their any, the min their all."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        op = {"max": "any", "min": "all"}.get(op, op)
    if op == "sum":
        return fixed_order_sum(x.reshape(-1))
    if op in ("any", "all"):
        return np.any(x) if op == "any" else np.all(x)
    if x.size:
        return (np.max if op == "max" else np.min)(x)  # NumPy propagates NaN, as libeagle does
    if x.dtype.kind == "f":
        return x.dtype.type(-np.inf if op == "max" else np.inf)
    return x.dtype.type(np.iinfo(x.dtype).min if op == "max" else np.iinfo(x.dtype).max)


def evaluate(ir: KernelIR, args: list[Any], n: int) -> None:
    """Run ``ir`` over ``n`` samples; ``args`` holds one array or number per slot (outputs written)."""
    evaluator = _Evaluator(ir, args, n)
    evaluator.run(ir.body, None)
    if evaluator.outside is not None:  # the smallest key of the launch, as the compiled code keeps
        raise tables.bounds_error(ir, *evaluator.outside, f"hawk.kernel {ir.name}")
    tables.scatter_reference(ir, evaluator.scattered, args, n)


class _Evaluator:
    def __init__(self, ir: KernelIR, args: list[Any], n: int) -> None:
        self.ir, self.args, self.n = ir, args, n
        self.values: dict[int, Any] = {}
        #: output slot -> (flat cell, value, samples that added) of each ScatterAdd run, in order
        self.scattered: dict[int, list[tuple[Any, Any, Any]]] = {}
        #: (key, index, axis) of the first checked access out of range (tables.outside), if any
        self.outside: tuple[int, int, int] | None = None

    def value(self, operand: Operand) -> Any:
        if isinstance(operand, Const):
            return NUMPY[strong(operand.dtype)](operand.value)
        return self.values[id(operand)]

    def assign(self, var: Var, value: Any, mask: np.ndarray | None) -> None:
        value = np.asarray(value).astype(NUMPY[strong(var.dtype)], copy=False)
        if var.uniform or mask is None:
            self.values[id(var)] = value if var.uniform else np.broadcast_to(value, (self.n,)).copy()
            return
        old = self.values.get(id(var), np.zeros(self.n, value.dtype))
        self.values[id(var)] = np.where(mask, value, old)

    def keep_outside(self, bad: tuple[int, int, int] | None) -> None:
        if bad is not None and (self.outside is None or bad[0] < self.outside[0]):
            self.outside = bad

    def run(self, body: list[Stmt], mask: np.ndarray | None) -> None:
        for stmt in body:
            if isinstance(stmt, Load):
                self.assign(stmt.dst, self.load(stmt), mask)
            elif isinstance(stmt, Op):
                self.assign(stmt.dst, self.op(stmt), mask)
            elif isinstance(stmt, Store):
                self.store(stmt, mask)
            elif isinstance(stmt, Gather):
                index = [self.value(i) for i in stmt.index]
                read, bad = tables.evaluate(self.ir, stmt, self.args[stmt.slot], index, self.n, mask)
                self.assign(stmt.dst, read, mask)
                self.keep_outside(bad)
            elif isinstance(stmt, ScatterAdd):
                index = [np.broadcast_to(self.value(i), (self.n,)) for i in stmt.index]
                flat, inside = tables.flat_index(self.ir.slots[stmt.slot], index, stmt.mode)
                self.keep_outside(tables.outside(self.ir, stmt, index, inside, mask))
                active = np.ones(self.n, bool) if mask is None else mask
                self.scattered.setdefault(stmt.slot, []).append((np.where(inside, flat, -1),
                                                                 self.value(stmt.value), active))
            elif isinstance(stmt, If):
                cond = self.value(stmt.cond)
                if stmt.cond.uniform:
                    self.run(stmt.then if cond else stmt.orelse, mask)
                    continue
                here = np.ones(self.n, bool) if mask is None else mask
                self.run(stmt.then, here & cond)
                self.run(stmt.orelse, here & ~cond)
            elif isinstance(stmt, Loop):
                self.loop(stmt, mask)

    def loop(self, stmt: Loop, mask: np.ndarray | None) -> None:
        """Every turn for every sample (in the mask): a sample that stopped runs its turns under
        an if it fails; the carried vars take their updates at the end of each."""
        for turn in range(int(self.value(stmt.count))):
            self.values[id(stmt.index)] = np.int64(turn)
            self.run(stmt.body, mask)
            for var, update in zip(stmt.carried, stmt.update, strict=True):
                self.assign(var, self.values[id(update)], mask)

    def load(self, stmt: Load) -> Any:
        slot, arg = self.ir.slots[stmt.slot], self.args[stmt.slot]
        if slot.role == "value":
            return arg
        if slot.cell:
            return np.asarray(arg).reshape(-1)[0]
        return component(arg, stmt.comp) if slot.components > 1 else arg

    def op(self, stmt: Op) -> Any:
        args = [self.value(a) for a in stmt.args]
        if stmt.op in REDUCTIONS:
            return reduce_samples(stmt.op, args[0])
        if stmt.op == "sample":
            return np.arange(self.n, dtype=np.int64)
        if stmt.op == "cast":
            return cast_array(args[0], stmt.args[0].dtype, stmt.dst.dtype)
        with np.errstate(all="ignore"):
            return OPS[stmt.op](*args)

    def store(self, stmt: Store, mask: np.ndarray | None) -> None:
        slot, arg = self.ir.slots[stmt.slot], self.args[stmt.slot]
        value = self.value(stmt.value)
        if slot.cell:  # written over an empty batch too
            arg.reshape(-1)[0] = value
            return
        target = component(arg, stmt.comp) if slot.components > 1 else arg
        if mask is None:
            target[...] = value
        else:
            target[mask] = np.broadcast_to(value, (self.n,))[mask]
