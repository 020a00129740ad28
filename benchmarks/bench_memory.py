"""Memory of the functional 100-kernel chain (``x = scale(x, 1.0001); x = shift(x, 0.25)`` x 50),
with the buffer plan on and off (``EAGLE_PLAN=0``: one array per kernel output, as before issue 19).

Run: python benchmarks/bench_memory.py [samples ...]    (default 65536 and 4194304)

Each figure comes from a child process of its own, so one case's freed pages are not another's:
- NumPy's allocations by tracemalloc (NumPy reports its data buffers to it): ``steady`` is what is
  held after the build and three replays, ``peak`` the most held at once, both over the input;
- RSS (``/proc/self/statm``) over the input after three replays, and the peak RSS
  (``ru_maxrss``) over the RSS before recording.
The goal (issue 19): at 4M samples the chain holds at most two planes over its input (<= 70 MB).

Measured on this shared 2-vCPU machine (c19-plan; main at e43b00d holds what ``off`` holds):
65,536 samples, steady 52.6 -> 1.2 MB, RSS 52.9 -> 1.1 MB; 4,194,304 samples, steady
3,355.6 -> 67.3 MB (two planes: the temporaries' one storage and the result), RSS 3,355.9 ->
67.1 MB, peak RSS 3,355.7 -> 67.0 MB.  The tracemalloc peak stays about one plane per kernel
(3,389 MB at 4M): the outputs are allocated while recording, never touched, and freed by the
build before any replay writes a page of them.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc

import numpy as np

import eagle
import hawk
from hawk import Param, Scalar

MB = 1e6


@hawk.kernel
def scale(x: Scalar, c: Param) -> Scalar:
    return x * c


@hawk.kernel
def shift(x: Scalar, d: Param) -> Scalar:
    return x + d


@eagle.Graph.builder
def chain(x):
    g = eagle.Graph()
    for _ in range(50):
        x = scale(x, 1.0001)
        x = shift(x, 0.25)
    g.result = x
    return g


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one(n: int) -> dict[str, float]:
    """This process's figures for the chain at ``n`` samples (EAGLE_PLAN as set)."""
    chain(np.zeros(8)).launch()  # compile the kernels outside the figures
    x = np.linspace(0.0, 1.0, n)
    rss0 = _rss()
    peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    g = chain(x)
    g.launch(3)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"steady": held / MB, "peak": peak / MB, "rss": (_rss() - rss0) / MB,
            "peak_rss": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - max(rss0, peak0)) / MB,
            "plane": x.nbytes / MB}


def measured(n: int, plan: bool) -> dict[str, float]:
    env = dict(os.environ, EAGLE_PLAN="1" if plan else "0")
    out = subprocess.run([sys.executable, __file__, "--one", str(n)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main(sizes: list[int]) -> None:
    print(f"{'samples':>9}  {'plan':>4}  {'steady MB':>10}  {'peak MB':>8}  {'RSS MB':>7}  "
          f"{'peak RSS MB':>11}  (over the input; tracemalloc: NumPy's allocations)")
    for n in sizes:
        for plan in (False, True):
            f = measured(n, plan)
            print(f"{n:>9}  {'on' if plan else 'off':>4}  {f['steady']:>10.1f}  {f['peak']:>8.1f}  "
                  f"{f['rss']:>7.1f}  {f['peak_rss']:>11.1f}  (one plane: {f['plane']:.1f} MB)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(int(sys.argv[2]))))
    else:
        main([int(a) for a in sys.argv[1:]] or [65_536, 4_194_304])
