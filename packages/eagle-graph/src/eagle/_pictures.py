"""How a node is drawn: the closed vocabulary a kind's ``picture`` hook answers in.

eagle-viz turns each form into its blocks and knows no kind: a box (one node),
a frame around bodies (a construct) or around the node's own box (a guarded
step), or no box (a wait: an arrow from the node it waits for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from eagle._kinds import Node
    from eagle._regions import Body

#: What a box holds: a plan launch (a kernel), your Python function, an opaque op (a
#: callable eagle cannot look into), anything else.
ROLES: Final = ("kernel", "python", "opaque", "builtin")
#: A box's tier tag (seed 001): none (captured), "stream" (called at every launch, its device work
#: on its own stream), "host" (called at every launch, the device drained around it), "child" (a
#: CUDA graph made elsewhere).
TAGS: Final = ("", "stream", "host", "child")


@dataclass(frozen=True)
class BoxPicture:
    """One box.

    >>> eagle.graph.node_kind("reduce").picture_of(None)
    BoxPicture(role='builtin', tag='')
    """

    role: str = "builtin"
    tag: str = ""

    def shown_tag(self, backend: str | None) -> str:
        """The tier tag as ``print(g)`` and every picture write it: on the CPU, where every tier is
        a plain call in order, a stream node is ``stream: cpu runs eagerly`` (seed 001).

        >>> BoxPicture("python", "stream").shown_tag("cpu"), BoxPicture("python", "child").shown_tag("cpu")
        ('stream: cpu runs eagerly', 'child')
        """
        return "stream: cpu runs eagerly" if self.tag == "stream" and backend == "cpu" else self.tag


@dataclass(frozen=True)
class FramePicture:
    """A frame titled ``title`` of kind ``frame`` (``"skip"``, ``"repeat"``, ``"if"``, ``"switch"``,
    ``"loop"``, or a plugin's own word) around ``bodies`` — side by side when ``side_by_side``
    (the arms of a choice), else the one body in order — or, with no bodies, around ``around``:
    the node's own box.  The nodes of the bodies are drawn as boxes of their own.

    >>> left = np.array([2], np.uint32)
    >>> picture = eagle.repeat_while(lambda: None, left, max_iters=5).picture()
    >>> picture.title, picture.frame, picture.around
    ('repeat ≤ 5', 'repeat', BoxPicture(role='python', tag=''))
    """

    title: str
    frame: str
    bodies: tuple[Body, ...] = ()
    side_by_side: bool = False
    around: BoxPicture | None = None
    #: Side by side: one of the arms always runs (an ``if`` with its ``else``, a ``match`` with its
    #: ``_``), so a plane every arm writes is no longer the one written before the choice.
    one_runs: bool = False


@dataclass(frozen=True)
class NoPicture:
    """No box: a wait, drawn as an arrow from ``after`` (the node it waits for, in another branch)
    to the next node of its own branch; None draws nothing at all.

    >>> from eagle.extend import Wait
    >>> writer = eagle.reduce(np.arange(3.0), np.zeros(1))
    >>> eagle.graph.node_kind("wait").picture_of(Wait(writer, "out")).after is writer
    True
    """

    after: Node | None = None


Picture = BoxPicture | FramePicture | NoPicture
