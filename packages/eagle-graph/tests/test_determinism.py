"""Every result is bit-identical for 1, 2 and 4 threads and for both schedules (DESIGN.md §4)."""

from __future__ import annotations

import numpy as np

from eagle import _core
from eagle._program import Program

BRANCHES, LENGTH = 6, 12


def mixed_program(kernels, planes, outs, totals, schedule: str) -> Program:
    """Branches of `mix` chains (fused where they can be), each then summed in the fixed order."""
    p = Program().stage(schedule)
    for b, (x, out) in enumerate(zip(planes, outs, strict=True)):
        if b:
            p.branch()
        for k in range(LENGTH):
            src, dst = (x, out) if k % 2 == 0 else (out, x)
            p.kernel(kernels.kernel("mix"), [src, dst], x.size, accesses=[(src, "read"), (dst, "write")])
    p.stage()
    for x, total in zip(planes, totals, strict=True):
        p.reduce(x, total)
    return p.finalize()


def run_everything(kernels, threads: int, schedule: str, n: int) -> bytes:
    _core.set_num_threads(threads)
    rng = np.random.default_rng(11)
    planes = [rng.standard_normal(n) for _ in range(BRANCHES)]
    outs = [np.zeros(n) for _ in range(BRANCHES)]
    totals = [np.zeros(1) for _ in range(BRANCHES)]
    mixed_program(kernels, planes, outs, totals, schedule).run(3)
    return b"".join(a.tobytes() for a in (*planes, *outs, *totals))


def test_bits_do_not_depend_on_threads_or_schedule(kernels):
    """One program's every output, under 1/2/4 threads x work_share/branch_tasks, is the same bytes."""
    before = _core.num_threads()
    try:
        for n in (16, 3000, 9 * _core.BLOCK + 5):
            results = {(t, s): run_everything(kernels, t, s, n)
                       for t in (1, 2, 4) for s in ("work_share", "branch_tasks")}
            first = next(iter(results.values()))
            assert all(r == first for r in results.values()), [k for k, r in results.items() if r != first]
    finally:
        _core.set_num_threads(before)
