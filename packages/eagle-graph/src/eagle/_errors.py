"""eagle's exceptions and warnings.  Each refusal subclasses the builtin that fits, so a
plain ``except ValueError`` keeps working, and :class:`EagleError`, so ``except
eagle.EagleError`` catches every error eagle raises; its message starts with the
API it came from.  Every warning eagle gives is an :class:`EagleWarning`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_E = TypeVar("_E", bound=type)


class EagleError(Exception):
    """The base of every exception eagle raises (its packages and plugins included).

    Each is also the builtin that fits, under its name (:class:`eagle.errors.ValueError` is a
    ``ValueError``, and so on), so ``except ValueError`` keeps working:

    >>> try:
    ...     eagle.set_num_threads(-3)
    ... except eagle.EagleError as err:
    ...     print(type(err).__name__, isinstance(err, ValueError))
    ValueError True
    """


class EagleWarning(UserWarning):
    """The base of every warning eagle gives: ``warnings.simplefilter("error", eagle.EagleWarning)``
    turns them all into errors, ``"ignore"`` silences them.

    >>> issubclass(eagle.RebuildWarning, eagle.EagleWarning), issubclass(eagle.EagleWarning, UserWarning)
    (True, True)
    """


def _as_builtin(name: str) -> Callable[[_E], _E]:
    """The class under the builtin's own name, in :mod:`eagle.errors`: ``type(err).__name__`` is
    ``"ValueError"`` as the seeds print it, a traceback names ``eagle.errors.ValueError``, and
    pickle finds the class there (a dask or MPI worker's error comes back whole)."""
    def named(cls: _E) -> _E:
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = "eagle.errors"
        return cls
    return named


# One class per builtin eagle raises: a raise names one of these, never the builtin itself
# (tests/test_conventions.py walks the sources for it).
@_as_builtin("ValueError")
class EagleValueError(EagleError, ValueError):
    """An argument of the right type but a value eagle refuses."""


@_as_builtin("TypeError")
class EagleTypeError(EagleError, TypeError):
    """An argument of a type eagle refuses."""


@_as_builtin("RuntimeError")
class EagleRuntimeError(EagleError, RuntimeError):
    """A call that cannot go on in the state it found."""


@_as_builtin("ImportError")
class EagleImportError(EagleError, ImportError):
    """A part that is not installed; the message names the distribution to install."""


@_as_builtin("KeyError")
class EagleKeyError(EagleError, KeyError):
    """A name that is not there."""


@_as_builtin("IndexError")
class EagleIndexError(EagleError, IndexError):
    """An index out of range."""


@_as_builtin("NameError")
class EagleNameError(EagleError, NameError):
    """A name a recorded function uses that is not bound."""


@_as_builtin("AttributeError")
class EagleAttributeError(EagleError, AttributeError):
    """An attribute that is not there."""


@_as_builtin("SyntaxError")
class EagleSyntaxError(EagleError, SyntaxError):
    """A construct a recorded function or kernel may not use."""


@_as_builtin("MemoryError")
class EagleMemoryError(EagleError, MemoryError):
    """An allocation that failed."""


@_as_builtin("AssertionError")
class EagleAssertionError(EagleError, AssertionError):
    """An invariant of eagle's own that does not hold: a bug in eagle, to report."""

class Busy(EagleRuntimeError):
    """Another thread is inside a call that builds, runs or changes the same Graph (build, launch,
    enqueue, bind, add_node, add, add_group, set_logical_size).

    Give each thread its own graph.  A ``RuntimeError``:

    >>> issubclass(eagle.Busy, RuntimeError)
    True
    >>> print(eagle.Busy("eagle.Graph.launch"))
    eagle.Graph.launch: another call is still running on this Graph; give each thread its own
    Graph, or wait for it
    """

    def __init__(self, api: str) -> None:
        super().__init__(f"{api}: another call is still running on this Graph; "
                         "give each thread its own Graph, or wait for it")


class RebuildWarning(EagleWarning):
    """``bind`` could not patch the built graph and built it again.

    A host node or a device condition (its guard cell) held an array that
    ``bind`` swapped: those are not patched in place; kernels and copies are.
    Or your own code (an opaque function) holds one: the builder is called
    again on the new arrays (seed 000).  Given once per graph.
    """


class SiblingRace(EagleValueError):
    """Two branches of one fork touch one plane, one writes it, and no wait orders them.

    A ``ValueError``, raised by :meth:`eagle.Graph.build`:

    >>> from eagle.graph import opaque
    >>> x = np.zeros(4)
    >>> g = eagle.Graph().add_group([opaque(lambda: None, writes={"x": x}),
    ...                              opaque(lambda: None, reads={"x": x})], names=["w", "r"])
    >>> try:
    ...     g.build()
    ... except eagle.SiblingRace as err:
    ...     print(str(err)[:70])
    eagle.Graph.build: 'w' (node 0) and 'r' (node 1) are siblings of one f
    """


def forked_reductions(labels: list[str]) -> EagleValueError:
    """The refusal of the nodes ``labels``, which reduce across samples inside a fork of a graph over a
    communicator (``eagle.Graph(comm=...)``)."""
    return EagleValueError(f"eagle.Graph.build: {', '.join(map(repr, labels))} reduce across samples inside "
                           "a "
                      "fork; with a communicator every reduction is a collective, which every rank must "
                      "reach in the same order, and a fork's branches keep none: move the reduction "
                      "before or after the fork")
