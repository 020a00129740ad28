"""The peers eagle is measured against, each loaded only when it is installed, never a dependency.

JAX is not loaded here in the table's own process: its CPU client must be
made with ``jax_cpu_enable_async_dispatch=False`` (sync dispatch, its fastest
for small calls) before its first computation, a flag of the whole process,
so ``run.py`` times JAX's rows in a child process of its own (``load_jax``
is called there).  Warp is loaded with its messages silenced: it says that
it finds no CUDA driver, and the CPU is what is measured.
"""

import contextlib
import os
import sys
from dataclasses import dataclass

from limits import Limits


@contextlib.contextmanager
def quiet():
    """Nothing reaches stdout or stderr, from Python or from C (Warp's messages come from both)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def load_jax():
    """(jax, jax.numpy) in float64 with synchronous CPU dispatch, or None when JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)  # float64, as every other column
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    return jax, jnp


def load_numba():
    try:
        import numba
    except ImportError:
        return None
    return numba


def load_warp():
    try:
        with quiet():
            import warp as wp

            wp.config.quiet = True
            wp.init()
    except Exception:  # noqa: BLE001 - a Warp that cannot start on this machine is a Warp not installed
        return None
    return wp


def warp_graph(wp, record):
    """A replay of Warp's CPU graph of what ``record()`` launches (``wp.ScopedCapture`` and
    ``wp.capture_launch``: its cheapest replay on the CPU)."""
    with quiet():  # the first launch compiles and says so
        record()  # compiled outside the capture
        with wp.ScopedCapture(device="cpu") as capture:
            record()
    graph = capture.graph
    return lambda: wp.capture_launch(graph)


def warp_loop(wp, start, turn, cap: int):
    """Warp's CPU graph of a capped device loop (``wp.capture_while``): ``start()`` launches what
    resets the state, ``turn(still)`` one turn that counts the samples still going into
    ``still[0]``; the loop goes on while some do and fewer than ``cap`` turns ran.  Returns the
    replay and the one-cell array of the turns the last replay took."""
    @wp.kernel
    def begin(go: wp.array(dtype=wp.int32), turns: wp.array(dtype=wp.int32)):
        go[0] = 1
        turns[0] = 0

    @wp.kernel
    def guard(still: wp.array(dtype=wp.int32), turns: wp.array(dtype=wp.int32), go: wp.array(dtype=wp.int32),
              cap: wp.int32):
        turns[0] = turns[0] + 1
        go[0] = 0
        if still[0] > 0 and turns[0] < cap:
            go[0] = 1
        still[0] = 0

    go, turns, still = (wp.zeros(1, dtype=wp.int32, device="cpu") for _ in range(3))

    def body():
        turn(still)
        wp.launch(guard, dim=1, inputs=[still, turns, go, cap], device="cpu")

    def record():
        start()
        wp.launch(begin, dim=1, inputs=[go, turns], device="cpu")
        wp.capture_while(go, body)

    return warp_graph(wp, record), turns


@dataclass
class Peers:
    """Who runs in this process: eagle's own entries, and each peer module loaded here (or None)."""

    eagle: bool = True
    limits: object | None = None
    jax: tuple | None = None
    numba: object | None = None
    warp: object | None = None

    @classmethod
    def here(cls) -> "Peers":
        """The table's own process: eagle, Numba and Warp; JAX goes to its child."""
        return cls(limits=Limits(), numba=load_numba(), warp=load_warp())

    @classmethod
    def jax_child(cls) -> "Peers":
        return cls(eagle=False, jax=load_jax())
