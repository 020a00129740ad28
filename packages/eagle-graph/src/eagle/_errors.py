"""eagle's exceptions.  Each refusal subclasses the builtin that fits, so a
plain ``except ValueError`` keeps working, and its message starts with the
API it came from."""

from __future__ import annotations


class Busy(RuntimeError):
    """Another thread is inside a call that builds, runs or changes the same Graph (build, launch,
    enqueue, bind, add_node, add, add_group, set_logical_size).

    Give each thread its own graph.  A ``RuntimeError``:

    >>> issubclass(eagle.Busy, RuntimeError)
    True
    >>> print(eagle.Busy("eagle.Graph.launch"))
    eagle.Graph.launch: another call is still running on this Graph; give each thread its own
    Graph, or wait for it
    """

    def __init__(self, api: str) -> None:
        super().__init__(f"{api}: another call is still running on this Graph; "
                         "give each thread its own Graph, or wait for it")


class RebuildWarning(UserWarning):
    """``bind`` could not patch the built graph and built it again.

    A host node or a device condition (its guard cell) held an array that
    ``bind`` swapped: those are not patched in place; kernels and copies are.
    Or your own code (an opaque function) holds one: the builder is called
    again on the new arrays (seed 000).  Given once per graph.
    """


class SiblingRace(ValueError):
    """Two branches of one fork touch one plane, one writes it, and no wait orders them.

    A ``ValueError``, raised by :meth:`eagle.Graph.build`:

    >>> from eagle.graph import opaque
    >>> x = np.zeros(4)
    >>> g = eagle.Graph().add_group([opaque(lambda: None, writes={"x": x}),
    ...                              opaque(lambda: None, reads={"x": x})], names=["w", "r"])
    >>> try:
    ...     g.build()
    ... except eagle.SiblingRace as err:
    ...     print(str(err)[:70])
    eagle.Graph.build: 'w' (node 0) and 'r' (node 1) are siblings of one f
    """


def forked_reductions(labels: list[str]) -> ValueError:
    """The refusal of the nodes ``labels``, which reduce across samples inside a fork of a graph over a
    communicator (``eagle.Graph(comm=...)``)."""
    return ValueError(f"eagle.Graph.build: {', '.join(map(repr, labels))} reduce across samples inside a "
                      "fork; with a communicator every reduction is a collective, which every rank must "
                      "reach in the same order, and a fork's branches keep none: move the reduction "
                      "before or after the fork")
