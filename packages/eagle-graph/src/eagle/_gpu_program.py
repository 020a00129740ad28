"""The Python face of a libeagle GPU graph: build it, instantiate it once, replay it.

A GpuProgram has the shape of a host Program (stages of branches of items,
conditionals over sub-programs) and the same duties: it keeps alive what
libeagle points at, keeps a host node's exception for the call that waits,
and patches launches for a new logical size.  Its items are CUDA graph
nodes: kernels, copies, host functions, and conditional nodes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle import _cuda, _gpu_kernels
from eagle._core import BLOCK, CoreError, check, ffi, lib
from eagle._driver_thread import no_cuda_calls, release, release_pending
from eagle._errors import EagleMemoryError, EagleRuntimeError, EagleValueError, forked_reductions
from eagle._fusion import emitter, groups
from eagle._kinds import HostItems, Node
from eagle._lower_cpu import emit
from eagle._lower_gpu import gpu_lowered
from eagle._program import LOOPS, CallbackErrors, ErrorBox, Program, _trampoline
from eagle._slots import slots
from eagle._views import plane_dtype

#: The stream a captured function is being captured on (eagle.graph.capture_stream()).
capturing: ContextVar[int | None] = ContextVar("eagle_capture_stream", default=None)


@ffi.callback("int(void *, uint64_t)")
def _capture_trampoline(ctx: Any, stream: int) -> int:
    # Runs once, inside eagle_gpu_instantiate: keep an exception for finalize to raise.
    box, fn, allocations, label = ffi.from_handle(ctx)
    box.capture = label
    token = capturing.set(int(stream))
    try:
        with no_cuda_calls():
            with _cuda.capturing_on(int(stream), allocations):
                fn()
    except BaseException as exc:  # noqa: BLE001 -- re-raised by GpuProgram.finalize
        box.keep(exc)
        return 1
    finally:
        capturing.reset(token)
    return 0


#: Threads per block of a per-sample kernel, and the most blocks one launch
#: gets (a grid-stride loop covers the rest): libeagle's, whose samples kernels
#: (eagle_gpu_add_samples_kernel, the C++ face's) are sized by the same rule.
THREADS = int(lib.EAGLE_GPU_THREADS)
MAX_BLOCKS = int(lib.EAGLE_GPU_MAX_BLOCKS)

#: A logical size above every plane's: the full size.
_BIG = 1 << 62

#: One kernel parameter: a device array (its address), or a NumPy scalar of the parameter's C type.
Arg = Any


def grid_for(n: int, threads: int = THREADS) -> tuple[int, int, int]:
    """The grid of a grid-stride kernel over ``n`` samples (at least one block)."""
    return (min(max(-(-n // threads), 1), MAX_BLOCKS), 1, 1)


#: ``sized(base, n) -> (args, grid)``: a kernel's arguments and grid at logical size ``n``, from
#: its base arguments (what ``bind`` re-points).
Sized = Callable[[Sequence[Arg], int], tuple[Sequence[Arg], tuple[int, int, int]]]


@dataclass
class _Kernel:
    """A kernel node as it was added: what set_logical_size and bind patch."""

    node: int
    base: list[Arg]
    sized: Sized | None


class GpuProgram(CallbackErrors):
    """A libeagle GPU graph under construction, then instantiated and replayable: the GPU's
    lowering target (:class:`eagle._target.Target`)."""

    #: An instantiated CUDA graph patches its kernels and copies in place.
    patches = True

    def __init__(self, device: int = 0) -> None:
        _cuda.open_device(device, "eagle.Graph.build")  # no driver: refused before anything is built
        release_pending()
        self.device = device
        self._ptr = ffi.gc(lib.eagle_gpu_graph_new(), _free_graph)
        if self._ptr == ffi.NULL:
            raise EagleMemoryError("eagle.GpuProgram: out of memory")
        self._keep: list[Any] = []
        self._box = ErrorBox()
        self._subs: list[GpuProgram] = []  # adopted bodies: their memory is ours (no back-reference)
        self._hosts: list[Any] = []  # the host programs of host nodes (logical size, reductions)
        self._kernels: list[_Kernel] = []
        self._copies: list[list[Any]] = []  # [node, src, dst] of each copy node
        self._fixed: set[int] = set()  # ids of arrays that nodes other than kernels hold
        #: (label, CUgraph cloned, its owner's CUgraph now) of each child node, sub-programs' too
        self._owners: list[tuple[str, int, Callable[[], int]]] = []
        self._logical: int | None = None
        self._last = -1  # the id of the last item added
        self._signals: dict[int, int] = {}  # id of what a signal stands for -> its item
        #: Whether items go into a conditional's body (host nodes are refused there).
        self.in_body = False
        #: The node whose items are being added (the lowering sets it), for messages.
        self.label = "step"
        #: Cross-sample reductions, sub-programs included.
        self.reductions = 0
        #: What a body leaves for after its outermost conditional node (:meth:`checked`).
        self._after: list[Callable[[GpuProgram], object]] = []
        #: A graph over a communicator: ``cut(part, call)`` takes the part a reduction ends and
        #: the host call that combines the ranks' partials after it (:meth:`_reduce_across_ranks`).
        self.cut: Callable[[GpuProgram, Callable[[], object]], None] | None = None
        #: Set while a fork's branches are added: a reduction there cannot cut the graph.
        self.forked = False
        self._collectives: list[Program] = []  # the host programs combining the ranks' partials

    @property
    def empty(self) -> bool:
        """Nothing was added (an eager node cut the graph at its start or end)."""
        return self._last < 0

    # --- structure -----------------------------------------------------------
    def stage(self, schedule: str = "work_share") -> GpuProgram:
        """Open the next stage; its branches are branches of the CUDA graph, whatever
        ``schedule`` a host would give them."""
        check(lib.eagle_gpu_stage(self._ptr), "GpuProgram.stage")
        return self

    def branch(self) -> GpuProgram:
        check(lib.eagle_gpu_branch(self._ptr), "GpuProgram.branch")
        return self

    def body(self) -> GpuProgram:
        """A new program for the body of a conditional of this one."""
        sub = GpuProgram(self.device).stage()
        sub.in_body = True
        sub._box = self._box  # one box: a capture in a body is named by the build of the top graph
        sub.cut = self.cut  # what a reduction there is refused by
        return sub

    def node(self, node: Node, label: str | None = None) -> GpuProgram:
        """Append the work of ``node`` inside a construct (where the graph cannot be cut); ``label``:
        its name in messages, by default its own (``node.default_label()``)."""
        label = node.default_label() if label is None else label
        items = gpu_lowered(node, label)
        if items.emit is None:
            tier = "eager=True" if items.stream is None else "stream=S"
            raise EagleValueError(f"eagle.Graph.build: node {label!r} runs eagerly (opaque(..., {tier}): on "
                                  "the "
                             "host at every launch) inside a device if or loop body; the graph is cut "
                             "around such a node, which a body cannot be: move it out of the body")
        self.label = label
        items.emit(self)
        return self

    def nodes(self, nodes: Sequence[Node]) -> GpuProgram:
        """Append the work of ``nodes`` in order inside a construct, a fused run of them as one kernel."""
        lowerings = [gpu_lowered(node, node.default_label()) for node in nodes]
        for group in groups(range(len(nodes)), lowerings):
            emitter(group, lowerings, nodes, lambda i, target: target.node(nodes[i]))(self)
        return self

    # --- items ---------------------------------------------------------------
    def kernel(self, function: Any, args: Sequence[Arg], grid: Sequence[int],
               block: Sequence[int] = (THREADS, 1, 1), shared: int = 0, sized: Sized | None = None) -> int:
        """Append a kernel node; with ``sized``, ``args`` are its base arguments and ``sized(args,
        n)`` gives its arguments and grid at logical size ``n`` (``grid`` is then unused).

        Returns its node id.
        """
        launch_args, launch_grid = sized(args, _BIG) if sized is not None else (args, grid)
        grid3, block3 = ffi.new("uint32_t[3]", list(launch_grid)), ffi.new("uint32_t[3]", list(block))
        added = lib.eagle_gpu_add_kernel(self._ptr, function, grid3, block3, shared,
                                         slots(launch_args, device=True), len(launch_args))
        node = self._added(added, "GpuProgram.kernel")
        self._keep += [function, *launch_args]
        self._kernels.append(_Kernel(node, list(args), sized))
        return node

    def samples_kernel(self, function: Any, args: Sequence[Arg], n: int) -> int:
        """A grid-stride kernel over ``n`` samples whose last argument is the logical end."""
        def at(base: Sequence[Arg], logical: int) -> tuple[Sequence[Arg], tuple[int, int, int]]:
            end = min(n, logical)
            return [*base, np.int64(end)], grid_for(end)

        return self.kernel(function, args, (1, 1, 1), sized=at)

    def copy(self, src: Any, dst: Any) -> GpuProgram:
        """A copy node between device or pinned memory (the driver infers the direction); a
        pageable host side is staged through a pinned buffer by a host node, which a
        conditional body cannot hold."""
        if src is dst:
            return self
        for name, array in (("src", src), ("into", dst)):
            if not _cuda.contiguous(array):
                raise EagleValueError(f"eagle.copy: {name} is strided; a GPU copy moves contiguous arrays: "
                                      "copy a "
                                 "contiguous array (np.ascontiguousarray / cupy.ascontiguousarray)")
        pageable = [name for name, a in (("src", src), ("into", dst)) if self._memory(a) == "pageable"]
        nbytes = int(np.prod(np.shape(src), dtype=np.int64)) * plane_dtype(src).itemsize
        if nbytes == 0:
            return self
        if not pageable:
            return self._copy_node(src, dst, nbytes)
        if self.in_body:
            raise EagleValueError(f"eagle.copy: {pageable[0]} is a pageable host array, and this copy is in "
                                  "a "
                             "loop or branch body, where only pinned memory can be copied: allocate it with "
                             "eagle.pinned(shape, dtype)")
        if len(pageable) == 2:  # host to host
            return self.callback(lambda: np.copyto(dst, src), touches=[src, dst])
        stage = _cuda.pinned_array(np.shape(src), plane_dtype(src), self.device)
        if pageable[0] == "src":
            self.callback(lambda: np.copyto(stage, src), touches=[src])
            return self._copy_node(stage, dst, nbytes)
        self._copy_node(src, stage, nbytes)
        return self.callback(lambda: np.copyto(dst, stage), touches=[dst])

    def _copy_node(self, src: Any, dst: Any, nbytes: int) -> GpuProgram:
        node = self._added(lib.eagle_gpu_add_copy(self._ptr, _cuda.address(dst), _cuda.address(src), nbytes),
                           "GpuProgram.copy")
        self._keep += [src, dst]
        self._copies.append([node, src, dst])
        return self

    def callback(self, fn: Callable[[], object], touches: Sequence[Any] = ()) -> GpuProgram:
        """A host node running ``fn`` on the driver's thread at every replay; an exception is
        kept and raised by the next launch or synchronize.  ``touches``: the arrays it reads or
        writes (bind cannot re-point a host function)."""
        self._hold(*touches)
        if self.in_body:
            raise EagleValueError(f"eagle.Graph.build: node {self.label!r} is a host node (code over host "
                                  "planes, "
                             "or with no planes) inside a device if or loop body: CUDA does not allow host "
                             "functions in a conditional body; move it out of the body")
        handle = ffi.new_handle((self._box, [fn]))
        self._added(lib.eagle_gpu_add_host(self._ptr, _trampoline, handle), "GpuProgram.callback")
        self._keep.append(handle)
        return self

    def checked(self, cells: Sequence[Any], check: Callable[[list[np.ndarray]], object]) -> GpuProgram:
        """Check device ``cells`` on the host at every replay: each is copied into pinned memory,
        a host node runs ``check(staged)`` (its exception raised by the launch's wait, as a
        callback's), and the staged cells are copied back, so a ``check`` that resets them
        clears the device's for the next replay.  In a conditional body, which holds no host
        node, the same comes after the outermost conditional node: the cells then hold what the
        body's turns left in them."""
        if self.in_body:
            self._after.append(lambda program: program.checked(cells, check))
            return self
        staged = [_cuda.pinned_array(np.shape(c), plane_dtype(c), self.device) for c in cells]
        for cell, stage in zip(cells, staged, strict=True):
            self.copy(cell, stage)
        self.callback(lambda: check(staged), touches=staged)
        for cell, stage in zip(cells, staged, strict=True):
            self.copy(stage, cell)
        return self

    def host_node(self, lowering: HostItems | Callable[[], object], label: str, touches: Sequence[Any] = ()
                  ) -> GpuProgram:
        """A host node running a node's CPU lowering (as a host program) at every replay: the node
        ``label``, whose planes live on the host."""
        if self.in_body:
            raise EagleValueError(f"eagle.Graph.build: node {label!r} is a host node (its planes live on the "
                             "host) inside a device if or loop body: CUDA does not allow host functions "
                             "in a conditional body; move it out of the body (a copy there is fine, from "
                             "pinned memory)")
        program = Program().stage()
        emit(lowering, program)
        program.finalize()
        if self.cut is not None and program.reductions:
            raise EagleValueError(f"eagle.Graph.build: node {label!r} reduces across samples over host "
                                  "planes, "
                             "in a GPU graph over a communicator: the ranks would combine it inside the "
                             "driver's host function; give the node device planes (or build the graph "
                             "over NumPy arrays)")
        self.callback(program.run, touches)
        self._hosts.append(program)
        self.reductions += program.reductions
        return self

    def captured(self, fn: Callable[[], object], touches: Sequence[Any] = ()) -> GpuProgram:
        """A node of the work ``fn`` enqueues, captured once when the graph is instantiated on a
        capture stream of eagle's, which CuPy and torch then use as their current one
        (eagle.graph.capture_stream() names it), with what CuPy allocates meanwhile taken from a
        pool the graph keeps."""
        self._hold(*touches)
        allocations = _cuda.CaptureMemory()
        handle = ffi.new_handle((self._box, fn, allocations, self.label))
        self._keep.append(allocations)
        self._added(lib.eagle_gpu_add_captured(self._ptr, _capture_trampoline, handle, 0),
                    "GpuProgram.captured")
        self._keep.append(handle)
        return self

    def child(self, graph: int, touches: Sequence[Any] = (), current: Callable[[], int] | None = None
              ) -> GpuProgram:
        """A child graph node running a clone of CUDA graph ``graph`` (a CUgraph handle).

        ``current()``: the CUgraph its owner holds now, asked before every launch; a launch
        after the owner let ``graph`` go (a reset, a new capture) is refused, never a replay of
        the stale clone."""
        self._hold(*touches)
        self._added(lib.eagle_gpu_add_child(self._ptr, graph), "GpuProgram.child")
        if current is not None:
            self._owners.append((self.label, graph, current))
        return self

    def _refuse_stale(self, api: str) -> None:
        """Refuse a launch whose child graphs' owners no longer hold the graphs cloned at build."""
        for label, graph, current in self._owners:
            try:
                now = current()
            except Exception:  # noqa: BLE001 -- an owner after reset() may refuse to name a graph
                now = None
            if now != graph:
                raise EagleRuntimeError(f"{api}: node {label!r} is a child graph whose owner was reset or "
                                   "captured again since eagle.Graph.build (the CUDA graph eagle cloned is "
                                   "not the one it holds now); rebuild the eagle graph then: a new "
                                   "eagle.Graph over the owner")

    def reduce(self, x: Any, out: Any, op: str = "sum") -> GpuProgram:
        """``out[0] = op(x)`` over the first (logical) samples of a contiguous 1-D device plane,
        in the fixed order: one pass per level of blocks, each a kernel node."""
        dtype = plane_dtype(x)  # a torch tensor's dtype is torch's: read its interface
        n = int(x.shape[0])
        function = _gpu_kernels.module(self.device).function(_gpu_kernels.reduce_name(dtype, op))
        if self.cut is not None:
            return self._reduce_across_ranks(function, x, out, n, dtype, op)
        passes = _gpu_kernels.reduce_passes(n)
        scratch = [_cuda.DeviceBuffer(self.device, max(count, 1) * dtype.itemsize)
                   for count in passes[1:]]
        sources, targets = [x, *scratch], [*scratch, out]

        for level in range(len(passes)):
            def at(base: Sequence[Arg], logical: int, level: int = level) -> tuple[Sequence[Arg],
                                                                                   tuple[int, int, int]]:
                count = min(n, logical)
                for _ in range(level):
                    count = -(-count // BLOCK)
                return [*base, np.int64(count)], (max(-(-count // BLOCK), 1), 1, 1)

            self.kernel(function, [sources[level], targets[level]], (1, 1, 1),
                        (_gpu_kernels.REDUCE_THREADS, 1, 1), sized=at)
        self.reductions += 1
        return self

    def _reduce_across_ranks(self, function: Any, x: Any, out: Any, n: int, dtype: np.dtype, op: str
                             ) -> GpuProgram:
        """``out[0] = op(x)`` over the samples of every rank, with one process's bits: the device
        writes this rank's block partials (the first pass of :meth:`reduce`), they are copied to
        pinned memory, and the CUDA graph is cut there: on the host, between the two graphs, a
        reduce item of libeagle's made global by :meth:`set_collective` gathers every rank's
        partials in rank order and runs the fixed tree over them (what the host program does
        under a communicator); the graph after the cut starts by copying the result to ``out``."""
        if self.forked:
            raise forked_reductions([self.label])
        if self.in_body:
            raise EagleValueError(f"eagle.Graph.build: node {self.label!r} reduces across samples inside a "
                                  "device "
                             "if or loop body, in a GPU graph over a communicator: the ranks combine a "
                             "reduction on the host, between two CUDA graphs, and a body cannot be cut; "
                             "move the reduction out of the body (a loop's guard: run the loop from Python, "
                             "one launch per turn), or build the graph over NumPy arrays (the CPU runs it)")
        blocks = max(-(-n // BLOCK), 1)
        partials = _cuda.DeviceArray(blocks, dtype, self.device)
        staged, result = (_cuda.pinned_array(count, dtype, self.device) for count in (blocks, 1))

        def first_pass(base: Sequence[Arg], logical: int) -> tuple[Sequence[Arg], tuple[int, int, int]]:
            count = min(n, logical)
            return [*base, np.int64(count)], (max(-(-count // BLOCK), 1), 1, 1)

        self.kernel(function, [x, partials], (1, 1, 1), (_gpu_kernels.REDUCE_THREADS, 1, 1), sized=first_pass)
        self._copy_node(partials, staged, blocks * dtype.itemsize)
        combine = Program().stage().reduce_partials(staged, result, n, op).finalize()
        self._collectives.append(combine)
        self._keep += [partials, staged, result]
        self.reductions += 1
        self._split(combine.run)
        self._copy_node(result, out, dtype.itemsize)
        self._keep.append(result)
        return self

    def _split(self, call: Callable[[], object]) -> None:
        """End the CUDA graph here: what was added so far becomes a program of its own, handed
        to :attr:`cut` with ``call`` (run on the host after it), and this object, which the
        lowering goes on appending to, starts the next graph."""
        part = object.__new__(GpuProgram)
        vars(part).update(vars(self))
        vars(self).update(vars(GpuProgram(self.device)))
        # the count goes on here: the lowering notes a node's reductions by this object's
        self.label, self.cut, self.reductions, part.reductions = part.label, part.cut, part.reductions, 0
        part.cut(part, call)

    def set_collective(self, comm: Any) -> GpuProgram:
        """Make the reductions of the graph global over the ranks of ``comm``: each host program
        that combines a reduction's partials (:meth:`_reduce_across_ranks`), in graph order.  A
        collective call: every rank calls it on a graph of the same shape."""
        for combine in self._collectives:
            combine.set_collective(comm)
        return self

    def if_(self, cell: Any, then: GpuProgram | None, otherwise: GpuProgram | None = None) -> GpuProgram:
        """Run ``then`` when ``cell[0] != 0``, else ``otherwise``; read at every replay."""
        self._added(lib.eagle_gpu_add_if(self._ptr, self._cell(cell), _ptr(then), _ptr(otherwise)),
                    "GpuProgram.if_")
        self._adopt(cell, then, otherwise)
        return self

    def switch(self, cell: Any, arms: dict[int, GpuProgram], default: GpuProgram | None = None) -> GpuProgram:
        """Run the arm whose key equals ``cell[0]``, else ``default``.

        The SWITCH node picks by index: keys 0, 1, ... k-1 are indices already; other keys
        are mapped to their index by a one-thread kernel before it."""
        keys = list(arms)
        self._cell(cell)
        index_cell = cell
        if keys != list(range(len(keys))):
            device_keys = _cuda.DeviceArray.from_host(np.asarray(keys, np.uint32), self.device)
            index_cell = _cuda.DeviceBuffer(self.device, 4)
            function = _gpu_kernels.module(self.device).function("eg_switch_index")
            self.kernel(function, [cell, device_keys, np.uint32(len(keys)), index_cell], (1, 1, 1), (1, 1, 1))
            self._keep += [device_keys, index_cell]
        subs = list(arms.values())
        ptrs = ffi.new("eagle_gpu_graph *[]", [_ptr(a) for a in subs] or [ffi.NULL])
        self._added(lib.eagle_gpu_add_switch(self._ptr, _cuda.address(index_cell), len(subs), ptrs,
                                             _ptr(default)), "GpuProgram.switch")
        self._adopt(cell, *subs, default)
        return self

    def chain(self, cells: Sequence[Any], arms: Sequence[GpuProgram | None],
              otherwise: GpuProgram | None = None) -> GpuProgram:
        """Run ``arms[i]`` for the first ``i`` whose ``cells[i][0] != 0``, else ``otherwise``: an
        if/elif/else chain decided once at the head (seed 000), by a one-thread kernel writing
        the arm's index into a cell, which a SWITCH node reads (one plain IF node per arm on a
        driver older than CUDA 12.8: libeagle's switch)."""
        addresses = np.asarray([self._cell(cell) for cell in cells], np.uint64)
        table = _cuda.DeviceArray.from_host(addresses, self.device)
        key = _cuda.DeviceBuffer(self.device, 4)
        function = _gpu_kernels.module(self.device).function("eg_chain_key")
        self.kernel(function, [table, np.uint32(len(cells)), key], (1, 1, 1), (1, 1, 1))
        self._keep += [table, key]
        self._hold(*cells)  # read through the table: bind cannot re-point them
        return self.switch(key, dict(enumerate(arms)), otherwise)

    def loop(self, cell: Any, body: GpuProgram, kind: str = "while", max_iters: int = -1) -> GpuProgram:
        """Repeat ``body`` by ``kind`` ("while", "do", "count"), at most ``max_iters`` turns.

        An uncapped while or do loop is a WHILE (or DO) node on the cell itself.  A cap or a
        count needs a device counter: a kernel before the node starts it, and one at the end of
        the body counts the turn and decides the next, into the cell a WHILE node reads; the
        turns are the host executor's (libeagle's run_loop)."""
        if kind != "count" and max_iters < 0:
            self._added(lib.eagle_gpu_add_loop(self._ptr, self._cell(cell), LOOPS[kind], _ptr(body)),
                        "GpuProgram.loop")
            self._adopt(cell, body)
            return self
        self._cell(cell)
        code = {"while": 0, "do": 1, "count": 2}[kind]
        left, go = _cuda.DeviceBuffer(self.device, 8), _cuda.DeviceBuffer(self.device, 4)
        kernels = _gpu_kernels.module(self.device)
        one = ((1, 1, 1), (1, 1, 1))
        self.kernel(kernels.function("eg_loop_start"), [cell, left, go, np.int64(max_iters), np.int32(code)],
                    *one)
        body.stage().kernel(kernels.function("eg_loop_turn"), [cell, left, go, np.int32(code)], *one)
        # a WHILE on `go` for every kind: the start lets a do loop's first turn run (cap allowing)
        self._added(lib.eagle_gpu_add_loop(self._ptr, _cuda.address(go), LOOPS["while"], _ptr(body)),
                    "GpuProgram.loop")
        self._keep += [left, go]
        self._adopt(cell, body)
        return self

    def _cell(self, cell: Any) -> int:
        """The address of a guard cell, which the device reads: device or pinned memory."""
        address = _cuda.address(cell)
        if _cuda.memory_type(address, self.device) == "pageable":
            raise EagleValueError("eagle.Graph.build: the guard cell of a device if, match or loop is a "
                                  "pageable "
                             "host array, which the GPU cannot read; make it a device array (or "
                             "eagle.pinned(1, np.uint32))")
        return address

    def signal(self, key: object) -> GpuProgram:
        """Let a later branch wait for the last item added (what ``key`` stands for)."""
        self._keep.append(key)
        self._signals[id(key)] = self._last
        return self

    def wait(self, key: object) -> GpuProgram:
        """The next item of this branch waits for the item signalled for ``key``: one edge.
        In a conditional body the branches of a fork run one after another: nothing to wait for."""
        if not self.in_body:
            check(lib.eagle_gpu_add_wait(self._ptr, self._signals[id(key)]), "GpuProgram.wait")
        return self

    def _added(self, status: int, api: str) -> int:
        self._last = check(status, api)
        return self._last

    def _hold(self, *arrays: Any) -> None:
        """Keep arrays that a host node or a conditional holds (bind cannot re-point them)."""
        self._keep += arrays
        self._fixed.update(id(a) for a in arrays)

    def _adopt(self, cell: Any, *subs: GpuProgram | None) -> None:
        # libeagle owns a sub-graph once it is added: stop our finalizer from freeing it.
        self._hold(cell)
        for sub in subs:
            if sub is not None:
                ffi.gc(sub._ptr, None)
                self._subs.append(sub)
                self._owners += sub._owners
                self.reductions += sub.reductions
                for after in sub._after:  # right after this conditional node, or after ours
                    if self.in_body:
                        self._after.append(after)
                    else:
                        after(self)

    # --- running -------------------------------------------------------------
    def finalize(self) -> GpuProgram:
        """Build the CUDA graph and instantiate it (once); a captured function's exception is
        raised here."""
        status = lib.eagle_gpu_instantiate(self._ptr, self.device, 0)
        if status == lib.EAGLE_ERR_CUDA and self._box.capture is not None and self._box.error is None:
            detail = ffi.string(lib.eagle_last_error()).decode()
            if "Capture" in detail or "ChildGraph" in detail:
                raise CoreError(f"eagle.Graph.build: node {self._box.capture!r}: capturing its device work "
                                f"failed ({detail}); a captured function only launches work on the "
                                "current stream: no synchronisation or read-back (for those, "
                                "opaque(..., eager=True))")
        self._raise_after(status, "eagle.Graph.build")
        return self

    def run(self, replays: int = 1) -> GpuProgram:
        """Replay ``replays`` times and wait (the GIL is released while it waits)."""
        self._refuse_stale("eagle.Graph.launch")
        self._raise_after(lib.eagle_gpu_launch(self._ptr, replays), "eagle.Graph.launch")
        return self

    def enqueue(self, replays: int = 1) -> GpuProgram:
        """Replay without waiting.  A host node's exception, even one raised already, is kept for
        the next launch or synchronize (seed 003), which report it once."""
        self._refuse_stale("eagle.Graph.enqueue")
        status = lib.eagle_gpu_enqueue(self._ptr, replays)
        release_pending()
        check(status, "eagle.Graph.enqueue")
        return self

    @functools.cached_property
    def stream(self) -> int:
        """The CUstream the instantiated graph replays on (one for its life)."""
        out = ffi.new("uint64_t *")
        check(lib.eagle_gpu_stream(self._ptr, out), "GpuProgram.stream")
        return int(out[0])

    def synchronize(self) -> GpuProgram:
        self._raise_after(lib.eagle_gpu_synchronize(self._ptr), "eagle.Graph.synchronize")
        return self

    def _raise_after(self, status: int, api: str) -> None:
        release_pending()
        error = self._take_error()
        if error is not None:
            raise error
        check(status, api)

    def set_logical_size(self, n: int) -> GpuProgram:
        """Patch every sized kernel's arguments and grid for ``n`` samples, sub-programs too."""
        self._logical = n
        for k in self._kernels:
            if k.sized is not None:
                self._patch(k, "eagle.Graph.set_logical_size")
        for sub in [*self._subs, *self._hosts]:
            sub.set_logical_size(n)
        return self

    def rebind(self, mapping: dict[int, Any]) -> bool:
        """Re-point the kernels that hold an array of ``mapping`` (id of old array -> new one) in
        the instantiated graph.  False, with nothing patched, when a copy, a host node or a
        conditional holds one: the graph must be built again.  Kernels and copies are patched."""
        if not self._patchable(mapping):
            return False
        self._rebind(mapping)
        return True

    def _patchable(self, mapping: dict[int, Any]) -> bool:
        """No host node or guard holds a swapped array, and each swapped copy end keeps its kind
        of memory (the driver patches a copy node only so)."""
        if self._fixed & mapping.keys():
            return False
        for _, *ends in self._copies:
            for end in ends:
                new = mapping.get(id(end))
                if new is not None and self._memory(new) != self._memory(end):
                    return False
        return all(sub._patchable(mapping) for sub in self._subs)

    def _memory(self, array: Any) -> str:
        return _cuda.memory_type(_cuda.address(array), self.device)

    def _rebind(self, mapping: dict[int, Any]) -> None:
        for k in self._kernels:
            base = [mapping.get(id(a), a) for a in k.base]
            swapped = [new for new, old in zip(base, k.base, strict=True) if new is not old]
            if swapped:
                k.base = base
                self._keep += swapped
                self._patch(k, "eagle.Graph.bind")
        for copy in self._copies:
            node, src, dst = copy
            new_src, new_dst = mapping.get(id(src), src), mapping.get(id(dst), dst)
            if new_src is not src or new_dst is not dst:
                check(lib.eagle_gpu_set_copy(self._ptr, node, _cuda.address(new_dst), _cuda.address(new_src)),
                      "eagle.Graph.bind")
                copy[1:] = [new_src, new_dst]
                self._keep += [new_src, new_dst]
        for sub in self._subs:
            sub._rebind(mapping)

    def _patch(self, k: _Kernel, api: str) -> None:
        logical = _BIG if self._logical is None else self._logical
        args, grid = k.sized(k.base, logical) if k.sized is not None else (k.base, None)
        check(lib.eagle_gpu_set_kernel_args(self._ptr, k.node, slots(args, device=True), len(args)), api)
        if grid is not None:
            check(lib.eagle_gpu_set_grid(self._ptr, k.node, ffi.new("uint32_t[3]", list(grid))), api)

    def stats(self) -> dict[str, int]:
        """``captures`` (CUDA graphs built), ``graph_builds`` (instantiations), ``replays``."""
        out = ffi.new("int64_t[]", int(lib.EAGLE_GPU_NSTATS))
        lib.eagle_gpu_graph_stats(self._ptr, out)
        return {"captures": int(out[lib.EAGLE_GPU_STAT_CAPTURES]),
                "graph_builds": int(out[lib.EAGLE_GPU_STAT_GRAPH_BUILDS]),
                "replays": int(out[lib.EAGLE_GPU_STAT_REPLAYS])}


# Resolved once: a finalizer may run inside cffi's own locked parsing (a collector run there),
# where looking a function up on lib would wait on that lock forever.
_GRAPH_FREE = lib.eagle_gpu_graph_free


def _free_graph(pointer: Any) -> None:
    release(_GRAPH_FREE, pointer)


def _ptr(sub: GpuProgram | None) -> Any:
    return ffi.NULL if sub is None else sub._ptr
