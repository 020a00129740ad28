"""The executor: kernels, fusion, schedules, callbacks, conditionals, loops, events."""

from __future__ import annotations

import os
import threading
import traceback

import numpy as np
import pytest

from eagle import _core
from eagle._program import Program

BLOCK = _core.BLOCK


def chain(kernels, x: np.ndarray, length: int, program: Program | None = None) -> Program:
    """x = x*c then x = x+d, alternating, `length` kernels in one branch."""
    p = program or Program().stage()
    for k in range(length):
        if k % 2 == 0:
            p.kernel(kernels.kernel("scale"), [x, 1.0 + 1e-3 * k], x.size, accesses=[(x, "readwrite")])
        else:
            p.kernel(kernels.kernel("shift"), [x, 0.25 * k], x.size, accesses=[(x, "readwrite")])
    return p


def chain_reference(x: np.ndarray, length: int) -> np.ndarray:
    x = x.copy()
    for k in range(length):
        if k % 2 == 0:
            np.multiply(x, 1.0 + 1e-3 * k, out=x)
        else:
            np.add(x, 0.25 * k, out=x)
    return x


@pytest.mark.parametrize("n", [1, 16, BLOCK, BLOCK + 1, 5 * BLOCK + 3])
def test_chain_matches_numpy(kernels, threads, n):
    """A chain of native kernels gives NumPy's bits for any team size."""
    x0 = np.random.default_rng(n).standard_normal(n)
    x = x0.copy()
    chain(kernels, x, 20).finalize().run(3)
    ref = x0
    for _ in range(3):
        ref = chain_reference(ref, 20)
    np.testing.assert_array_equal(x, ref)


def test_one_block_runs_in_place(kernels, threads):
    """Work that fits in one block wakes no team and passes no barrier."""
    x = np.ones(16)
    p = chain(kernels, x, 100).finalize().run()
    assert p.stats() == {"regions": 0, "barriers": 0}


def test_fused_run_has_one_barrier(kernels, threads):
    """A chain of per-sample kernels over one view is carried block by block: one barrier."""
    x = np.ones(8 * BLOCK)
    p = chain(kernels, x, 50).finalize().run()
    expected = {"regions": 1, "barriers": 1} if threads > 1 else {"regions": 0, "barriers": 0}
    assert p.stats() == expected


def test_shifted_views_are_not_fused(kernels, threads):
    """Kernels over shifted views of one array keep their order: no fusion across them."""
    n = 4 * BLOCK
    base = np.arange(n + 1, dtype=np.float64)
    src, dst = base[1:], base[:-1]  # dst[i] = src[i] reads what the previous kernel wrote
    tmp = np.zeros(n)
    p = Program().stage()
    p.kernel(kernels.kernel("scale"), [src, 2.0], n, accesses=[(src, "readwrite")])
    p.kernel(kernels.kernel("copy_k"), [src, tmp], n, accesses=[(src, "read"), (tmp, "write")])
    p.kernel(kernels.kernel("copy_k"), [tmp, dst], n, accesses=[(tmp, "read"), (dst, "write")])
    p.finalize().run()
    ref = np.arange(n + 1, dtype=np.float64)
    ref[1:] *= 2.0
    ref[:-1] = ref[1:].copy()
    np.testing.assert_array_equal(base, ref)
    if threads > 1:
        assert p.stats()["barriers"] == 2  # scale+copy fuse (same views); the shifted copy does not


def test_callbacks_run_in_order_between_kernels(kernels, threads):
    """Python items see the kernels before them and run once per replay."""
    x = np.zeros(3 * BLOCK)
    seen = []
    p = Program().stage()
    p.kernel(kernels.kernel("shift"), [x, 1.0], x.size, accesses=[(x, "readwrite")])
    p.callback(lambda: seen.append(float(x.sum())))
    p.kernel(kernels.kernel("shift"), [x, 1.0], x.size, accesses=[(x, "readwrite")])
    p.finalize().run(2)
    assert seen == [x.size * 1.0, x.size * 3.0]
    assert np.all(x == 4.0)


def test_callback_exception_stops_the_run_and_is_raised(kernels, threads):
    """An exception in a callback stops the run and reaches the caller with its traceback."""
    x = np.zeros(16)
    calls = []

    def broken_callback():
        calls.append(1)
        raise ZeroDivisionError("inside the graph")

    p = Program().stage().callback(broken_callback)
    p.kernel(kernels.kernel("shift"), [x, 1.0], x.size, accesses=[(x, "readwrite")])
    p.finalize()
    with pytest.raises(ZeroDivisionError, match="inside the graph") as info:
        p.run(5)
    assert calls == [1]
    assert np.all(x == 0.0)  # the kernel after it never ran
    assert "broken_callback" in "".join(traceback.format_tb(info.value.__traceback__))
    calls.clear()
    with pytest.raises(ZeroDivisionError):
        p.run()  # the program stays usable
    assert calls == [1]


