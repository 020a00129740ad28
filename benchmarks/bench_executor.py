"""The executor's fixed costs: per item, per Python callback, per barrier, and what Python adds
around a replay (``g.launch()`` against the bare native call of its program).

Run: python benchmarks/bench_executor.py
"""

from __future__ import annotations

import numpy as np
from bench_builder import chain, numpy_settle, scale, settle, shift
from harness import fmt, interleaved_medians, median_time, table, two_thread_speedup

import eagle
import hawk
from eagle import _core
from eagle._program import Program
from eagle.graph import Node
from eagle.native import Library, compile_library
from hawk import Mutable, Scalar

SOURCE = r"""
#include "eagle/eagle.h"
void noop(int64_t b, int64_t e, const eagle_arg *a) { (void)b; (void)e; (void)a; }
"""
ITEMS = 100
REPLAYS = 200
CALLS = 200  # launches per timing: one launch is below the timer's resolution


@hawk.kernel
def total(x: Scalar, out: Mutable[Scalar]) -> None:
    out = hawk.sum(x)


@eagle.Graph.builder
def reduced(x, out):
    """Nine kernels of the chain, then a reduction into one cell: ten nodes."""
    g = eagle.Graph()
    for k in range(9):
        if k % 2 == 0:
            scale(x, 0.999)
        else:
            shift(x, 0.001)
    total(x, out)
    return g


def empty_native_items(noop) -> float:
    """Seconds per item of a replay of 100 empty native items (one sample each)."""
    p = Program().stage()
    for _ in range(ITEMS):
        p.kernel(noop, [], 1, per_sample=False)
    p.finalize()
    return median_time(lambda: p.run(REPLAYS)) / (REPLAYS * ITEMS)


def python_callbacks() -> tuple[float, float]:
    """Seconds per callback item in a replay, and per call from a plain Python loop."""
    funcs = [(lambda: None) for _ in range(ITEMS)]
    p = Program().stage()
    for f in funcs:
        p.callback(f)
    p.finalize()
    in_graph = median_time(lambda: p.run(REPLAYS)) / (REPLAYS * ITEMS)

    def loop():
        for _ in range(REPLAYS):
            for f in funcs:
                f()

    return in_graph, median_time(loop) / (REPLAYS * ITEMS)


def barrier_cost(noop, threads: int) -> float:
    """Seconds per item of 100 items of two blocks each, not fusable: one barrier each."""
    before = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        p = Program().stage()
        for _ in range(ITEMS):
            p.kernel(noop, [], 2 * _core.BLOCK, per_sample=False)
        p.finalize()
        per_item = median_time(lambda: p.run(REPLAYS)) / (REPLAYS * ITEMS)
        assert p.stats()["barriers"] == (ITEMS * REPLAYS if threads > 1 else 0)
        return per_item
    finally:
        _core.set_num_threads(before)


def replay_path(g: eagle.Graph) -> tuple[float, float]:
    """Median seconds per ``g.launch()`` and per bare ``lib.eagle_run`` of its program, timed in
    turns: the difference is what Python runs around a replay."""
    run, ptr = _core.lib.eagle_run, g._program._ptr

    def launches():
        for _ in range(CALLS):
            g.launch()

    def bare():
        for _ in range(CALLS):
            run(ptr, 1)

    times = interleaved_medians({"launch": launches, "bare": bare}, repeat=101)
    return times["launch"] / CALLS, times["bare"] / CALLS


def capped_loop(n: int) -> tuple[float, float]:
    """Seconds per launch of the capped device loop (7 of <= 50 turns), and of NumPy's loop."""
    x0, flag = np.ones(n), np.ones(1, np.uint32)
    g = settle(x0, flag)

    def replays():
        for _ in range(CALLS // 10):
            flag[0] = 1  # the body clears it after 7 turns
            g.launch()

    def numpy():
        for _ in range(CALLS // 10):
            numpy_settle(x0, 1)

    times = interleaved_medians({"eagle": replays, "NumPy": numpy})
    assert g.result[0] == 128.0
    return times["eagle"] / (CALLS // 10), times["NumPy"] / (CALLS // 10)


def fork_schedules(n: int, branches: int = 8, length: int = 16) -> dict[str, float]:
    """Seconds per replay of a fork of ``branches`` x ``length`` kernels over ``n`` samples under
    each CPU schedule, on a team of 2 (seed 001's rule picks branch_tasks up to
    BRANCH_TASKS_MAX_SAMPLES): what the rule is checked against."""
    before = _core.num_threads()
    _core.set_num_threads(2)
    try:
        planes = [np.linspace(0, 1, n) for _ in range(branches)]
        runs = {}
        for schedule in ("branch_tasks", "work_share"):
            p = Program().stage(schedule)
            for b, x in enumerate(planes):
                if b:
                    p.branch()
                for k in range(length):
                    p.node(Node("plan", scale.plan(x, 0.999) if k % 2 == 0 else shift.plan(x, 0.001)))
            runs[schedule] = p.finalize()
        replays = max(1, 100_000 // n)
        times = interleaved_medians({name: (lambda p=p: p.run(replays)) for name, p in runs.items()},
                                    repeat=51)
        return {name: t / replays for name, t in times.items()}
    finally:
        _core.set_num_threads(before)


def main() -> None:
    noop = Library(compile_library(SOURCE, name="bench_noop")).kernel("noop")
    native = empty_native_items(noop)
    in_graph, loop = python_callbacks()
    serial, two = barrier_cost(noop, 1), barrier_cost(noop, 2)
    table("executor (medians)", [
        ("empty native item, per item", fmt(native), f"{ITEMS} items x {REPLAYS} replays in one call"),
        ("Python callback item, per item", fmt(in_graph), f"ratio {in_graph / loop:.2f}x the plain loop"),
        ("same functions from a Python loop", fmt(loop), ""),
        ("2-block item, 1 thread (no barrier)", fmt(serial), ""),
        ("2-block item, 2 threads (one barrier)", fmt(two),
         f"barrier ~ {fmt(two - serial / 2).strip()} per item"),
    ])
    rows = []
    for n in (16, 1024):
        for name, g in (("100-kernel chain", chain(np.linspace(0, 1, n), 100)),
                        ("10 nodes, a reduction", reduced(np.linspace(0, 1, n), np.zeros(1)))):
            launch, bare = replay_path(g)
            rows.append((f"{name}, {n:,} samples: Python per launch", fmt(launch - bare),
                         f"launch {fmt(launch).strip()}, bare eagle_run {fmt(bare).strip()}"))
    eagle_loop, numpy_loop = capped_loop(16)
    rows.append(("capped device loop (7 of <=50 turns), 16 samples", fmt(eagle_loop),
                 f"ratio {eagle_loop / numpy_loop:.3f} to NumPy ({fmt(numpy_loop).strip()})"))
    table("replay path (medians, timed in turns)", rows)
    rows = [(f"fork of 8 x 16 kernels, {n:,} samples, 2 threads", fmt(t["branch_tasks"]),
             f"branch_tasks; work_share {fmt(t['work_share']).strip()} "
             f"(ratio {t['branch_tasks'] / t['work_share']:.2f})")
            for n in (16, 256, 1024, 4096, 16384) for t in [fork_schedules(n)]]
    rows.append(("two plain threads on in-cache work", f"{two_thread_speedup():.2f}x",
                 "what this machine gives a second thread now"))
    table("CPU schedules of a fork (medians, timed in turns)", rows)


if __name__ == "__main__":
    main()
