"""The hook a recorder (the graph builder) uses to receive kernel calls.

Outside a recorder a kernel call runs at once.  While a recorder is
active, ``kernel(*args, **kwargs)`` returns ``recorder.call(kernel, args,
kwargs)`` instead: the builder turns it into a graph node.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Protocol


class Recorder(Protocol):
    def call(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


_active: ContextVar[Recorder | None] = ContextVar("hawk_recorder", default=None)


def active() -> Recorder | None:
    """The recorder kernel calls go to, or None (they run at once)."""
    return _active.get()


@contextlib.contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    """Send kernel calls to ``recorder`` inside the ``with``.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> class Log:
    ...     def call(self, kernel, args, kwargs):
    ...         return f"recorded {kernel.__name__}"
    >>> with hawk.recording(Log()):
    ...     inc(np.zeros(2))
    'recorded inc'
    """
    token = _active.set(recorder)
    try:
        yield recorder
    finally:
        _active.reset(token)
