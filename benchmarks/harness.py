"""Shared by the benchmarks: median timing and a table of ratios.

These machines are shared and noisy, so every figure is a median over
repeats, and comparisons are ratios measured in the same process.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeat: int = 15, number: int = 1) -> float:
    """Median seconds of one call of fn, over `repeat` timings of `number` calls."""
    fn()  # warm up: first-call costs (allocation, page faults, team start) are not the figure
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.2f} {unit}"
    return f"{seconds / 1e-9:8.1f} ns"


def table(title: str, rows: list[tuple[str, str, str]]) -> None:
    """Print rows of (what, figure, note) under a title."""
    print(f"\n{title}")
    width = max(len(r[0]) for r in rows)
    for what, figure, note in rows:
        print(f"  {what:<{width}}  {figure:>12}  {note}")
