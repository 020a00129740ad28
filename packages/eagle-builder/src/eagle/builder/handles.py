"""The handles of a fork: ``with g.parallel() as p:``, ``with p.branch() as b:``, ``b.wait(x)``."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from eagle.extend import Body, EagleRuntimeError, Fork


class Parallel:
    """A fork: its branches may run at the same time; leaving the ``with`` is the join.

    ``g.parallel()`` (or ``branch.parallel()``) opens one while a builder records.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> @eagle.Graph.builder
    ... def fork(x):
    ...     g = eagle.Graph()
    ...     with g.parallel() as p:
    ...         with p.branch():
    ...             a = inc(x)
    ...         with p.branch():
    ...             b = inc(inc(x))
    ...     g.result = (a, b)
    ...     return g
    >>> fork(np.zeros(2))()
    (array([1., 1.]), array([2., 2.]))
    """

    def __init__(self, recorder: Any) -> None:  # the builder's Recorder (which imports this module)
        self.recorder = recorder
        self.fork = Fork([])
        self.parent: Body | None = None

    def __enter__(self) -> Parallel:
        self.parent = self.recorder.stack[-1]
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is None and self.fork.branches:
            self.parent.steps.append(self.fork)
            if self.parent is not self.recorder.top:
                self.recorder.nested_forks.append(self.fork)

    def branch(self) -> Branch:
        """A branch of this fork: ``with p.branch() as b:``; what it records runs in order."""
        if self.parent is None:
            raise EagleRuntimeError("eagle.Graph.parallel: open branches inside `with g.parallel() as p:`")
        return Branch(self)


class Branch:
    """One branch of a fork; it can open a fork of its own and wait for another branch.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> @eagle.Graph.builder
    ... def waits(x):
    ...     g = eagle.Graph()
    ...     with g.parallel() as p:
    ...         with p.branch():
    ...             a = inc(x)
    ...         with p.branch() as w:
    ...             w.wait(a)                  # the rest of w runs after the node that wrote a
    ...             b = inc(a)
    ...     g.result = b
    ...     return g
    >>> waits(np.zeros(2))()
    array([2., 2.])
    """

    def __init__(self, parallel: Parallel) -> None:
        self.owner = parallel  # the fork this branch belongs to
        self.recorder = parallel.recorder
        self.body = Body()

    def __enter__(self) -> Branch:
        self.recorder.stack.append(self.body)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.recorder.stack.pop()
        if kind is None and self.body.steps:
            self.owner.fork.branches.append(self.body)

    def parallel(self) -> Parallel:
        """A fork inside this branch."""
        return Parallel(self.recorder)

    def wait(self, plane: Any) -> Branch:
        """The rest of this branch starts after the node (of another branch) that wrote ``plane``."""
        self.recorder.wait(self, plane)
        return self
