"""The benchmark suite in one table: eagle beside NumPy eager, JAX, Warp (CPU), Numba, and the limits.

Run: ``python benchmarks/run.py`` (or ``python -m nox -s bench``); ``--quick`` for a short
run, ``--markdown`` for the table as Markdown (the README's), ``--smoke`` for a seconds-long run
on tiny sizes that only shows the script works.

Every figure is a median of repeated calls, and every ratio is to NumPy eager (in-place ``out=``
ufuncs, a Python loop) timed in the same process, in turns with the others (``harness.medians``:
blocks of calls with a pause between them, so a library whose threads spin after a call is not
timed against the next one).  Each peer is shown in its strongest configuration, the fastest of
its variants, with the one that won beside its figure:

- eagle: the graph as users write it; the chain also in its natural form ``x = k(x)`` (a row
  of its own) beside the in-place ``Mutable`` one;
- Numba: the fastest of the kernel-major loop (one loop per kernel), one fused per-sample loop,
  and that loop under ``prange``;
- Warp: its CPU graph (``wp.ScopedCapture(device="cpu")`` + ``wp.capture_launch``, and
  ``wp.capture_while`` for the loops);
- JAX: ``jit`` with ``jax_cpu_enable_async_dispatch=False``, and ``donate_argnums`` where a user
  would donate (the chain at >= 1M samples, its state fed back).  That flag belongs to the whole
  process, so JAX's rows are timed in a child process (``--jax-child``) in the same way, beside
  NumPy again there: its ratio is to that process's NumPy.

Beside each row, the compute limit (``limits.py``: the same kernels held in registers, C compiled
with eagle's flags, the faster of one and two threads) where there is one, and the memory limit
(one read and one write of every plane the case must touch, at this run's STREAM triad), where
the planes leave the cache.  The
memory section is each form's peak resident growth over its input, each in a fresh child process.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import bench_rk4
import numpy as np
from bench_builder import chain as builder_chain
from bench_builder import jax_settle, natural_chain, numpy_settle, scale, settle, shift
from bench_graph import jax_chain, numpy_chain
from harness import Entry, fmt, medians, time_entries
from limits import stream_triad
from peers import Peers, warp_graph, warp_loop

import eagle
import eagle.diff
import hawk
from eagle import _core
from hawk import Param, Scalar

COLUMNS = ("eagle", "NumPy", "JAX", "Warp", "Numba", "limit")
CHAIN, C, D = 100, 1.0001, 0.25  # x = scale(x, 1.0001); x = shift(x, 0.25); ... 100 kernels
LOOP_CAP, LOOP_TURNS = 50, 7  # the suite's capped loop: 7 of <= 50 turns
FORK = (8, 16, 1024)  # branches, kernels per branch, samples
REVERSE = (20, 65536)  # kernels, samples
BUILD_NODES = 10_000
CACHE = 4 << 20  # bytes of a plane past which it leaves a core's own caches (the last level may hold it)


@dataclass
class Case:
    """One row (and its natural-form row): ``entries(peers)`` gives each competitor's runs in the
    calling process; ``moved`` is the bytes it must read and write once (its memory limit)."""

    title: str
    n: int
    entries: object
    moved: int = 0
    forms: dict[str, str] = field(default_factory=dict)  # form -> its row's title


@dataclass
class Row:
    case: str
    times: dict[str, tuple[float, str]] = field(default_factory=dict)  # who -> (median, variant)
    numpy: dict[str, float] = field(default_factory=dict)  # who -> NumPy's median in the same process
    bound: float | None = None
    note: str = ""


# ------------------------------------------------------------------ peers' forms of the cases


@functools.cache
def numba_forms(numba):
    """The Numba variants of the chain and the capped loop: kernel-major, fused per sample, prange."""

    @numba.njit
    def chain_kernels(x, length, c, d):
        for k in range(length):
            if k % 2 == 0:
                for i in range(x.size):
                    x[i] = x[i] * c
            else:
                for i in range(x.size):
                    x[i] = x[i] + d

    @numba.njit
    def settle_arrays(x0):
        x = x0.copy()
        for _ in range(LOOP_CAP):
            x *= 2.0
            if np.sum(x < 100.0) == 0:
                break
        return x

    def per_sample(parallel):
        loop = numba.prange if parallel else range

        @numba.njit(parallel=parallel)
        def chain_fused(x, length, c, d):
            for i in loop(x.size):
                v = x[i]
                for k in range(length):
                    v = v * c if k % 2 == 0 else v + d
                x[i] = v

        @numba.njit(parallel=parallel)
        def settle_fused(x0):
            x, src = np.empty_like(x0), x0
            for _ in range(LOOP_CAP):
                below = 0
                for i in loop(x.size):
                    x[i] = 2.0 * src[i]
                    below += x[i] < 100.0
                src = x
                if below == 0:
                    break
            return x

        return chain_fused, settle_fused

    (fused, settle_fused), (parallel, settle_parallel) = per_sample(False), per_sample(True)
    return {"chain": {"kernel-major": chain_kernels, "fused loop": fused, "prange": parallel},
            "settle": {"kernel-major": settle_arrays, "fused loop": settle_fused, "prange": settle_parallel}}


@functools.cache
def warp_kernels(wp):
    @wp.kernel
    def scale_(x: wp.array(dtype=wp.float64), c: wp.float64):
        i = wp.tid()
        x[i] = x[i] * c

    @wp.kernel
    def shift_(x: wp.array(dtype=wp.float64), d: wp.float64):
        i = wp.tid()
        x[i] = x[i] + d

    @wp.kernel
    def begin(x0: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64)):
        i = wp.tid()
        x[i] = x0[i]

    @wp.kernel
    def doubled(x: wp.array(dtype=wp.float64), still: wp.array(dtype=wp.int32)):
        i = wp.tid()
        x[i] = wp.float64(2.0) * x[i]
        if x[i] < wp.float64(100.0):
            wp.atomic_add(still, 0, 1)

    return scale_, shift_, begin, doubled


def warp_chain(wp, planes, length, c, d):
    """A CPU graph of the chain's launches over each plane."""
    scale_, shift_, _, _ = warp_kernels(wp)
    arrays = [wp.array(p, dtype=wp.float64, device="cpu") for p in planes]

    def record():
        for x in arrays:
            for k in range(length):
                wp.launch(scale_ if k % 2 == 0 else shift_, dim=x.shape[0],
                          inputs=[x, wp.float64(c if k % 2 == 0 else d)], device="cpu")

    return warp_graph(wp, record)


