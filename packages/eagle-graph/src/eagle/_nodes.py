"""The built-in node kinds: opaque, reduce, copy, skippable, repeat_while.

Each is registered through ``register_node_kind`` like any plugin's kind;
the constructors here build the Node.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from eagle import _cuda, _gpu_kernels
from eagle._arrays import is_guard_cell
from eagle._edges import is_plane, is_value
from eagle._errors import EagleTypeError, EagleValueError
from eagle._fixed_order import fixed_order
from eagle._flows import ChoiceFlow, CopyFlow, LoopFlow, ReduceFlow
from eagle._foreign import as_plane
from eagle._kinds import GpuItems, Node, PlaneTuple, Swap, register_node_kind
from eagle._pictures import BoxPicture, FramePicture
from eagle._recording import recorded, withdrawn
from eagle._regions import Body
from eagle._views import plane_dtype
from eagle.plan import BoundPlan

if TYPE_CHECKING:
    from eagle._target import Target

# --------------------------------------------------------------------- opaque


@dataclass(frozen=True)
class Opaque:
    """Your own code: a zero-argument callable and the planes it declares."""

    fn: Callable[[], object]
    reads: Mapping[str, Any]
    writes: Mapping[str, Any]
    tier: str  # "capture", "stream" or "eager": how it runs on the GPU; on the CPU all are a call
    stream: object = None  # the stream of the "stream" tier


def _named(planes: Mapping[str, Any] | Any, api: str, writes: bool) -> dict[str, Any]:
    """The declared planes by name, each as a node holds it (an array of another library as the
    array over its memory); ``writes``: the node writes them."""
    if isinstance(planes, Mapping):
        named = dict(planes)
    elif isinstance(planes, (list, tuple)):
        named = {f"plane{i}": a for i, a in enumerate(planes)}
    else:
        raise EagleTypeError(f"{api}: declare planes as a dict of name -> array, e.g. reads={{'x': x}}")
    for name, plane in named.items():
        if is_value(plane):  # a value (a number) is copied: no edges
            continue
        if not is_plane(plane):
            raise EagleTypeError(f"{api}: plane {name!r} is a {type(plane).__name__}, which the conflict "
                                 "check "
                            "cannot see into: declare a NumPy array (or a bytearray, memoryview, ctypes "
                            "array: anything with the buffer protocol) and have the function use it")
        named[name] = as_plane(plane, api, f"plane {name!r}", writes=writes)
    return named


def opaque(fn: Callable[[], object], reads: Mapping[str, Any] | None = None,
           writes: Mapping[str, Any] | None = None, *, stream: object = None, eager: bool = False) -> Node:
    """A node of your own code: ``fn()`` runs at every launch, in graph order.

    Declare every plane it touches (``reads={"x": x}``): eagle orders it by
    them, and an undeclared array is invisible to the conflict check.

    On host planes it is a call (a host node in a GPU graph).  On device
    planes, the GPU tier (seed 001's three tiers): by default ``fn`` is
    called once, at build, while eagle captures the stream CuPy and torch
    then use (:func:`capture_stream` names it), and what it launched is
    replayed (``"capture"``); ``stream=S`` (a CuPy, torch or Warp stream, or
    a handle) calls ``fn`` on the host at every launch, its device work on
    ``S``, which waits for the stage before while the next stage waits for
    ``S``, and the host never waits (``"eager_stream"``); ``eager=True``
    calls ``fn`` at every launch with the device synchronised before and
    after, for code that reads back from the device (``"eager_host"``).

    >>> x, total = np.arange(4.0), np.zeros(1)
    >>> node = eagle.opaque(lambda: total.fill(x.sum()), reads={"x": x}, writes={"total": total})
    >>> g = eagle.Graph().add_node(node, name="sum").build().launch()
    >>> total
    array([6.])
    """
    if not callable(fn):
        raise EagleTypeError("eagle.graph.opaque: fn must be a zero-argument callable, got "
                             f"{type(fn).__name__}")
    tier = "eager" if eager else "stream" if stream is not None else "capture"
    return recorded(Node("opaque", Opaque(fn, _named(reads or {}, "eagle.graph.opaque", False),
                                          _named(writes or {}, "eagle.graph.opaque", True), tier, stream)))


def _opaque_writes(o: Opaque) -> list[PlaneTuple]:
    reads = {id(a) for a in o.reads.values()}
    return [(n, a, "readwrite" if id(a) in reads else "write") for n, a in o.writes.items()]


def _opaque_reads(o: Opaque) -> list[PlaneTuple]:
    writes = {id(a) for a in o.writes.values()}
    return [(n, a, "read") for n, a in o.reads.items() if id(a) not in writes]


def _opaque_gpu(o: Opaque) -> GpuItems:
    if o.tier == "eager":
        return GpuItems(eager=o.fn)
    if o.tier == "stream":  # seed 001: fn on the host every launch, its device work on S
        return GpuItems(eager=o.fn, stream=_cuda.stream_handle(o.stream))
    planes = [a for a in (*o.reads.values(), *o.writes.values()) if is_plane(a)]
    if not planes:  # no device planes to launch on: a call at every replay, as on the CPU
        return GpuItems(lambda gpu: gpu.callback(o.fn))
    return GpuItems(lambda gpu: gpu.captured(o.fn, touches=planes))


def _opaque_label(o: Opaque) -> str:
    name = getattr(o.fn, "__name__", "opaque")
    return "opaque" if name == "<lambda>" else name


def _opaque_picture(o: Opaque) -> BoxPicture:
    # your own function is drawn by its name in a solid box; an op eagle cannot look into (a
    # ufunc partial, a cupy kernel) with a dashed border
    role = "python" if isinstance(o.fn, (types.FunctionType, types.MethodType)) else "opaque"
    return BoxPicture(role, {"stream": "stream", "eager": "host"}.get(o.tier, ""))


# no rebuild: the function holds its own references, which no swap reaches
register_node_kind("opaque", reads=_opaque_reads, writes=_opaque_writes, lower_cpu=lambda o: o.fn,
                   reference=lambda o, interpreter: o.fn(),
                   lower_gpu=_opaque_gpu, label=_opaque_label, picture=_opaque_picture)


def capture_stream() -> int | None:
    """The CUDA stream eagle captures a device ``opaque`` function on, while it does (else None):
    for a library eagle does not make current itself (it does so for CuPy and torch).

    >>> eagle.graph.capture_stream() is None      # not inside a capture
    True
    """
    from eagle._gpu_program import capturing

    return capturing.get()

# ---------------------------------------------------------------------- child


@dataclass(frozen=True)
class Child:
    graph: Any  # torch.cuda.CUDAGraph, warp.Graph or a CUgraph handle
    reads: Mapping[str, Any]
    writes: Mapping[str, Any]


def child(owner: Any, reads: Mapping[str, Any] | None = None,
          writes: Mapping[str, Any] | None = None) -> Node:
    """A CUDA graph made elsewhere, run as a child node: a ``torch.cuda.CUDAGraph`` captured with
    ``keep_graph=True``, a ``warp.Graph``, or a CUgraph handle.  Declare the planes it touches.

    The graph is cloned when eagle's graph is built; it runs on the GPU only (on the CPU, call the
    model in an :func:`opaque`: a CPU build refuses a child, saying so).  eagle keeps
    ``owner`` alive and refuses a launch after ``owner.reset()`` or a re-capture (the owner then
    holds another graph, or none): rebuild the eagle graph then.  A bare handle has no owner to
    ask; the clone is eagle's own.

    >>> node = eagle.graph.child(0x7F00, reads={"x": np.zeros(4)})    # a CUgraph handle, here
    >>> node.kind, [(name, role) for name, _, role in node.planes()]
    ('child', [('x', 'read')])
    """
    return recorded(Node("child", Child(owner, _named(reads or {}, "eagle.graph.child", False),
                                        _named(writes or {}, "eagle.graph.child", True))))


def _child_gpu(c: Child) -> GpuItems:
    planes = [a for a in (*c.reads.values(), *c.writes.values()) if is_plane(a)]
    owned = not isinstance(c.graph, (int, np.integer))  # a torch or Warp graph: asked at each launch
    current = (lambda: _cuda.graph_handle(c.graph)) if owned else None
    return GpuItems(lambda gpu: gpu.child(_cuda.graph_handle(c.graph), touches=planes, current=current))


register_node_kind("child", reads=lambda c: _opaque_reads(c), writes=lambda c: _opaque_writes(c),
                   lower_gpu=_child_gpu, picture=lambda c: BoxPicture("opaque", "child"),
                   cpu_refusal="a graph your framework captured runs on the GPU only: on the CPU, call the "
                               "model in an opaque, eagle.graph.opaque(lambda: ..., reads=..., writes=...), "
                               "with the planes this child declares")

# --------------------------------------------------------------------- reduce

REDUCE_OPS = ("sum", "max", "all")


@dataclass(frozen=True)
class Reduce:
    x: np.ndarray
    out: np.ndarray
    op: str


def reduce(x: Any, out: Any, op: str = "sum") -> Node:
    """``out[0] = op(x)`` over a 1-D plane; a float sum adds in eagle's one fixed order.

    :param op: ``"sum"``, ``"max"`` or ``"all"``.  Over no samples ``out[0]`` is the identity:
        0, the lowest value of the dtype (``-inf`` for floats), or True.

    >>> x, total, top = np.arange(5.0), np.zeros(1), np.zeros(1)
    >>> g = eagle.Graph().add_node(eagle.reduce(x, total)).add_node(eagle.reduce(x, top, op="max"))
    >>> g = g.build().launch()
    >>> total, top
    (array([10.]), array([4.]))
    """
    if op not in REDUCE_OPS:
        raise EagleValueError(f"eagle.reduce: op must be one of {REDUCE_OPS}, got {op!r}")
    x, out = as_plane(x, "eagle.reduce", "x"), as_plane(out, "eagle.reduce", "out", writes=True)
    if np.ndim(x) != 1 or np.size(out) != 1:
        raise EagleValueError(f"eagle.reduce: x must be a 1-D plane and out one element; got shapes "
                         f"{np.shape(x)} and {np.shape(out)}")
    dtype, out_dtype = plane_dtype(x), plane_dtype(out)
    if not _gpu_kernels.reducible(dtype):
        raise EagleTypeError(f"eagle.reduce: x is {dtype}; eagle reduces float64, float32, int64, "
                        "int32, uint64, uint32, uint8 and bool planes: pass x.astype(np.float32), say")
    contiguous = _cuda.contiguous(x)
    if not contiguous or dtype != out_dtype:
        raise EagleValueError(f"eagle.reduce: x must be contiguous and out of its dtype; got a "
                         f"{'contiguous' if contiguous else 'strided'} {dtype} plane and a "
                         f"{out_dtype} out: pass np.ascontiguousarray(x) and an out of dtype {dtype}")
    return recorded(Node("reduce", Reduce(x, out, op)))


def _emit_reduce(r: Reduce, target: Target) -> None:
    target.reduce(r.x, r.out, r.op)


def _reference_reduce(r: Reduce, interpreter: Any) -> None:
    r.out.reshape(-1)[0] = fixed_order(r.op, r.x[:interpreter.samples(r.x.size)])


register_node_kind("reduce", reads=lambda r: [("x", r.x, "read")], writes=lambda r: [("out", r.out, "write")],
                   lower=_emit_reduce, reference=_reference_reduce,
                   rebuild=lambda r, swap: Reduce(swap(r.x), swap(r.out), r.op),
                   flow=lambda r: ReduceFlow(r.x, r.out, r.op))

# ----------------------------------------------------------------------- copy


@dataclass(frozen=True)
class Copy:
    src: Any
    dst: Any


def copy(src: Any, *, into: Any) -> Node:
    """Copy ``src`` into ``into``; the direction follows from where each lives.

    ``copy(x, into=x)`` is a node that does nothing.

    >>> x, saved = np.arange(3.0), np.zeros(3)
    >>> g = eagle.Graph().add_node(eagle.copy(x, into=saved), name="save").build().launch()
    >>> saved
    array([0., 1., 2.])
    """
    same = src is into
    src, into = as_plane(src, "eagle.copy", "src"), as_plane(into, "eagle.copy", "into", writes=not same)
    if same:
        into = src  # still the one plane: a node that does nothing
    if np.shape(src) != np.shape(into) or plane_dtype(src) != plane_dtype(into):
        raise EagleValueError(f"eagle.copy: src and into must have one shape and dtype; got "
                         f"{np.shape(src)} {plane_dtype(src)} and {np.shape(into)} {plane_dtype(into)}")
    return recorded(Node("copy", Copy(src, into)))


def _copy_planes(c: Copy, reading: bool) -> list[PlaneTuple]:
    if c.src is c.dst:
        return []  # nothing moves, nothing to order
    return [("src", c.src, "read")] if reading else [("into", c.dst, "write")]


def _emit_copy(c: Copy, target: Target) -> None:
    target.copy(c.src, c.dst)


register_node_kind("copy", reads=lambda c: _copy_planes(c, True), writes=lambda c: _copy_planes(c, False),
                   lower=_emit_copy,
                   reference=lambda c, interpreter: None if c.src is c.dst else np.copyto(c.dst, c.src),
                   both_sides=True, rebuild=lambda c, swap: Copy(swap(c.src), swap(c.dst)),
                   flow=lambda c: CopyFlow(c.src, c.dst))


def pinned(shape: int | tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    """A zeroed NumPy array, page-locked where a CUDA driver is present.

    The GPU copies to and from page-locked memory by DMA; without a GPU an
    ordinary array does the same job.  The memory is freed with the array.

    >>> eagle.pinned((2, 3), np.float32)
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    if not _cuda.has_driver():
        return np.zeros(shape, dtype)
    return _cuda.pinned_array(shape, dtype)


