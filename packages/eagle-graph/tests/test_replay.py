"""The replay path: a launch is one native call prepared at build (the guard, the run, a poll for
Python's signals), allocating nothing per call; Ctrl-C still stops it (issue 19, "a cheaper
replay path")."""

from __future__ import annotations

import functools
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

import eagle
from eagle import _core
from eagle._program import Program
from eagle.plan import Plan


def _chain(kernels, x: np.ndarray, length: int) -> eagle.Graph:
    scale = Plan(kernels.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
    g = eagle.Graph()
    for k in range(length):
        g.add(scale.bind(x, 1.0 + 1e-3 * k))
    return g.build()


def _traced(fn: Callable[[], object]) -> tuple[int, int]:
    """Bytes that 1,000 calls of ``fn`` leave allocated, and their peak above the start."""
    fn()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in itertools.repeat(None, 1000):  # no loop counter objects
            fn()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before, peak - before


def test_a_launch_allocates_no_more_than_the_bare_native_call(kernels):
    """Nothing grows, and the transient peak is cffi's own (its argument buffer)."""
    g = _chain(kernels, np.linspace(0, 1, 16), 10)
    bare = functools.partial(_core.lib.eagle_launch, g._program._ptr, 1)
    launched, native = _traced(g.launch), _traced(bare)
    assert launched[0] == 0 and launched[1] <= native[1]


def test_a_poll_stops_a_long_run_on_its_thread_and_a_short_run_never_calls_it(kernels):
    calls: list[int] = []

    @_core.ffi.callback("int(void *)")
    def poll(ctx):
        calls.append(threading.get_ident())
        return 1  # stop

    counter = np.zeros(1, np.int64)
    p = Program().stage().kernel(kernels.kernel("count_calls"), [counter], 1, per_sample=False).finalize()
    lib = _core.lib
    assert lib.eagle_program_set_launch(p._ptr, _core.ffi.NULL, poll, _core.ffi.NULL, 0) == 0
    assert lib.eagle_run(p._ptr, 10) == 0 and calls == [] and counter[0] == 10
    start = time.perf_counter()
    assert lib.eagle_run(p._ptr, 10**15) == lib.EAGLE_ERR_INTERRUPTED
    assert calls == [threading.get_ident()] and 10 < counter[0] < 10**15
    assert time.perf_counter() - start < 30 * lib.EAGLE_POLL_MS / 1000  # a tick came, and stopped it


def test_a_run_off_the_poll_thread_never_polls(kernels):
    """Python's signals are handled in the main thread only: a run in another thread goes to its
    end without taking the GIL, as before."""
    calls: list[int] = []

    @_core.ffi.callback("int(void *)")
    def poll(ctx):
        calls.append(threading.get_ident())
        return 1

    counter = np.zeros(1, np.int64)
    p = Program().stage().kernel(kernels.kernel("count_calls"), [counter], 1, per_sample=False).finalize()
    lib = _core.lib
    assert lib.eagle_program_set_launch(p._ptr, _core.ffi.NULL, poll, _core.ffi.NULL,
                                        threading.main_thread().ident) == 0
    replays, status = 10**7, []  # longer than a few ticks
    worker = threading.Thread(target=lambda: status.append(lib.eagle_run(p._ptr, replays)))
    worker.start()
    worker.join()
    assert status == [0] and counter[0] == replays and calls == []
    assert lib.eagle_run(p._ptr, 10**15) == lib.EAGLE_ERR_INTERRUPTED and calls == [threading.get_ident()]


def _stopping_program(kernels) -> Program:
    """A program of one counting item whose poll stops it."""
    @_core.ffi.callback("int(void *)")
    def stop(ctx):
        return 1

    counter = np.zeros(1, np.int64)
    p = Program().stage().kernel(kernels.kernel("count_calls"), [counter], 1, per_sample=False).finalize()
    assert _core.lib.eagle_program_set_launch(p._ptr, _core.ffi.NULL, stop, _core.ffi.NULL, 0) == 0
    p._keep.append(stop)  # libeagle points at it
    return p


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_the_ticker_runs_while_a_run_polls_and_ends_after_a_second_without(kernels):
    p = _stopping_program(kernels)
    idle = _core.lib.EAGLE_POLL_MS / 1000 * 15  # ten idle ticks, and a margin
    time.sleep(idle)  # a ticker an earlier test started has ended
    before, during = _tasks(), []
    done = threading.Event()
    watcher = threading.Thread(target=lambda: [during.append(_tasks()) or time.sleep(0.01)
                                               for _ in iter(done.is_set, True)])
    watcher.start()
    try:
        assert _core.lib.eagle_run(p._ptr, 10**15) == _core.lib.EAGLE_ERR_INTERRUPTED
    finally:
        done.set()
        watcher.join()
    assert max(during) == before + 2  # the watcher and the ticker
    time.sleep(idle)
    assert _tasks() == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_starts_its_own_ticker(kernels):
    p = _stopping_program(kernels)
    assert _core.lib.eagle_run(p._ptr, 10**15) == _core.lib.EAGLE_ERR_INTERRUPTED  # ticking here
    pid = os.fork()
    if pid == 0:  # the child: without a ticker of its own the run would go on until the alarm
        signal.alarm(30)
        os._exit(0 if _core.lib.eagle_run(p._ptr, 10**15) == _core.lib.EAGLE_ERR_INTERRUPTED else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_a_launch_holds_its_guard(kernels):
    counter = np.zeros(1, np.int64)
    p = Program().stage().kernel(kernels.kernel("count_calls"), [counter], 1, per_sample=False).finalize()
    guard = _core.ffi.new("int32_t[1]")
    launch = p.launcher(guard)
    assert launch(3) == 0 and counter[0] == 3 and guard[0] == 0
    guard[0] = 1  # another thread's call holds it
    assert launch(3) == _core.lib.EAGLE_ERR_BUSY and counter[0] == 3


# Run in a child, as test_trust_interrupt does: a SIGINT here could land in pytest.
SCRIPT = textwrap.dedent(r"""
    import os, signal, threading, time
    import numpy as np
    import eagle
    from eagle.graph import opaque

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as an interactive session has it

    def ctrl_c_once(count):
        def kill():
            while count[0] == 0:
                time.sleep(0.001)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=kill, daemon=True).start()

    # Python callbacks in every replay: Python may run the handler on entering one, before its try
    count = np.zeros(1)
    g = eagle.Graph().add_node(opaque(lambda: count.__setitem__(0, count[0] + 1), writes={"c": count}),
                               name="bump").build()
    ctrl_c_once(count)
    try:
        g.launch(10**12)
        print("not interrupted")
    except KeyboardInterrupt:
        print("callbacks", 0 < count[0] < 10**12)

    # A handler that does not raise runs during the run (in the main thread), which goes on
    seen = []
    main = threading.main_thread()
    signal.signal(signal.SIGINT, lambda *_: seen.append(threading.current_thread() is main))
    count[0] = 0
    def slow():
        time.sleep(0.0005)
        count[0] += 1
    g = eagle.Graph().add_node(opaque(slow, writes={"c": count}), name="slow").build()
    ctrl_c_once(count)
    g.launch(600)
    print("handler", seen, count[0])
""")


def _child() -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "EAGLE_NUM_THREADS": "2"})
    assert out.returncode == 0, out.stderr
    assert "Exception ignored" not in out.stderr, out.stderr
    return out.stdout.splitlines()


def test_sigint_stops_a_launch_of_python_callbacks_and_a_handler_that_returns_lets_it_go_on():
    callbacks, handler = _child()
    assert callbacks == "callbacks True"
    assert handler == "handler [True] 600.0"
