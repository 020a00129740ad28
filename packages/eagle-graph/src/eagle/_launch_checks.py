"""What a build and each launch ask of the planes a graph holds over other libraries' memory
(:mod:`eagle._foreign`).

At build and at bind: no node writes one that cannot be written (a tensor autograd tracks, a JAX
array, read-only memory).  At every launch: each is still its producer's memory, where the
producer says where its memory is (a torch tensor, whose ``param.data = ...`` gives it new
storage: the graph would go on reading the old, so the launch is refused by name).  And between
``enqueue`` and the call that waits for it (``synchronize``, ``launch``, the next ``enqueue``): no
producer changed its values in place (torch counts each in-place change), which a replay in
flight may have read before or after the change.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from eagle._arrays import is_value
from eagle._errors import EagleRuntimeError
from eagle._foreign import Producer, producer_of, refuse_producer_write, refuse_write
from eagle._kinds import PlaneTuple


def refuse_written(planes: Sequence[Sequence[PlaneTuple]], labels: Sequence[str], api: str) -> None:
    """Refuse a node that writes a plane which cannot be written (:func:`eagle._foreign.refuse_write`);
    ``planes[i]``: node ``i``'s, as the build analysis asked them."""
    for label, node_planes in zip(labels, planes, strict=True):
        for name, array, role in node_planes:
            if role != "read" and not is_value(array):  # a value is copied where it is passed
                refuse_write(array, f"{api}: node {label!r} plane {name!r}")


def count_writes(written: Sequence[Any]) -> None:
    """Move the in-place count of each producer (or plane over one) eagle just wrote, as torch's
    own in-place ops move it: a backward pass that saved the tensor's old values is then refused
    by torch, not silently wrong."""
    torch = sys.modules.get("torch")  # none is counted where torch was never imported
    if torch is None:
        return
    for item in written:
        producer = item if isinstance(item, Producer) else producer_of(item)
        if producer is not None and producer.version() is not None:
            torch.autograd.graph.increment_version(producer.owner)


class LaunchChecks:
    """The planes of a built graph whose producers can say where their memory is or how often
    it changed (``(node label, plane name, producer)``, each producer once), checked at launch;
    ``written``: those a node writes, whose in-place count a run moves (torch's autograd then
    refuses a backward pass through a value the graph overwrote, as after its own in-place ops)."""

    def __init__(self, planes: list[tuple[str, str, Producer]],
                 written: list[tuple[str, str, Producer]]) -> None:
        self.planes, self.written = planes, written
        self._versions: list[int | None] | None = None  # at the end of the last enqueue, if pending

    @classmethod
    def of(cls, planes: Sequence[Sequence[PlaneTuple]], labels: Sequence[str]) -> LaunchChecks | None:
        """The checks of a graph's planes (``planes[i]``: node ``i``'s); None where none needs one."""
        found: dict[int, tuple[str, str, Producer]] = {}
        written: dict[int, tuple[str, str, Producer]] = {}
        for label, node_planes in zip(labels, planes, strict=True):
            for name, array, role in node_planes:
                producer = producer_of(array)
                if producer is not None and (producer.address is not None or producer.version() is not None):
                    found.setdefault(id(producer), (label, name, producer))
                    if role != "read" and not is_value(array):
                        written.setdefault(id(producer), (label, name, producer))
        return cls(list(found.values()), list(written.values())) if found else None

    def before(self, api: str) -> None:
        """Before a run: refuse one over memory a producer has left, and settle a pending enqueue.

        :raises RuntimeError: naming the node and plane, and the fix.
        """
        for label, name, producer in self.written:  # it may have been set since the build
            refuse_producer_write(producer, f"{api}: node {label!r} plane {name!r}")
        moved = [(label, name, p) for label, name, p in self.planes if p.moved()]
        if moved:
            label, name, producer = moved[0]
            raise EagleRuntimeError(
                f"{api}: plane {name!r} of node {label!r} is no longer the memory of {producer.what} it "
                f"was made from{_more(moved)}: its storage was replaced (param.data = ...), and the "
                "graph still holds the old; bind the tensor the optimizer updates: change it in place "
                "(with torch.no_grad(): param.copy_(new)), or give the graph the new storage (g.bind(...) "
                "of a builder graph, or build the graph again)"
            )
        self.settle(api)

    def ran(self) -> None:
        """After a run's writes: each written producer's in-place count moved."""
        count_writes([producer for _, _, producer in self.written])

    def enqueued(self) -> None:
        """After an enqueue: what a replay may still be reading (its writes counted: they are the
        replay's, not the user's)."""
        self.ran()
        self._versions = [p.version() for _, _, p in self.planes]

    def settle(self, api: str) -> None:
        """The enqueued replays are waited for: refuse where a producer changed in place meanwhile.

        :raises RuntimeError: naming the node and plane; once (the replays are done now).
        """
        versions, self._versions = self._versions, None
        if versions is None:
            return
        changed = [
            (label, name, p)
            for (label, name, p), seen in zip(self.planes, versions, strict=True)
            if p.version() != seen
        ]
        if changed:
            label, name, producer = changed[0]
            raise EagleRuntimeError(
                f"{api}: plane {name!r} of node {label!r} ({producer.what}) was changed in place between "
                f"enqueue() and the call that waits for it{_more(changed)}, while a replay may have been "
                "reading it: update weights after launch() returns, or after synchronize()"
            )


def _more(found: list[tuple[str, str, Producer]]) -> str:
    others = [f"{name!r} of {label!r}" for label, name, _ in found[1:4]]
    return f" (so are {', '.join(others)}{' ...' if len(found) > 4 else ''})" if others else ""