# --------------------------------------------------------------- conditionals


@dataclass(frozen=True)
class SkipGuard:
    """When a conditional skips its step: read from a one-cell uint32 plane at every replay.

    >>> flag = np.zeros(1, np.uint32)
    >>> guard = eagle.SkipGuard.nonzero(flag)       # skip while flag[0] != 0
    >>> guard.cell is flag
    True
    """

    cell: np.ndarray

    @classmethod
    def nonzero(cls, flag: np.ndarray) -> SkipGuard:
        """Skip while ``flag[0] != 0``."""
        return cls(_cell(flag, "eagle.SkipGuard.nonzero"))



def _cell(flag: Any, api: str) -> Any:
    if is_plane(flag):  # a one-cell tensor too: the array over its memory
        flag = as_plane(flag, api, "the guard")
    if not is_guard_cell(flag):
        raise EagleTypeError(f"{api}: a guard is a one-cell uint32 array, e.g. np.zeros(1, np.uint32); "
                        f"got {getattr(flag, 'dtype', type(flag).__name__)} of shape {np.shape(flag)}")
    return flag


@dataclass
class Conditional:
    """A step run under a guard: skipped, or repeated while the guard holds."""

    step: Node
    cell: np.ndarray
    label: str  # "skip if guard" or "repeat ≤ N"
    max_iters: int | None = None  # None: skippable (skip while the cell is non-zero); else repeat_while


