"""A 100-kernel host program replayed from C++ (eagle/eagle.hpp and libeagle, nothing else) beside
Python's ``g.launch()`` of the same 100-kernel eagle.Graph: the cost of a replay, medians and ratios.

The C++ program (bench_cpp_replay.cpp) is compiled here with the system C++ compiler against the
headers and the libeagle eagle-graph installed, with the flags eagle compiles native kernels with, and
run as its own process.  Both sides run the same chain on one plane of N float64 samples (x *= c and
x += d alternately); the bits of x after one replay are compared.  Two figures per side: one replay
per call (``launch()``: what a caller of each language pays per step) and one replay inside a call
of R (``launch(R)``: the replay alone).

Run: python benchmarks/bench_cpp_replay.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import fmt, median_time, table

import eagle
from eagle import _core
from eagle.native import CFLAGS, Library, compile_library, include_dir
from eagle.plan import Plan

HERE = Path(__file__).resolve().parent
SOURCE = r"""
#include "eagle/eagle.h"
void scale(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
void shift(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, d = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] += d; }
"""
SIZES = (16, 4096, 65536)
REPLAYS = 100


def compile_program(out: Path) -> Path:
    """The C++ program, with eagle's native-kernel optimisation and floating-point flags."""
    cxx = shlex.split(os.environ.get("CXX", "c++"))
    flags = [f for f in CFLAGS if f not in ("-std=c11", "-shared", "-fPIC")]
    library = _core._library_path()
    cmd = [*cxx, "-std=c++17", *flags, "-I", str(include_dir()), str(HERE / "bench_cpp_replay.cpp"),
           "-o", str(out), str(library), f"-Wl,-rpath,{library.parent}"]
    subprocess.run(cmd, check=True)
    return out


def run_cpp(program: Path, n: int, repeat: int) -> tuple[float, float, str]:
    done = subprocess.run([str(program), str(n), str(REPLAYS), str(repeat)], capture_output=True, text=True,
                          check=True)
    fields = done.stdout.split()
    return float(fields[1]), float(fields[3]), fields[5]


def checksum(x: np.ndarray) -> str:
    """The C++ program's FNV-style fold of x's bits."""
    h = 0
    for bits in x.view(np.uint64):
        h = ((h * 1099511628211) & (2**64 - 1)) ^ int(bits)
    return f"{h:016x}"


def python_graph(n: int) -> tuple[eagle.Graph, np.ndarray]:
    lib = Library(compile_library(SOURCE, name="bench_cpp_replay"))
    scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
    shift = Plan(lib.kernel("shift"), [("x", "readwrite"), ("d", "value")], name="shift")
    x = 1.0 + np.arange(n) / n
    g = eagle.Graph()
    for k in range(100):
        g.add(scale.bind(x, 0.999) if k % 2 == 0 else shift.bind(x, 0.001))
    return g.build(), x


def measure(program: Path, n: int, repeat: int, rounds: int) -> dict[str, float | str]:
    """Both sides' medians for N samples, taken in turns (``rounds`` of each, a pause before each so
    that the other's idle team threads are asleep): a slow spell of a shared machine falls on both."""
    g, x = python_graph(n)
    g.launch()
    python_bits = checksum(x)  # after one replay from the start values, as the C++ program's
    times: dict[str, list[float]] = {"py1": [], "pyR": [], "cpp1": [], "cppR": []}
    for _ in range(rounds):
        time.sleep(0.05)
        times["py1"].append(median_time(g.launch, repeat=repeat))
        times["pyR"].append(median_time(lambda: g.launch(REPLAYS), repeat=repeat) / REPLAYS)
        time.sleep(0.05)
        one, many, bits = run_cpp(program, n, repeat)
        times["cpp1"].append(one)
        times["cppR"].append(many)
    figures: dict[str, float | str] = {k: statistics.median(v) for k, v in times.items()}
    figures["same"] = "same bits" if bits == python_bits else f"DIFFERENT BITS ({bits} vs {python_bits})"
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat, rounds = (5, 1) if args.quick else (31, 3)
    with tempfile.TemporaryDirectory() as tmp:
        program = compile_program(Path(tmp) / "bench_cpp_replay")
        rows = []
        for n in SIZES:
            f = measure(program, n, repeat, rounds)
            rows += [(f"N={n:<6} C++ Program::run(1)", fmt(f["cpp1"]),
                      f"{f['same']}; {f['cpp1'] / 100 * 1e9:.1f} ns per kernel"),
                     (f"N={n:<6} Python g.launch()", fmt(f["py1"]),
                      f"C++ / Python = {f['cpp1'] / f['py1']:.2f}"),
                     (f"N={n:<6} C++, one replay of run({REPLAYS})", fmt(f["cppR"]), ""),
                     (f"N={n:<6} Python, one replay of g.launch({REPLAYS})", fmt(f["pyR"]),
                      f"C++ / Python = {f['cppR'] / f['pyR']:.2f}")]
    table(f"A 100-kernel host program, per replay (team of {_core.num_threads()} threads; medians)", rows)


if __name__ == "__main__":
    main()
