"""The small native steps the builder adds for ``break`` and ``continue`` in device loops,
written in hawk like any kernel: one-cell planes, one sample."""

from __future__ import annotations

import hawk
from hawk import Mutable, Param, UInt32


@hawk.kernel
def set_cell(cell: Mutable[UInt32], value: Param[UInt32]) -> None:
    cell = value  # noqa: F841 - a Mutable is written by assignment


@hawk.kernel
def control(cond: UInt32, stop: UInt32, want: Param[UInt32], out: Mutable[UInt32]) -> None:
    out = hawk.math.uint32(((cond != 0) == (want != 0)) and stop == 0)  # noqa: F841