def _step_node(step: Any, api: str) -> Node:
    if isinstance(step, tuple):
        raise EagleTypeError(f"{api}: a conditional holds one step, not a tuple of parts; "
                        "make one opaque node (or one plan) that runs them in order")
    if isinstance(step, Node):
        if step.kind in ("skippable", "repeat_while"):
            raise EagleTypeError(f"{api}: a conditional nested in a conditional is refused for now; "
                            "put the inner guard's check inside the step")
        return withdrawn(step)  # made while recording, it runs as this conditional's step only
    bound = getattr(step, "__self__", None)
    if isinstance(bound, BoundPlan) and getattr(step, "__name__", "") == "launch":
        return Node("plan", bound)  # bound_plan.launch: its planes come from the plan
    if callable(step):
        return withdrawn(opaque(step))  # no declared planes: only the guard orders it
    raise EagleTypeError(f"{api}: step must be a node, bound_plan.launch or a zero-argument callable, "
                    f"got {type(step).__name__}")


def skippable(step: Any, guard: SkipGuard) -> Node:
    """Run ``step`` at each replay unless ``guard`` says skip (read on the device side, per replay).

    >>> count, skip = np.zeros(1), np.zeros(1, np.uint32)
    >>> step = eagle.opaque(lambda: np.add(count, 1.0, out=count), writes={"count": count})
    >>> g = eagle.Graph().add_node(eagle.skippable(step, eagle.SkipGuard.nonzero(skip))).build()
    >>> g = g.launch()
    >>> skip[0] = 1
    >>> g = g.launch()                               # skipped
    >>> count
    array([1.])
    """
    if not isinstance(guard, SkipGuard):
        raise EagleTypeError("eagle.skippable: guard must be an eagle.SkipGuard, e.g. "
                             "SkipGuard.nonzero(flag)")
    return recorded(Node("skippable", Conditional(_step_node(step, "eagle.skippable"), guard.cell,
                                                  "skip if guard")))


