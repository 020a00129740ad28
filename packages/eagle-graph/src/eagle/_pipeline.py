"""GraphPipeline: opaque callables recorded in order and replayed natively."""

from __future__ import annotations

from collections.abc import Callable

from eagle._errors import EagleTypeError
from eagle._program import Program


class GraphPipeline:
    """Record zero-argument callables once; replay them in order with one call.

    No edges are derived: the callables run in the order they were recorded.

    >>> calls = []
    >>> p = eagle.GraphPipeline().record(lambda: calls.append("a")).record(lambda: calls.append("b"))
    >>> p = p.launch(2)
    >>> calls, len(p)
    (['a', 'b', 'a', 'b'], 2)
    """

    def __init__(self) -> None:
        self._steps: list[Callable[[], object]] = []
        self._program: Program | None = None

    def record(self, fn: Callable[[], object]) -> GraphPipeline:
        """Append a step; the pipeline is lowered again on the next launch."""
        if not callable(fn):
            raise EagleTypeError(f"eagle.GraphPipeline.record: expected a callable, got {type(fn).__name__}")
        self._steps.append(fn)
        self._program = None
        return self

    def launch(self, n: int = 1) -> GraphPipeline:
        """Run every step ``n`` times, in order, and wait."""
        if self._program is None:
            program = Program().stage()
            for fn in self._steps:
                program.callback(fn)
            self._program = program.finalize()
        self._program.run(n)
        return self

    def enqueue(self, n: int = 1) -> GraphPipeline:
        """On the CPU, the same as launch."""
        return self.launch(n)

    def synchronize(self) -> GraphPipeline:
        return self

    def __len__(self) -> int:
        return len(self._steps)