# ------------------------------------------------------------------ the cases


def limit_entries(calls) -> list[Entry]:
    return [Entry("limit", f"C, {threads} thr.", run) for threads, run in calls.items()]


def jax_call(jax, fn, *args):
    """One call of a jitted function, waited for."""
    return lambda: jax.block_until_ready(fn(*args))


def chain_case(n):
    def entries(peers):
        x = np.linspace(0, 1, n)
        found = [Entry("NumPy", "out=", functools.partial(numpy_chain, x.copy(), CHAIN, C, D))]
        if peers.eagle:
            g, natural = builder_chain(x.copy(), CHAIN, C, D), natural_chain(x.copy(), CHAIN, C, D)
            found += [Entry("eagle", "Mutable", g.launch), Entry("eagle", "", natural.launch, form="natural")]
        if peers.limits:
            found += limit_entries(peers.limits.chain([x.copy()], CHAIN, C, D))
        if peers.numba:
            found += [Entry("Numba", how, functools.partial(f, x.copy(), CHAIN, C, D))
                      for how, f in numba_forms(peers.numba)["chain"].items()]
        if peers.warp:
            found.append(Entry("Warp", "CPU graph", warp_chain(peers.warp, [x], CHAIN, C, D)))
        if peers.jax:
            jax, jnp = peers.jax
            found.append(Entry("JAX", "jit", jax_call(jax, jax_chain(jax, CHAIN, C, D), jnp.asarray(x))))
            if n >= 1 << 20:  # the state fed back: x = step(x), its buffer donated
                donated, state = jax_chain(jax, CHAIN, C, D, donate=True), [jnp.asarray(x)]

                def step():
                    state[0] = donated(state[0]).block_until_ready()

                found.append(Entry("JAX", "jit+donate", step))
        return found

    return Case(f"chain of {CHAIN} kernels, {n:,} samples, in place (Mutable)", n, entries, 16 * n,
                {"natural": f"  the same, natural form x = k(x), {n:,} samples"})