def repeat_while(step: Any, guard: SkipGuard | np.ndarray, max_iters: int) -> Node:
    """Run ``step`` while the guard's cell is non-zero, at most ``max_iters`` turns (checked before each).

    >>> left = np.array([3], np.uint32)
    >>> step = eagle.opaque(lambda: np.subtract(left, 1, out=left), reads={"n": left}, writes={"n": left})
    >>> g = eagle.Graph().add_node(eagle.repeat_while(step, left, max_iters=10)).build().launch()
    >>> left
    array([0], dtype=uint32)
    """
    cell = guard.cell if isinstance(guard, SkipGuard) else _cell(guard, "eagle.repeat_while")
    if not isinstance(max_iters, int) or max_iters < 1:
        raise EagleValueError(f"eagle.repeat_while: max_iters must be a positive int, got {max_iters!r}")
    return recorded(Node("repeat_while", Conditional(_step_node(step, "eagle.repeat_while"), cell,
                                                     f"repeat ≤ {max_iters}", max_iters)))


def _conditional_reads(c: Conditional) -> list[PlaneTuple]:
    return [("guard", c.cell, "read"), *[t for t in c.step.planes() if t[2] == "read"]]


def _conditional_writes(c: Conditional) -> list[PlaneTuple]:
    return [t for t in c.step.planes() if t[2] != "read"]


