"""Recording: kernel calls become nodes, device conditions become constructs.

The rewritten function calls the :data:`runtime`; the runtime hands each
construct to the active :class:`Recorder`.  A Python condition is decided at
once, with Python's semantics.  A one-cell uint32 array is a device
condition: every arm is recorded into its own body (the names it assigns
restored between arms), and the names an arm rebinds are merged back into
the arrays they held before, so that, after the construct, each name has one
array whatever ran.  A per-sample kernel's output is merged by writing it in
place (its node is re-pointed at the old array); anything else is copied.  A
builder argument is never written: the graph merges into its own copy,
refreshed from the argument at the start of every launch.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle import extend
from eagle.builder import substitute
from eagle.builder.handles import Branch, Parallel
from eagle.builder.indices import LoopIndex, kernel_arguments
from eagle.builder.uncapped import UncappedLoopWarning
from eagle.extend import (
    Body,
    CellAffine,
    Copy,
    DeviceIf,
    DeviceLoop,
    DeviceSwitch,
    EagleIndexError,
    EagleNameError,
    EagleRuntimeError,
    EagleSyntaxError,
    EagleTypeError,
    EagleValueError,
    Fork,
    Graph,
    Node,
    RowMove,
    SiblingRace,
    SignalAfter,
    TurnCheck,
    Wait,
    contiguous,
    device_copy_like,
    device_of,
    empty_like_device,
    flatten,
    is_array,
    on_device,
    overlap,
    refuse_sibling_races,
    zeros_like_device,
)
from eagle.extend import is_guard_cell as is_cell
from eagle.graph import copy as copy_node


class _Signal:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<eagle.builder {self.name}>"


UNBOUND, BREAK, CONTINUE, RETURN = (_Signal(n) for n in ("unbound", "break", "continue", "return"))


class OneArm:
    """What a name holds after a device construct that gave it an array in some arms only (a
    loop may run no turn): using it is an error that says so."""

    def __init__(self, name: str, where: str, what: str, before: Any) -> None:
        if what == "loop":
            self.message = (f"{name!r} is assigned inside the device loop at {where} in a part that may not "
                            "run (a loop may run no turn, a break or continue skips the rest of its turn); "
                            "give it an array before the loop")
        elif before is UNBOUND:
            self.message = (f"{name!r} is assigned in only one arm of the device construct at {where}; "
                            "assign it in every arm (or before the construct)")
        else:
            self.message = (f"{name!r} holds {repr(before)[:40]} before the device construct at "
                            f"{where} and an array after some of its arms only; assign it an array in every "
                            "arm, or before the construct")

    def refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise EagleNameError(self.message)

    # any use of the value while recording: a test, a comparison, arithmetic, an index, an array
    __bool__ = __array__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = refuse
    __int__ = __float__ = __index__ = __add__ = __radd__ = __sub__ = __rsub__ = refuse
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = refuse
    __hash__ = object.__hash__


class NoItem(OneArm):
    """What a device loop's ``for`` target holds in its body: the turns have no Python value."""

    def __init__(self, where: str) -> None:
        self.message = (f"the loop variable of the device loop at {where} has no value while recording "
                        "(the turns are counted on the device): keep a count in a one-cell array a kernel "
                        "updates, and pass that")


RACE = ("eagle.Graph.build: two branches of one parallel region touch one plane and one writes it: put them "
        "in one branch, or order them with <branch>.wait(plane)")


@dataclass(frozen=True)
class NotCell:
    """``not cell``: a device condition that holds while the cell reads 0."""

    cell: np.ndarray


def _device(value: Any) -> bool:
    return is_cell(value) or isinstance(value, NotCell)


def _root(array: Any) -> Any:
    """The array that owns the memory ``array`` views."""
    while getattr(array, "base", None) is not None and is_array(array.base):
        array = array.base
    return array


@dataclass
class _Loop:
    """A loop being recorded: a device loop keeps the cells its break and continue set."""

    device: bool
    line: int
    stop: np.ndarray | None = None  # set by break: leave the loop
    skip: np.ndarray | None = None  # set by break and continue: skip the rest of this turn
    guards: list[tuple[Body, tuple]] = field(default_factory=list)  # (guarded rest, the state it began in)
    state: tuple = ()  # (get, put, names) of the loop body's names
    rows: int | None = None  # the fewest rows of the stacked arrays the body moves rows of
    tables: list[Any] = field(default_factory=list)  # those stacked arrays
    turns: int | None = None  # the most turns, when a Python number (a scan's count, a cap)
    body: Body | None = None  # a device loop's body
    hoisted: int = 0  # how many steps at the start of the body were put there by hoist


@dataclass(frozen=True)
class _DeviceBody:
    """An arm, loop body or guarded rest being recorded: what only some replays run."""

    body: Body
    what: str  # "the device if at f:3"
    frame: int  # how many builders and blocks were running: the function that wrote the construct


# (name, getter, only at a for's variable) of what a construct assigns items of
Containers = Sequence[tuple[str, Callable[[], Any], bool]]
Stacked = Sequence[tuple[str, Callable[[], Any]]]  # (name, getter) of what a loop indexes at its variable
Scope = Callable[[], dict[str, Any]]  # the running function's own names and their values

def active() -> Recorder | None:
    """The recorder of the builder running now, if any (eagle's one recording channel)."""
    recorder = extend.active()
    return recorder if isinstance(recorder, Recorder) else None


def current() -> Recorder:
    recorder = active()
    if recorder is None:
        raise EagleRuntimeError("eagle.Graph.builder: a rewritten construct ran with no builder recording")
    return recorder