def branches_program(kernels, planes, schedule: str, length: int = 16) -> Program:
    p = Program().stage(schedule)
    for b, x in enumerate(planes):
        if b:
            p.branch()
        chain(kernels, x, length, p)
    return p.stage()


@pytest.mark.parametrize("n", [16, 1000, 3 * BLOCK])
def test_schedules_give_identical_bits(kernels, threads, n):
    """branch_tasks and work_share give the same bits as a serial NumPy run."""
    rng = np.random.default_rng(7)
    start = [rng.standard_normal(n) for _ in range(8)]
    results = {}
    for schedule in ("work_share", "branch_tasks"):
        planes = [s.copy() for s in start]
        p = branches_program(kernels, planes, schedule).finalize().run(2)
        results[schedule] = planes
        if schedule == "branch_tasks" and threads > 1:
            assert p.stats()["barriers"] == 2  # one per replay: the join
    refs = [chain_reference(chain_reference(s, 16), 16) for s in start]
    for schedule, planes in results.items():
        for got, ref in zip(planes, refs, strict=True):
            np.testing.assert_array_equal(got, ref, err_msg=schedule)


def test_wait_orders_a_later_branch_after_an_earlier_one(kernels, threads):
    """A wait makes a branch read what an earlier branch wrote, under branch_tasks."""
    n = 64
    for _ in range(20):
        a, b = np.zeros(n), np.zeros(n)
        p = Program().stage("branch_tasks")
        for _k in range(200):  # keep branch 0 busy so a missing wait would show
            p.kernel(kernels.kernel("shift"), [a, 1.0], n, accesses=[(a, "readwrite")])
        p.signal(0)
        p.branch().wait(0)
        p.kernel(kernels.kernel("copy_k"), [a, b], n, accesses=[(a, "read"), (b, "write")])
        p.finalize().run()
        assert np.all(b == 200.0)


def test_wait_without_an_earlier_signal_is_refused():
    """A wait no earlier branch signals could deadlock: finalize refuses it."""
    p = Program().stage("branch_tasks").wait(3).branch().signal(3)
    with pytest.raises(_core.CoreError, match="no signal in an earlier branch"):
        p.finalize()


def test_if_and_switch_read_the_cell_at_every_run(kernels, threads):
    """Conditionals choose their arm from the cell at run time."""
    x = np.zeros(8)
    flag, sel = np.array([1], np.uint32), np.array([0], np.uint32)

    def adder(d):
        return Program().stage().kernel(kernels.kernel("shift"), [x, d], x.size,
                                        accesses=[(x, "readwrite")])

    p = Program().stage().if_(flag, adder(1.0), adder(10.0))
    p.switch(sel, {0: adder(100.0), 2: adder(1000.0)}, default=adder(10000.0))
    p.finalize()
    got = []
    for f, s in [(1, 0), (0, 2), (1, 5)]:
        x[:] = 0
        flag[0], sel[0] = f, s
        p.run()
        got.append(x[0])
    assert got == [101.0, 1010.0, 10001.0]


@pytest.mark.parametrize(("kind", "start", "cap", "turns"),
                         [("while", 5, -1, 5), ("while", 0, -1, 0), ("while", 5, 3, 3),
                          ("do", 0, -1, 1), ("do", 4, -1, 4), ("count", 6, -1, 6), ("count", 6, 2, 2)])
def test_loops(kernels, threads, kind, start, cap, turns):
    """while / do / count loops run as many turns as the cell and cap allow."""
    x = np.zeros(4 * BLOCK)
    cell = np.array([start], np.uint32)
    body = Program().stage().kernel(kernels.kernel("shift"), [x, 1.0], x.size,
                                    accesses=[(x, "readwrite")])
    if kind != "count":
        body.kernel(kernels.kernel("decrement"), [cell], 1, per_sample=False,
                    accesses=[(cell, "readwrite")])
    Program().stage().loop(cell, body, kind, cap).finalize().run()
    assert np.all(x == turns)


@pytest.mark.parametrize("n", [1, 2, 7, BLOCK, BLOCK + 1, 5 * BLOCK + 17])
def test_reduce_sum_is_the_fixed_order(threads, n, fixed_order_sum):
    """The sum adds in the fixed order T, bit for bit, whatever the team size."""
    x = np.random.default_rng(n).standard_normal(n) * 1e3
    out = np.zeros(1)
    Program().stage().reduce(x, out).finalize().run()
    assert out[0] == fixed_order_sum(x.tolist())
    assert _core.lib.eagle_sum_f64(_core.ffi.cast("double *", x.ctypes.data), n) == out[0]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.int64, np.uint8])
@pytest.mark.parametrize("op", ["sum", "max", "min", "all", "any"])
def test_reduce_ops(threads, dtype, op, fixed_order_sum):
    """max/min/all/any and integer sums agree with NumPy."""
    x = (np.random.default_rng(3).integers(0, 5, 3 * BLOCK + 5)).astype(dtype)
    out = np.zeros(1, dtype)
    Program().stage().reduce(x, out, op).finalize().run()
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "all": np.all, "any": np.any}[op](x)
    if op == "sum" and dtype == np.float32:
        ref = np.float32(fixed_order_sum([float(v) for v in x]))  # integers: exact in any order
    assert out[0] == dtype(ref)