def _emit_conditional(c: Conditional, target: Target) -> None:
    body = target.body().node(c.step)
    if c.max_iters is None:
        target.if_(c.cell, None, body)  # skipped while the cell is non-zero: the else-arm
    else:
        target.loop(c.cell, body, "while", c.max_iters)


def _reference_conditional(c: Conditional, interpreter: Any) -> None:
    if c.max_iters is None:
        if not c.cell.reshape(-1)[0]:  # skipped while the cell is non-zero
            interpreter.node(c.step)
        return
    turns = 0
    while turns < c.max_iters and c.cell.reshape(-1)[0]:
        interpreter.node(c.step)
        turns += 1


def _conditional_picture(c: Conditional) -> FramePicture:
    """A frame around the step's own box (the step is not numbered apart from the conditional)."""
    step = c.step.picture()
    return FramePicture(c.label, "skip" if c.max_iters is None else "repeat",
                        around=step if isinstance(step, BoxPicture) else BoxPicture())


def _conditional_flow(c: Conditional) -> ChoiceFlow | LoopFlow:
    if c.max_iters is None:  # skipped while the cell is non-zero: the step is the else arm
        return ChoiceFlow(c.cell, None, (Body([]), Body([c.step])), lends_label=True)
    return LoopFlow(c.cell, "while", c.max_iters, Body([c.step]), lends_label=True)


def _rebuild_conditional(c: Conditional, swap: Swap) -> Conditional:
    return dataclasses.replace(c, step=swap.node(c.step), cell=swap(c.cell))


for _name in ("skippable", "repeat_while"):
    register_node_kind(_name, reads=_conditional_reads, writes=_conditional_writes,
                       reference=_reference_conditional,
                       lower=_emit_conditional,
                       both_sides=True, one_graph=("conditional", "eagle.skippable / eagle.repeat_while"),
                       bodies=lambda c: [Body([c.step])],
                       label=lambda c: c.step.default_label(), picture=_conditional_picture,
                       flow=_conditional_flow, rebuild=_rebuild_conditional)
