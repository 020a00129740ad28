"""Stepping loops: ``eagle.until_done``, a batch run step by step until every sample is done.

One node holds the step (plans, captured opaque nodes, child graphs, in list order) and lowers
to one device loop: libeagle's loop item on the CPU, a WHILE conditional node on the GPU.  The
stop test never leaves the device: after each step a fixed-order ``all`` reduction of the
``terminated`` plane writes a cell, and a one-thread kernel counts the step and sets the loop's
condition from that cell and the cap (a cell the host writes between runs, so
``runner.run(max_steps=k)`` needs no new lowering).

A finished sample is never written.  Plans are masked by eagle: a run of consecutive plans is
framed by a mark (``was = terminated != 0``, taken before the run), a save of each plane the run
writes, and a restore of the marked samples after it, so a finished sample keeps its bytes
exactly whatever the plans compute.  The frame works for every plan, native C or hawk, leaves the
run free to fuse (on the host the frame and the run go block by block, with no barrier between
them), and keeps hawk's code generation untouched; its cost, two passes over the written planes
per step, is what a store guard in the kernel would remove; ``eagle.simulate``'s compaction
(:mod:`eagle._compaction`) shrinks the loop to the live samples instead.
An opaque or child node is handed ``terminated`` among its planes and leaves the finished samples
alone itself.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from eagle import _cuda
from eagle._arrays import on_device
from eagle._core import check, lib
from eagle._edges import is_plane
from eagle._errors import EagleTypeError, EagleValueError
from eagle._foreign import as_plane
from eagle._graph import Graph
from eagle._kinds import GpuItems, HostItems, Node, PlaneTuple, Swap, register_node_kind
from eagle._nodes import Opaque
from eagle._pictures import FramePicture
from eagle._recording import recorded
from eagle._regions import Body
from eagle._views import overlap, plane_dtype
from eagle.native import Library, compile_library
from eagle.plan import BoundPlan

API = "eagle.until_done"

#: The dtypes of a ``terminated`` plane: a sample is finished where its value is not 0.
TERMINATED_DTYPES = tuple(map(np.dtype, (np.bool_, np.uint8, np.int32, np.uint32)))

_C = r"""
#include <string.h>
#include "eagle/eagle.h"

static int eg_nonzero(const unsigned char *p, int64_t size)
{
    unsigned char any = 0;
    for (int64_t b = 0; b < size; ++b)
        any |= p[b];
    return any != 0;
}

/* was[i] = terminated[i] != 0 (items of `size` bytes: 1 or 4). */
void eg_until_mark(int64_t begin, int64_t end, const eagle_arg *a)
{
    unsigned char *was = a[1].ptr;
    if (a[2].i64 == 4) {
        const uint32_t *t = a[0].ptr;
        for (int64_t i = begin; i < end; ++i)
            was[i] = t[i] != 0;
    } else {
        const uint8_t *t = a[0].ptr;
        for (int64_t i = begin; i < end; ++i)
            was[i] = t[i] != 0;
    }
}

/* Each sample's value in each of the `rows` rows of a (rows, n) plane of `size`-byte items, copied
 * from src to dst where was[i] (dst kept elsewhere), or everywhere unless `masked`: a select over
 * the items' bits, which the compiler vectorizes. */
#define EG_KEEP(T)                                                                                 \
    for (int64_t r = 0; r < rows; ++r) {                                                           \
        const T *s = (const T *)src + r * n;                                                       \
        T *d = (T *)dst + r * n;                                                                   \
        if (!was)                                                                                  \
            memcpy(d + begin, s + begin, (size_t)(end - begin) * sizeof(T));                       \
        else                                                                                       \
            for (int64_t i = begin; i < end; ++i)                                                  \
                d[i] = was[i] ? s[i] : d[i];                                                       \
    }

