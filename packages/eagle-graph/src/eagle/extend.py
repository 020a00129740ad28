"""eagle.extend: the public surface the packages above eagle-graph and third-party plugins build on.

eagle-builder, eagle-diff, eagle-viz, hawk and the plugins reach the core
through this module only (a test refuses ``from eagle._...`` anywhere else).
What it holds, by use:

- **A read-only view of a graph** (:func:`view`): its nodes, labels, stages,
  schedule, backend and edges; :func:`default_label` of a node.
- **Node kinds and bodies**: :class:`Node`, :class:`NodeKind`,
  :func:`register_node_kind`, the payloads of the built-in kinds
  (:class:`Copy`, :class:`Opaque`, :class:`Reduce`, :class:`Conditional`) and
  the device constructs (:class:`Body`, :class:`Fork`, :class:`DeviceIf`,
  :class:`DeviceSwitch`, :class:`DeviceLoop`, :class:`SignalAfter`, :class:`Wait`), and the
  counted loop's index cells and row moves (:class:`CellAffine`, :class:`RowMove`).
- **The recording protocol**: one channel, a :class:`Recording` made active
  with :func:`recording`; ``eagle.Graph()``, the node functions and hawk
  kernel calls all report to :func:`active`.
- **Extension state**: :func:`state` is a graph's one slot for it; a
  ``record=True`` graph runs through the hooks of :func:`register_record`.
- **Lowering targets**: the protocol :class:`Target` that :class:`Program`
  (host) and :class:`GpuProgram` both implement (a kind's ``lower=`` writes
  against it once), :class:`HostItems`, :class:`GpuItems`, :class:`NativeCall`, and
  :func:`emit` / :func:`emit_node` that append a lowering to a program; :class:`Fusible`,
  a lowering's offer to join a fused run of per-sample kernels; :func:`keep_stored`,
  the temporaries an extension reads after a run, which a fused run then stores; and
  :func:`deferred_kernels`, stand-ins for kernels a host build compiles after lowering,
  all in one batch.
- **Planes**: :func:`is_array`, :func:`is_guard_cell`, :func:`is_plane`, :func:`view_of`, :func:`overlap`,
  :func:`candidate_pairs`, :func:`on_device`, :func:`device_of`, the device-array helpers hawk
  allocates with, and :func:`memcpy` between device and host memory; :func:`as_plane`, the one
  conversion of an array of another library (a torch tensor, a JAX array, DLPack, an array
  interface) into what a node holds, and :func:`refuse_write`, the refusal of a write into one
  that cannot take it.
- **Errors and warnings**: :class:`EagleError` and its builtin-mixed subclasses
  (:class:`EagleValueError`, :class:`EagleTypeError`, ...), which every raise of an extension
  names instead of the builtin, and :class:`EagleWarning`, the base of every warning.
- **Native**: the cffi ``ffi`` and ``lib`` of libeagle, ``BLOCK``, the team
  size, NVRTC (:data:`nvrtc`), and :func:`flatten` / :func:`unflatten` of
  result trees.
- **Pictures**: :func:`lay_out`, libeagle's layout engine (boxes, frames, wires and long
  links routed around the boxes, in cells), which eagle-viz's faces draw from, and libeagle's
  drawers of a layout, :func:`picture_text` (what ``print(g)`` shows), :func:`picture_mermaid`
  and :func:`picture_dot`, with their palette, :func:`picture_style`: what C++'s
  ``eagle::GraphView`` prints too.

``API_VERSION`` is ``(major, minor)``: a minor step adds names, a major one
changes or removes them.

>>> import eagle.extend as ext
>>> x, y = np.arange(3.0), np.zeros(3)
>>> g = eagle.Graph().add_node(eagle.copy(x, into=y), name="save").build()
>>> v = ext.view(g)
>>> v.labels, v.backend, [len(s.branches) for s in v.stages]
(('save',), 'cpu', [1])
>>> [leaf is x for leaf in ext.flatten({"a": (x, [y])})]
[True, False]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eagle import _nvrtc as nvrtc
from eagle._arrays import is_array, is_guard_cell
from eagle._cells import CellAffine, RowMove, TurnCheck
from eagle._core import BLOCK, CoreError, ffi, lib, num_threads, set_num_threads
from eagle._cuda import (
    contiguous,
    device_copy_like,
    device_of,
    empty_like_device,
    memcpy,
    on_device,
    zeros_like_device,
)
from eagle._cuda import module as cuda_module
from eagle._edges import Edge, is_plane, is_value
from eagle._errors import (
    EagleAssertionError,
    EagleAttributeError,
    EagleError,
    EagleImportError,
    EagleIndexError,
    EagleKeyError,
    EagleMemoryError,
    EagleNameError,
    EagleRuntimeError,
    EagleSyntaxError,
    EagleTypeError,
    EagleValueError,
    EagleWarning,
    SiblingRace,
)
from eagle._extension import register_record, state
from eagle._flows import (
    ChoiceFlow,
    CopyFlow,
    Flow,
    InnerFlow,
    KernelFlow,
    LeafFlow,
    LoopFlow,
    NoFlow,
    ReduceFlow,
    RowFlow,
)
from eagle._foreign import as_plane, refuse_write
from eagle._fusion import current as current_fusion
from eagle._gpu_program import GpuProgram
from eagle._graph import Graph
from eagle._kinds import (
    Fusible,
    GpuItems,
    HostItems,
    NativeCall,
    Node,
    NodeKind,
    PlaneTuple,
    Swap,
    register_node_kind,
)
from eagle._kinds import kind_of as node_kind
from eagle._launch_checks import count_writes
from eagle._lower_cpu import emit, emit_node
from eagle._nodes import Conditional, Copy, Opaque, Reduce
from eagle._picture_faces import picture_dot, picture_mermaid, picture_style, picture_text
from eagle._picture_layout import NativeLayout, lay_out
from eagle._pictures import ROLES, BoxPicture, FramePicture, NoPicture, Picture
from eagle._program import Program, deferred_kernels
from eagle._races import refuse_sibling_races
from eagle._recording import Recording, active, recorded, recording, withdrawn
from eagle._regions import Body, DeviceIf, DeviceLoop, DeviceSwitch, Fork, SignalAfter, Wait
from eagle._sharded import fail_together
from eagle._target import Target
from eagle._trees import flatten, unflatten
from eagle._views import candidate_pairs, overlap, view_of

API_VERSION = (1, 5)


@dataclass(frozen=True)
class Stage:
    """One stage of a graph: its branches, each a tuple of node indices run in order."""

    branches: tuple[tuple[int, ...], ...]
    #: a fork/join group (``add_group``, ``g.parallel()``), not a single node
    group: bool


class GraphView:
    """A read-only view of a graph: what extensions read, never write.

    The tuples are copies taken when read; the nodes are the graph's own.

    >>> from eagle.extend import view
    >>> a, b = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_group([eagle.copy(a, into=b), eagle.reduce(a, np.zeros(1))])
    >>> v = view(g)
    >>> [n.kind for n in v.nodes], v.stages, v.built
    (['copy', 'reduce'], (Stage(branches=((0,), (1,)), group=True),), False)
    """

    __slots__ = ("_graph",)

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise EagleTypeError(f"eagle.extend.view: takes an eagle.Graph, got {type(graph).__name__}")
        self._graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def nodes(self) -> tuple[Node, ...]:
        return tuple(self._graph._nodes)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self._graph._labels)

    @property
    def stages(self) -> tuple[Stage, ...]:
        return tuple(Stage(tuple(tuple(b) for b in s.branches), s.group) for s in self._graph._stages)

    @property
    def schedule(self) -> list[str] | None:
        return self._graph.schedule

    @property
    def backend(self) -> str | None:
        return self._graph.backend

    @property
    def built(self) -> bool:
        return self._graph._program is not None

    @property
    def recorded(self) -> bool:
        """Made with ``record=True`` (eagle.diff keeps what a reverse pass needs)."""
        return self._graph._recording

    @property
    def temporaries(self) -> tuple[Any, ...]:
        """The arrays the build found no one outside the graph holds (a builder's temporaries,
        each kept only while a node reads it: a fused run need not store one)."""
        return tuple(self._graph._temporaries)

    def edges(self) -> list[Edge]:
        return self._graph.edges()


def view(graph: Graph) -> GraphView:
    """The read-only view of ``graph``.

    >>> from eagle.extend import view
    >>> x = np.zeros(3)
    >>> view(eagle.Graph().add_node(eagle.copy(x, into=x), name="nothing")).labels
    ('nothing',)
    """
    return GraphView(graph)


def record_into(graph: Graph, recorder: Recording | None) -> None:
    """Make ``recorder`` the recording that writes into ``graph`` (None: no longer): the graph's
    ``add_node`` and ``parallel`` then go to it."""
    if recorder is None:
        state(graph).pop("recording", None)
    else:
        state(graph)["recording"] = recorder


def declare_temporaries(graph: Graph, arrays: Sequence[Any]) -> None:
    """Declare the arrays of ``graph`` no one outside it sees (a builder's temporaries: not a
    result, a buffer or an argument): the build keeps those only the graph's nodes hold, lets
    them share storage by liveness (the buffer plan) and need not keep their values after the
    nodes that use them (a fused run does not store them)."""
    graph._temporaries = list(arrays)


def keep_stored(arrays: Sequence[Any]) -> bool:
    """While a build lowers a graph (an extension's lowering hook, such as eagle.diff's
    instrument), have every fused run store ``arrays`` (temporaries the extension reads after
    the run).  Returns whether the build fuses: if not, every plane is stored anyway."""
    liveness = current_fusion()
    if liveness is not None:
        liveness.keep(arrays)
    return liveness is not None


def recording_of(graph: Graph) -> Recording | None:
    """The recording that writes into ``graph`` now, if any."""
    return state(graph).get("recording")


def rebind(graph: Graph, mapping: dict[int, Any], swap: Callable[[], None],
           check: Callable[[], None]) -> None:
    """Put new arrays in a built graph's nodes (``mapping``: id of each old array -> its new one):
    ``swap`` re-points the nodes, every check of add and build runs on them and ``check`` (the
    caller's own), then the graph is lowered again; a failure puts every node back."""
    graph._rebind(mapping, swap, check)


def take_over(graph: Graph, rebuilt: Graph) -> None:
    """Make built ``graph`` the built graph ``rebuilt`` (a builder called again on a bind's new
    arrays, where a node no swap reaches holds an old one), with one ``RebuildWarning``."""
    graph._take_over(rebuilt)


#: a node's label when the graph gives it none: its kind's ``label`` hook, else the kind's name
default_label = Node.default_label


__all__ = [
    "API_VERSION",
    "BLOCK",
    "ROLES",
    "Body",
    "BoxPicture",
    "CellAffine",
    "ChoiceFlow",
    "Conditional",
    "Copy",
    "CopyFlow",
    "CoreError",
    "DeviceIf",
    "DeviceLoop",
    "DeviceSwitch",
    "EagleAssertionError",
    "EagleAttributeError",
    "EagleError",
    "EagleImportError",
    "EagleIndexError",
    "EagleKeyError",
    "EagleMemoryError",
    "EagleNameError",
    "EagleRuntimeError",
    "EagleSyntaxError",
    "EagleTypeError",
    "EagleValueError",
    "EagleWarning",
    "Edge",
    "Flow",
    "Fork",
    "FramePicture",
    "Fusible",
    "GpuItems",
    "GpuProgram",
    "Graph",
    "GraphView",
    "HostItems",
    "InnerFlow",
    "KernelFlow",
    "LeafFlow",
    "LoopFlow",
    "NativeCall",
    "NativeLayout",
    "NoFlow",
    "NoPicture",
    "Node",
    "NodeKind",
    "Opaque",
    "Picture",
    "PlaneTuple",
    "Program",
    "Recording",
    "Reduce",
    "ReduceFlow",
    "RowFlow",
    "RowMove",
    "SiblingRace",
    "SignalAfter",
    "Stage",
    "Swap",
    "Target",
    "TurnCheck",
    "Wait",
    "active",
    "as_plane",
    "candidate_pairs",
    "contiguous",
    "count_writes",
    "cuda_module",
    "declare_temporaries",
    "default_label",
    "deferred_kernels",
    "device_copy_like",
    "device_of",
    "emit",
    "emit_node",
    "empty_like_device",
    "fail_together",
    "ffi",
    "flatten",
    "is_array",
    "is_guard_cell",
    "is_plane",
    "is_value",
    "keep_stored",
    "lay_out",
    "lib",
    "memcpy",
    "node_kind",
    "num_threads",
    "nvrtc",
    "on_device",
    "overlap",
    "picture_dot",
    "picture_mermaid",
    "picture_style",
    "picture_text",
    "rebind",
    "record_into",
    "recorded",
    "recording",
    "recording_of",
    "refuse_sibling_races",
    "refuse_write",
    "register_node_kind",
    "register_record",
    "set_num_threads",
    "state",
    "take_over",
    "unflatten",
    "view",
    "view_of",
    "withdrawn",
    "zeros_like_device",
]
