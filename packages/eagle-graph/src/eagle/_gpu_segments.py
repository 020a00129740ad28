"""CUDA graphs with eager host calls between them: the GPU target of a graph that holds an
``opaque(fn, eager=True)`` node, which cuts the graph around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eagle._core import check, lib
from eagle._gpu_program import GpuProgram


class GpuSegments:
    """CUDA graphs with eager host calls between them, run in order at every replay: what a graph
    with ``opaque(fn, eager=True)`` lowers to.  A replay waits for each graph before the call
    after it, so ``enqueue`` runs to the end too."""

    patches = True

    def __init__(self, parts: list[GpuProgram | Callable[[], object]], device: int) -> None:
        self.parts, self.device = parts, device
        self.programs = [p for p in parts if isinstance(p, GpuProgram)]
        self.reductions = sum(p.reductions for p in self.programs)

    def finalize(self) -> GpuSegments:
        for program in self.programs:
            program.finalize()
        return self

    def run(self, replays: int = 1) -> GpuSegments:
        for _ in range(replays):
            for part in self.parts:
                if isinstance(part, GpuProgram):
                    part.run(1)  # waits for the graph
                else:
                    part()
                    check(lib.eagle_cuda_synchronize(self.device), "eagle.Graph.launch")  # and for fn's work
        return self

    enqueue = run

    def synchronize(self) -> GpuSegments:
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