void eg_until_keep(int64_t begin, int64_t end, const eagle_arg *a)
{
    const unsigned char *was = a[6].i64 ? a[0].ptr : NULL;
    const char *src = a[1].ptr;
    char *dst = a[2].ptr;
    const int64_t rows = a[3].i64, n = a[4].i64, size = a[5].i64;
    switch (size) {
    case 1:
        EG_KEEP(uint8_t)
        break;
    case 2:
        EG_KEEP(uint16_t)
        break;
    case 4:
        EG_KEEP(uint32_t)
        break;
    case 8:
        EG_KEEP(uint64_t)
        break;
    default:
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = begin; i < end; ++i)
                if (!was || was[i])
                    memcpy(dst + (r * n + i) * size, src + (r * n + i) * size, (size_t)size);
    }
}

/* turn 0: before the loop, steps = 0; else after a step, steps += 1.  Then go = the loop runs on:
 * not every sample is done (the all() cell `done`, `size` bytes) and steps < cap. */
void eg_until_turn(int64_t begin, int64_t end, const eagle_arg *a)
{
    (void)begin;
    (void)end;
    int64_t *steps = a[1].ptr;
    steps[0] = a[5].i64 ? steps[0] + 1 : 0;
    ((uint32_t *)a[3].ptr)[0] = !eg_nonzero(a[0].ptr, a[4].i64) && steps[0] < ((int64_t *)a[2].ptr)[0];
}
"""

_CUDA = r"""
__device__ static int eg_nonzero(const unsigned char *p, long long size)
{
    unsigned char any = 0;
    for (long long b = 0; b < size; ++b)
        any |= p[b];
    return any != 0;
}

extern "C" __global__ void eg_until_mark(const unsigned char *t, unsigned char *was, const long long size,
                                         const long long end)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < end;
         i += (long long)gridDim.x * blockDim.x)
        was[i] = (unsigned char)eg_nonzero(t + i * size, size);
}

extern "C" __global__ void eg_until_keep(const unsigned char *was, const char *src, char *dst,
                                         const long long rows, const long long n, const long long size,
                                         const long long end)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < end;
         i += (long long)gridDim.x * blockDim.x) {
        if (!was[i])
            continue;
        for (long long r = 0; r < rows; ++r)
            for (long long b = 0; b < size; ++b)
                dst[(r * n + i) * size + b] = src[(r * n + i) * size + b];
    }
}

