"""hawk.random and the math beyond sin/cos/exp/log, on the CPU, against NumPy: ns per sample.

Each figure is the median of interleaved runs (one call of each competitor per round) over one
plane of N samples, on one thread and on the team.

Run: python benchmarks/bench_math.py [--smoke]
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np
from harness import interleaved_medians, table

import hawk
from eagle import _core
from hawk import Int32, Param, Scalar

N = 1 << 20 if "--smoke" not in sys.argv else 1 << 10


@hawk.kernel
def uniform(x: Scalar, seed: Param[Int32]) -> Scalar:
    return x + hawk.random.uniform(seed, 0)


@hawk.kernel
def normal(x: Scalar, seed: Param[Int32]) -> Scalar:
    return x + hawk.random.normal(seed, 0)


#: function -> its arguments in a kernel of (x, y), and NumPy's function (None: NumPy has none)
FUNCTIONS = {"tanh": ("x", np.tanh), "atan2": ("x, y", np.arctan2), "erf": ("x", None),
             "log1p": ("x", np.log1p), "hypot": ("x, y", np.hypot), "asin": ("x", np.arcsin)}


def function_kernels() -> ModuleType:
    """A kernel per function (hawk compiles a kernel from its source: written to a file)."""
    source = "import hawk\nfrom hawk import Scalar\nfrom hawk import math as hm\n" + "".join(
        f"\n\n@hawk.kernel\ndef {name}(x: Scalar, y: Scalar) -> Scalar:\n    return hm.{name}({args})\n"
        for name, (args, _) in FUNCTIONS.items())
    path = Path(tempfile.mkdtemp()) / "bench_math_kernels.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("bench_math_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_sample(seconds: float) -> str:
    return f"{seconds / N * 1e9:8.2f} ns"


def random_rows(rows: list[tuple[str, str, str]], threads: int) -> None:
    x = np.zeros(N)
    out, mine = np.empty(N), np.empty(N)  # written in place by both: no page faults timed
    philox = np.random.Generator(np.random.Philox(7))
    pcg = np.random.default_rng(7)
    samples = np.arange(N)
    t = interleaved_medians({
        "uniform": lambda: uniform(x, 7, buffer=mine), "normal": lambda: normal(x, 7, buffer=mine),
        "numpy philox": lambda: philox.random(N, out=out), "numpy pcg64": lambda: pcg.random(N, out=out),
        "numpy normal": lambda: philox.standard_normal(N, out=out),
        "reference": lambda: hawk.random.uniform(7, 0, sample=samples)}, repeat=15)
    ratio = t["numpy philox"] / t["uniform"]
    rows += [(f"hawk.random.uniform, {threads} thread(s)", per_sample(t["uniform"]),
              f"NumPy Philox4x64 .random {per_sample(t['numpy philox']).strip()} ({ratio:.1f}x), "
              f"PCG64 {per_sample(t['numpy pcg64']).strip()}"),
             (f"hawk.random.normal, {threads} thread(s)", per_sample(t["normal"]),
              f"NumPy Philox standard_normal {per_sample(t['numpy normal']).strip()} "
              f"({t['numpy normal'] / t['normal']:.1f}x)"),
             (f"hawk.random.uniform outside a kernel, {threads} thread(s)", per_sample(t["reference"]),
              "NumPy: the reference evaluator's Philox4x32-10")]


def function_rows(rows: list[tuple[str, str, str]], threads: int, kernels: ModuleType) -> None:
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-0.99, 0.99, N), rng.uniform(-3, 3, N)
    out, mine = np.empty(N), np.empty(N)
    fns = {}
    for name, (args, numpy_fn) in FUNCTIONS.items():
        kernel = getattr(kernels, name)
        fns[name] = (lambda k=kernel: k(x, y, buffer=mine))
        if numpy_fn is not None:
            operands = (x, y) if "y" in args else (x,)
            fns[f"np.{name}"] = (lambda f=numpy_fn, a=operands: f(*a, out=out))
    t = interleaved_medians(fns, repeat=15)
    for name in FUNCTIONS:
        note = f"np.{name} {per_sample(t[f'np.{name}']).strip()} ({t[f'np.{name}'] / t[name]:.1f}x)" \
            if f"np.{name}" in t else "NumPy has none"
        rows.append((f"hawk.math.{name}, {threads} thread(s)", per_sample(t[name]), note))


def main() -> None:
    rows: list[tuple[str, str, str]] = []
    team, kernels = _core.num_threads(), function_kernels()
    for threads in sorted({1, team}):
        _core.set_num_threads(threads)
        random_rows(rows, threads)
        function_rows(rows, threads, kernels)
    _core.set_num_threads(team)
    table(f"hawk.random and hawk.math, {N} float64 samples (medians of interleaved runs)", rows)


if __name__ == "__main__":
    main()
