"""The lowering target: what a graph is lowered against, on the host or on a GPU.

The host program (:class:`eagle._program.Program`, libeagle's executor) and the GPU program
(:class:`eagle._gpu_program.GpuProgram`, one CUDA graph) both implement this protocol with
the same signatures, so a structural kind (a copy, a reduction, a device if/switch/loop, a
conditional, a signal and its wait) is lowered once, against it, and ``eagle.Graph`` holds a
target without asking which one.  A target's kernels stay its own (a host kernel runs over
sample ranges, a CUDA kernel over a grid): a kind's own kernels are what ``lower_cpu`` and
``lower_gpu`` say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol


class Target(Protocol):
    """Stages of branches of items, sub-targets under conditionals, then finalized and run."""

    #: Cross-sample reductions in the target, sub-targets included.
    reductions: int
    #: Whether ``rebind`` can patch in place (a GPU graph); where it cannot, lowering again is
    #: the ordinary way to bind, and nothing is warned of.
    patches: bool

    # --- structure
    def stage(self, schedule: str = "work_share") -> Target:
        """Open the next stage: it starts after the one before; ``schedule`` is how a host
        stage runs (a GPU stage's branches are branches of its CUDA graph)."""

    def branch(self) -> Target:
        """Open the next branch of the stage: it may run beside the ones before."""

    def body(self) -> Target:
        """A new sub-target with one stage open: the body or arm of a conditional of this one."""

    # --- items
    def node(self, node: Any, label: str | None = None) -> Target:
        """Append the work of ``node`` (an ``eagle.graph.Node``: its kind's lowering for this
        target; the protocol names no node type, so the kinds can name the target); ``label``:
        its name in messages, by default its own (``node.default_label()``)."""

    def nodes(self, nodes: Sequence[Any]) -> Target:
        """Append the work of ``nodes`` in order (a body's); a run of per-sample kernels among
        them is fused into one function (``eagle._fusion``) while a build fuses."""

    def callback(self, fn: Callable[[], object], touches: Sequence[Any] = ()) -> Target:
        """Append a Python call; an exception it raises is raised by the call that waits.
        ``touches``: the arrays it reads or writes."""

    def copy(self, src: Any, dst: Any) -> Target:
        """Append a copy of ``src`` into ``dst`` (one shape and dtype)."""

    def reduce(self, x: Any, out: Any, op: str = "sum") -> Target:
        """Append ``out[0] = op(x)`` in eagle's fixed order."""

    def if_(self, cell: Any, then: Any, otherwise: Any = None) -> Target:
        """Run sub-target ``then`` when ``cell[0] != 0``, else ``otherwise`` (None: nothing)."""

    def switch(self, cell: Any, arms: Mapping[int, Any], default: Any = None) -> Target:
        """Run the arm whose key equals ``cell[0]``, else ``default``."""

    def chain(self, cells: Sequence[Any], arms: Sequence[Any], otherwise: Any = None) -> Target:
        """An if/elif/else chain: run sub-target ``arms[i]`` for the first ``i`` whose
        ``cells[i][0] != 0``, else ``otherwise``; decided once, at the head (seed 000)."""

    def loop(self, cell: Any, body: Any, kind: str = "while", max_iters: int = -1) -> Target:
        """Repeat sub-target ``body`` by ``kind`` ("while", "do", "count"), at most ``max_iters``."""

    def signal(self, key: object) -> Target:
        """Let a later branch wait for the last item appended (what ``key`` stands for)."""

    def wait(self, key: object) -> Target:
        """The next item of this branch waits for the item signalled for ``key``."""

    # --- running
    def finalize(self) -> Target:
        """Close it: nothing more is appended; it is ready to run."""

    def run(self, replays: int = 1) -> Target:
        """Run ``replays`` times and wait; an exception of a callback is raised here."""

    def enqueue(self, replays: int = 1) -> Target:
        """Run ``replays`` times without waiting where the target can (a host run waits)."""

    def synchronize(self) -> Target:
        """Wait for enqueued runs; an exception of a callback is raised here."""

    def set_logical_size(self, n: int) -> Target:
        """The next runs process only the first ``n`` samples."""

    def rebind(self, mapping: dict[int, Any]) -> bool:
        """Re-point the finalized target at new arrays (id of old array -> new one) in place;
        False, with nothing changed, where it cannot: the graph is lowered again."""

    def stats(self) -> dict[str, int]:
        """The target's own counters (host: regions and barriers; GPU: captures, builds, replays)."""