extern "C" __global__ void eg_until_turn(const unsigned char *done, long long *steps, const long long *cap,
                                         unsigned int *go, const long long size, const long long turn)
{
    steps[0] = turn ? steps[0] + 1 : 0;
    go[0] = !eg_nonzero(done, size) && steps[0] < cap[0];
}
"""


@functools.cache
def _library() -> Library:
    return Library(compile_library(_C, name="eagle_until"))


class Steps(NamedTuple):
    """What :meth:`UntilDone.run` did: ``steps`` run by this call, ``live`` samples not finished
    after it (0: the loop is done; more: it stopped at ``max_steps``, and says so).

    >>> result = eagle.Steps(steps=16, live=3)
    >>> result.done, tuple(result)
    (False, (16, 3))
    """

    steps: int
    live: int

    @property
    def done(self) -> bool:
        """Every sample is finished."""
        return self.live == 0


@dataclass(frozen=True)
class _Cells:
    """The loop's own cells: ``go`` (the condition), ``done`` (the all() of terminated),
    ``steps`` (run by the last run), ``cap`` (the most steps a run takes), ``was`` (a run of
    plans' mark)."""

    go: Any
    done: Any
    steps: Any
    cap: Any
    was: Any


@dataclass(eq=False)
class Until:
    """The payload of an ``until_done`` node: its steps, its terminated plane, its cap."""

    body: Body  # the items, in list order
    terminated: Any
    max_steps: int
    #: the plane a run of plans' mark is written to, given by the caller (eagle.simulate's split
    #: dispatch groups read it as their skip plane: the samples the mask keeps); None: the loop's own
    marks: Any = None
    _cells: dict[Any, _Cells] = field(default_factory=dict, repr=False)

    @property
    def samples(self) -> int:
        return int(np.shape(self.terminated)[0])

    def cells(self, device: int | None) -> _Cells:
        """Cells for a run on the CPU (``device`` None) or on GPU ``device`` (pinned: the device
        writes them, the host reads ``steps`` and writes ``cap``), made once each."""
        found = self._cells.get(device)
        if found is None:
            dtype = plane_dtype(self.terminated)
            if device is None:
                host = [np.zeros(1, t) for t in (np.uint32, dtype, np.int64, np.int64)]
                was = np.zeros(self.samples, np.uint8) if self.marks is None else self.marks
            else:
                host = [_cuda.pinned_array((1,), t, device) for t in (np.uint32, dtype, np.int64, np.int64)]
                was = _cuda.DeviceArray(self.samples, np.uint8, device) if self.marks is None else self.marks
            found = self._cells[device] = _Cells(*host, was)
            found.cap[0] = self.max_steps
        return found

    @property
    def items(self) -> list[Node]:
        return list(self.body.nodes())

    def segments(self) -> list[list[Node]]:
        """The items in order, each run of consecutive plans as one segment (masked as one)."""
        out: list[list[Node]] = []
        for item in self.items:
            if item.kind == "plan" and out and out[-1][0].kind == "plan":
                out[-1].append(item)
            else:
                out.append([item])
        return out


def _written(plans: Sequence[Node]) -> list[Any]:
    """The planes a run of plans writes, each once."""
    seen: dict[int, Any] = {}
    for plan in plans:
        for _, array, role in plan.planes():
            if role != "read":
                seen.setdefault(id(array), array)
    return list(seen.values())


def _rows(array: Any, n: int) -> int:
    return int(np.prod(np.shape(array), dtype=np.int64)) // n


# ----------------------------------------------------------------------------- the constructor


def until_done(items: Sequence[Any], *, terminated: Any, max_steps: int) -> UntilDone:
    """Run ``items`` in list order once per step, over the whole batch, until every sample's
    ``terminated`` is set (not 0) or ``max_steps`` steps have run: one device loop.

    ``items`` are plans (a bound plan, a hawk ``kernel.plan(...)``), captured ``opaque`` nodes
    and ``child`` graphs.  A plan takes one step per launch and is masked by eagle: it never
    writes a finished sample (one finished before the plan runs), whatever it computes.  An
    opaque or child node must leave finished samples alone itself, so it declares ``terminated``
    among its planes (read it to know which).  ``terminated`` is a 1-D bool, uint8, int32 or
    uint32 plane, one value per sample, and some item writes it (else only ``max_steps`` could
    end the loop: that is ``Graph.launch(n)``).

    The result is a node (``g.add_node(runner)``: each launch of the graph runs the loop, at most
    ``max_steps`` steps) and runs on its own: ``runner.run(max_steps=k)`` runs at most ``k``
    steps and returns :class:`Steps`; call it again to go on.  A stream or host node cannot run
    inside the loop's one device graph: run it between ``runner.run`` calls, in your own loop.

    >>> x, terminated = np.array([5.0, 1.0, 3.0]), np.zeros(3, np.uint8)
    >>> def halve():
    ...     np.multiply(x, 0.5, out=x, where=terminated == 0)
    ...     terminated[:] = x < 1.0
    >>> step = eagle.opaque(halve, reads={"terminated": terminated},
    ...                     writes={"x": x, "terminated": terminated})
    >>> runner = eagle.until_done([step], terminated=terminated, max_steps=100)
    >>> runner.run(max_steps=2)           # two steps, and one sample still live
    Steps(steps=2, live=1)
    >>> runner.run()                      # on to the end
    Steps(steps=1, live=0)
    >>> x
    array([0.625, 0.5  , 0.75 ])
    """
    return recorded(loop(items, terminated=terminated, max_steps=max_steps))


def loop(items: Sequence[Any], *, terminated: Any, max_steps: int, marks: Any = None) -> UntilDone:
    """:func:`until_done`'s node, not handed to an active recording (``eagle.simulate`` runs it
    itself); ``marks``: a uint8 plane of one value per sample, on terminated's side, that each run
    of plans' mark is written to (see :class:`Until`)."""
    terminated = terminated_plane(terminated)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise EagleValueError(f"{API}: max_steps must be a positive int (the most steps one run takes), "
                         f"got {max_steps!r}")
    if isinstance(items, (Node, BoundPlan)) or not isinstance(items, Sequence) or not items:
        raise EagleTypeError(f"{API}: items is a non-empty list of the step's plans and nodes, run in list "
                        f"order, e.g. until_done([plan, node], ...); got {type(items).__name__}")
    nodes = [_item(item, k, terminated) for k, item in enumerate(items)]
    payload = Until(Body(nodes), terminated, int(max_steps), marks)
    _refuse_unwritten(payload)
    _refuse_whole_reads(payload)
    return UntilDone("until_done", payload)


def terminated_plane(plane: Any) -> Any:
    """``terminated`` as the loop holds it (a tensor as the array over its memory), checked."""
    if is_plane(plane):
        plane = as_plane(plane, API, "terminated")
    if not is_plane(plane) or len(np.shape(plane)) != 1 or np.shape(plane)[0] < 1:
        raise EagleValueError(f"{API}: terminated is a 1-D plane of one value per sample (np.zeros(n, "
                              "np.uint8)); "
                         f"got {type(plane).__name__} of shape {np.shape(plane) if is_plane(plane) else '?'}")
    dtype = plane_dtype(plane)
    if dtype not in TERMINATED_DTYPES or not _cuda.contiguous(plane):
        raise EagleTypeError(f"{API}: terminated must be a contiguous bool, uint8, int32 or uint32 plane (a "
                        f"sample is finished where it is not 0); got a {dtype} plane: pass "
                        "terminated.astype(np.uint8)")
    return plane


def _item(item: Any, k: int, terminated: Any) -> Node:
    """Item ``k`` as the node the loop runs, refused where the loop cannot keep its promise."""
    node = Node("plan", item) if isinstance(item, BoundPlan) else item
    if not isinstance(node, Node):
        raise EagleTypeError(f"{API}: item {k} is a {type(item).__name__}; an item is a plan "
                             "(plan.bind(...), "
                        "kernel.plan(...)), an eagle.opaque node or an eagle.graph.child node")
    label = f"item {k} ({node.default_label()!r})"
    n = int(np.shape(terminated)[0])
    if node.kind == "plan":
        _refuse_plan(node.payload, label, n)
        return node
    if node.kind not in ("opaque", "child"):
        raise EagleTypeError(f"{API}: {label} is a {node.kind!r} node; the loop runs plans, captured opaque "
                        "nodes and child graphs: put that work in an eagle.opaque(fn, reads=..., writes=...) "
                        "that leaves finished samples alone")
    if isinstance(node.payload, Opaque) and node.payload.tier != "capture":
        spelling = "stream=S" if node.payload.tier == "stream" else "eager=True"
        raise EagleValueError(f"{API}: {label} is opaque(fn, {spelling}), which runs on the host at every "
                         "launch and cannot run inside the loop's one device graph: call runner.run("
                         "max_steps=k), then your code, in your own loop")
    planes = node.planes()
    if any(role != "read" for *_, role in planes) and not any(a is terminated for _, a, _ in planes):
        raise EagleValueError(f"{API}: {label} writes planes but does not declare terminated: a node must "
                         "never write a finished sample, so it reads terminated to know which; add "
                         "reads={'terminated': terminated} and leave those samples alone")
    return node


def _refuse_plan(bound: BoundPlan, label: str, n: int) -> None:
    name = bound.plan.name
    if not bound.plan.own_writes:
        raise EagleValueError(f"{API}: {label}: plan {name!r} is not per-sample (it reduces across samples "
                              "or "
                         "writes other samples' cells: a Scatter, a one-cell output), so eagle cannot keep a "
                         "finished sample out of it: compute the reduction after runner.run, or mask it in "
                         "the kernel by reading terminated")
    for pname, array, role in bound.planes():
        if role != "read" and (not np.ndim(array) or np.shape(array)[-1] != n):
            raise EagleValueError(f"{API}: {label}: plan {name!r} writes plane {pname!r} of shape "
                             f"{tuple(np.shape(array))}, not one value per sample of terminated's {n}: a "
                             "plan in the loop is masked per sample (a finished sample is never written); "
                             "write per-sample planes in the loop and reduce them after runner.run")
    if bound.samples != n:
        raise EagleValueError(f"{API}: {label}: plan {name!r} runs over {bound.samples} samples and "
                              "terminated "
                         f"holds {n}: bind the plan over planes of {n} samples")


def _refuse_whole_reads(payload: Until) -> None:
    """A plan that reads a plane whole (a Table) must not read one the loop writes: it would see
    the values of finished samples that the mask is about to put back."""
    written = [(k, item, a) for k, item in enumerate(payload.items) for _, a, role in item.planes()
               if role != "read"]
    for j, item in enumerate(payload.items):
        if item.kind != "plan":
            continue
        names = {id(a): pname for pname, a, _ in item.payload.planes()}
        whole = item.payload.whole_reads()
        if whole is None:  # unknown: every plane it reads
            whole = [a for _, a, role in item.payload.planes() if role == "read"]
        for plane in whole:
            for k, writer, a in written:
                if overlap(a, plane):
                    raise EagleValueError(f"{API}: item {j} ({item.default_label()!r}): plan "
                                     f"{item.payload.plan.name!r} reads plane {names.get(id(plane), '?')!r} "
                                     f"whole (a Table), which item {k} ({writer.default_label()!r}) writes: "
                                     "it would read the values of finished samples that the mask puts back "
                                     "after the step; read a Table no item of the loop writes")


def _refuse_unwritten(payload: Until) -> None:
    for item in payload.items:
        if any(a is payload.terminated and role != "read" for _, a, role in item.planes()):
            return
    raise EagleValueError(f"{API}: no item writes terminated, so only max_steps could end the loop: write it "
                     "in a step (a plan's Mutable, an opaque node's writes=...), or run a fixed number "
                     "of steps with Graph.launch(n)")


# ----------------------------------------------------------------------------- the runner


class UntilDone(Node):
    """An ``until_done`` node, which also runs on its own (:meth:`run`): what
    :func:`until_done` returns.

    >>> count, done = np.zeros(2), np.zeros(2, np.uint8)
    >>> def tick():
    ...     count[done == 0] += 1.0
    ...     done[:] = count >= [2.0, 5.0]
    >>> runner = eagle.until_done([eagle.opaque(tick, reads={"done": done},
    ...                                         writes={"count": count, "done": done})],
    ...                           terminated=done, max_steps=10)
    >>> g = eagle.Graph().add_node(runner, name="count").build().launch()   # the loop, as a node
    >>> count, runner.run()                    # nothing left for a run to do
    (array([2., 5.]), Steps(steps=0, live=0))
    """

    __slots__ = ("_runner",)

    def run(self, max_steps: int | None = None) -> Steps:
        """Run at most ``max_steps`` steps (default: the node's own ``max_steps``), from where the
        last run stopped, and return what ran and how many samples are still live.

        The loop is built once, at the first call, on the side where ``terminated`` lives; a
        later call only sets the cap.
        """
        until: Until = self.payload
        cap = until.max_steps if max_steps is None else max_steps
        if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 1:
            raise EagleValueError(f"{API}: runner.run: max_steps must be a positive int, got {max_steps!r}")
        graph = self._own_graph()
        cells = until.cells(_device(until.terminated))
        cells.cap[0] = cap
        try:
            graph.launch()
        finally:
            cells.cap[0] = until.max_steps
        logical = until.samples if graph._logical is None else min(graph._logical, until.samples)
        return Steps(int(cells.steps[0]), _live(until.terminated, logical))

    def set_logical_size(self, n: int) -> UntilDone:
        """The next runs process only the first ``n`` samples (and count only those as live), with
        no new lowering: on a GPU the sizes are patched into the instantiated graph.

        >>> x, done = np.zeros(4), np.zeros(4, np.uint8)
        >>> def tick():
        ...     x[:2][done[:2] == 0] += 1.0          # a node over the first two samples
        ...     done[:2] = x[:2] >= 3.0
        >>> runner = eagle.until_done([eagle.opaque(tick, reads={"done": done},
        ...                                         writes={"x": x, "done": done})],
        ...                           terminated=done, max_steps=10).set_logical_size(2)
        >>> runner.run(), x
        (Steps(steps=3, live=0), array([3., 3., 0., 0.]))
        """
        self._own_graph().set_logical_size(n)
        return self

    def _own_graph(self) -> Graph:
        """The runner's own one-node graph, built at the first use."""
        graph = getattr(self, "_runner", None)
        if graph is None:
            graph = Graph().add_node(Node("until_done", self.payload), name="until done").build()
            self._runner = graph
        return graph


def _device(plane: Any) -> int | None:
    return _cuda.device_of(plane) if on_device(plane) else None


def host_copy(plane: Any) -> np.ndarray:
    """A device plane's values, copied to the host (between runs)."""
    host = np.empty(np.shape(plane), plane_dtype(plane))
    check(lib.eagle_cuda_memcpy(_cuda.device_of(plane), host.ctypes.data, _cuda.address(plane), host.nbytes),
          f"{API}: reading a plane")
    return host


def host_values(plane: Any) -> np.ndarray:
    """A plane's values on the host: a NumPy plane itself, a device plane's copied."""
    return host_copy(plane) if on_device(plane) else np.asarray(plane)


def _live(terminated: Any, logical: int) -> int:
    """Samples among the first ``logical`` whose terminated is 0, read on the host (between runs)."""
    return int(np.count_nonzero(host_values(terminated)[:logical] == 0))


# ----------------------------------------------------------------------------- lowering


def _emit(until: Until, target: Any, kernels: _Kernels) -> None:
    """The loop on ``target``: the first test, then WHILE go: [the step, the test]."""
    cells = kernels.cells
    target.reduce(until.terminated, cells.done, "all")
    kernels.turn(target, first=True)
    body = target.body()
    for segment in until.segments():
        if segment[0].kind != "plan":
            body.node(segment[0])
            continue
        planes = _written(segment)
        saved = [kernels.like(a) for a in planes]
        kernels.mark(body)
        for plane, copy in zip(planes, saved, strict=True):
            kernels.keep(body, plane, copy, masked=False)  # every sample: a copy, cheaper than a select
        body.nodes(segment)  # a run of hawk kernels fuses, inside the frame
        for plane, copy in zip(planes, saved, strict=True):
            kernels.keep(body, copy, plane)
    body.reduce(until.terminated, cells.done, "all")
    kernels.turn(body, first=False)
    target.loop(cells.go, body, "while", -1)


@dataclass
class _Kernels:
    """The loop's own kernels on one target: the CPU's (:class:`_HostKernels`) or a GPU's."""

    until: Until
    cells: _Cells

    @property
    def size(self) -> int:
        return plane_dtype(self.until.terminated).itemsize


class _HostKernels(_Kernels):
    def like(self, plane: np.ndarray) -> np.ndarray:
        return np.empty_like(plane)

    def mark(self, program: Any) -> None:
        t, was = self.until.terminated, self.cells.was
        program.kernel(_library().kernel("eg_until_mark"), [t, was, self.size], self.until.samples,
                       accesses=[(t, "read"), (was, "write")])

    def keep(self, program: Any, src: Any, dst: Any, masked: bool = True) -> None:
        n = self.until.samples
        was = self.cells.was
        program.kernel(_library().kernel("eg_until_keep"),
                       [was, src, dst, _rows(src, n), n, plane_dtype(src).itemsize, int(masked)], n,
                       accesses=[*([(was, "read")] if masked else []), (src, "read"),
                                 (dst, "readwrite" if masked else "write")])

    def turn(self, program: Any, first: bool) -> None:
        c = self.cells
        program.kernel(_library().kernel("eg_until_turn"), [c.done, c.steps, c.cap, c.go, self.size,
                                                            int(not first)], 1, per_sample=False,
                       accesses=[(c.done, "read"), (c.cap, "read"), (c.steps, "readwrite"), (c.go, "write")])


class _GpuKernels(_Kernels):
    def _function(self, gpu: Any, name: str) -> Any:
        return _cuda.module(_CUDA, "eagle_until", gpu.device).function(name)

    def like(self, plane: Any) -> Any:
        return _cuda.empty_like_device(plane, tuple(np.shape(plane)), plane_dtype(plane))

    def mark(self, gpu: Any) -> None:
        gpu.samples_kernel(self._function(gpu, "eg_until_mark"),
                           [self.until.terminated, self.cells.was, np.int64(self.size)], self.until.samples)

    def keep(self, gpu: Any, src: Any, dst: Any, masked: bool = True) -> None:
        """``masked`` or not, the device copies the marked samples only (the others' saved
        values are never read)."""
        n = self.until.samples
        gpu.samples_kernel(self._function(gpu, "eg_until_keep"),
                           [self.cells.was, src, dst, *map(np.int64, (_rows(src, n), n,
                                                                        plane_dtype(src).itemsize))], n)

    def turn(self, gpu: Any, first: bool) -> None:
        c = self.cells
        args = [c.done, c.steps, c.cap, c.go, np.int64(self.size), np.int64(not first)]
        gpu.kernel(self._function(gpu, "eg_until_turn"), args, (1, 1, 1), (1, 1, 1))


def _lower_cpu(until: Until) -> HostItems:
    return HostItems(lambda program: _emit(until, program, _HostKernels(until, until.cells(None))),
                     native=False)


def _lower_gpu(until: Until) -> GpuItems:
    def emit(gpu: Any) -> None:
        _emit(until, gpu, _GpuKernels(until, until.cells(gpu.device)))
    return GpuItems(emit)


# ----------------------------------------------------------------------------- meaning


def _reference(until: Until, interpreter: Any) -> None:
    """The loop as a Python loop over the items, a run of plans framed by its mask."""
    m = interpreter.samples(until.samples)
    cells = until.cells(_device(until.terminated))

    def live() -> bool:
        return bool(np.any(until.terminated[:m] == 0))

    steps = 0
    while live() and steps < int(cells.cap[0]):
        for segment in until.segments():
            if segment[0].kind != "plan":
                interpreter.node(segment[0])
                continue
            was = until.terminated[:m] != 0
            if until.marks is not None:
                until.marks[:m] = was
            planes = _written(segment)
            saved = [a[..., :m][..., was].copy() for a in planes]
            for plan in segment:
                interpreter.node(plan)
            for plane, kept in zip(planes, saved, strict=True):
                plane[..., :m][..., was] = kept
        steps += 1
    cells.steps[0] = steps


def _reads(until: Until) -> list[PlaneTuple]:
    inner = [t for item in until.items for t in item.planes() if t[2] == "read"]
    return [("terminated", until.terminated, "read"), *inner]


def _writes(until: Until) -> list[PlaneTuple]:
    return [t for item in until.items for t in item.planes() if t[2] != "read"]


def _rebuild(until: Until, swap: Swap) -> Until:
    return dataclasses.replace(until, body=swap.body(until.body), terminated=swap(until.terminated),
                               _cells={})


register_node_kind("until_done", reads=_reads, writes=_writes, lower_cpu=_lower_cpu, lower_gpu=_lower_gpu,
                   reference=_reference, bodies=lambda u: [u.body],
                   label=lambda u: "until done",
                   picture=lambda u: FramePicture(f"until terminated · ≤ {u.max_steps}", "loop", (u.body,)),
                   rebuild=_rebuild, samples=lambda u: u.samples)
