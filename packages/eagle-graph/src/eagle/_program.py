"""The Python face of a libeagle program: build it, finalize it, run it.

A Program keeps alive everything its items point at (arrays, argument
blocks, callbacks), because libeagle holds only raw pointers.  Graph
lowerings (issue 3) produce Programs; the tests drive them directly.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from eagle._arrays import is_guard_cell
from eagle._core import BLOCK, check, ffi, lib
from eagle._driver_thread import no_cuda_calls
from eagle._errors import EagleMemoryError, EagleRuntimeError, EagleTypeError, EagleValueError
from eagle._fusion import emitter, groups
from eagle._kinds import Node
from eagle._lower_cpu import emit, emit_node, lowered
from eagle._slots import slots
from eagle._views import view_of

SCHEDULES = {"work_share": lib.EAGLE_WORK_SHARE, "branch_tasks": lib.EAGLE_BRANCH_TASKS}
ROLES = {"read": lib.EAGLE_READ, "write": lib.EAGLE_WRITE, "readwrite": lib.EAGLE_READWRITE}
REDUCE_OPS = {"sum": lib.EAGLE_SUM, "max": lib.EAGLE_MAX, "min": lib.EAGLE_MIN,
              "all": lib.EAGLE_ALL, "any": lib.EAGLE_ANY}
DTYPES = {np.dtype(np.float64): lib.EAGLE_F64, np.dtype(np.float32): lib.EAGLE_F32,
          np.dtype(np.int64): lib.EAGLE_I64, np.dtype(np.int32): lib.EAGLE_I32,
          np.dtype(np.uint32): lib.EAGLE_U32, np.dtype(np.uint64): lib.EAGLE_U64,
          np.dtype(np.uint8): lib.EAGLE_U8, np.dtype(np.bool_): lib.EAGLE_U8}
LOOPS = {"while": lib.EAGLE_LOOP_WHILE, "do": lib.EAGLE_LOOP_DO, "count": lib.EAGLE_LOOP_COUNT}


# A private prototype (as _views does for PyCapsule_GetPointer): PYFUNCTYPE holds the GIL and
# raises the exception a Python signal handler set.
_check_signals = ctypes.PYFUNCTYPE(ctypes.c_int)(("PyErr_CheckSignals", ctypes.pythonapi))


class ErrorBox:
    """The first exception a program's callbacks raised.  A callback's handle holds the box, not
    the program: no reference cycle, so a program is freed when its last reference goes, in that
    thread (for a GPU program, never by the garbage collector in a driver's thread)."""

    __slots__ = ("capture", "error")

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.capture: str | None = None  # the node whose work a GPU graph captured last

    def keep(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc


def _kept(exc_type: type, exc: BaseException, tb: Any) -> int:
    """What _trampoline raised before its ``try`` (a signal handler Python ran on entering it:
    Ctrl-C's KeyboardInterrupt), kept in the box of its ``ctx`` as any other."""
    box, _ = ffi.from_handle(tb.tb_frame.f_locals["ctx"])
    box.keep(exc)
    return 1


@ffi.callback("int(void *)", onerror=_kept)
def _trampoline(ctx: Any) -> int:
    # cffi cannot carry an exception out of a callback: keep it in the
    # program's box and return non-zero, which stops the run; Program.run raises it.
    box, batch = ffi.from_handle(ctx)
    try:
        with no_cuda_calls():  # a GPU graph's host node runs on the driver's thread
            for fn in batch:
                fn()
    except BaseException as exc:  # noqa: BLE001 -- re-raised by Program.run, KeyboardInterrupt too
        box.keep(exc)
        return 1
    return 0


def _cell(array: np.ndarray, api: str) -> Any:
    if not (isinstance(array, np.ndarray) and is_guard_cell(array)):  # the host reads it
        raise EagleTypeError(f"{api}: a guard is a one-cell uint32 NumPy array")
    return ffi.cast("const uint32_t *", array.ctypes.data)


def _ptr(sub: Program | None) -> Any:
    return ffi.NULL if sub is None else sub._ptr


class CallbackErrors:
    """The first exception a callback raised, kept for the call that waits (cffi cannot carry it
    out of the callback): the program's own, or one of its sub-programs'."""

    _box: ErrorBox
    _subs: list[CallbackErrors]

    def _take_error(self) -> BaseException | None:
        found, self._box.error = self._box.error, None
        for sub in self._subs:
            error = sub._take_error()
            found = found or error
        return found


class DeferredKernel:
    """A kernel function that a build compiles after lowering (with the others of its batch, in
    one compiler process): appended under a stand-in address of its own, which
    :meth:`resolve` patches in every program that calls it."""

    def __init__(self) -> None:
        self._stand_in = ffi.new("char[1]")  # never called: a distinct address, held
        self.address = ffi.cast("eagle_kernel_fn", self._stand_in)
        self.programs: list[Program] = []

    def resolve(self, fn: Any, owner: object) -> None:
        """Patch ``fn`` (``owner`` keeps its code loaded) in for the stand-in."""
        for program in self.programs:
            check(lib.eagle_patch_kernel(program._ptr, self.address, fn), "DeferredKernel.resolve")
            program._keep += [fn, owner]
            program._deferred -= 1
        self.programs.clear()


class CompileBatch:
    """The kernels a build compiles after lowering: ``compile(items)`` -> per item its phase
    functions and their owner, once for all the items of one ``compile``."""

    def __init__(self) -> None:
        self._jobs: dict[Callable[..., Any], dict[Any, list[DeferredKernel]]] = {}

    def defer(self, compile: Callable[[list[Any]], list[tuple[list[Any], object]]], item: Any,
              count: int) -> list[DeferredKernel]:
        """Stand-ins for the ``count`` functions ``compile`` makes of ``item`` (hashable)."""
        jobs = self._jobs.setdefault(compile, {})
        if item not in jobs:
            jobs[item] = [DeferredKernel() for _ in range(count)]
        return jobs[item]

    def resolve(self) -> None:
        for compile, jobs in self._jobs.items():
            items = list(jobs)
            for item, (functions, owner) in zip(items, compile(items), strict=True):
                for deferred, fn in zip(jobs[item], functions, strict=True):
                    deferred.resolve(fn, owner)
        self._jobs.clear()


_batch: ContextVar[CompileBatch | None] = ContextVar("eagle_compile_batch", default=None)


@contextmanager
def compiling_after() -> Iterator[CompileBatch]:
    """Inside the ``with``, kernels may be deferred (:func:`deferred_kernels`); the caller
    resolves the batch before any program of the lowering runs."""
    batch = CompileBatch()
    token = _batch.set(batch)
    try:
        yield batch
    finally:
        _batch.reset(token)


def deferred_kernels(compile: Callable[[list[Any]], list[tuple[list[Any], object]]], item: Any,
                     count: int) -> list[DeferredKernel] | None:
    """Stand-ins for ``count`` functions that ``compile`` makes of ``item`` with the rest of
    the build's batch; None outside a build that compiles after lowering (compile now)."""
    batch = _batch.get()
    return None if batch is None else batch.defer(compile, item, count)


class Program(CallbackErrors):
    """A libeagle program under construction, then finalized and runnable: the host's
    lowering target (:class:`eagle._target.Target`).

    :param views: ``id(array) -> (array, eagle_view *)``: the views of arrays described
        before (a build's analysis), which the items use instead of describing them again;
        the program adds the ones it makes, and hands the table to its bodies.
    """

    #: A host program holds raw pointers: binding new arrays lowers the graph again.
    patches = False

    def __init__(self, views: dict[int, tuple[Any, Any]] | None = None) -> None:
        self._ptr = ffi.gc(lib.eagle_program_new(), lib.eagle_program_free)
        if self._ptr == ffi.NULL:
            raise EagleMemoryError("eagle.Program: out of memory")
        self._keep: list[Any] = []  # what libeagle points into
        # Consecutive callbacks share one item, so a run of them takes the GIL once.
        self._batch: list[Callable[[], object]] | None = None
        self._box = ErrorBox()
        # Every run's poll (eagle_program_set_launch): Python's pending signals, handled in the
        # main thread at most once per EAGLE_POLL_MS of a run there; what a handler raises
        # (Ctrl-C's KeyboardInterrupt) stops the run and is raised by the call.
        self._poll = ffi.new_handle((self._box, [_check_signals]))
        self._launch_with(ffi.NULL, "eagle.Program")
        self._subs: list[Program] = []  # adopted sub-programs, searched for callback errors
        self._owner: Program | None = None
        self.schedule: str | None = None  # of the stage items go to now
        self._events: dict[int, int] = {}  # id of what a signal stands for -> event number
        #: Cross-sample reductions in the program, sub-programs included: the items a
        #: communicator makes global.
        self.reductions = 0
        self._views = {} if views is None else views
        self._deferred = 0  # kernels appended under a stand-in address, not yet patched

    # --- structure ---------------------------------------------------------
    def stage(self, schedule: str = "work_share") -> Program:
        self._batch = None
        check(lib.eagle_stage(self._ptr, SCHEDULES[schedule]), "Program.stage")
        self.schedule = schedule
        return self

    def branch(self) -> Program:
        self._batch = None
        check(lib.eagle_branch(self._ptr), "Program.branch")
        return self

    def body(self) -> Program:
        """A new program with one stage open, for the body or arm of a conditional of this one."""
        return Program(self._views).stage()

    def node(self, node: Node, label: str | None = None) -> Program:
        """Append the host items of ``node``."""
        emit_node(node, self, label)
        return self

    def nodes(self, nodes: Sequence[Node]) -> Program:
        """Append the host items of ``nodes`` in order, a fused run of them as one function."""
        lowerings = [lowered(node, node.default_label()) for node in nodes]
        for group in groups(range(len(nodes)), lowerings):
            emitter(group, lowerings, nodes, lambda i, target: emit(lowerings[i], target))(self)
        return self

    # --- items -------------------------------------------------------------
    def kernel(self, fn: Any, args: Sequence[Any], n: int, *, per_sample: bool = True,
               accesses: Sequence[tuple[Any, str]] = (), empty_call: bool = False) -> Program:
        """Append native kernel ``fn`` over ``n`` samples.

        ``args`` fill the argument slots in order (``eagle._slots``): an array
        is passed by pointer, a float as f64, an int as i64 (u64 from 2**63),
        an ``eagle_arg *`` as it is.  ``accesses`` are
        (array, role) pairs: what the kernel touches, which decides fusion.
        ``empty_call``: over no samples, still call ``fn(0, 0, args)`` once
        (a kernel writing one-cell results writes them then too).
        """
        self._batch = None
        if isinstance(fn, DeferredKernel):  # compiled after the lowering, patched then
            fn.programs.append(self)
            self._deferred += 1
            fn = fn.address
        filled = slots(args, device=False, api="Program.kernel")
        self._keep += [a for a in args if isinstance(a, np.ndarray)]
        acc = ffi.new("eagle_access[]", max(len(accesses), 1))
        for i, (array, role) in enumerate(accesses):
            acc[i].view = self._view(array)[0]
            acc[i].role = ROLES[role]
            self._keep.append(array)
        flags = (lib.EAGLE_PER_SAMPLE if per_sample else 0) | (lib.EAGLE_EMPTY_CALL if empty_call else 0)
        check(lib.eagle_add_kernel(self._ptr, fn, filled, len(args), n, flags, acc, len(accesses)),
              "Program.kernel")
        self._keep.append(fn)
        return self

    def callback(self, fn: Callable[[], object], touches: Sequence[Any] = ()) -> Program:
        """Append a Python callable; an exception it raises stops the run and is re-raised.
        ``touches`` (what it reads or writes) orders nothing here: items run in order."""
        if self._batch is not None:
            self._batch.append(fn)
            return self
        batch = [fn]
        handle = ffi.new_handle((self._box, batch))
        check(lib.eagle_add_callback(self._ptr, _trampoline, handle), "Program.callback")
        self._keep.append(handle)
        self._batch = batch
        return self

    def reduce(self, x: np.ndarray, out: np.ndarray, op: str = "sum") -> Program:
        """Append ``out[0] = op(x)`` in the fixed order (x contiguous 1-D)."""
        self._batch = None
        if x.ndim != 1 or not x.flags.c_contiguous or x.dtype != out.dtype or out.size != 1:
            raise EagleValueError("Program.reduce: x must be contiguous 1-D and out one cell of its dtype")
        check(lib.eagle_add_reduce(self._ptr, ffi.cast("void *", x.ctypes.data),
                                   ffi.cast("void *", out.ctypes.data), x.size, DTYPES[x.dtype],
                                   REDUCE_OPS[op]), "Program.reduce")
        self.reductions += 1
        self._keep += [x, out]
        return self

    def reduce_partials(self, partials: np.ndarray, out: np.ndarray, n: int, op: str = "sum") -> Program:
        """Append ``out[0] = op`` over the block partials of ``n`` samples that kernels before
        wrote into ``partials`` (one per block, by ``eagle_reduce_block``)."""
        self._batch = None
        if partials.dtype != out.dtype or out.size != 1 or partials.size < -(-n // BLOCK):
            raise EagleValueError("Program.reduce_partials: one partial per block of n, and one out cell, "
                             "all of one dtype")
        check(lib.eagle_add_reduce_partials(self._ptr, ffi.cast("void *", partials.ctypes.data),
                                            ffi.cast("void *", out.ctypes.data), n, DTYPES[partials.dtype],
                                            REDUCE_OPS[op]), "Program.reduce_partials")
        self.reductions += 1
        self._keep += [partials, out]
        return self

    def copy(self, src: np.ndarray, dst: np.ndarray) -> Program:
        self._batch = None
        check(lib.eagle_add_copy(self._ptr, self._view(src), self._view(dst)), "Program.copy")
        self._keep += [src, dst]
        return self

    def if_(self, cell: np.ndarray, then: Program | None, otherwise: Program | None = None) -> Program:
        """Run ``then`` when ``cell[0] != 0``, else ``otherwise``; read at every run."""
        self._batch = None
        check(lib.eagle_add_if(self._ptr, _cell(cell, "Program.if_"), _ptr(then), _ptr(otherwise)),
              "Program.if_")
        self._adopt(cell, then, otherwise)
        return self

    def switch(self, cell: np.ndarray, arms: dict[int, Program], default: Program | None = None) -> Program:
        """Run the arm whose key equals ``cell[0]``, else ``default``."""
        self._batch = None
        values = ffi.new("uint32_t[]", list(arms) or [0])
        ptrs = ffi.new("eagle_program *[]", [_ptr(a) for a in arms.values()] or [ffi.NULL])
        check(lib.eagle_add_switch(self._ptr, _cell(cell, "Program.switch"), len(arms), values, ptrs,
                                   _ptr(default)), "Program.switch")
        self._adopt(cell, *arms.values(), default)
        return self

    def chain(self, cells: Sequence[np.ndarray], arms: Sequence[Program | None],
              otherwise: Program | None = None) -> Program:
        """Run ``arms[i]`` for the first ``i`` whose ``cells[i][0] != 0``, else ``otherwise``: an
        if in each else arm, which the host decides cell by cell at once (nothing runs between)."""
        for cell, arm in zip(cells[:0:-1], arms[:0:-1], strict=True):
            otherwise = self.body().if_(cell, arm, otherwise)
        return self.if_(cells[0], arms[0], otherwise)

    def loop(self, cell: np.ndarray, body: Program, kind: str = "while", max_iters: int = -1) -> Program:
        """Repeat ``body`` by ``kind`` ("while", "do", "count"), at most ``max_iters`` turns."""
        self._batch = None
        check(lib.eagle_add_loop(self._ptr, _cell(cell, "Program.loop"), LOOPS[kind], max_iters,
                                 _ptr(body)), "Program.loop")
        self._adopt(cell, body)
        return self

    def _event(self, key: object) -> int:
        """The event number of ``key`` in this program: one per key, numbered from 0."""
        self._keep.append(key)  # its id stays its own while the program lives
        return self._events.setdefault(id(key), len(self._events))

    def signal(self, key: object) -> Program:
        """Let a later branch wait for the last item appended (what ``key`` stands for).  Only
        a branch_tasks stage runs its branches side by side: elsewhere they run in order, and
        there is nothing to signal."""
        if self.schedule == "branch_tasks":
            self._batch = None
            check(lib.eagle_add_signal(self._ptr, self._event(key)), "Program.signal")
        return self

    def wait(self, key: object) -> Program:
        """The next item of this branch waits for the item signalled for ``key`` (under
        branch_tasks; elsewhere the branches run in order)."""
        if self.schedule == "branch_tasks":
            self._batch = None
            check(lib.eagle_add_wait(self._ptr, self._event(key)), "Program.wait")
        return self

    def _view(self, array: Any) -> Any:
        """The ``eagle_view *`` of ``array``, described once per lowering: an array is a plane of
        several items (libeagle copies what it reads).  The entry holds the array, so its id
        stays its own."""
        found = self._views.get(id(array))
        if found is None or found[0] is not array:
            found = self._views[id(array)] = (array, view_of(array))
        return found[1]

    def _adopt(self, cell: np.ndarray, *subs: Program | None) -> None:
        # libeagle owns a sub-program once it is added (it refused any that
        # already had an owner): stop our finalizer from freeing it.
        self._keep.append(cell)
        for sub in subs:
            if sub is not None:
                ffi.gc(sub._ptr, None)  # removes the destructor in place
                self._subs.append(sub)
                self.reductions += sub.reductions
                sub._owner = self  # the sub's memory is ours now: live as long as it does

    # --- running -----------------------------------------------------------
    def finalize(self) -> Program:
        self._batch = None
        if self._unresolved():
            raise EagleRuntimeError("eagle.Program.finalize: the program calls kernels not compiled yet; "
                               "resolve the build's CompileBatch before finalizing")
        check(lib.eagle_program_finalize(self._ptr), "Program.finalize")
        return self

    def _unresolved(self) -> bool:
        return bool(self._deferred) or any(sub._unresolved() for sub in self._subs)

    def set_collective(self, comm: Any) -> Program:
        """Make every reduction global over the ranks of ``comm`` (an eagle.Communicator).

        A collective call: every rank calls it on a program of the same shape.
        """
        check(lib.eagle_program_set_collective(self._ptr, comm.table()), "Program.set_collective")
        self._keep.append(comm)  # the table's functions and context live with it
        return self

    def set_logical_size(self, n: int) -> Program:
        check(lib.eagle_program_set_logical_size(self._ptr, n), "Program.set_logical_size")
        return self

    def enqueue(self, replays: int = 1) -> Program:
        """:meth:`run`: a host run is done when it returns."""
        return self.run(replays)

    def synchronize(self) -> Program:
        """Nothing to wait for: every host run waited."""
        return self

    def rebind(self, mapping: dict[int, Any]) -> bool:
        """False: libeagle's items hold the old arrays' addresses; the graph is lowered again."""
        return False

    def run(self, replays: int = 1) -> Program:
        """Run ``replays`` times in one native call with the GIL released.

        An exception raised by a callback item stops the run and is raised
        here, with its own traceback; so does Ctrl-C in the main thread
        (KeyboardInterrupt, between replays and loop turns).
        """
        status = lib.eagle_run(self._ptr, replays)
        if status:
            self.failed(status, "Program.run")
        return self

    def launcher(self, guard: Any) -> Callable[[int], int]:
        """``run`` prepared for a graph's replays: ``launcher(guard)(n)`` is one native call of
        two arguments that also holds ``guard`` (a graph's ``eagle_guard_enter`` flag) and
        returns libeagle's status (:meth:`failed` raises what it means)."""
        return functools.partial(*self.native_launch(guard))

    def native_launch(self, guard: Any) -> tuple[Callable[[Any, int], int], Any]:
        """:meth:`launcher` as the pair ``(launch, program)``: ``launch(program, n)``.  What
        ``Graph.launch`` calls: a partial's call costs about what a small replay does."""
        self._launch_with(guard, "Program.launcher")
        self._keep.append(guard)
        return lib.eagle_launch, self._ptr

    def _launch_with(self, guard: Any, api: str) -> None:
        # Polled in the thread that handles Python's signals (the main thread): a run elsewhere
        # goes to its end without taking the GIL.
        check(lib.eagle_program_set_launch(self._ptr, guard, _trampoline, self._poll,
                                           threading.main_thread().ident), api)

    def failed(self, status: int, api: str) -> None:
        """Raise what stopped a run (``status``, not 0): a callback's or a poll's exception, else
        libeagle's own words."""
        error = self._take_error()
        if error is not None:
            raise error
        check(status, api)

    def stats(self) -> dict[str, int]:
        """Team regions opened and barriers passed in the last run."""
        out = ffi.new("int64_t[2]")
        lib.eagle_program_stats(self._ptr, out)
        return {"regions": int(out[0]), "barriers": int(out[1])}
