"""Making a picture of a big graph without the cyclic garbage collector's passes.

A 10,000-node picture allocates about a million small objects (blocks, rows,
placed boxes, route points) that hold no reference cycles.  Every few
thousand allocations CPython's collector walks the young objects, and as the
heap grows it walks the whole heap, the graph's nodes and arrays included: at
that size the walks cost more than the layout (1.4 s of a 2 s picture, where
the engine's own call is 40 ms).  Reference counting frees everything here as
before; the collector resumes when the picture is made, and finds any cycle
then.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


def without_cycle_passes(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` run with the cyclic collector paused (when it was running), resumed after, also
    when ``fn`` raises; nested calls leave it to the outermost."""

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return run
