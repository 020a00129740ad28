"""Plugin node kinds: eagle-scan's native lowering beside the same C called from a Python opaque node.

The kind comes through its entry point (``eagle.node("scan", ...)``); the
opaque competitor calls the very kernel the native lowering hands the
executor (taken from ``node_kind("scan").native``), through cffi, from a
Python callback.  The difference is what a native lowering saves per node.

Run: python benchmarks/bench_plugins.py
"""

from __future__ import annotations

import functools

import numpy as np
from harness import fmt, interleaved_medians, table, two_thread_speedup

import eagle
from eagle import _core
from eagle._core import ffi
from eagle._program import Program
from eagle.graph import node_kind

NODES = 100
REPLAYS = 100


def per_node(rows, n):
    """100 scans of their own planes (one block each): replay cost per node, native vs opaque vs NumPy."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(n) for _ in range(NODES)]
    ys = [np.empty(n) for _ in range(NODES)]
    native = eagle.Graph()
    for x, y in zip(xs, ys, strict=True):
        native.add_node(eagle.node("scan", x, out=y))
    native.build()

    # The same kernel call, made from Python: one opaque node per scan whose fn is the cffi
    # function pointer itself with its arguments bound (no Python frame of ours in between).
    opaque = eagle.Graph()
    for x, y in zip(xs, ys, strict=True):
        (call,) = node_kind("scan").native(eagle.node("scan", x, out=y).payload)  # n <= 1024: one pass
        args = ffi.new("eagle_arg[]", len(call.args))
        for i, a in enumerate(call.args):
            args[i].ptr = ffi.cast("void *", a.ctypes.data)
        opaque.add_node(eagle.opaque(functools.partial(call.kernel, 0, n, args), reads={"x": x},
                                     writes={"y": y}))
    opaque.build()

    def numpy_loop():
        for _ in range(REPLAYS):
            for x, y in zip(xs, ys, strict=True):
                np.cumsum(x, out=y)

    t = interleaved_medians({"native": lambda: native.launch(REPLAYS),
                             "opaque": lambda: opaque.launch(REPLAYS), "numpy": numpy_loop}, repeat=21)
    per = {k: v / (REPLAYS * NODES) for k, v in t.items()}
    rows.append((f"scan of {n} samples, native lowering, per node", fmt(per["native"]),
                 f"{len(node_kind('scan').native(native._nodes[0].payload))} native item(s) a node"))
    rows.append(("  same C through a Python opaque node", fmt(per["opaque"]),
                 f"{per['opaque'] / per['native']:.2f}x the native node"))
    rows.append(("  np.cumsum in a Python loop", fmt(per["numpy"]), f"{per['numpy'] / per['native']:.2f}x"))
    return per


def one_big_scan(rows, n=1 << 22):
    """One large sum scan: the blocked three passes on 1 and on all threads, one serial call, NumPy."""
    x = np.random.default_rng(1).standard_normal(n)
    y = np.empty_like(x)
    g = eagle.Graph().add_node(eagle.node("scan", x, out=y)).build()
    serial = Program().stage()
    serial.kernel(_serial_kernel(), [x, y, n], 1, per_sample=False)
    serial.finalize()
    team = _core.num_threads()
    times = {}
    try:
        _core.set_num_threads(1)
        times["blocked, 1 thread"] = interleaved_medians({"g": g.launch}, repeat=9)["g"]
        _core.set_num_threads(team)
        times.update(interleaved_medians({f"blocked, {team} threads": g.launch, "serial call": serial.run,
                                          "np.cumsum": lambda: np.cumsum(x, out=y)}, repeat=9))
    finally:
        _core.set_num_threads(team)
    base = times["np.cumsum"]
    for name, t in times.items():
        rows.append((f"scan of {n} samples, {name}", fmt(t), f"{t / base:.2f}x np.cumsum"))


def _serial_kernel():
    # The serial reference is in the plugin's library, which its native lowering holds
    # (eagle-scan's Kernels.library: read here, not imported).
    return node_kind("scan").native.__self__.library.kernel("eagle_scan_serial_sum_f64")


def main():
    if not any(p.name == "eagle-scan" for p in eagle.plugins()):
        raise SystemExit("bench_plugins: install the eagle-scan plugin (pip install -e plugins/eagle-scan)")
    rows = []
    figures = [per_node(rows, n) for n in (64, 1024)]
    one_big_scan(rows)
    rows.append(("two plain pthreads vs one, this machine now", f"{two_thread_speedup():.2f}x", ""))
    table(f"plugin node kinds: eagle-scan ({_core.num_threads()} threads; medians)", rows)
    small = figures[0]
    print(f"\nreplay cost per node, 64-sample scan: native {fmt(small['native']).strip()}, "
          f"opaque {fmt(small['opaque']).strip()} ({small['opaque'] / small['native']:.1f}x)")


if __name__ == "__main__":
    main()