def loop_case(n):
    def entries(peers):
        x0, flag = np.ones(n), np.ones(1, np.uint32)
        found = [Entry("NumPy", "", functools.partial(numpy_settle, x0, 1))]
        if peers.eagle:
            g = settle(x0, flag)

            def replay():
                flag[0] = 1  # the body clears it after 7 turns
                g.launch()
                assert g.result[0] == 128.0  # seven turns: 2, 4, ... 128

            found.append(Entry("eagle", "", replay))
        if peers.limits:
            found += limit_entries(peers.limits.settle(x0, LOOP_CAP))
        if peers.numba:
            found += [Entry("Numba", how, functools.partial(f, x0))
                      for how, f in numba_forms(peers.numba)["settle"].items()]
        if peers.warp:
            found.append(warp_settle(peers.warp, x0))
        if peers.jax:
            jax, jnp = peers.jax
            loop = jax_settle(jax, jnp, LOOP_CAP)
            found.append(Entry("JAX", "lax.while_loop", jax_call(jax, loop, jnp.ones(n))))
        return found

    return Case(f"capped device loop ({LOOP_TURNS} of <={LOOP_CAP} turns), {n:,} samples", n, entries,
                LOOP_TURNS * 16 * n)


def warp_settle(wp, x0):
    _, _, begin, doubled = warp_kernels(wp)
    n = x0.size
    xs, x = wp.array(x0, dtype=wp.float64, device="cpu"), wp.empty(n, dtype=wp.float64, device="cpu")
    replay, turns = warp_loop(wp, lambda: wp.launch(begin, dim=n, inputs=[xs, x], device="cpu"),
                              lambda still: wp.launch(doubled, dim=n, inputs=[x, still], device="cpu"),
                              LOOP_CAP)
    replay()
    assert turns.numpy()[0] == LOOP_TURNS and x.numpy()[0] == 128.0
    return Entry("Warp", "capture_while", replay)


def fork_case():
    branches, length, n = FORK

    def entries(peers):
        rng = np.random.default_rng(0)
        planes = [rng.standard_normal(n) for _ in range(branches)]
        copies = [p.copy() for p in planes]
        found = [Entry("NumPy", "out=", lambda: [numpy_chain(p, length, C, D) for p in copies])]
        if peers.eagle:
            branch_list = [[scale.plan(x, C) if k % 2 == 0 else shift.plan(x, D) for k in range(length)]
                           for x in [p.copy() for p in planes]]
            g = eagle.Graph().add_group(branch_list).build()
            found.append(Entry("eagle", g.schedule[0], g.launch))
        if peers.limits:
            found += limit_entries(peers.limits.chain([p.copy() for p in planes], length, C, D))
        if peers.numba:  # the planes stacked: one run over all their samples
            found += [Entry("Numba", how, functools.partial(f, np.stack(planes).ravel(), length, C, D))
                      for how, f in numba_forms(peers.numba)["chain"].items()]
        if peers.warp:
            found.append(Entry("Warp", "CPU graph", warp_chain(peers.warp, planes, length, C, D)))
        if peers.jax:
            jax, jnp = peers.jax
            jitted = jax_chain(jax, length, C, D)
            fused = jax.jit(lambda xs: [jitted(x) for x in xs])
            found.append(Entry("JAX", "jit", jax_call(jax, fused, [jnp.asarray(p) for p in planes])))
        return found

    return Case(f"fork of {branches} branches x {length} kernels, {n:,} samples", n, entries)