class Recorder(extend.Recording):
    """Records one graph: its nodes, constructs and forks, then adds them to the Graph."""

    def __init__(self, graph: Graph | None = None) -> None:
        self.graph = graph
        self.top = Body()
        self.stack: list[Body] = [self.top]
        self.labels: dict[int, str] = {}  # id(node) -> label
        self.producer: dict[int, Node] = {}  # id(array) -> the node that wrote it
        self.arguments: dict[str, Any] = {}  # builder parameter -> what was passed
        self.own: dict[int, np.ndarray] = {}  # id(argument array) -> the graph's copy of it
        self.prologue: list[tuple[str, np.ndarray, np.ndarray]] = []  # (name, argument, own copy)
        self.kept: dict[int, np.ndarray] = {}  # buffer=True outputs awaiting their name
        self.buffers: dict[str, np.ndarray] = {}  # label -> kept array
        self.loops: list[_Loop] = []
        # (function, first line, what a block was passed) of the builder or block running
        self.frames: list[tuple[str, int, tuple[Any, ...]]] = []
        self.nested_forks: list[Fork] = []
        self.retired: list[Any] = []  # arrays merged away, kept alive for the ids in the maps above
        self.device_bodies: dict[int, _DeviceBody] = {}  # id(body) -> the device body it is
        # id(array) -> (array, the device body whose node made it): only a merged name carries it out
        self.homes: dict[int, tuple[Any, _DeviceBody]] = {}
        self.constants: dict[int, Any] = {}  # value -> a one-cell uint32 array holding it
        self.fresh: dict[int, Any] = {}  # id -> an output a kernel call allocated (no buffer=)
        self.written: set[int] = set()  # ids of the memory (root arrays) the recorded nodes write
        #: arguments -> the builder's graph recorded and built on them (what a bind that no patch
        #: reaches does: the builder sets it)
        self.rebuild: Callable[[dict[str, Any]], Graph] | None = None

    # --------------------------------------------------------------- scope
    @contextlib.contextmanager
    def running(self, name: str, first_line: int, passed: Sequence[Any] = ()) -> Iterator[Recorder]:
        """Record what ``name`` (a builder or block, which was ``passed`` these values) does inside
        the ``with``."""
        self.frames.append((name, first_line, tuple(passed)))
        try:
            with extend.recording(self):  # new graphs, nodes and kernel calls come here
                yield self
        finally:
            self.frames.pop()

    def adopt(self, graph: Graph) -> None:
        if self.graph is None:
            self.graph = graph
            extend.record_into(graph, self)

    def where(self, line: int) -> str:
        """``function:line``, the line counted from the function's first (decorator) line."""
        return f"{self.frames[-1][0]}:{line}"

    # -------------------------------------------------------------- nodes
    def append(self, node: Node, label: str, touches: Sequence[Any] | None = None) -> Node:
        """Record ``node``; ``touches`` (default: its planes) must not have left a device body."""
        if self.homes:  # else no array was made in a device body: none can have left one
            for array in [a for _, a, _ in node.planes()] if touches is None else touches:
                self.refuse_escaped(array, label)
        self.stack[-1].steps.append(node)
        self.labels[id(node)] = label
        self.written.update(id(_root(a)) for _, a, role in node.planes() if role != "read" and is_array(a))
        return node

    def replayed(self, value: Any) -> bool:
        """Whether ``value`` shares memory with an array whose bytes a replay sets: one a node
        writes, a builder argument, or the graph's copy of one (compared by the memory they view).
        Python computing on it while recording sees it before any replay, once."""
        if not is_array(value):
            return False
        root = id(_root(value))
        return root in self.written or any(root == id(_root(a)) for a in
                                           [*self.arguments.values(), *self.own.values()] if is_array(a))

    # ------------------------------------------------------ device bodies
    def open_device_body(self, body: Body, what: str, line: int) -> Body:
        """Mark ``body`` as one a device construct runs only in some replays."""
        self.device_bodies[id(body)] = _DeviceBody(body, f"the device {what} at {self.where(line)}",
                                                   len(self.frames))
        return body

    def make_here(self, array: Any) -> Any:
        """``array`` belongs where recording is now: to the innermost device body, if any."""
        inner = self.innermost_device_body()
        if inner is None:
            self.homes.pop(id(array), None)
        else:
            self.homes[id(array)] = (array, inner)
        return array

    def innermost_device_body(self) -> _DeviceBody | None:
        if not self.device_bodies:  # asked at every kernel call: most graphs have no device body
            return None
        return next((self.device_bodies[id(b)] for b in reversed(self.stack) if id(b) in self.device_bodies),
                    None)

    def refuse_escaped(self, array: Any, label: str) -> None:
        """An array a node made inside a device body, used after that body by a route the builder
        does not carry (a helper's dict, an attribute): it holds one arm's value, or none."""
        while is_array(array):
            made = self.homes.get(id(array))
            if made is not None and not any(b is made[1].body for b in self.stack):
                raise EagleTypeError(f"eagle.Graph.builder: {label!r} uses an array computed inside "
                                f"{made[1].what}, outside that arm or loop body, reached by a route the "
                                "builder does not carry (a helper's dict or object, a nested function's "
                                "nonlocal); eagle carries plain names and `name[key] = ...` items assigned "
                                "in the construct itself (every arm is recorded, a loop body once): assign "
                                "the value to a plain name in every arm (v = dbl(v)) and put it where it "
                                "goes after the construct")
            array = getattr(array, "base", None)  # a view: the array it views

    def mutates(self, line: int, text: str) -> None:
        """``text`` (an item or attribute assignment, a container method call) is about to run:
        refused inside a device construct of this function, where it would hold the last arm's
        value (or a loop body's first turn) whatever the replay runs."""
        inner = self.innermost_device_body()
        if inner is not None and inner.frame == len(self.frames):
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: `{text}` changes a list, dict or "
                            f"object inside {inner.what}; eagle carries plain names and `name[key] = ...` "
                            "items through a device construct, not other changes (every arm is recorded, a "
                            "loop body once): assign to a plain name (v = dbl(v)) or an item the container "
                            "has (s['v'] = v) inside the construct, and change the container after it")

    def call(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A hawk kernel call: a plan node, its outputs allocated; returns them."""
        buffer = kwargs.pop("buffer", None)
        if kwargs:
            raise EagleTypeError(f"{kernel.__name__}: a recorded call takes its arguments and buffer= only, "
                            f"got {', '.join(kwargs)}")
        for arg in args:
            if isinstance(arg, OneArm):
                raise EagleNameError(f"{kernel.__name__}: {arg.message}")
        args = kernel_arguments(kernel, args)
        bound = kernel.plan(*args, buffer=None if buffer is True else buffer)
        node = self.append(Node("plan", bound), kernel.__name__)
        home = self.innermost_device_body() if buffer is None or buffer is True else None
        for out in bound.outputs:
            self.producer[id(out)] = node
            if buffer is True:
                self.kept[id(out)] = out
            elif buffer is None:
                self.fresh[id(out)] = out
            if home is not None:
                self.homes[id(out)] = (out, home)
        return bound.result()

    def add_node(self, node: Node, name: str | None) -> None:
        """A node made while recording (``eagle.copy(...)``, or ``g.add_node``): it goes in order;
        given twice (``g.add_node(eagle.copy(...))``), it is recorded once, with the name."""
        if id(node) in self.labels:
            self.labels[id(node)] = name or self.labels[id(node)]
            return
        self.append(node, name or node.default_label())
        for _, array, role in node.planes():
            if role != "read":
                self.producer[id(array)] = node

    def withdraw(self, node: Node) -> None:
        """``node``, recorded where it was made, is another node's step now: it runs there only."""
        if id(node) not in self.labels:
            return
        steps = self.stack[-1].steps
        at = next((i for i in range(len(steps) - 1, -1, -1) if steps[i] is node), None)
        if at is not None:
            del steps[at], self.labels[id(node)]

    def named(self, name: str, value: Any) -> Any:
        """``name = <call>``: the node that computed ``value`` takes the name as its label."""
        node = self.producer.get(id(value)) if is_array(value) else None
        if node is not None and self.labels.get(id(node)) == getattr(getattr(node.payload, "plan", None),
                                                                      "name", None):
            self.labels[id(node)] = name
        if is_array(value) and id(value) in self.kept:
            self.buffers[name] = self.kept.pop(id(value))
        return value

    def parallel(self) -> Parallel:
        return Parallel(self)

    def wait(self, branch: Branch, value: Any) -> None:
        """``b.wait(x)``: the rest of branch ``b`` starts after the node that wrote ``x``."""
        writer = self.producer.get(id(value)) if is_array(value) else None
        if writer is None:
            raise EagleValueError("eagle.Graph.wait: the array was not written by a node of this graph; wait "
                             "for an array a node of another branch computes")
        for body in branch.owner.fork.branches:
            for i, step in enumerate(body.steps):
                if step is writer or (isinstance(step, Node) and any(n is writer for n in step.walk())):
                    if step.kind != "signal_after":
                        wrapped = Node("signal_after", SignalAfter(step))
                        self.labels[id(wrapped)] = self.labels[id(step)]
                        body.steps[i] = step = wrapped
                    self.append(Node("wait", Wait(step, self.labels[id(step)])), "wait")
                    return
        # written before the fork or earlier in this branch: already ordered

    # ------------------------------------------------------------ runtime
    def truth(self, value: Any, line: int) -> bool:
        """A Python condition's truth; an array that is not a one-cell uint32 is refused."""
        if is_array(value):
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: the condition is an array of "
                            f"{value.size} {value.dtype}; a device condition is a one-cell uint32 "
                            "array (shape (1,)): reduce it to one cell in a kernel (flag = "
                            "hm.uint32(hawk.sum(...)) into a Mutable[UInt32] of one cell) or index one cell "
                            "(flag[i:i + 1]); a Python condition is a Python value")
        return bool(value)

    def if_(self, cond: Any, then: Callable[[], Any], orelse: Callable[[], Any], get: Callable[[], tuple],
            put: Callable[[tuple], None], names: tuple[str, ...], line: int,
            containers: Containers = (), scope: Scope = dict) -> Any:
        if not _device(cond):
            return self.python_signal((then if self.truth(cond, line) else orelse)(), line)
        state = self.carried(get, put, names, containers, scope, line, "if")
        bodies, signals = self.record_arms([then, orelse], *state, line, "if")
        cell = cond.cell if isinstance(cond, NotCell) else cond
        if isinstance(cond, NotCell):
            bodies.reverse()
        self.append(Node("device_if", DeviceIf(cell, bodies[0], bodies[1])), "if", [cell])
        self.after_device_signals(signals, line)
        return None

    def match_(self, subject: Any, cases: Sequence[tuple[tuple[int, ...], Callable[[], Any]]],
               default: Callable[[], Any] | None, get: Callable[[], tuple], put: Callable[[tuple], None],
               names: tuple[str, ...], line: int, containers: Containers = (), scope: Scope = dict) -> Any:
        if not is_cell(subject):
            self.truth(is_array(subject) and subject, line)  # an array that is not a cell is refused
            for values, fn in cases:
                if subject in values:
                    return self.python_signal(fn(), line)
            return self.python_signal(default(), line) if default else None
        arms = [fn for _, fn in cases] + [default or (lambda: None)]
        state = self.carried(get, put, names, containers, scope, line, "match")
        bodies, signals = self.record_arms(arms, *state, line, "match")
        table = {int(v): body for (values, _), body in zip(cases, bodies, strict=False) for v in values}
        self.append(Node("device_switch", DeviceSwitch(subject, table, bodies[-1])), "match", [subject])
        self.after_device_signals(signals, line)
        return None

    def while_(self, test: Callable[[], Any], body: Callable[[Any], Any], get: Callable[[], tuple],
               put: Callable[[tuple], None], names: tuple[str, ...], line: int,
               containers: Containers = (), scope: Scope = dict) -> Any:
        cond = test()
        if not _device(cond):
            return self.python_loop(_repeat_while(lambda: self.truth(test(), line), cond, line, self),
                                    body, line)
        if self.graph is not None and self.graph.record:
            raise EagleValueError(f"{self.where(line)}: an uncapped device loop cannot be recorded "
                                  "(record=True): "
                             "cap it: for _ in range(N): if not cell: break")
        warnings.warn(f"uncapped device loop at {self.where(line)}: a body that never clears its guard never "
                      "returns; cap it with for _ in range(N): if not cell: break", UncappedLoopWarning,
                      stacklevel=2)
        cell, want = (cond.cell, 0) if isinstance(cond, NotCell) else (cond, 1)
        state = self.carried(get, put, names, containers, scope, line, "loop")
        return self.device_loop(cell, want, "while", -1, body, *state, line)

    def capped(self, n: Any, stop: Callable[[], Any], body: Callable[[Any], Any], get: Callable[[], tuple],
               put: Callable[[tuple], None], names: tuple[str, ...], line: int,
               targets: tuple[str, ...] = (), indexed: bool = False, containers: Containers = (),
               scope: Scope = dict) -> Any:
        first = stop()
        if not _device(first):
            return self.python_loop(_until(stop, first, range(n), self, line), body, line)
        if _device(n):
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: the cap of a capped device loop "
                                 "is a "
                            "Python int: for _ in range(N): if not cell: break")
        # the loop goes on while the break condition is false
        cell, want = (first.cell, 1) if isinstance(first, NotCell) else (first, 0)
        state = self.carried(get, put, names, containers, scope, line, "loop")
        return self.device_loop(cell, want, "while", int(n), body, *state, line, targets, indexed, int(n))

    def for_range(self, args: tuple[Any, ...], body: Callable[[Any], Any], get: Callable[[], tuple],
                  put: Callable[[tuple], None], names: tuple[str, ...], line: int,
                  targets: tuple[str, ...] = (), indexed: bool = False, stacked: Stacked = (),
                  containers: Containers = (), scope: Scope = dict, count: str = "") -> Any:
        """``for i in range(...)``: a counted device loop over a cell, or over a Python number when
        the body reads or writes ``xs[i]`` of a stacked array (a scan, one loop); else Python's.
        ``count``: the argument of ``range`` as written, for the message of a count past the rows."""
        if any(_device(a) or is_array(a) for a in args):
            if len(args) != 1 or not is_cell(args[0]):
                raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: a counted device loop is "
                                "for i in range(cell), with one one-cell uint32 argument")
            state = self.carried(get, put, names, containers, scope, line, "loop")
            return self.device_loop(args[0], 1, "count", -1, body, *state, line, targets, indexed,
                                    stacked=(count, stacked))
        rows = _stacked_rows(stacked)
        if not rows or len(args) != 1:
            return self.python_loop(range(*args), body, line)
        turns = operator.index(args[0])
        short = {name: n for name, n in rows.items() if n < turns}
        if short:
            shown = ", ".join(f"{name} has {n}" for name, n in short.items())
            raise EagleIndexError(f"eagle.Graph.builder: {self.where(line)}: for {targets[0]} in "
                                  f"range({turns}) "
                             f"reads or writes rows {targets[0]} of stacked arrays, and {shown}: loop over "
                             f"range({min(short.values())}), or pass arrays of {turns} rows")
        state = self.carried(get, put, names, containers, scope, line, "loop")
        # its count is the cap too: a record=True graph on the GPU allots each turn's state at build
        return self.device_loop(self.constant(max(turns, 0)), 1, "count", max(turns, 0), body, *state, line,
                                targets, True, turns)

    def for_(self, iterable: Any, body: Callable[[Any], Any], get: Callable[[], tuple],
             put: Callable[[tuple], None], names: tuple[str, ...], line: int) -> Any:
        if _device(iterable):
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: a for over a device cell: write "
                            "for i in range(cell) for a counted device loop")
        return self.python_loop(iterable, body, line)

    def carried(self, get: Callable[[], tuple], put: Callable[[tuple], None], names: tuple[str, ...],
                containers: Containers, scope: Scope, line: int,
                what: str) -> tuple[Callable[[], tuple], Callable[[tuple], None], tuple[str, ...], Scope]:
        """A device construct's state with the items of the dicts and lists it assigns
        (``s["v"] = ...``): each item is carried as a name is, restored between arms, merged after."""
        held: list[tuple[str, Any, list[Any]]] = []  # (name, container, its keys now)
        for name, read, rows in containers:
            try:
                container = read()
            except NameError:  # bound inside the construct: a name the merge refuses or carries
                continue
            if rows and is_array(container):  # `ys[t] = v`: a row move at a device loop's index
                continue
            if any(container is c for _, c, _ in held):
                continue
            if not isinstance(container, (dict, list)):
                raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: `{name}[...] = ...` inside "
                                     "the "
                                f"device {what}, where {name} is a {type(container).__name__}; eagle carries "
                                "plain names and the items of dicts and lists through a device construct: "
                                f"assign to a plain name inside it and put that into {name} after it")
            held.append((name, container, _keys(container)))
        if not held:
            return get, put, names, scope
        slots = [(container, key) for _, container, keys in held for key in keys]

        def get_items() -> tuple:
            for name, container, keys in held:
                if _keys(container) != keys:
                    raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: {name} gains or loses "
                                         "items "
                                    f"inside the device {what}; eagle carries the items a dict or list "
                                    "already has through a device construct: give it every key before it")
            return (*get(), *(container[key] for container, key in slots))

        def put_items(values: tuple) -> None:
            put(values[:len(names)])
            for (container, key), value in zip(slots, values[len(names):], strict=True):
                container[key] = value

        def scope_items() -> dict[str, Any]:  # a carried container holds its items as state, not as an alias
            return {n: v for n, v in scope().items() if not any(v is c for _, c, _ in held)}

        labels = tuple(f"{name}[{key!r}]" for name, _, keys in held for key in keys)
        return get_items, put_items, (*names, *labels), scope_items

    # ---------------------------------------------------- Python control
    def python_loop(self, items: Any, body: Callable[[Any], Any], line: int) -> Any:
        self.loops.append(_Loop(device=False, line=line))
        try:
            for item in items:
                signal = body(item)
                if signal is BREAK:
                    break
                if signal is not None and signal is not CONTINUE:
                    return signal  # a return
        finally:
            self.loops.pop()
        return None

    def python_signal(self, signal: Any, line: int) -> Any:
        """A signal from an arm Python decided: passed up, unless a device loop is in the way."""
        if signal in (BREAK, CONTINUE) and self.loops and self.loops[-1].device:
            raise EagleSyntaxError(f"eagle.Graph.builder: {self.where(line)}: a break or continue decided in "
                              "Python inside a device loop would leave the loop at record time; guard it "
                              "with a device cell, or move the Python decision out of the loop")
        return signal

    # ---------------------------------------------------- device control
    def record_arms(self, arms: Sequence[Callable[[], Any]], get: Callable[[], tuple],
                    put: Callable[[tuple], None], names: tuple[str, ...], scope: Scope, line: int,
                    what: str) -> tuple[list[Body], list[tuple[Body, Any]]]:
        """Record each arm into its own body from the same state, then merge the names."""
        before = get()
        recorded = []
        for fn in arms:
            put(before)
            body = self.open_device_body(Body(), what, line)
            self.stack.append(body)
            try:
                signal = fn()
            finally:
                self.stack.pop()
            recorded.append((body, get(), signal))
        put(self.merge(names, before, [(b, after) for b, after, _ in recorded], line, what, scope))
        return [b for b, _, _ in recorded], [(b, s) for b, _, s in recorded]

    def after_device_signals(self, signals: list[tuple[Body, Any]], line: int) -> None:
        """break/continue in device arms: the arm sets the loop's cells, the rest of the turn is guarded."""
        fired = [(body, s) for body, s in signals if s is not None]
        if not fired:
            return
        for _, signal in fired:
            if signal not in (BREAK, CONTINUE):
                raise EagleSyntaxError(f"eagle.Graph.builder: {self.where(line)}: return inside a device "
                                  "construct; assign the value and return after it")
        loop = self.loops[-1] if self.loops else None
        if loop is None or not loop.device:
            raise EagleSyntaxError(f"eagle.Graph.builder: {self.where(line)}: a break or continue under a "
                                   "device "
                              "condition needs a device loop around it"
                              + (f"; the loop at line {loop.line} is decided in Python" if loop else ""))
        for body, signal in fired:
            self.stack.append(body)
            self.set_cell(self.loop_cell(loop, "skip"), 1)
            if signal is BREAK:
                self.set_cell(self.loop_cell(loop, "stop"), 1)
            self.stack.pop()
        guard = self.open_device_body(Body(), "loop", loop.line)
        loop.guards.append((guard, loop.state[0]()))
        self.stack.append(guard)

    def loop_cell(self, loop: _Loop, which: str) -> np.ndarray:
        if getattr(loop, which) is None:
            setattr(loop, which, self.new_cell())
        return getattr(loop, which)

    def new_cell(self) -> Any:
        """A zeroed one-cell uint32 array beside the builder's arguments: on their GPU when one of
        them is a device array (a conditional node reads its cell on the device)."""
        device = self.device_argument()
        return np.zeros(1, np.uint32) if device is None else zeros_like_device(device, (1,), np.uint32)

    def device_argument(self) -> Any:
        return next((a for a in self.arguments.values() if on_device(a)), None)

    def constant(self, value: int) -> Any:
        """A one-cell uint32 array holding ``value``, beside the builder's arguments (made once)."""
        if value not in self.constants:
            host, device = np.array([value], np.uint32), self.device_argument()
            self.constants[value] = host if device is None else device_copy_like(device, host)
        return self.constants[value]

    def new_index_cell(self) -> Any:
        """A one-cell int32 array beside the builder's arguments, for a loop index."""
        device = self.device_argument()
        return np.zeros(1, np.int32) if device is None else zeros_like_device(device, (1,), np.int32)

    def hoist(self, loop: _Loop, node: Node) -> None:
        """``node`` at the start of ``loop``'s body, after those put there before: a value of the
        loop index, which holds still through a turn, computed before anything that reads it (so
        it cuts no run of kernels the build would fuse)."""
        loop.body.steps.insert(loop.hoisted, node)
        loop.hoisted += 1

    def hoist_takes(self, loop: _Loop) -> None:
        """Row moves out of arrays the loop body never writes, to the start of the body: the
        same rows, and the body's kernels in one run the build can fuse."""
        steps = loop.body.steps
        written = [a for node in loop.body.nodes() for _, a, role in node.planes() if role != "read"]
        for k in range(loop.hoisted, len(steps)):
            step = steps[k]
            if isinstance(step, Node) and step.kind == "row_move" and not step.payload.put \
                    and not any(overlap(a, step.payload.table) for a in written):
                del steps[k]
                self.hoist(loop, step)

    def inside(self, loop: _Loop) -> bool:
        return any(entry is loop for entry in self.loops)

    def row(self, table: Any, index: Any, line: int) -> Any:
        """``table[index]`` in a builder: with a device loop's index, row ``index`` of a stacked
        array moved into a plane of the loop body's own at every turn; else Python's indexing."""
        if not isinstance(index, LoopIndex):
            return table[index]
        self.check_rows(table, index, line, "reads")
        row = self.make_here(_like_row(table))
        self.append(Node("row_move", RowMove(table, index.cell, row, put=False)), "row")
        self.fresh[id(row)] = row
        self.producer[id(row)] = self.stack[-1].steps[-1]
        return row

    def put_row(self, table: Any, index: Any, value: Any, line: int) -> None:
        """``table[index] = value`` in a builder: with a device loop's index, ``value`` moved into
        row ``index`` of a stacked array at every turn; else Python's item assignment."""
        if not isinstance(index, LoopIndex):
            if is_array(table):
                self.mutates(line, "<array>[...] = ...")
            table[index] = value
            return
        self.check_rows(table, index, line, "writes")
        if isinstance(value, OneArm):
            raise EagleNameError(f"eagle.Graph.builder: {self.where(line)}: {value.message}")
        if not is_array(value) or tuple(value.shape) != tuple(table.shape[1:]) or value.dtype != table.dtype:
            got = f"{value.dtype} array of shape {tuple(value.shape)}" if is_array(value) else \
                type(value).__name__
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: a row of the {table.dtype} array "
                                 "of "
                            f"shape {tuple(table.shape)} is a {table.dtype} plane of shape "
                            f"{tuple(table.shape[1:])}; got a {got}: compute the row with a kernel")
        self.append(Node("row_move", RowMove(table, index.cell, value, put=True)), "row")
        self.producer[id(table)] = self.stack[-1].steps[-1]

    def check_rows(self, table: Any, index: LoopIndex, line: int, what: str) -> None:
        """A row move takes the index of a device loop being recorded, itself, on a contiguous
        stacked array; the loop then runs no more turns than the array has rows."""
        if not index.is_turn:
            raise EagleIndexError(f"eagle.Graph.builder: {self.where(line)}: a device loop {what} rows of a "
                             "stacked array at its own index only (xs[i]), not at one computed from it: "
                             "shift the array instead (xs[1:] for xs[i + 1]), or pass the index to a kernel")
        if not self.inside(index.loop):
            raise EagleIndexError(f"eagle.Graph.builder: {self.where(line)}: the index of the device loop at "
                             f"{index.where} is used outside that loop")
        if not is_array(table) or table.ndim < 2:
            shape = f"an array of shape {tuple(table.shape)}" if is_array(table) else type(table).__name__
            raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: a device loop {what} rows of a "
                            f"stacked array (shape (T, n) or (T, k, n)) at its index; got {shape}: stack the "
                            "rows with np.stack, or pass the index to a kernel")
        if not contiguous(table):
            raise EagleValueError(f"eagle.Graph.builder: {self.where(line)}: the stacked array a device loop "
                             f"{what} rows of is not contiguous: pass np.ascontiguousarray of it")
        rows = int(table.shape[0])
        if index.loop.turns is not None and rows < index.loop.turns:
            turns = index.loop.turns
            raise EagleIndexError(f"eagle.Graph.builder: {self.where(line)}: the device loop at "
                                  f"{index.where} "
                             f"runs up to {turns} turns and {what} rows of an array of {rows} rows: "
                             f"loop over range({rows}), or pass an array of {turns} rows")
        index.loop.rows = rows if index.loop.rows is None else min(index.loop.rows, rows)
        if not any(t is table for t in index.loop.tables):
            index.loop.tables.append(table)

    def turn_check(self, count: Any, loop: _Loop, text: str, stacked: Stacked, line: int) -> Any:
        """The cell a loop over ``count`` turns counts over: ``count``, copied at every launch
        after an ``IndexError`` if it asks for more turns than ``loop`` has rows to move (the
        loop is capped at the rows as well, so no replay reads past them)."""
        names = {id(read()): name for name, read in stacked}
        shown = tuple(names.get(id(t), f"the stacked array of shape {tuple(t.shape)}") for t in loop.tables)
        checked = self.new_cell()
        self.append(Node("turn_check", TurnCheck(count, checked, tuple(loop.tables), shown, self.where(line),
                                                 text)), "check turns")
        return checked

    def set_cell(self, cell: np.ndarray, value: int) -> None:
        """``cell = value`` at every replay: a copy of a constant cell (an eagle-graph node)."""
        self.append(Node("copy", Copy(self.constant(value), cell)), "set_cell")

    def control(self, cond: np.ndarray, stop: np.ndarray, want: int, out: np.ndarray) -> None:
        """``out = (cond != 0) == want and stop == 0`` at every replay, in eagle-graph nodes: ``out``
        cleared, then set under a device if on ``stop`` around one on ``cond``."""
        self.set_cell(out, 0)
        hit = Body()
        self.stack.append(hit)
        self.set_cell(out, 1)
        self.stack.pop()
        test = Node("device_if", DeviceIf(cond, hit, Body()) if want else DeviceIf(cond, Body(), hit))
        self.labels[id(test)] = "control"
        self.append(Node("device_if", DeviceIf(stop, Body(), Body([test]))), "control")

    def device_loop(self, cell: np.ndarray, want: int, kind: str, cap: int, body_fn: Callable[[Any], Any],
                    get: Callable[[], tuple], put: Callable[[tuple], None], names: tuple[str, ...],
                    scope: Scope, line: int, targets: tuple[str, ...] = (), indexed: bool = False,
                    turns: int | None = None, stacked: tuple[str, Stacked] = ("", ())) -> None:
        """A device loop: the body recorded once, run while ``(cell != 0) == want`` (or ``cell`` times).
        An ``indexed`` loop (counted or capped) gives the body its turn in a one-cell int32 array,
        set to 0 before the loop and advanced at the end of every turn.  ``stacked``: a loop over a
        cell's ``range`` as written and the stacked arrays by name, for its check against the rows."""
        start = get()
        before = self.loop_entry(names, start, scope())
        put(before)
        loop = _Loop(device=True, line=line, state=(get, put, names), turns=turns)
        self.loops.append(loop)
        item: Any = NoItem(self.where(line))
        if indexed:
            index = self.new_index_cell()
            self.append(Node("cell_affine", CellAffine(index, index, 0, 0)), "index")
            item = LoopIndex(self, index, self.where(line), loop)
        body = loop.body = self.open_device_body(Body(), "loop", line)
        self.stack.append(body)
        try:
            self.after_device_signals([(self.stack[-1], body_fn(item))], line)
            for guarded, began in reversed(loop.guards):  # close the guarded rests, innermost first
                self.stack.pop()
                # skipped or not, each name leaves the guard in one array: a device if with an empty arm
                put(self.merge(names, began, [(Body(), began), (guarded, get())], line, "loop", scope))
                self.append(Node("device_if", DeviceIf(self.loop_cell(loop, "skip"), Body(), guarded)),
                            "guard", [])
        finally:
            self.stack.pop()
            self.loops.pop()
        after = tuple(b if n in targets else a for n, b, a in zip(names, before, get(), strict=True))
        # a device loop may run no turn: that is an arm that changes nothing
        merged = self.merge(names, before, [(Body(), before), (body, after)], line, "loop", scope,
                            looped=True)
        put(merged)
        if kind == "while":  # the guard is the array its name is carried in (a copy, an argument's own)
            cell = next((m for b, m in zip(start, merged, strict=True) if b is cell and is_array(m)), cell)
        if loop.skip is not None:  # each turn starts unskipped
            self.stack.append(Body())
            self.set_cell(loop.skip, 0)
            body.steps[:0] = self.stack.pop().steps
        self.hoist_takes(loop)
        if indexed:  # the next turn's index, whatever this turn skipped
            self.stack.append(body)
            self.append(Node("cell_affine", CellAffine(item.cell, item.cell, 1, 1)), "index")
            self.stack.pop()
        if kind == "count":
            if loop.stop is not None:  # the turns left after a break do nothing
                body = Body([Node("device_if", DeviceIf(loop.stop, Body(), body))])
                self.set_cell(loop.stop, 0)
            if loop.rows is not None and loop.turns is None:  # over a cell: checked at every launch
                cell, cap = self.turn_check(cell, loop, *stacked, line), loop.rows
            self.append(Node("device_loop", DeviceLoop(cell, "count", cap, body)), "loop", [cell])
            return None
        if loop.stop is None and want == 1:
            self.append(Node("device_loop", DeviceLoop(cell, "while", cap, body)), "loop", [cell])
            return None
        stop = self.loop_cell(loop, "stop")
        control = self.new_cell()
        self.set_cell(stop, 0)
        self.control(cell, stop, want, control)
        self.stack.append(body)
        self.control(cell, stop, want, control)
        self.stack.pop()
        self.append(Node("device_loop", DeviceLoop(control, "while", cap, body)), "loop", [])
        return None

    # -------------------------------------------------------------- merge
    def merge(self, names: tuple[str, ...], before: tuple, arms: list[tuple[Body, tuple]], line: int,
              what: str, scope: Scope, looped: bool = False) -> tuple:
        """After a device construct: each name one array, whichever arm ran.  A name is merged into
        the array it held before, unless something else holds that array too (another name, a
        block's caller, a builder argument): then into a copy made before the construct.  In a
        device loop (``looped``) the body's reads are re-pointed at the array the name is carried in."""
        merged = list(before)
        claimed: list[Any] = []  # the arrays names are merged into here
        for i, name in enumerate(names):
            old = before[i]
            values = [after[i] for _, after in arms]
            if all(v is old for v in values):
                continue
            changed = [v for v in values if v is not old]
            if any(v is UNBOUND for v in values) or (old is UNBOUND and len(changed) < len(values)):
                merged[i] = OneArm(name, self.where(line), what, old)  # an error if used
                continue
            if not all(is_array(v) for v in changed):
                raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: {name!r} is set to a Python "
                                     "value "
                                f"inside a device {what}; every arm of a device construct is recorded, so "
                                "only arrays can change there")
            if not is_array(old) and len(changed) < len(values):  # None before: an arm left it None
                merged[i] = OneArm(name, self.where(line), what, old)
                continue
            target = old if is_array(old) else changed[0]
            if target is not old:  # an arm's array: the name carries it out of the construct
                self.make_here(target)
            for v in changed:
                if tuple(v.shape) != tuple(target.shape) or v.dtype != target.dtype:
                    raise EagleTypeError(f"eagle.Graph.builder: {self.where(line)}: {name!r} changes from "
                                    f"{target.shape} {target.dtype} to {v.shape} {v.dtype} inside a device "
                                    f"{what}; a name keeps one array across a device construct")
            if is_array(old):
                target = self.merge_target(i, names, before, arms, claimed, scope(), looped)
            claimed.append(target)
            for body, after in arms:
                if after[i] is not old and after[i] is not target:
                    self.merge_into(body, after[i], target, name)
            for label, kept in self.buffers.items():  # a buffer= name is the merged name's array now
                if any(kept is after[i] for _, after in arms):
                    self.buffers[label] = target
            merged[i] = target
        return tuple(merged)

    def loop_entry(self, names: tuple[str, ...], before: tuple, scope: dict[str, Any]) -> tuple:
        """The values a device loop's names start from: a name whose array something else holds
        too (another name, a block's caller) starts from a copy made here, which the loop then
        carries, so the body's reads of the other holder still see the array as it was."""
        entry = list(before)
        for i, name in enumerate(names):
            old = before[i]
            if not is_array(old):
                continue
            passed = any(old is a for a in self.frames[-1][2]) and not self.is_argument(old)
            if passed or self.holders(i, names, before, scope):
                entry[i] = self.copy_in(old, name)
        return tuple(entry)

    def holders(self, i: int, names: tuple[str, ...], before: tuple, scope: dict[str, Any],
                arms: list[tuple[Body, tuple]] = (), array: Any = None) -> list[str]:
        """The other names (of the function, or of the construct, before it or after any of its
        ``arms``) that hold ``array`` (by default ``before[i]``)."""
        array = before[i] if array is None else array
        states = [before, *(after for _, after in arms)]
        return [n for n, v in scope.items() if n not in names and _holds(v, array)] + \
            [m for j, m in enumerate(names) if j != i and any(_holds(state[j], array) for state in states)]

    def merge_target(self, i: int, names: tuple[str, ...], before: tuple, arms: list[tuple[Body, tuple]],
                     claimed: list[Any], scope: dict[str, Any], looped: bool) -> Any:
        """The array ``names[i]`` is merged into: the one it held before when nothing else holds it."""
        name, old = names[i], before[i]
        holders = self.holders(i, names, before, scope, arms)
        # The graph's copy of an argument holds the argument's value only up to the construct it was
        # made for, which writes it: any later merge of the argument (another name, a later or an
        # enclosing construct) gets a copy of its own.
        taken = id(old) in self.own or any(c is old for c in claimed)
        argument, passed = self.is_argument(old), any(old is a for a in self.frames[-1][2])
        # Inside a device loop the construct starts again each turn, from the array the enclosing
        # loop carries the name in by then: a copy here, not one refreshed only at launch.
        if argument and not taken and not any(loop.device for loop in self.loops):
            target = self.own_copy(old, name)  # refreshed from the argument by every launch
        elif argument or passed or holders or taken:
            target = self.copy_in(old, name)  # a block's caller, or another name, keeps old as it was
        else:
            return old
        if looped:  # each turn reads the carried array
            for body, _ in arms:
                substitute.in_body(body, {id(old): target}, name)
        return target

    def copy_in(self, old: Any, name: str) -> Any:
        """A new array holding ``old``'s value from here on, for ``name`` to be merged into."""
        fresh = self.make_here(_like(old))
        self.add_node(copy_node(old, into=fresh), name)
        return fresh

    def merge_into(self, body: Body, value: np.ndarray, target: np.ndarray, name: str) -> None:
        """Make ``body`` leave ``value`` in ``target``: in place when a per-sample kernel of the
        body wrote it, nothing after it in the body uses ``target`` (which still means the old
        value there) and no launch of the body comes to write a plane it reads whole (an earlier
        writer of ``value`` reading ``target`` as a Table), else by a copy at its end."""
        node = self.producer.get(id(value))
        plan = getattr(getattr(node, "payload", None), "plan", None)
        if node is not None and getattr(plan, "per_sample", False) and substitute.contains(body, node) \
                and substitute.untouched_after(body, node, target) \
                and substitute.renames_cleanly(body, value, target):
            substitute.in_body(body, {id(value): target}, name)
            self.producer[id(target)] = node
            self.retired.append(value)
            return
        self.stack.append(body)
        self.add_node(copy_node(value, into=target), name)  # made while recording: added once
        self.stack.pop()

    def is_argument(self, array: np.ndarray) -> bool:
        return any(a is array for a in self.arguments.values())

    def own_copy(self, argument: np.ndarray, name: str) -> np.ndarray:
        """The graph's copy of a builder argument that a device construct rebinds, made once (the
        prologue refreshes it from the argument at every launch)."""
        own = self.own[id(argument)] = _like(argument)
        self.prologue.append((name, argument, own))
        return own

    # ------------------------------------------------------------- finish
    def finish(self) -> None:
        """Add what was recorded to the graph, in order (a failed check adds nothing)."""
        graph = self.graph
        extend.record_into(graph, None)
        results = list(flatten(graph.result))
        # what the nodes write, asked only of a result that holds arrays
        written = {id(a) for node in self.top.nodes() for _, a, role in node.planes()
                   if role != "read"} | {id(a) for a in self.arguments.values()} \
            if any(is_array(a) for a in results) else set()
        for array in results:
            if isinstance(array, OneArm):
                raise EagleNameError(f"g.result: {array.message}")
            self.refuse_escaped(array, "g.result")
            if is_array(array) and not _written(array, written):
                raise EagleTypeError(f"eagle.Graph.builder: g.result holds a {array.dtype} array of shape "
                                f"{tuple(array.shape)} that no node of the graph writes and no argument is: "
                                "an array computed while recording (NumPy on what a kernel returns sees it "
                                "before any replay) stays as it was then; compute it with a kernel call")
        for fork in self.nested_forks:
            self.check_fork(fork)
        for name, argument, own in self.prologue:
            graph.add_node(copy_node(argument, into=own), name=name)
        self.prologue.clear()  # the copy nodes hold the arguments now (a bind re-points them)
        for step in self.top.steps:
            if isinstance(step, Fork):
                branches = [list(b.nodes()) for b in step.branches]
                branches = [b for b in branches if b]
                graph.add_group(branches, names=[[self.labels[id(n)] for n in b] for b in branches])
            else:
                graph.add_node(step, name=self.labels[id(step)])

    def temporaries(self) -> list[Any]:
        """Hand over the outputs kernel calls allocated (no ``buffer=``) that are not a result or
        a buffer: the build keeps, as the graph's temporaries, those only its nodes hold (seed
        000: a temporary has no array that survives the run), and plans their storage.  The
        recording lets go of every array it held for its own bookkeeping, which the build would
        take for someone else's.  (A block's on a hand-made graph are what the block returns:
        not these.)"""
        mine = {id(a) for a in flatten(self.graph.result)} | {id(a) for a in self.buffers.values()}
        made = [a for i, a in self.fresh.items() if i not in mine]
        self.fresh.clear()
        self.homes.clear()
        self.retired.clear()
        self.kept.clear()
        self.producer.clear()
        return made

    def check_fork(self, fork: Fork) -> None:
        """Siblings of a fork inside a branch or a construct (the graph checks the top-level ones)."""
        branches = [list(b.nodes()) for b in fork.branches]
        nodes = [n for b in branches for n in b]
        offsets = np.cumsum([0] + [len(b) for b in branches])
        try:
            refuse_sibling_races(nodes, [self.labels[id(n)] for n in nodes],
                                 [[list(range(offsets[k], offsets[k + 1])) for k in range(len(branches))]])
        except SiblingRace as race:
            raise EagleValueError(f"{RACE} [{race}]") from None

    def bind(self, **arrays: Any) -> None:
        """``g.bind(name=array)``: the same graph over new arrays; same shape, dtype and device, and
        every check the graph applies at add and build (layout, writability, overlaps, races)."""
        mapping = {}
        for name, new in arrays.items():
            if name not in self.arguments:
                raise EagleTypeError(f"eagle.Graph.bind: no parameter {name!r}; the builder's parameters are "
                                f"{', '.join(self.arguments)}")
            old = self.arguments[name]
            new = arrays[name] = plane_of(new, "eagle.Graph.bind", repr(name))
            if not is_array(new):
                raise EagleTypeError(f"eagle.Graph.bind: {name!r} takes an array (NumPy or device), got "
                                f"{type(new).__name__}: pass np.asarray(...) of it")
            if not (is_array(old) and _side(new) == _side(old)
                    and (tuple(new.shape), new.dtype) == (tuple(old.shape), old.dtype)):
                # the seed's words; a new device counts as a new dtype
                raise EagleValueError(f"eagle.Graph.bind: {name!r} changed shape/dtype: call the builder "
                                      "again")
            mapping[id(old)] = new
        graph = self.graph
        seen = extend.view(graph)
        pairs = [(self.arguments[name], new) for name, new in arrays.items()]
        planes = [a for node in seen.nodes for _, a, _ in node.planes()]
        mapping.update(substitute.views([*planes, *flatten(graph.result)], pairs))

        def swap() -> None:
            for node, label in zip(seen.nodes, seen.labels, strict=True):
                substitute.in_node(node, mapping, label)
            graph.result = substitute.in_tree(graph.result, mapping)  # an argument may be a result

        def check() -> None:
            for fork in self.nested_forks:
                self.check_fork(fork)

        result = graph.result
        try:
            extend.rebind(graph, mapping, swap, check)
        except substitute.Unpatchable:
            graph.result = result
            # your own code holds an old array: the builder records the graph again (seed 000)
            extend.take_over(graph, self.rebuild({**self.arguments, **arrays}))
            extend.state(graph)["names"].graph = graph  # its recording binds the graph the caller holds
            return
        except BaseException:
            graph.result = result  # a failed bind leaves the graph as it was
            raise
        # Only the new arrays are held now: a replaced one goes with its caller's last reference.
        self.arguments.update(arrays)


