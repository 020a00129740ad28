"""The fused-run statement cap (``eagle._fusion.MAX_STATEMENTS``): what a longer run costs to
compile, and what it saves at replay, on the noise example's 16 octaves (examples/noise_graph.py).

Run: python benchmarks/bench_fusion_cap.py [--sizes 128 512] [--caps 400 800 1600] [--threads 1 2]

- compile: one fused function of k octave launches (its C, as a build writes it), compiled by
  eagle.native with an empty cache folder each time (cold), median of three, beside its
  statement count (``hawk.fusion.size``) and whether its sample loop is interleaved;
- replay: the noise frame's graph built at each cap, timed in turns in one process (medians of
  interleaved rounds), with its fused runs; every cap gives the same bits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import fmt, interleaved_medians

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import noise_graph

import eagle._fusion
from eagle import extend, native
from hawk import emit, fusion
from hawk.phases import split


def octaves_source(k: int, size: int = 64) -> tuple[str, int]:
    """The C of one fused run of ``k`` octave launches over the same planes, and its statements."""
    pix = noise_graph.Pixels(size, build=False)
    gx, gy = pix.gx.reshape(256, 256), pix.gy.reshape(256, 256)
    bound = noise_graph.fbm.plan(pix.z, pix.x, pix.y, gx, gy, size, 1.0, 0.5)
    ir = bound.plan.compiled.ir
    keys = [None if s.role == "value" else j for j, s in enumerate(ir.slots)]
    fused = fusion.fuse([(ir, keys)] * k, lambda key: True, "run")
    return emit.source(fused.ir, split(fused.ir, shared=True), f"hk_cap{k}", "c"), fusion.size(fused.ir)


def cold_compile(source: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            os.environ["EAGLE_CACHE_DIR"] = folder
            start = time.perf_counter()
            native.compile_library(source, "cap")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def frame_at(cap: int, size: int) -> tuple[object, noise_graph.Pixels]:
    eagle._fusion.MAX_STATEMENTS = cap
    try:
        pix = noise_graph.Pixels(size)
    finally:
        eagle._fusion.MAX_STATEMENTS = DEFAULT
    return pix.graph, pix


DEFAULT = eagle._fusion.MAX_STATEMENTS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--caps", type=int, nargs="+", default=[400, 800, 1600])
    parser.add_argument("--octaves", type=int, nargs="+", default=[1, 2, 3, 5, 8, 16])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--skip-compile", action="store_true")
    args = parser.parse_args()
    cache = os.environ.get("EAGLE_CACHE_DIR")
    if not args.skip_compile:
        print("compile of one fused function, cold cache (median of 3)")
        for k in args.octaves:
            source, statements = octaves_source(k)
            interleaved = emit.INTERLEAVED_FROM <= statements < emit.INTERLEAVED_BELOW
            print(f"  {k:2d} octaves: {statements:5d} statements{' (interleaved)' if interleaved else ''}: "
                  f"{fmt(cold_compile(source))}")
        if cache is None:
            del os.environ["EAGLE_CACHE_DIR"]
        else:
            os.environ["EAGLE_CACHE_DIR"] = cache
    for size in args.sizes:
        graphs = {cap: frame_at(cap, size) for cap in args.caps}
        for cap, (g, _) in graphs.items():
            print(f"  {size}², cap {cap}: runs of {[len(run) for run in g.fused]} launches")
        for threads in args.threads:
            extend.set_num_threads(threads)
            t = interleaved_medians({cap: g.launch for cap, (g, _) in graphs.items()}, repeat=21)
            first = args.caps[0]
            print(f"replay of a frame, {size}², {threads} thread(s): " + ", ".join(
                f"cap {cap} {fmt(t[cap])} ({t[first] / t[cap]:.2f}x)" for cap in args.caps))
        # the same bits at every cap, from the same start
        pictures = []
        for cap in args.caps:
            g, pix = frame_at(cap, size)
            g.launch()
            pictures.append(pix.z.tobytes())
        assert all(p == pictures[0] for p in pictures), "a cap changed the bits"
        assert np.isfinite(np.frombuffer(pictures[0], np.float32)).all()


if __name__ == "__main__":
    main()