def rk4_case(n):
    def entries(peers):
        return bench_rk4.entries(n, peers)

    return Case(f"RK4 pendulums, {bench_rk4.TURNS} turns of a capped loop, {n:,} samples", n, entries,
                bench_rk4.TURNS * (3 * 16 + 8) * n)  # th, om, t read and written, a read, each turn


@hawk.kernel
def logistic(v: Scalar, a: Param) -> Scalar:
    return v + a * v * (1.0 - v)


@eagle.Graph.builder
def logistic_chain(x, length, record=False):
    g = eagle.Graph(record=record)
    for _ in range(length):  # a Python loop: `length` nodes
        x = logistic(x, 0.1)
    g.result = x
    return g


def reverse_case(n):
    length = REVERSE[0]

    def numpy_value_and_grad(x):
        vs, v = [], x
        for _ in range(length):
            vs.append(v)
            v = v + 0.1 * v * (1.0 - v)
        grad = np.ones(x.size)
        for v_ in reversed(vs):
            grad = grad * (1.0 + 0.1 * (1.0 - 2.0 * v_))
        return np.sum(v), grad

    def entries(peers):
        x = np.random.default_rng(1).uniform(0.1, 0.9, n)
        want = numpy_value_and_grad(x)[1]
        found = [Entry("NumPy", "by hand", lambda: numpy_value_and_grad(x))]
        if peers.eagle:
            ones = np.ones(n)
            g = logistic_chain(x, length, record=True)

            def backward():
                return eagle.diff.reverse(g.record, {"result": ones}, wrt=("x",))["x"]

            g()
            np.testing.assert_allclose(backward(), want, rtol=1e-12)
            (program,) = [p.program for p in g.record._passes.values()]  # the pass's native program
            found += [Entry("eagle", "eagle.diff.reverse", lambda: (g(), backward())),
                      Entry("eagle", "", g, form="forward"), Entry("eagle", "", program.run, form="reverse"),
                      Entry("eagle", "", backward, form="call")]
        if peers.jax:
            jax, jnp = peers.jax

            def f(v):
                for _ in range(length):
                    v = v + 0.1 * v * (1.0 - v)
                return jnp.sum(v)

            both = jax.jit(jax.value_and_grad(f))
            xj = jnp.asarray(x)
            np.testing.assert_allclose(np.asarray(both(xj)[1]), want, rtol=1e-12)
            found.append(Entry("JAX", "jit(value_and_grad)", lambda: jax.block_until_ready(both(xj))))
        return found

    return Case(f"forward + gradient of {length} kernels, {n:,} samples (wrt x)", n, entries, 16 * n,
                {"forward": f"  eagle's forward replay alone, {n:,} samples",
                 "reverse": f"  eagle's reverse program alone, {n:,} samples",
                 "call": f"  eagle.diff.reverse, the whole call, {n:,} samples"})


def build_case():
    def entries(peers):
        found = []
        x = np.zeros(16)
        if peers.eagle:
            builder_chain(x, 10)  # the rewrite and the kernels' compilation are not the figure
            found.append(Entry("eagle", "@eagle.Graph.builder", lambda: builder_chain(x, BUILD_NODES)))
        if peers.jax:
            jax, jnp = peers.jax
            found.append(Entry("JAX", "trace + compile",
                               lambda: jax_chain(jax, BUILD_NODES, C, D).lower(jnp.zeros(16)).compile()))
        return found

    return Case(f"build a {BUILD_NODES:,}-node graph (record + edges + lowering)", 0, entries)


def cases(mode: str) -> list[Case]:
    if mode == "smoke":
        return [chain_case(16), loop_case(16), fork_case(), rk4_case(64), reverse_case(64)]
    quick = mode == "quick"
    chains = [16, 1024, 65536] + ([] if quick else [1 << 20, 4 << 20])
    return ([chain_case(n) for n in chains] + [loop_case(n) for n in (16, 1 << 20)] + [fork_case()]
            + [rk4_case(n) for n in bench_rk4.SIZES[:2 if quick else 3]] + [reverse_case(REVERSE[1])]
            + ([] if quick else [build_case()]))