def plane_of(value: Any, api: str, name: str) -> Any:
    """A builder's argument as its function sees it: an array of another library (a torch tensor,
    a JAX array, DLPack) as the NumPy or device array over its memory; anything else as it is."""
    return extend.as_plane(value, api, name) if extend.is_plane(value) else value


def _like(array: Any) -> Any:
    """An empty array of ``array``'s shape and dtype, on its side (host or its GPU)."""
    return np.empty_like(array) if isinstance(array, np.ndarray) else empty_like_device(
        array, tuple(array.shape), array.dtype)


def _like_row(table: Any) -> Any:
    """An empty array shaped like one row of ``table``, on its side."""
    shape = tuple(table.shape[1:])
    return np.empty(shape, table.dtype) if isinstance(table, np.ndarray) else empty_like_device(
        table, shape, table.dtype)


def _stacked_rows(stacked: Stacked) -> dict[str, int]:
    """The rows of each stacked array (2-D or more) a loop body indexes at the loop's target."""
    rows = {}
    for name, read in stacked:
        try:
            value = read()
        except NameError:  # bound inside the loop: not an array the loop steps through
            continue
        if is_array(value) and value.ndim >= 2:
            rows[name] = int(value.shape[0])
    return rows


def _holds(value: Any, array: Any) -> bool:
    """Whether ``value`` is ``array``, a view of it, or a list, tuple or dict with one as an item."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) \
        else [value]
    return any(_views(item, array) for item in items)


def _written(array: Any, written: set[int]) -> bool:
    """Whether ``array``, or the array it views, is in ``written`` (ids)."""
    while is_array(array):
        if id(array) in written:
            return True
        array = getattr(array, "base", None)
    return False


def _views(value: Any, array: Any) -> bool:
    while is_array(value):
        if value is array:
            return True
        value = getattr(value, "base", None)
    return False


def _keys(container: dict | list) -> list[Any]:
    return list(container.keys()) if isinstance(container, dict) else list(range(len(container)))


def _side(array: Any) -> int | None:
    """None for a NumPy array, else the GPU ordinal of a device array."""
    return None if isinstance(array, np.ndarray) else device_of(array)


def _repeat_while(test: Callable[[], bool], first: Any, line: int, recorder: Recorder) -> Iterator[None]:
    """The turns of a Python ``while``: its condition checked before each."""
    if recorder.truth(first, line):
        yield None
        while test():
            yield None


def _until(stop: Callable[[], Any], first: Any, turns: range, recorder: Recorder, line: int) -> Iterator[int]:
    """The turns of a Python ``for _ in range(N): if <stop>: break``: stop checked before each."""
    for k in turns:
        if recorder.truth(first if k == turns[0] else stop(), line):
            return
        yield k
