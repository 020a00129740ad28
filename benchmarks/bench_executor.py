"""The executor's fixed costs: per item, per Python callback, per barrier.

Run: python benchmarks/bench_executor.py
"""

from __future__ import annotations

from harness import fmt, median_time, table

from eagle import _core
from eagle._program import Program
from eagle.native import Library, compile_library

SOURCE = r"""
#include "eagle/eagle.h"
void noop(int64_t b, int64_t e, const eagle_arg *a) { (void)b; (void)e; (void)a; }
"""
ITEMS = 100
REPLAYS = 200


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


if __name__ == "__main__":
    main()
