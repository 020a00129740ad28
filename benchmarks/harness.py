"""Shared by the benchmarks: median timing and a table of ratios.

These machines are shared and noisy, so every figure is a median over
repeats, and comparisons are ratios measured in the same process.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from eagle.native import compile_library

# Two plain pthreads on independent in-cache work: what this machine gives
# a second thread right now (a shared VM may give nothing).
_SCALING_SOURCE = r"""
#include <pthread.h>
#include <stdint.h>
#include <time.h>
static double now(void)
{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static void *work(void *p)
{ volatile double *x = p;
  for (int r = 0; r < 20000; ++r) for (int i = 0; i < 1024; ++i) x[i] = x[i] * 0.999 + 0.001;
  return 0; }
double two_thread_speedup(void)
{ static double a[1024], b[1024]; pthread_t th;
  double t0 = now(); work(a); work(b); double t1 = now();
  pthread_create(&th, 0, work, a); work(b); pthread_join(th, 0);
  return (t1 - t0) / (now() - t1); }
"""


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


def interleaved_medians(fns: dict[str, Callable[[], object]], repeat: int = 31) -> dict[str, float]:
    """Median seconds of each function, timed in turns (one call of each per round), so that
    a slow spell of a shared machine falls on all of them alike."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def medians(fns: dict[str, Callable[[], object]], repeat: int, rounds: int = 3) -> dict[str, float]:
    """Median seconds per call of each function: ``rounds`` turns of a block of calls each, a warm-up
    call first and a pause before it, so one competitor's idle threads (libeagle's team, a parallel
    Numba loop's) are asleep when the next runs."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(0.05)
            fn()
            for _ in range(max(1, repeat // rounds)):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


@dataclass
class Entry:
    """One way a competitor runs a case: ``who`` is its column, ``how`` the variant (the fastest of a
    competitor's variants is its figure, and the table says which won), ``form`` a row of its own
    beside the case's (eagle's natural form ``x = k(x)`` beside the in-place one)."""

    who: str
    how: str
    run: Callable[[], object]
    form: str = ""


def fastest(entries: list[Entry], times: list[float]) -> dict[tuple[str, str], tuple[float, str]]:
    """(form, who) -> (the median of its fastest variant, that variant's name)."""
    best: dict[tuple[str, str], tuple[float, str]] = {}
    for entry, t in zip(entries, times, strict=True):
        key = (entry.form, entry.who)
        if key not in best or t < best[key][0]:
            best[key] = (t, entry.how)
    return best


def time_entries(entries: list[Entry], repeat: int, rounds: int = 3) -> dict[tuple[str, str],
                                                                          tuple[float, str]]:
    """Every entry timed in turns (:func:`medians`), the fastest variant of each competitor kept."""
    t = medians({str(i): e.run for i, e in enumerate(entries)}, repeat=repeat, rounds=rounds)
    return fastest(entries, [t[str(i)] for i in range(len(entries))])


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


def two_thread_speedup(repeat: int = 15) -> float:
    """Median speedup of two plain pthreads over one on the same in-cache work."""
    lib = ctypes.CDLL(str(compile_library(_SCALING_SOURCE, name="bench_scaling", extra_flags=("-pthread",))))
    lib.two_thread_speedup.restype = ctypes.c_double
    return statistics.median(lib.two_thread_speedup() for _ in range(repeat))
