"""What a CUDA driver's thread must not do: a CUDA call.  Releases made there wait.

A host node runs on the driver's thread, and a capture runs inside the driver; a garbage-
collector run there may still drop eagle's last reference to device memory or a graph, so
those frees are deferred to eagle's next CUDA work.  The host program's callback trampoline
enters this too (a GPU graph's host node runs it), which is why it lives apart from the driver
module: the host program needs no GPU code.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

# deque's append and popleft are atomic: no lock, which a collector run inside a locked section
# (a finalizer calling release) would deadlock on.
_local = threading.local()
pending: collections.deque[tuple[Any, tuple[Any, ...]]] = collections.deque()


@contextlib.contextmanager
def no_cuda_calls() -> Iterator[None]:
    """While inside: releases wait for the next :func:`release_pending` (a host node's or a
    captured function's call, from libeagle)."""
    before = getattr(_local, "deferring", False)
    _local.deferring = True
    try:
        yield
    finally:
        _local.deferring = before


def release(free: Any, *args: Any) -> None:
    """Call ``free(*args)`` (a CUDA free) now, or later when called where CUDA calls are refused."""
    if getattr(_local, "deferring", False):
        pending.append((free, args))
        return
    free(*args)


def release_pending() -> None:
    """The releases deferred from driver threads: made at eagle's next CUDA work."""
    while not getattr(_local, "deferring", False):
        try:
            free, args = pending.popleft()
        except IndexError:
            return
        free(*args)
