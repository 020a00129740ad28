"""CUDA graphs with host calls between them: the GPU target of a graph that holds an
``opaque(fn, stream=S)`` or ``opaque(fn, eager=True)`` node, which cuts the graph around it, or
of a graph over a communicator whose reductions the ranks combine between two CUDA graphs.

A host call runs ``fn`` on the host at every replay (seed 001's tiers): an ``eager_stream``
call's device work goes on its own stream ``S``, ordered by events (``S`` waits for the part
before, the part after waits for ``S``), so the host never waits; an ``eager_host`` call runs
with the device drained before and after, so it may read back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eagle._core import check, lib
from eagle._gpu_program import GpuProgram


@dataclass(frozen=True)
class HostCall:
    """``fn`` called on the host at every replay: its device work on ``stream`` (eager_stream),
    or, with no stream, between two device drains (eager_host)."""

    fn: Callable[[], object]
    stream: int | None = None


class GpuSegments:
    """CUDA graphs with host calls between them, run in order at every replay.

    Each part's stream waits on the device for the part before (the previous replay's last
    part, for the first), so a replay without an eager_host call never makes the host wait;
    an eager_host call waits for the device before and after it, in ``enqueue`` too."""

    patches = True

    def __init__(self, parts: list[GpuProgram | HostCall], device: int) -> None:
        self.parts, self.device = parts, device
        self.programs = [p for p in parts if isinstance(p, GpuProgram)]
        self.reductions = sum(p.reductions for p in self.programs)
        self._last: int | None = None  # the stream of the part enqueued last (None: the device is idle)

    def finalize(self) -> GpuSegments:
        for program in self.programs:
            program.finalize()
        return self

    def run(self, replays: int = 1) -> GpuSegments:
        return self.enqueue(replays).synchronize()

    def enqueue(self, replays: int = 1) -> GpuSegments:
        for _ in range(replays):
            for part in self.parts:
                if isinstance(part, GpuProgram):
                    stream = part.stream
                    self._after(stream)
                    part.enqueue(1)
                elif part.stream is None:
                    self.synchronize()  # the device is idle when fn runs ...
                    part.fn()
                    self.synchronize()  # ... and fn's own device work is done after it
                    stream = None
                else:
                    stream = part.stream
                    self._after(stream)
                    part.fn()
                self._last = stream
        return self

    def _after(self, stream: int) -> None:
        """``stream`` waits, on the device, for the part enqueued last."""
        if self._last is not None and self._last != stream:
            check(lib.eagle_cuda_stream_wait(self.device, stream, self._last), "eagle.Graph.launch")

    def synchronize(self) -> GpuSegments:
        """Wait for every part (a host node's exception is raised here) and for the device work
        of the host calls."""
        for program in self.programs:
            program.synchronize()
        check(lib.eagle_cuda_synchronize(self.device), "eagle.Graph.synchronize")
        self._last = None
        return self

    def set_collective(self, comm: Any) -> GpuSegments:
        """Make the reductions global over the ranks of ``comm`` (those of a graph over a
        communicator, each a host call between two parts), part after part."""
        for program in self.programs:
            program.set_collective(comm)
        return self

    def set_logical_size(self, n: int) -> GpuSegments:
        for program in self.programs:
            program.set_logical_size(n)
        return self

    def rebind(self, mapping: dict[int, Any]) -> bool:
        if not all(p._patchable(mapping) for p in self.programs):
            return False
        for program in self.programs:
            program._rebind(mapping)
        return True

    def stats(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for program in self.programs:
            for name, count in program.stats().items():
                totals[name] = totals.get(name, 0) + count
        return totals