def test_reduce_propagates_nan(threads):
    x = np.arange(3000.0)
    x[2000] = np.nan
    out = np.zeros(1)
    Program().stage().reduce(x, out, "max").finalize().run()
    assert np.isnan(out[0])


def test_copy_strided_and_same_storage():
    """A copy moves any strided view; a copy onto the same storage does nothing."""
    src = np.arange(60.0).reshape(6, 10)[::2, ::-3]
    dst = np.zeros((3, 4))
    x = np.arange(5.0)
    Program().stage().copy(src, dst).copy(x, x).finalize().run()
    np.testing.assert_array_equal(dst, src)
    np.testing.assert_array_equal(x, np.arange(5.0))


def test_reduce_partials_match_a_reduce_over_the_values(threads):
    """Block partials from eagle_reduce_block, finished by a partials item: the bits of a plain
    reduce, also when the logical size cuts a block."""
    x = np.random.default_rng(5).standard_normal(3 * BLOCK + 17) * 1e3
    blocks = -(-x.size // BLOCK)
    for logical in (x.size, BLOCK + 3, 1):
        partials = np.empty(blocks)
        for b in range(-(-logical // BLOCK)):
            chunk = np.ascontiguousarray(x[b * BLOCK:min((b + 1) * BLOCK, logical)])
            _core.lib.eagle_reduce_block(_core.ffi.from_buffer(chunk), chunk.size, _core.lib.EAGLE_F64,
                                         _core.lib.EAGLE_SUM, _core.ffi.from_buffer(partials[b:b + 1]))
        out, plain = np.zeros(1), np.zeros(1)
        Program().stage().reduce_partials(partials, out, x.size).finalize().set_logical_size(logical).run()
        Program().stage().reduce(np.ascontiguousarray(x[:logical]), plain).finalize().run()
        assert out[0] == plain[0]


def test_logical_size(kernels, threads):
    """set_logical_size makes the next runs process only the first n samples."""
    x = np.zeros(3 * BLOCK)
    p = chain(kernels, x, 2).finalize()  # x = x*1 + 0.25
    p.set_logical_size(BLOCK + 5).run()
    assert np.all(x[: BLOCK + 5] == 0.25) and np.all(x[BLOCK + 5 :] == 0.0)


def test_a_second_caller_gets_busy(kernels):
    """Two threads on one program: the second gets EAGLE_ERR_BUSY, the first finishes."""
    entered, release = threading.Event(), threading.Event()
    p = Program().stage().callback(lambda: (entered.set(), release.wait(10))).finalize()
    worker = threading.Thread(target=p.run)
    worker.start()
    assert entered.wait(10)
    with pytest.raises(_core.CoreError, match="running on another thread"):
        p.run()
    release.set()
    worker.join()
    p.run()  # usable again


def test_nested_run_from_a_callback_runs_in_place(kernels, threads):
    """A callback that runs another program does not deadlock on the team."""
    x = np.zeros(8 * BLOCK)
    inner = chain(kernels, x, 4).finalize()
    outer = Program().stage()
    outer.kernel(kernels.kernel("shift"), [x, 1.0], x.size, accesses=[(x, "readwrite")])
    outer.callback(inner.run)
    outer.finalize().run()
    np.testing.assert_array_equal(x, chain_reference(np.ones(x.size), 4))
    assert inner.stats()["regions"] == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_team_works_after_fork(kernels):
    """A forked child rebuilds its own team and computes the same result."""
    _core.set_num_threads(2)
    x = np.ones(8 * BLOCK)
    p = chain(kernels, x, 10).finalize().run()
    expected = chain_reference(x, 10)
    pid = os.fork()
    if pid == 0:  # the child: exit code says whether it got it right
        ok = False
        try:
            p.run()
            ok = bool(np.array_equal(x, expected)) and p.stats()["regions"] == 1
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    _core.set_num_threads(0)


def test_refusals(kernels):
    """Adding after finalize, running an unfinalized program, re-adopting a sub-program."""
    x = np.zeros(4)
    p = Program().stage()
    with pytest.raises(_core.CoreError, match="finalized top-level"):
        p.run()
    p.finalize()
    with pytest.raises(_core.CoreError, match="finalized"):
        p.kernel(kernels.kernel("noop"), [], 4)
    body = Program().stage()
    cell = np.array([0], np.uint32)
    Program().stage().loop(cell, body)
    with pytest.raises(_core.CoreError, match="already belongs"):
        Program().stage().loop(cell, body)
    with pytest.raises(_core.CoreError, match="not a valid view"):
        bad = _core.ffi.new("eagle_access[1]")
        bad[0].view.ndim = 40
        bad[0].role = 1
        _core.check(_core.lib.eagle_add_kernel(Program().stage()._ptr, kernels.kernel("noop"),
                                               _core.ffi.NULL, 0, 4, 0, bad, 1), "test")
    del x
