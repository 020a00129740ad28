"""The ``scan`` node kind: its payload, planes, native lowering and vjp.

A node is made with ``eagle.node("scan", x, out=y, op="sum")``; eagle finds
the kind through this plugin's entry point, so user code never imports
eagle_scan.  The kernels are C, in ``scan.c``, compiled against eagle.h by
eagle on first use and loaded through the plugin registry, which refuses a
library built for another ABI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import numpy as np

from eagle.extend import EagleTypeError, EagleValueError
from eagle.graph import NativeCall

#: The scans a node may compute.
OPS = ("sum", "max")
#: Element types the kernels exist for, and their suffix in scan.c.
DTYPES = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32",
          np.dtype(np.int64): "i64", np.dtype(np.int32): "i32"}
#: eagle's fixed block of samples (EAGLE_BLOCK): the scan's blocked order follows it.
BLOCK = 1024
API = "eagle.node('scan')"


def source() -> str:
    """The C source of the kernels."""
    return files("eagle_scan").joinpath("scan.c").read_text()


@dataclass(frozen=True, eq=False)
class Scan:
    """A scan node's payload: ``out[i] = op(x[0], ..., x[i])``."""

    x: np.ndarray
    out: np.ndarray
    op: str
    #: Private scratch, one cell per block (the block totals, then their running op).
    #: No other node can reach it, so it is not a plane.
    totals: np.ndarray

    @property
    def samples(self) -> int:
        """How many samples the node covers: the schedule rule (``branch_tasks``) reads it."""
        return int(self.x.shape[0])

    @property
    def in_place(self) -> bool:
        return self.out is self.x


def make(x: Any, *, out: Any, op: str = "sum") -> Scan:
    """The payload of ``eagle.node("scan", x, out=y, op="sum")``; ``out=x`` scans in place."""
    if op not in OPS:
        raise EagleValueError(f"{API}: op must be one of {OPS}, got {op!r}")
    for name, a in (("x", x), ("out", out)):
        if not isinstance(a, np.ndarray):
            raise EagleTypeError(f"{API}: {name} must be a NumPy array, got {type(a).__name__}")
        if a.ndim != 1 or not a.flags.c_contiguous:
            raise EagleValueError(f"{API}: {name} must be a contiguous 1-D plane; got shape {a.shape}"
                             f"{'' if a.flags.c_contiguous else ', strided'}: pass np.ascontiguousarray")
    if x.dtype not in DTYPES or out.dtype != x.dtype or out.shape != x.shape:
        raise EagleValueError(f"{API}: x and out must have one shape and one of the dtypes "
                         f"{', '.join(str(d) for d in DTYPES)}; got {x.dtype}{x.shape} and "
                         f"{out.dtype}{out.shape}")
    if out is not x and np.shares_memory(x, out):
        raise EagleValueError(f"{API}: out overlaps x without being x; scan in place with out=x, or give "
                         "out its own array")
    nblocks = max(-(-x.shape[0] // BLOCK), 1)
    return Scan(x, out, op, np.zeros(nblocks, x.dtype))


def reads(s: Scan) -> list[tuple[str, Any, str]]:
    return [] if s.in_place else [("x", s.x, "read")]


def writes(s: Scan) -> list[tuple[str, Any, str]]:
    return [("x", s.x, "readwrite")] if s.in_place else [("out", s.out, "write")]


class Kernels:
    """The kernels of the plugin's loaded library (an eagle.native.Library)."""

    def __init__(self, library: Any) -> None:
        self.library = library

    def native(self, s: Scan) -> list[NativeCall]:
        """The three passes (one when the plane fits in a block); see scan.c."""
        name = f"{s.op}_{DTYPES[s.x.dtype]}"
        n = s.samples
        x_role = "readwrite" if s.in_place else "read"
        local = NativeCall(self.library.kernel(f"eagle_scan_local_{name}"), [s.x, s.out, s.totals], n,
                           accesses=[(s.x, x_role), *([] if s.in_place else [(s.out, "write")]),
                                     (s.totals, "write")])
        if n <= BLOCK:
            return [local]
        nblocks = s.totals.shape[0]
        carry = NativeCall(self.library.kernel(f"eagle_scan_carry_{name}"), [s.totals, nblocks], 1,
                           accesses=[(s.totals, "readwrite")])
        fixup = NativeCall(self.library.kernel(f"eagle_scan_fixup_{name}"), [s.out, s.totals], n,
                           accesses=[(s.out, "readwrite"), (s.totals, "read")])
        return [local, carry, fixup]

    def vjp(self, s: Scan, primals: Mapping[str, Any], cotangents: Mapping[str, Any]) -> dict[str, Any]:
        """``{"x": gradient}`` from the cotangent of the output, run by scan.c's reverse kernels.

        ``primals["x"]`` is x as the forward read it (eagle.diff keeps it when a
        later node, or the scan itself in place, overwrote it).
        """
        from eagle.extend import Program  # a one-item native run

        if s.x.dtype.kind != "f":
            raise EagleTypeError(f"eagle_scan vjp: a scan of {s.x.dtype} has no gradient; scan floats")
        key = "x" if s.in_place else "out"
        gy = np.ascontiguousarray(cotangents[key], dtype=s.x.dtype)
        gx = np.empty_like(gy)
        n = gy.shape[0]
        suffix = DTYPES[s.x.dtype]
        program = Program().stage()
        if s.op == "sum":
            program.kernel(self.library.kernel(f"eagle_scan_vjp_sum_{suffix}"), [gy, gx, n], 1,
                           per_sample=False)
        else:
            x = np.ascontiguousarray(primals["x"], dtype=s.x.dtype)
            program.kernel(self.library.kernel(f"eagle_scan_vjp_max_{suffix}"), [x, gy, gx, n], 1,
                           per_sample=False)
        program.finalize().run()
        return {"x": gx}