def repeats(mode: str, n: int) -> int:
    if mode == "smoke":
        return 1
    base = 201 if n <= 1024 else 51 if n <= 65536 else 9
    return max(5, base // 4) if mode == "quick" else base


def time_case(case: Case, peers: Peers, mode: str) -> dict[tuple[str, str], tuple[float, str]]:
    entries = case.entries(peers)
    if case.n == 0:  # a one-off cost (the build): the median of three, not a replay
        timed = {(e.form, e.who): (statistics.median(_once(e.run) for _ in range(3)), e.how) for e in entries}
    else:
        timed = time_entries(entries, repeats(mode, case.n), rounds=1 if mode == "smoke" else 3)
    del entries
    gc.collect()  # a builder graph and its recorder refer to each other: its planes go with the collector
    return timed


def _once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# ------------------------------------------------------------------ child processes


def jax_child(mode: str) -> None:
    """Times JAX's entries of every case beside NumPy's, in this process with sync dispatch: one
    JSON line of {case title: {form|who: [median, variant]}}."""
    peers = Peers.jax_child()
    found = {}
    if peers.jax is not None:
        for case in cases(mode):
            timed = time_case(case, peers, mode)
            found[case.title] = {f"{form}|{who}": list(v) for (form, who), v in timed.items()}
    print(json.dumps(found))


def jax_rows(mode: str) -> dict[str, dict[tuple[str, str], tuple[float, str]]]:
    done = subprocess.run([sys.executable, __file__, "--jax-child", "--mode", mode], capture_output=True,
                          text=True)
    if done.returncode:
        sys.stderr.write(done.stderr)
        raise SystemExit("run.py: JAX's child process failed (above)")
    lines = done.stdout.strip().splitlines()
    found = json.loads(lines[-1]) if lines else {}
    return {title: {tuple(k.split("|")): tuple(v) for k, v in rows.items()} for title, rows in found.items()}


def resident() -> tuple[int, int]:
    """(now, peak) resident bytes of this process, from Linux's /proc/self/status."""
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def memory_child(form: str, n: int) -> None:
    """Peak resident growth over the input of building and running the chain in one form: one number."""
    x = np.linspace(0, 1, n)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak so far (imports, compilation) is not this form's: start it again here
    before = resident()[0]
    if form == "NumPy natural":
        for _ in range(3):
            y = x
            for k in range(CHAIN):
                y = y * C if k % 2 == 0 else y + D
    else:
        g = natural_chain(x, CHAIN, C, D) if form == "eagle natural" else builder_chain(x, CHAIN, C, D)
        for _ in range(3):
            g.launch()
    print(resident()[1] - before)


def memory_rows(n: int) -> list[tuple[str, int]]:
    rows = []
    for form in ("eagle natural", "eagle Mutable", "NumPy natural"):
        done = subprocess.run([sys.executable, __file__, "--memory-child", form, "--n", str(n)],
                              capture_output=True, text=True, check=True)
        rows.append((form, int(done.stdout.strip().splitlines()[-1])))
    return rows


# ------------------------------------------------------------------ the table


def fmt_short(seconds: float) -> str:
    return fmt(seconds).strip()


def cell(row: Row, who: str) -> str:
    if who not in row.times:
        return ""
    t, how = row.times[who]
    text = fmt_short(t)
    if who in row.numpy and who != "NumPy":
        text += f" ({t / row.numpy[who]:.2g}x)"
    return f"{text} {how}".rstrip()


def rows_of(case: Case, here: dict, jax: dict, bandwidth: float) -> list[Row]:
    leaves_cache = case.moved and 8 * case.n >= CACHE  # the triad's bandwidth binds only beyond the cache
    main = Row(case.title, bound=case.moved / bandwidth if leaves_cache else None)
    numpy_here = here.get(("", "NumPy"), (None,))[0]
    extra = {form: Row(title) for form, title in case.forms.items()}
    for source, numpy in ((here, numpy_here), (jax, jax.get(("", "NumPy"), (None,))[0])):
        for (form, who), value in source.items():
            if source is jax and who == "NumPy":
                continue  # the child's NumPy is JAX's reference, not a column
            row = extra[form] if form else main
            row.times[who] = value
            if numpy:
                row.numpy[who] = numpy
    for row in extra.values():
        if numpy_here:
            row.times["NumPy"] = here[("", "NumPy")]
    if ("", "NumPy") in jax and "JAX" in main.times:
        main.note = f"JAX's NumPy {fmt_short(jax['', 'NumPy'][0])}"
    if "reverse" in extra and "forward" in extra:
        ratio = extra["reverse"].times["eagle"][0] / extra["forward"].times["eagle"][0]
        extra["reverse"].note = f"reverse / forward = {ratio:.2f}"
    return [main, *extra.values()]


def machine(peers: Peers) -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        model = names[0] if names else model
    versions = [f"NumPy {np.__version__}"]
    with contextlib.suppress(ImportError):
        import jax

        versions.append(f"JAX {jax.__version__}")
    if peers.warp:
        versions.append(f"Warp {peers.warp.config.version}")
    if peers.numba:
        versions.append(f"Numba {peers.numba.__version__}")
    with contextlib.suppress(OSError, ValueError):
        sizes = [int(p.read_text().strip().rstrip("K")) for p in
                 Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size")]
        model += f" ({max(sizes) // 1024} MB last-level cache)"
    return (f"{model}, {os.cpu_count()} CPUs, eagle on {_core.num_threads()} threads; "
            f"{platform.python_implementation()} {platform.python_version()}, {', '.join(versions)}")


def print_table(rows: list[Row], markdown: bool) -> None:
    columns = [c for c in COLUMNS if any(c in r.times for r in rows)]
    head = ["case", *columns, "memory limit", "note"]
    cells = [[r.case, *(cell(r, c) for c in columns), fmt_short(r.bound) if r.bound else "", r.note]
             for r in rows]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for line in cells:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(line[i]) for line in [head, *cells]) for i in range(len(head))]
    for line in [head, *cells]:
        print("  ".join(text.ljust(w) for text, w in zip(line, widths, strict=True)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, fewer sizes, memory at 1M")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one call each: the script works")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--jax-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    mode = args.mode or ("smoke" if args.smoke else "quick" if args.quick else "full")
    if args.jax_child:
        return jax_child(mode)
    if args.memory_child:
        return memory_child(args.memory_child, args.n)

    start = time.perf_counter()
    peers = Peers.here()
    bandwidth = stream_triad(_core.num_threads(), medians, n=1 << (16 if mode == "smoke" else 24))
    jax = jax_rows(mode)
    rows: list[Row] = []
    for case in cases(mode):
        rows += rows_of(case, time_case(case, peers, mode), jax.get(case.title, {}), bandwidth)
    memory_n = {"smoke": 1 << 12, "quick": 1 << 20}.get(mode, 4 << 20)
    memory = memory_rows(memory_n)

    print(f"\n{machine(peers)}; STREAM triad {bandwidth / 1e9:.1f} GB/s")
    print("Medians; (Nx) is the time relative to NumPy eager out= in the same process, lower is faster; "
          "the variant that won is beside each figure; limit: the kernels held in registers (C); memory "
          "limit: one read and one write of each plane at the triad's bandwidth (DRAM: planes that fit in "
          "the last-level cache can beat it).\n")
    print_table(rows, args.markdown)
    print(f"\nPeak resident growth over the input, chain of {CHAIN} kernels at {memory_n:,} samples "
          f"(input {8 * memory_n / 1e6:.0f} MB; each in a fresh process):")
    for form, grown in memory:
        print(f"  {form:<14} {grown / 1e6:10.1f} MB ({grown / (8 * memory_n):.1f} planes)")
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return None


if __name__ == "__main__":
    main()
