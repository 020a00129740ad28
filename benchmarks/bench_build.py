"""Record + build of a 10,000-node builder graph: the build's own cost, beside the figure of issue 18.

Run: python benchmarks/bench_build.py

A chain of small in-place hawk kernels on one array (``bench_builder.chain``:
every node conflicts with the next), and the same number of nodes as forks of two
branches, each branch on its own array (the race check has siblings to
compare).  Figures are medians over repeats of one record+build, each started
after a garbage collection: a builder graph is freed by the collector (it and its
recorder refer to each other), and the last repeat's 10,000 nodes are not this
one's cost.

Main at 07a7bd3 (issue 18 merged) against the per-signature argument checks, the plan planes split
once and the cheaper kernel slots after it, eleven runs each taken in turns on this shared 2-vCPU
machine (medians of the runs' medians): chain 572 -> 440 ms, forks 573 -> 488 ms; the quietest
turn 501 -> 338 ms and 535 -> 388 ms.

Issue 19 (fused runs, buffer planning) added build work; that work was then cut (views keyed
once per run, a launch's planes asked only when a run forms, a run's plan and sources made once
per shape, no frozen record per launch).  On this loaded machine wall and CPU times swing by
1.5-2x between turns, so the A/B is counted in instructions (``valgrind --tool=cachegrind``, one
record+build, the warm-up subtracted), in G instructions:

=========  =======================  ==============  ===========
case       07a7bd3 (572 / 573 ms)   main 6aa6473    this change
=========  =======================  ==============  ===========
chain      3.39                     2.65            2.27
forks      3.61                     3.28            2.96
=========  =======================  ==============  ===========

Scaled by 07a7bd3's figures (169 and 158 ms per G), about 384 ms (chain) and 469 ms (forks).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
from bench_builder import chain, scale, shift
from harness import fmt, table

import eagle

NODES = 10_000
GOAL = 0.5  # seconds, issue 18
#: Record + build before issue 18's build analysis (main at 2498ce0, this 2-vCPU machine, medians of 5).
BEFORE = {"chain": 1.31, "forks": 1.36}


@eagle.Graph.builder
def forks(x, y, length):
    g = eagle.Graph()
    for _ in range(length // 2):  # unrolled: `length` nodes, two per fork
        with g.parallel() as p:
            with p.branch():
                scale(x, 0.999)
            with p.branch():
                shift(y, 0.001)
    return g


def cases() -> dict[str, object]:
    x, y = np.zeros(16), np.zeros(16)
    return {"chain": lambda: chain(x, NODES), "forks": lambda: forks(x, y, NODES)}


def medians_after_collect(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``run()``, each timing started on a collected heap.

    The CPU time is this process's alone: on a shared machine it moves less than the wall time
    when other work takes the cores."""
    run()
    wall, cpu = [], []
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main(repeat: int = 5) -> None:
    rows = []
    for name, run in cases().items():
        took, cpu = medians_after_collect(run, repeat)
        before = BEFORE[name]
        note = f"CPU {fmt(cpu).strip()}; before {fmt(before).strip()}: {before / took:.2f}x faster"
        rows.append((f"record + build, {NODES:,}-node {name}", fmt(took), f"{note}; goal < {GOAL} s"))
    table("building a builder graph (medians)", rows)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
