"""The first build of a graph with many distinct fused runs: what compiling them costs.

Run: python benchmarks/bench_first_build.py [runs] [repeats]

A builder graph of ``runs`` fused runs, each of a shape of its own (run r is
r + 2 launches, cut from the next by a copy), is built by a fresh process
whose kernel cache holds the kernels and hawk's math but no fused run: the
build compiles every run.  A build compiles its new runs as one translation
unit, in one compiler process (before, one process each).  Figures are
medians of the child processes' build times.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_builder import scaled, shifted

import eagle


def copied(y: np.ndarray) -> np.ndarray:
    """``y`` copied into a new plane: a copy ends a fused run."""
    z = np.empty_like(y)
    eagle.copy(y, into=z)
    return z


@eagle.Graph.builder
def distinct_runs(x, count):
    g = eagle.Graph()
    for r in range(count):  # unrolled: run r has r + 2 launches, a shape of its own
        for j in range(r + 2):
            x = (shifted, scaled)[j % 2](x, (1.0001, 0.25)[j % 2])
        x = copied(x)
    g.result = x
    return g


def child(count: int) -> None:
    import time

    x = np.linspace(0.0, 1.0, 1000)
    start = time.perf_counter()
    distinct_runs(x, count)
    print(time.perf_counter() - start)


def main(count: int = 12, repeats: int = 3) -> None:
    warm = Path(tempfile.mkdtemp(prefix="eagle-first-build-"))
    try:
        run = [sys.executable, __file__, "--child", str(count)]
        subprocess.run(run, check=True, capture_output=True, env={**os.environ, "EAGLE_CACHE_DIR": str(warm)})
        took = []
        for k in range(repeats):
            cold = warm.with_name(f"{warm.name}-{k}")
            shutil.copytree(warm, cold, ignore=shutil.ignore_patterns("hawk_run-*"))
            proc = subprocess.run(run, check=True, capture_output=True, text=True,
                                  env={**os.environ, "EAGLE_CACHE_DIR": str(cold)})
            shutil.rmtree(cold, ignore_errors=True)
            took.append(float(proc.stdout))
        each = ", ".join(f"{t * 1e3:.0f}" for t in took)
        print(f"first build, {count} distinct fused runs (none cached): "
              f"{statistics.median(took) * 1e3:.0f} ms (median of {repeats}: {each} ms)")
    finally:
        shutil.rmtree(warm, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]))
    else:
        main(*(int(a) for a in sys.argv[1:3]))
