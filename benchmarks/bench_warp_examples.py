"""The two ported Warp examples (``examples/wave_equation.py``, ``examples/noise_graph.py``) beside
the originals on Warp's CPU device and beside their NumPy twins.

A figure is the median time of one frame, the competitors timed in turns in this process
(``harness.medians``), and ratios are to eagle's replay on one thread (Warp's CPU kernels run on
one).  Warp runs its own installed example modules (``warp.examples.core``), unchanged, at their
default size (128 x 128) and at a larger one (their arrays made again at that size):

- the wave: the example's ``step`` (16 substeps of two Python launches each, then the mesh), and
  those same launches captured once as a Warp CPU graph and replayed (its fastest form; the sphere
  is frozen where the capture saw it, so the same work per frame, not the same values);
- the noise: the example's ``step``, which already replays its CPU graph of the 16 octaves.

No physical limit is given: at these sizes every plane fits in the cache, so no memory bound binds,
and the kernels are a handful of dependent float operations per cell (each port's figure against
NumPy says what vectorised, fused code gains).  Without warp-lang the Warp rows are skipped, with a
line saying so.

Run: python benchmarks/bench_warp_examples.py [--quick | --smoke]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np
from harness import Entry, fmt, medians, table
from peers import load_warp, quiet

from eagle import extend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # scripts, not a package
wave, noise = importlib.import_module("wave_equation"), importlib.import_module("noise_graph")


def threaded(threads, fn):
    """fn run under a team of ``threads``."""
    def run():
        before = extend.num_threads()
        extend.set_num_threads(threads)
        try:
            return fn()
        finally:
            extend.set_num_threads(before)
    return run


def eagle_entries(make, size):
    """The port's replay on one thread and on two, and its NumPy twin."""
    ours, twin = make(size), make(size, build=False)
    entries = [Entry("eagle", f"{k} thread{'s' * (k > 1)}", threaded(k, ours.step)) for k in (1, 2)]
    return [*entries, Entry("NumPy", "twin", twin.numpy_step)]


def warp_wave(wp, size):
    """Warp's own example_wave.Example at ``size`` x ``size``: its step, and its launches replayed
    as a Warp CPU graph."""
    from warp.examples.core import example_wave

    with quiet():
        ex = example_wave.Example(stage_path=None)
        if size != ex.sim_width:
            ex.sim_width = ex.sim_height = size
            ex.sim_grid0 = wp.zeros(size * size, dtype=float)
            ex.sim_grid1 = wp.zeros(size * size, dtype=float)
            ex.sim_verts = wp.zeros(size * size, dtype=wp.vec3)
        ex.step()  # compiles outside the capture
        with wp.ScopedCapture(device="cpu") as capture:
            ex.step()
    graph = capture.graph
    return [Entry("Warp", "example step", ex.step),
            Entry("Warp", "CPU graph", lambda: wp.capture_launch(graph))]


def warp_noise(wp, size):
    """Warp's own example_graph_capture.Example at ``size`` x ``size``: its step (the slide, then its
    CPU graph of the 16 octaves)."""
    from warp.examples.core import example_graph_capture

    with quiet():
        ex = example_graph_capture.Example()
        if size != ex.width:
            ex.width = ex.height = size
            ex.x = wp.array(np.linspace(0.0, 2.0, size), dtype=float)
            ex.y = wp.array(np.linspace(0.0, 2.0, size), dtype=float)
            ex.pixel_values = wp.zeros((size, size), dtype=float)
            with wp.ScopedCapture(device="cpu") as capture:
                ex.fbm()
            ex.graph = capture.graph
        ex.step()
    return [Entry("Warp", "example step (its CPU graph)", ex.step)]


def wave_beside_warp(wp, frames=10):
    """How far the port's heights are from Warp's own example after ``frames`` frames (the same
    arithmetic but for Warp's float32 ``dt * dt`` and its libm ``sin`` of the clock)."""
    from warp.examples.core import example_wave

    with quiet():
        ex = example_wave.Example(stage_path=None)
        for _ in range(frames):
            ex.step()
    pond = wave.Pond(ex.sim_width)
    for _ in range(frames):
        pond.step()
    theirs = ex.sim_grid1.numpy().reshape(pond.cur.shape)  # the newest grid, after the last swap
    print(f"\nwave {ex.sim_width}x{ex.sim_width} after {frames} frames: eagle's heights against Warp's "
          f"example: max |difference| {np.abs(pond.cur - theirs).max():.2e} (heights up to "
          f"{np.abs(theirs).max():.2f}); the same bits in {np.mean(pond.cur == theirs):.1%} of the cells")


def case(title, entries, repeat):
    t = medians({str(k): e.run for k, e in enumerate(entries)}, repeat=repeat)
    base = t["0"]  # eagle, one thread
    rows = []
    for k, e in enumerate(entries):
        note = "" if k == 0 else f"{t[str(k)] / base:8.2f} x eagle (1 thread)"
        rows.append((f"{e.who}, {e.how}", fmt(t[str(k)]), note))
    table(title, rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one round (the test's)")
    args = parser.parse_args(argv)
    sizes, repeat = ((16,), 3) if args.smoke else ((128, 512), 9 if args.quick else 31)
    wp = load_warp()
    if wp is None:
        print("warp-lang is not installed: the Warp rows are skipped (pip install warp-lang)")
    else:
        wp.ScopedTimer.enabled = False  # the examples time their steps and print each
        wave_beside_warp(wp, frames=2 if args.smoke else 10)
    for size in sizes:
        peers = [] if wp is None else warp_wave(wp, size)
        case(f"wave {size}x{size}, a frame of {wave.SUBSTEPS} substeps (float32)",
             eagle_entries(wave.Pond, size) + peers, repeat)
        peers = [] if wp is None else warp_noise(wp, size)
        case(f"noise {size}x{size}, a frame of {noise.OCTAVES} octaves (float32)",
             eagle_entries(noise.Pixels, size) + peers, repeat)


if __name__ == "__main__":
    main()
