"""The hook a recorder (the graph builder) uses to receive kernel calls.

Outside a recorder a kernel call runs at once.  While a recording is
active on eagle's one recording channel (:mod:`eagle.extend`),
``kernel(*args, **kwargs)`` returns ``recorder.call(kernel, args, kwargs)``
instead: the builder turns it into a graph node.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Protocol

from eagle import extend


class Recorder(Protocol):
    def call(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


class _Calls(extend.Recording):
    """A recorder of kernel calls only, on eagle's recording channel."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def call(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.recorder.call(kernel, args, kwargs)


def active() -> extend.Recording | None:
    """The recording kernel calls go to, or None (they run at once)."""
    return extend.active()


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
    with extend.recording(recorder if isinstance(recorder, extend.Recording) else _Calls(recorder)):
        yield recorder
