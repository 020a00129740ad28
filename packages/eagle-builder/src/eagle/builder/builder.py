"""``@eagle.Graph.builder``: a builder makes a graph from plain Python; a block appends to one.

A function whose first parameter is annotated ``eagle.Graph`` is a *block*:
it records into the graph (or branch) it is given and returns what it
computes.  Any other is a *builder*: calling it records a new graph, builds
it, and returns it.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar, cast

from eagle import extend
from eagle.builder.handles import Branch
from eagle.builder.recorder import RACE, Recorder, active, plane_of
from eagle.builder.rewrite import first_line, rewritten
from eagle.builder.runtime import runtime
from eagle.extend import EagleRuntimeError, EagleTypeError, EagleValueError, Graph, SiblingRace, fail_together

_P = ParamSpec("_P")
_R = TypeVar("_R")


def builder(fn: Callable[_P, _R]) -> Builder[_P, _R]:
    """Make ``fn`` a graph builder (or a block); its source is rewritten once, here.

    ``@eagle.Graph.builder`` is this function.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> @hawk.kernel
    ... def below(x: Scalar, limit: hawk.Param, flag: hawk.Mutable[hawk.UInt32]):
    ...     flag = hawk.math.uint32(hawk.sum(x < limit))
    >>> @eagle.Graph.builder
    ... def count_up(x, flag):
    ...     g = eagle.Graph()
    ...     for _ in range(10):       # a capped device loop: at most 10 turns ...
    ...         if not flag:          # ... leaving when the one-cell guard reads 0
    ...             break
    ...         x = inc(x)
    ...         below(x, 3.0, flag)   # a kernel's reduction rewrites the guard
    ...     g.result = x
    ...     return g
    >>> flag = np.ones(1, np.uint32)
    >>> g = count_up(np.array([0.0, 1.5]), flag)   # records and builds; nothing runs
    >>> g()                                         # one replay, the whole loop inside it
    array([3. , 4.5])

    A counted loop's index is a one-cell int32 plane its body's kernels read
    (``i + 1``, ``2 * i`` are computed on the device too), and a loop over the
    rows of a stacked array is one device loop that moves row ``t`` in (and a
    result row out) at every turn, whatever the count:

    >>> @hawk.kernel
    ... def step(y: Scalar, x: Scalar, i: hawk.Int32) -> Scalar:
    ...     return 0.5 * y + x * hawk.math.float64(i)
    >>> @eagle.Graph.builder
    ... def scan(y, xs, ys):
    ...     g = eagle.Graph()
    ...     for t in range(xs.shape[0]):    # one loop of 3 turns, not 3 copies of its body
    ...         y = step(y, xs[t], t + 1)   # row t of xs; the turn + 1
    ...         ys[t] = y                   # stacked into row t of ys
    ...     g.result = ys
    ...     return g
    >>> scan(np.zeros(2), np.ones((3, 2)), np.zeros((3, 2)))()
    array([[1.  , 1.  ],
           [2.5 , 2.5 ],
           [4.25, 4.25]])

    The count may be a one-cell array, read at every launch; a launch whose
    count asks for more turns than the rows raises, as Python's loop would:

    >>> @eagle.Graph.builder
    ... def scan_n(y, xs, n):
    ...     g = eagle.Graph()
    ...     for t in range(n):              # checked against the rows of xs at every launch
    ...         y = step(y, xs[t], t + 1)
    ...     g.result = y
    ...     return g
    >>> n = np.array([2], np.uint32)
    >>> g = scan_n(np.zeros(2), np.ones((3, 2)), n)
    >>> g()
    array([2.5, 2.5])
    >>> n[0] = 5
    >>> g()
    Traceback (most recent call last):
    ...
    eagle.errors.IndexError: eagle.Graph.builder: scan_n:4: range(n) asks for 5 turns, ...
    """
    return Builder(fn)


def _is_graph_annotation(annotation: Any) -> bool:
    if annotation is Graph:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "Graph"


class Builder(Generic[_P, _R]):
    """A builder or block made by ``@eagle.Graph.builder``.

    A function whose first parameter is annotated ``eagle.Graph`` is a
    *block*: it appends to the graph (or fork branch) it is given.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> @eagle.Graph.builder
    ... def twice(g: eagle.Graph, v):          # a block
    ...     return inc(inc(v))
    >>> @eagle.Graph.builder
    ... def chain(x):                           # a builder: makes and returns its graph
    ...     g = eagle.Graph()
    ...     g.result = twice(g, x)
    ...     return g
    >>> type(chain).__name__, chain(np.zeros(2))()
    ('Builder', array([2., 2.]))
    """

    def __init__(self, fn: Callable[_P, _R]) -> None:
        if not isinstance(fn, types.FunctionType):  # the rewrite needs a def's source and code
            raise EagleTypeError("eagle.Graph.builder: takes a plain Python function defined in a file (a "
                                 "`def`); "
                            f"got {type(fn).__name__} {getattr(fn, '__name__', fn)!r}: wrap the call in a "
                            "def (def f(x): ...) and decorate that")
        self.fn = fn
        functools.update_wrapper(self, fn)
        self.signature = inspect.signature(fn)
        params = list(self.signature.parameters.values())
        self.block = bool(params) and _is_graph_annotation(params[0].annotation)
        self.rewritten = rewritten(fn, runtime)
        self.first_line = first_line(fn)

    def __repr__(self) -> str:
        return f"<eagle.Graph.builder {'block' if self.block else 'builder'} {self.fn.__qualname__}>"

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # a builder gives the graph its function returned, built; a block what its function returns
        return cast(_R, self._block(args, kwargs) if self.block else self._builder(args, kwargs))

    def _builder(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Graph:
        name = self.fn.__name__
        call = self.signature.bind(*args, **kwargs)
        call.apply_defaults()
        for key, value in call.arguments.items():  # the function sees a tensor as the array over it
            call.arguments[key] = plane_of(value, "eagle.Graph.builder", f"{name}'s argument {key!r}")
        recorder = Recorder()
        recorder.arguments = dict(call.arguments)
        try:
            with recorder.running(name, self.first_line):
                returned = self.rewritten(*call.args, **call.kwargs)
            graph = recorder.graph
            if graph is None or returned is not graph:
                raise EagleTypeError(f"{name}: a builder returns its graph: `return g`; declare the arrays "
                                     "with "
                                "`g.result = ...`")
            recorder.finish()
            extend.declare_temporaries(graph, recorder.temporaries())
        except Exception as exc:
            comm = getattr(recorder.graph, "comm", None)
            if comm is not None:  # the other ranks wait in their builds for this one
                fail_together(comm, exc)
            raise
        try:
            graph.build()
        except SiblingRace as race:
            raise EagleValueError(f"{RACE} [{race}]") from None
        recorder.rebuild = lambda arguments: self._builder((), arguments)  # a bind no patch reaches
        extend.state(graph).update(bind=recorder.bind, names=recorder)  # for g.bind and eagle.diff
        return graph

    def _block(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = self.signature.bind(*args, **kwargs)
        target, *passed = call.arguments.values()  # what the caller may still hold: never merged into
        name = self.fn.__name__
        recording = extend.recording_of(target) if isinstance(target, Graph) else None
        if isinstance(target, Branch) or recording is not None:
            recorder = target.recorder if isinstance(target, Branch) else recording
            if recorder is not active():
                raise EagleRuntimeError(f"{name}: a block records into the graph being built now; this "
                                   "graph or branch belongs to another builder")
            with recorder.running(name, self.first_line, passed):
                return self.rewritten(*call.args, **call.kwargs)
        if not isinstance(target, Graph):
            raise EagleTypeError(f"{name}: a block takes the graph to append to first (an eagle.Graph or a "
                            f"branch handle), got {type(target).__name__}")
        if extend.view(target).built:
            raise EagleRuntimeError(f"{name}: the graph is built; adding to a built graph is refused: make a "
                               "new Graph")
        recorder = Recorder(target)
        extend.record_into(target, recorder)
        try:
            with recorder.running(name, self.first_line, passed):
                result = self.rewritten(*call.args, **call.kwargs)
        except BaseException:
            extend.record_into(target, None)
            raise
        recorder.finish()
        return result
