"""What the ported Warp examples' scripts share: the eagle graph and the NumPy twin run frame by
frame, in turns, and timed."""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class Run:
    size: int
    frames: int
    ours: Any  # the example's state with its graph: ``step()`` runs a frame
    twin: Any  # the same state without a graph: ``numpy_step()`` runs a frame in NumPy
    built: float  # seconds to make ``ours`` (recording and building its graph included)
    eagle: float  # median seconds of a frame
    numpy: float


def run(doc: str, make: Any, size: int, argv: list[str] | None = None) -> Run:
    """Parse ``--size`` and ``--frames``, make the state twice (``make(size)`` and ``make(size,
    build=False)``), and run both frame by frame in turns."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--size", type=int, default=size, help="cells (pixels) along a side")
    parser.add_argument("--frames", type=int, default=60)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    ours = make(args.size)
    built = time.perf_counter() - start
    twin = make(args.size, build=False)
    times: dict[Any, list[float]] = {ours.step: [], twin.numpy_step: []}
    for _ in range(args.frames):
        for step, seen in times.items():
            start = time.perf_counter()
            step()
            seen.append(time.perf_counter() - start)
    eagle, numpy = (statistics.median(t) for t in times.values())
    return Run(args.size, args.frames, ours, twin, built, eagle, numpy)
