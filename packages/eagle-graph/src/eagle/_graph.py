"""eagle.Graph: nodes, derived edges, refusals, build, native replay."""

from __future__ import annotations

import functools
import logging
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

import numpy as np

from eagle import _core, _dispatch, _recording
from eagle._analysis import Analysis
from eagle._buffers import plan_storage, planning
from eagle._comm import Communicator, communicator_of
from eagle._core import CoreError
from eagle._edges import Edge, is_plane, is_value
from eagle._errors import (
    Busy,
    EagleImportError,
    EagleRuntimeError,
    EagleTypeError,
    EagleValueError,
    RebuildWarning,
)
from eagle._extension import record_hooks
from eagle._fused_runs import FusedRun, in_graph_order
from eagle._fused_runs import describe as describe_runs
from eagle._fusion import FusionContext, enabled, fusing
from eagle._kinds import Node, kind_of
from eagle._launch_checks import LaunchChecks, refuse_written
from eagle._log import build_log
from eagle._lower_cpu import lowered
from eagle._lower_gpu import gpu_lowered
from eagle._lower_stages import lower_device, lower_host
from eagle._pictures import BoxPicture
from eagle._races import refuse_races
from eagle._schedule import stage_schedule
from eagle._sharded import agree, refuse_forked
from eagle._target import Target
from eagle.plan import BoundPlan

BACKENDS = (None, "cpu", "gpu")
_P = ParamSpec("_P")
_R = TypeVar("_R")
if TYPE_CHECKING:  # a default (PEP 696) lets ``eagle.Graph`` stand bare: typing.TypeVar has it from 3.13
    from typing_extensions import Self  # typing's from 3.11; eagle runs on 3.10
    from typing_extensions import TypeVar as DefaultTypeVar

    _Result = DefaultTypeVar("_Result", default=Any)
else:
    _Result = TypeVar("_Result")


@dataclass
class _Stage:
    #: Node indices per branch, in add order; a plain stage is one branch of one node.
    branches: list[list[int]]
    group: bool




class Graph(Generic[_Result]):
    """A step written once as nodes; eagle derives the edges and replays it.

    Generic in what ``g()`` returns (``g.result``): ``eagle.Graph[NDArray[np.float64]]`` types a
    replay's result for a type checker; a bare ``eagle.Graph`` is ``eagle.Graph[Any]``.

    :param record: keep what a reverse pass needs (eagle.diff); such a graph
        runs with ``launch()`` or ``g()``, never ``enqueue``.
    :param comm: run over a batch sharded across ranks (each rank's planes hold
        its ``eagle.shard`` of the samples): every cross-sample reduction becomes
        global, with one process's bits.  An mpi4py communicator with eagle-mpi
        installed, or an :class:`eagle.Communicator`.

    >>> from eagle.graph import opaque
    >>> x, y, z = np.arange(4.0), np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph()
    >>> g = g.add_node(opaque(lambda: np.multiply(x, 2.0, out=y), reads={"x": x}, writes={"y": y}),
    ...                name="double")
    >>> g = g.add_node(opaque(lambda: np.add(y, 1.0, out=z), reads={"y": y}, writes={"z": z}),
    ...                name="shift")
    >>> g.edges()                       # derived from the planes, never drawn by hand
    [Edge(src=0, dst=1, plane='y', kind='RAW')]
    >>> g.build().launch(3)             # lower once, replay three times
    <eagle.Graph 2 nodes, 2 stages, cpu>
    >>> z, g.backend, g.schedule
    (array([1., 3., 5., 7.]), 'cpu', ['work_share', 'work_share'])
    """

    def __init__(self, record: bool = False, comm: Any = None) -> None:
        self._comm: Communicator | None = None if comm is None else communicator_of(comm, "eagle.Graph")
        self._recording = bool(record)
        self._tape: Any = None  # eagle.diff's Record of a record=True graph, once built
        #: What ``g()`` returns: the arrays a builder declared with ``g.result = ...``.
        self.result: _Result = cast(_Result, None)  # None until a builder (or the user) sets it
        #: The one slot for extension state (eagle.extend.state; its keys: eagle._extension).
        self._extension: dict[str, Any] = {}
        self._labels: list[str] = []
        self._nodes: list[Node] = []
        self._stages: list[_Stage] = []
        self._backend: str | None = None
        self._schedule: list[str] | None = None
        self._program: Target | None = None  # the lowering target, once built
        #: The replay launch() makes, prepared at build where it is one native call (a host
        #: program, no Record, no communicator): the guard, the run, Python's signals.
        self._launch: tuple[Callable[[Any, int], int], Any] | None = None  # Program.native_launch
        #: what each launch asks of its planes over other libraries' memory, once built (None: nothing)
        self._checks: LaunchChecks | None = None
        self._record_replay: Any = None  # eagle.diff's hook, found at build
        self._reducing: list[int] = []  # nodes that reduce across samples, once built
        self._analysis: Analysis | None = None  # the build's, kept while the graph stays built
        self._fuse = True  # the build's choice (build(fuse=...)), which a bind's lowering keeps
        self._runs: list[tuple[Node, ...]] | None = None  # the fused runs' nodes, in order, once built
        self._temporaries: list[Any] = []  # arrays no one outside sees (extend.declare_temporaries)
        self._logical: int | None = None
        self._warned_rebuild = False
        self._retired_stats: dict[str, int] = {}  # GPU counters of the CUDA graphs bind replaced
        #: the policy each dispatch group of its kernels runs by, once built ({} without groups)
        self.dispatch: dict[str, str] = {}
        self._busy = _core.ffi.new("int32_t[1]")  # the non-blocking guard, a C atomic
        recorder = _recording.active()
        if recorder is not None:
            recorder.adopt(self)

    @property
    def _recorder(self) -> _recording.Recording | None:
        """The recording that writes into this graph now (a builder's), if any."""
        return self._extension.get("recording")

    @staticmethod
    def builder(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        """Write a graph from plain Python (eagle-builder): see ``eagle.builder.builder``.

        Typed as ``fn`` is: a builder returns the graph its function returns, built; a block (a
        function whose first parameter is annotated ``eagle.Graph``) what its function returns.
        """
        try:
            from eagle.builder import builder
        except ImportError:
            raise EagleImportError("eagle.Graph.builder needs eagle-builder: "
                                   "pip install eagle-builder") from None
        return builder(fn)

    def parallel(self) -> Any:
        """A fork, while a builder records this graph: ``with g.parallel() as p:``."""
        if self._recorder is None:
            raise EagleRuntimeError("eagle.Graph.parallel: a fork is recorded by a builder: write it inside "
                                    "an "
                               "@eagle.Graph.builder function (or add_group on a hand-made graph)")
        return self._recorder.parallel()

    def wait(self, plane: Any) -> Self:
        """Refused: a wait belongs to a branch of a fork (``b.wait(x)``)."""
        raise EagleRuntimeError("eagle.Graph.wait: only inside a parallel region, on a branch handle")

    def bind(self, **arrays: Any) -> Self:
        """Swap the arrays of a builder graph by the builder's parameter names; no rebuild.

        The new arrays pass every check ``add`` and ``build`` apply (layout, writability,
        partial overlaps, sibling races); a refused bind leaves the graph on its old arrays.
        """
        binder = self._extension.get("bind")
        if binder is None:
            raise EagleRuntimeError("eagle.Graph.bind: only a graph made by an @eagle.Graph.builder binds "
                               "arrays by parameter name")
        with self._guard("eagle.Graph.bind"):
            binder(**arrays)
        return self

    @property
    def record(self) -> Any:
        """False; for a ``record=True`` graph, True until it is built, then its ``eagle.diff.Record``
        (what ``eagle.diff.reverse`` takes), which describes the last run."""
        return self._tape if self._tape is not None else self._recording

    def __call__(self, n: int = 1) -> _Result:
        """``launch(n)``, then the result (``g.result``)."""
        self.launch(n)
        return self.result
    # ------------------------------------------------------------- adding
    def add_node(self, node: Node, name: str | None = None) -> Self:
        """Append a node (an opaque op, a conditional, a reduce, a copy, ...) as its own stage."""
        with self._guard("eagle.Graph.add_node"):
            return self._add_stage(node, name, "eagle.Graph.add_node")

    def _add_stage(self, node: Node, name: str | None, api: str) -> Self:
        self._check_open(api)
        if self._recorder is not None:  # a builder is recording: the node goes in its order
            if not isinstance(node, Node):
                raise EagleTypeError(f"{api}: expected a node, got {type(node).__name__}")
            self._recorder.add_node(node, name)
            return self
        index = self._append(node, name, api)
        self._stages.append(_Stage([[index]], group=False))
        return self

    def add(self, bound: BoundPlan, name: str | None = None) -> Self:
        """Append a plan launch (``plan.bind(...)``) as its own stage."""
        if not isinstance(bound, BoundPlan):
            raise EagleTypeError(f"eagle.Graph.add: takes a BoundPlan from plan.bind(...), got "
                            f"{type(bound).__name__}; add other nodes with add_node")
        with self._guard("eagle.Graph.add"):
            return self._add_stage(Node("plan", bound), name, "eagle.Graph.add")

    def add_group(self, branches: Sequence[Any], names: Sequence[Any] | None = None) -> Self:
        """Append a fork/join stage: the branches may run at the same time, the next stage waits for all.

        A branch is a plan, a node, or a list of them run in order.
        """
        with self._guard("eagle.Graph.add_group"):
            self._add_group(branches, names)
        return self

    def _add_group(self, branches: Sequence[Any], names: Sequence[Any] | None) -> None:
        self._check_open("eagle.Graph.add_group")
        if self._recorder is not None:
            raise EagleRuntimeError("eagle.Graph.add_group: a builder records a fork with `with g.parallel() "
                               "as p:` and `with p.branch() as b:`")
        if not branches:
            raise EagleValueError("eagle.Graph.add_group: give at least one branch")
        if names is not None and len(names) != len(branches):
            raise EagleValueError(f"eagle.Graph.add_group: {len(branches)} branches but {len(names)} names")
        before = (len(self._nodes), len(self._labels))
        try:
            stage = _Stage([], group=True)
            for b, branch in enumerate(branches):
                parts = list(branch) if isinstance(branch, (list, tuple)) else [branch]
                if not parts:
                    raise EagleValueError(f"eagle.Graph.add_group: branch {b} is empty; a branch is a plan, "
                                     "a node, or a non-empty list of them")
                name = None if names is None else names[b]
                labels = name if isinstance(name, (list, tuple)) else (
                    [name] if len(parts) == 1 else [None if name is None else f"{name}.{i}"
                                                    for i in range(len(parts))])
                if len(labels) != len(parts):
                    raise EagleValueError(f"eagle.Graph.add_group: branch {b} has {len(parts)} parts but "
                                     f"{len(labels)} names; give one name per part, or one for the branch")
                stage.branches.append([
                    self._append(Node("plan", p) if isinstance(p, BoundPlan) else p, label,
                                 "eagle.Graph.add_group") for p, label in zip(parts, labels, strict=True)])
        except BaseException:
            for node in self._nodes[before[0]:]:
                node._graph = None
            del self._nodes[before[0]:], self._labels[before[1]:]  # a failed call changes nothing
            raise
        self._stages.append(stage)

    def _check_open(self, api: str) -> None:
        if self._program is not None:
            raise EagleRuntimeError(f"{api}: the graph is built; adding to a built graph is refused: "
                               "make a new Graph")

    def _append(self, node: Any, name: str | None, api: str) -> int:
        if not isinstance(node, Node):
            raise EagleTypeError(f"{api}: expected a node (eagle.graph.opaque(...), eagle.reduce(...), ...) "
                            f"or a BoundPlan, got {type(node).__name__}")
        label = name or node.default_label()
        single = kind_of(node.kind).one_graph
        if node._graph is not None and single is not None:
            noun, maker = single
            raise EagleValueError(f"{api}: the {noun} {label!r} is already another graph's; "
                             f"make a new {maker} for this graph")
        _refuse_non_planes(node, label, api)
        node.refuse(api, label)  # its kind's checks, on the nodes it holds too
        node._graph = weakref.ref(self)  # no cycle: a graph goes with its last reference
        self._nodes.append(node)
        self._labels.append(label)
        return len(self._nodes) - 1

    # ------------------------------------------------------------- looking
    @property
    def comm(self) -> Communicator | None:
        """The communicator the graph runs over, or None."""
        return self._comm

    @property
    def reductions(self) -> list[str] | None:
        """The labels of the nodes that reduce across samples (collectives under a communicator),
        once built; else None."""
        return None if self._program is None else [self._labels[i] for i in self._reducing]

    @property
    def backend(self) -> str | None:
        """``"cpu"`` or ``"gpu"`` once built, else None."""
        return self._backend

    @property
    def schedule(self) -> list[str] | None:
        """How each stage runs, once built: ``"work_share"`` or ``"branch_tasks"`` on the CPU; on
        the GPU its tier (seed 001): ``"capture"`` (replayed in a CUDA graph, its branches
        branches of the graph), ``"eager_stream"`` (an ``opaque(fn, stream=S)`` node: ``fn`` on
        the host at every launch, its device work on ``S``, ordered by events) or
        ``"eager_host"`` (an ``opaque(fn, eager=True)`` node, the device drained around it)."""
        return None if self._schedule is None else list(self._schedule)

    @property
    def fused(self) -> list[tuple[str, ...]] | None:
        """The runs of per-sample kernels the build wrote as one function each, as tuples of
        node labels in order (a node inside a device construct's body by its default label), in
        the graph's order, once built; ``[]`` when none fused (``build(fuse=False)``).
        :attr:`fused_runs` says where each lives.
        """
        return None if self._runs is None else [run.nodes for run in self.fused_runs]

    @property
    def fused_runs(self) -> list[FusedRun] | None:
        """:attr:`fused` with where each run lives (``FusedRun.where``: ``"stage 2"``,
        ``"stages 2-4"``, ``"stage 3, branch 1"``, ``"body of 'loop' (stage 5)"``), once built."""
        if self._runs is None:
            return None
        stages = [stage.branches for stage in self._stages]
        return describe_runs(self._runs, self._nodes, self._labels, stages)

    @property
    def captures(self) -> int | None:
        """How many times the CUDA graph was built from the nodes (None off the GPU)."""
        return self._target_stat("captures")

    @property
    def graph_builds(self) -> int | None:
        """How many times the CUDA graph was instantiated (None off the GPU)."""
        return self._target_stat("graph_builds")

    def _target_stat(self, name: str) -> int | None:
        """A counter of the target, with those of the targets bind replaced (None where the
        target does not keep it: a host program makes no CUDA graphs)."""
        count = None if self._program is None else self._program.stats().get(name)
        return None if count is None else count + self._retired_stats.get(name, 0)

    def node_labels(self) -> list[str]:
        """The labels of the nodes, in order: what Edge indices point into."""
        return list(self._labels)

    def edges(self) -> list[Edge]:
        """The derived edges, ``Edge(src, dst, plane, kind)``; before or after build (then the
        build's analysis derives them, once)."""
        return list(self._analyzed().edges())

    def _analyzed(self) -> Analysis:
        """The build's analysis; before build, one of the graph as it is now (not kept: nodes may
        still be added)."""
        return self._analysis if self._analysis is not None else self._analyze()

    def _analyze(self) -> Analysis:
        forks = [stage.branches for stage in self._stages if stage.group]
        return Analysis(self._nodes, forks, self._temporaries)

    def __repr__(self) -> str:
        """Its node and stage counts and its backend, on one line.

        >>> eagle.Graph().add_node(eagle.copy(np.zeros(3), into=np.zeros(3)))
        <eagle.Graph 1 node, 1 stage, not built>
        """
        return (f"<eagle.Graph {_count(len(self._nodes), 'node')}, {_count(len(self._stages), 'stage')}, "
                f"{self._backend or 'not built'}>")

    def __str__(self) -> str:
        try:
            from eagle.viz import render_text  # the picture, when eagle-viz draws one
        except ImportError:
            return self._listing()
        return render_text(self)

    def show(self) -> None:
        """Print the graph (``print(g)``)."""
        print(self)

    def plot(self, ax: Any = None, edge_labels: bool = True, show_schedule: bool = True,
             fold: bool = True) -> Any:
        """Draw the graph with matplotlib (``eagle-viz[plot]``): a Figure made without pyplot;
        ``fold=False`` draws every node of a run of alike ones folded as ``scale, shift ×500``."""
        viz = _viz("eagle.Graph.plot", "'eagle-viz[plot]'")
        return viz.plot(self, ax=ax, edge_labels=edge_labels, show_schedule=show_schedule, fold=fold)

    def to_mermaid(self, fold: bool = True) -> str:
        """The graph as a Mermaid ``flowchart TD`` (eagle-viz)."""
        return _viz("eagle.Graph.to_mermaid").to_mermaid(self, fold=fold)

    def to_dot(self, fold: bool = True) -> str:
        """The graph in Graphviz DOT (eagle-viz)."""
        return _viz("eagle.Graph.to_dot").to_dot(self, fold=fold)

    def to_svg(self, fold: bool = True) -> str:
        """The graph as an SVG document (eagle-viz; no matplotlib needed)."""
        return _viz("eagle.Graph.to_svg").to_svg(self, fold=fold)

    def _repr_svg_(self) -> str | None:
        """A notebook's picture of the graph: its SVG, when eagle-viz is installed (else the text)."""
        try:
            from eagle.viz import to_svg
        except ImportError:
            return None
        return to_svg(self)

    def _listing(self) -> str:
        groups = sum(s.group for s in self._stages)
        count = len(self._nodes)
        head = (f"eagle.Graph {count} node{'s' * (count != 1)} · {groups} group{'s' * (groups != 1)} · "
                f"backend: {self._backend or '(not built)'}")
        lines = [head]
        for s, stage in enumerate(self._stages):
            how = f" {self._schedule[s]}" if self._schedule else ""
            branches = " | ".join(", ".join(self._listed(i) for i in branch) for branch in stage.branches)
            lines.append(f"stage {s}{how}: {branches}")
        return "\n".join(lines)

    def _listed(self, index: int) -> str:
        """A node's label and its tier tag, as eagle-viz writes them (seed 001)."""
        picture = self._nodes[index].picture()
        tag = picture.shown_tag(self._backend) if isinstance(picture, BoxPicture) else ""
        return self._labels[index] + (f" [{tag}]" if tag else "")

    # -------------------------------------------------------------- build
    def build(self, backend: str | None = None, dispatch: str | dict[str, str] | None = None,
              plan: bool | None = None,
              fuse: bool | None = None) -> Self:
        """Analyze the nodes once (planes, views, devices, forks; the edges where a fork needs
        them), plan the temporaries' storage, refuse what could race, and lower the graph once;
        the analysis is kept.

        :param plan: let the temporaries a builder declared (kernel outputs that nothing but the
            graph holds) share storage by liveness; None: the ``EAGLE_PLAN`` environment variable
            (0 turns sharing off), on by default.  Results are the same either way.
        :param fuse: write each run of per-sample kernels as one function (:attr:`fused` lists
            them); None: on, unless the environment sets ``EAGLE_FUSE=0``.  Fused and unfused
            graphs give the same bits.
        :param dispatch: how the ``"auto"`` dispatch groups of its kernels run (a group its author
            gave a policy keeps it): ``"switch"`` one kernel with a per-sample branch,
            ``"predicated"`` every arm computed and the result selected, or a ``{group: policy}``
            dict of those; None (and a dict, for the groups it does not name) keeps each launch
            as it is (``"switch"``, unless ``BoundPlan.with_dispatch`` chose).  ``"segmented"`` and ``"auto"``
            are ``eagle.simulate``'s (a built graph is one structure).  :attr:`dispatch` says what
            each group runs by; every policy gives the same bits.
        """
        with self._guard("eagle.Graph.build"):
            if self._program is not None:
                raise EagleRuntimeError("eagle.Graph.build: the graph is already built; a second build is "
                                   "refused: make a new Graph")
            if not self._nodes:
                raise EagleValueError("eagle.Graph.build: the graph is empty: add nodes first")
            if backend not in BACKENDS:
                raise EagleValueError("eagle.Graph.build: backend must be None, 'cpu' or 'gpu', got "
                                      f"{backend!r}")
            _dispatch.check(dispatch)
            policies, undo = _dispatch.apply(self._nodes, dispatch)
            try:
                analysis = self._planned(planning(plan, "eagle.Graph.build"))
                self._fuse = enabled(fuse)
                local = functools.partial(self._build_local, backend, analysis)
                chosen, schedule, (program, reducing), tape = (
                    local() if self._comm is None else agree(self._comm, self, local))
            except BaseException:
                undo()  # the nodes as they were added
                raise
            if self._comm is not None:
                program.set_collective(self._comm)  # the ranks check their reductions' sizes together
            # Only now does the graph change: a failed build left it as it was.
            self._program, self._backend, self._schedule, self.dispatch = program, chosen, schedule, policies
            self._tape, self._reducing, self._analysis = tape, reducing, analysis
            if tape is not None:
                self._record_replay = record_hooks("eagle.Graph.build").replay
            self._prepare_launch()
        self._log_build()
        return self

    def _log_build(self) -> None:
        """The build's lowering decisions, at DEBUG on the ``eagle.build`` logger."""
        if not build_log.isEnabledFor(logging.DEBUG):
            return
        for s, (stage, how) in enumerate(zip(self._stages, self._schedule, strict=True)):
            labels = ", ".join(repr(self._labels[i]) for branch in stage.branches for i in branch)
            build_log.debug("eagle.Graph.build: stage %d (%s) on the %s: %s", s, labels, self._backend, how)
        for run in self.fused_runs:
            members = ", ".join(map(repr, run.nodes))
            build_log.debug("eagle.Graph.build: %s fused into one function (%s)", members, run.where)

    def _prepare_launch(self) -> None:
        """The launch of the target built now: one native call where a host program replays
        plainly; else launch() takes the guard and runs the target through ``_run`` (which asks
        the launch checks of planes over other libraries' memory first)."""
        self._checks = LaunchChecks.of(self._analysis.planes, self._labels)
        plain = self._backend == "cpu" and self._tape is None and self._comm is None and self._checks is None
        self._launch = self._program.native_launch(self._busy) if plain else None

    def _planned(self, share: bool) -> Analysis:
        """The analysis of the nodes once the temporaries a builder declared
        (``extend.declare_temporaries``) have their planned storage (``share`` False: each its
        own); only those found to be the nodes' alone stay temporaries.  A record=True graph
        gives each its own (eagle.diff tells a place by its memory)."""
        candidates, self._temporaries = self._temporaries, []
        if candidates:
            analysis = self._analyze()
            settle = plan_storage(self._nodes, analysis.planes, analysis.forks, candidates,
                                  share and not self._recording)
            del analysis  # its planes held the old arrays: settle sees who else does
            self._temporaries = list(settle())
        candidates.clear()
        return self._analyze()

    def _build_local(self, backend: str | None, analysis: Analysis
                     ) -> tuple[str, list[str], tuple[Any, list[int]], Any]:
        """What build does on this rank alone: refuse, choose, schedule and lower."""
        chosen = self._choose_backend(backend, analysis)
        refuse_races(analysis, self._nodes, self._labels, "eagle.Graph.build")
        refuse_written(analysis.planes, self._labels, "eagle.Graph.build")
        target, schedule, reducing, tape = self._lower(chosen, None, analysis)
        if self._comm is not None:
            refuse_forked(self, reducing)
        return chosen, schedule, (target, reducing), tape

    def _lower(self, backend: str, schedule: list[str] | None, analysis: Analysis
               ) -> tuple[Target, list[str], list[int], Any]:
        """The graph lowered onto the target of ``backend``, ready to run at the logical size:
        the target, each stage's schedule (``schedule``, when given, is kept: a bind lowers
        again as the build did), the nodes that reduce across samples, and eagle.diff's Record;
        ``analysis``: the build's, whose views the target uses."""
        lower = self._lower_host if backend == "cpu" else self._lower_device
        # a record=True graph fuses too: eagle.diff's instrument keeps stored what it reads
        liveness = FusionContext(self._nodes, self._temporaries, analysis.key, analysis.read_after) \
            if self._fuse else None
        with fusing(liveness):
            target, schedule, reducing, tape = lower(schedule, analysis)
        self._runs = [] if liveness is None else in_graph_order(liveness.runs, self._nodes)
        if self._logical is not None:
            target.set_logical_size(self._logical)
        return target, schedule, reducing, tape

    def _lower_host(self, schedule: list[str] | None, analysis: Analysis
                    ) -> tuple[Target, list[str], list[int], Any]:
        lowerings, tape = self._lowerings()
        if schedule is None:
            schedule = [stage_schedule(stage.branches, stage.group, self._nodes, lowerings)
                        for stage in self._stages]
        stages = list(zip(schedule, (stage.branches for stage in self._stages), strict=True))
        program, reducing = lower_host(stages, lowerings, self._nodes, analysis.views)
        return program, schedule, reducing, tape

    def _lower_device(self, schedule: list[str] | None, analysis: Analysis
                      ) -> tuple[Target, list[str], list[int], Any]:
        """One CUDA graph of the whole step, instantiated once; for a record=True graph, with what
        eagle.diff keeps added (its forward on the device, what the reverse needs read back)."""
        lowerings = [gpu_lowered(n, label, planes)
                     for n, label, planes in zip(self._nodes, self._labels, analysis.planes, strict=True)]
        tape = None
        if self._recording:
            instrument = record_hooks("eagle.Graph.build").instrument_device
            if instrument is None:
                raise EagleValueError("eagle.Graph.build: the installed eagle-diff records graphs on the CPU "
                                 "only: install eagle-diff from this release, or pass NumPy arrays")
            lowerings, tape = instrument(self, lowerings)
        program, tiers, reducing = lower_device([stage.branches for stage in self._stages], lowerings,
                                                self._labels, self._nodes, analysis.device(),
                                                collective=self._comm is not None)
        return program.finalize(), schedule or tiers, reducing, tape

    def _rebind(self, mapping: dict[int, Any], swap: Callable[[], None], check: Callable[[], None]) -> None:
        """Put new arrays in built nodes (a builder's bind; ``mapping``: id of each old array -> its
        new one): ``swap`` re-points the nodes, then every check add and build apply runs on them,
        and ``check`` (the builder's own), and the graph is lowered again.  A failure puts every
        node back as it was: the graph still runs on the old arrays."""
        saved = [(node, node.payload, dict(vars(node.payload)) if hasattr(node.payload, "__dict__") else None)
                 for top in self._nodes for node in top.walk()]
        kept = self._analysis
        try:
            swap()
            for node, label in zip(self._nodes, self._labels, strict=True):
                node.refuse("eagle.Graph.bind", label)
            self._analysis = self._analyze()  # of the new arrays: the lowering reads it
            refuse_races(self._analysis, self._nodes, self._labels, "eagle.Graph.bind")
            refuse_written(self._analysis.planes, self._labels, "eagle.Graph.bind")
            check()
            self._relower(mapping)
        except BaseException:
            self._analysis = kept
            for node, payload, attrs in saved:
                node.payload = payload
                if attrs is not None:
                    vars(payload).update(attrs)
            raise

    def _relower(self, mapping: dict[int, Any]) -> None:
        """Lower again after the arrays of built nodes were swapped (a builder's bind; ``mapping``:
        id of each old array -> its new one): same nodes, same schedule, new pointers.  A target
        that patches in place (a CUDA graph) is patched where it can be, else built again with
        one warning."""
        self._program.synchronize()  # runs in flight read the old arrays, which bind lets go
        if not self._recording and self._rebound(mapping):
            return
        if self._program.patches and not self._warned_rebuild:
            why = ("a record=True graph keeps host copies laid out over its arrays" if self._recording else
                   "a host node or a device condition holds a swapped array and cannot be patched")
            warnings.warn(f"eagle.Graph.bind: {why}; the CUDA graph is built again (this warning is given "
                          "once per graph)", RebuildWarning, stacklevel=3)
            self._warned_rebuild = True
        for name, count in self._program.stats().items():
            self._retired_stats[name] = self._retired_stats.get(name, 0) + count
        program, _, _, tape = self._lower(self._backend, self._schedule, self._analysis)
        if self._comm is not None:
            program.set_collective(self._comm)  # a collective call: every rank binds
        self._program, self._tape = program, tape
        self._prepare_launch()

    def _take_over(self, rebuilt: Graph) -> None:
        """Become ``rebuilt``: the same builder called again on a bind's arrays, and built, where a
        node held a swapped array that no patch reaches (your own code over it, seed 000).  This
        graph keeps its guard and its counters, and warns once."""
        self._program.synchronize()  # runs in flight read the old arrays
        if not self._warned_rebuild:
            warnings.warn("eagle.Graph.bind: a node of your own code (an opaque function) holds a swapped "
                          "array, which no patch can re-point; the graph is built again from the builder "
                          "(this warning is given once per graph)", RebuildWarning, stacklevel=5)
        retired = dict(self._retired_stats)
        for name, count in self._program.stats().items():
            retired[name] = retired.get(name, 0) + count
        busy = self._busy
        vars(self).update(vars(rebuilt))
        self._busy, self._warned_rebuild, self._retired_stats = busy, True, retired
        for node in self._nodes:
            node._graph = weakref.ref(self)
        self._prepare_launch()  # the native launch holds the guard: this graph's

    def _rebound(self, mapping: dict[int, Any]) -> bool:
        """Whether the instantiated graph took the new arrays in place."""
        try:
            return self._program.rebind(mapping)
        except CoreError:  # the driver refused a patch: a new graph holds the new arrays
            return False

    def _lowerings(self) -> tuple[list[Any], Any]:
        """Each node's host lowering; for a record=True graph, with what eagle.diff keeps added,
        and the Record that describes its runs."""
        lowerings = [lowered(n, label) for n, label in zip(self._nodes, self._labels, strict=True)]
        if not self._recording:
            return lowerings, None
        return record_hooks("eagle.Graph.build").instrument(self, lowerings)

    def _choose_backend(self, backend: str | None, analysis: Analysis) -> str:
        device = [(self._labels[i], name) for i, name, _ in analysis.device_planes]
        if not device:
            if backend == "gpu":
                raise EagleValueError("eagle.Graph.build: backend='gpu' but every plane is a host (NumPy) "
                                 "array: pass CuPy arrays (for a CPU tensor, tensor.cuda()), or build "
                                 "with backend='cpu'")
            return "cpu"
        if backend == "cpu":
            raise EagleValueError(f"eagle.Graph.build: backend='cpu' but the planes {_names(device)} are "
                                  "device "
                             "(CuPy) arrays: pass NumPy arrays (for a CUDA tensor, tensor.cpu()), or build "
                             "with backend='gpu'")
        return "gpu"

    # ---------------------------------------------------------------- run
    def launch(self, n: int = 1) -> Self:
        """Replay the built graph ``n`` times and wait."""
        # the launch prepared at build, called here: a frame more costs what a small replay does
        prepared = self._launch
        if prepared is not None and type(n) is int and n >= 0:
            status = prepared[0](prepared[1], n)
            if status:
                self._failed_launch(status, "eagle.Graph.launch")
            return self
        with self._guard("eagle.Graph.launch"):
            self._run(n, "eagle.Graph.launch")
        return self

    def enqueue(self, n: int = 1) -> Self:
        """Replay without waiting (on the CPU the replay is done when it returns).

        Change no plane's values until the call that waits for the replay (``synchronize``,
        ``launch`` or the next ``enqueue``): that call refuses a torch tensor changed in place
        meanwhile, which the replay may have read before or after the change."""
        if self._prepared(n, "eagle.Graph.enqueue"):  # a host program's: no Record
            return self
        if self.record:
            raise EagleRuntimeError("eagle.Graph.enqueue: a record=True graph runs with launch(), which "
                                    "waits "
                               "for the run its Record describes")
        with self._guard("eagle.Graph.enqueue"):
            self._run(n, "eagle.Graph.enqueue", wait=False)
        return self

    def _prepared(self, n: int, api: str) -> bool:
        """Replay ``n`` times by the launch prepared at build, where there is one (and ``n`` is
        a plain count): whether it did."""
        prepared = self._launch
        if prepared is None or type(n) is not int or n < 0:
            return False
        status = prepared[0](prepared[1], n)
        if status:
            self._failed_launch(status, api)
        return True

    def _failed_launch(self, status: int, api: str) -> None:
        if status == _core.lib.EAGLE_ERR_BUSY:  # another thread holds the guard
            raise Busy(api)
        self._program.failed(status, api)

    def synchronize(self) -> Self:
        """Wait for enqueued replays (nothing is pending on the CPU); a host node's exception
        is raised here, and so is the refusal of a plane over a torch tensor that was changed in
        place since the enqueue."""
        if self._program is not None:
            with self._guard("eagle.Graph.synchronize"):
                self._program.synchronize()
                if self._checks is not None:
                    self._checks.settle("eagle.Graph.synchronize")
        return self

    def set_logical_size(self, n: int) -> Self:
        """The next replays process only the first ``n`` samples; no rebuild."""
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise EagleValueError(f"eagle.Graph.set_logical_size: n must be an int >= 0, got {n!r}")
        if self._comm is not None:
            raise EagleValueError("eagle.Graph.set_logical_size: a graph over a communicator has no logical "
                             "size: each rank's sample count is that of its shard (eagle.shard)")
        with self._guard("eagle.Graph.set_logical_size"):
            self._logical = int(n)
            if self._program is not None:
                self._program.set_logical_size(int(n))
        return self

    def _run(self, n: int, api: str, wait: bool = True) -> None:
        if self._program is None:
            raise EagleRuntimeError(f"{api}: the graph is not built: call build() first")
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise EagleValueError(f"{api}: n must be an int >= 0, got {n!r}")
        checks = self._checks
        if checks is not None:
            checks.before(api)
        try:
            if self._tape is not None and n:
                # eagle.diff's replay: the Record notes whether the run completed
                self._record_replay(self._tape, self._program, int(n))
            elif wait:
                self._program.run(int(n))
                if checks is not None:
                    checks.ran()
            else:
                self._program.enqueue(int(n))
                if checks is not None:
                    checks.enqueued()
        except Exception as exc:
            if self._comm is None:
                raise
            # The other ranks may wait in a collective for this one: stop them all.
            self._comm.abort(f"{api}: rank {self._comm.rank} of {self._comm.size} failed: "
                             f"{type(exc).__name__}: {exc}")

    def _guard(self, api: str) -> _Guard:
        return _Guard(self._busy, api)


class _Guard:
    """Holds a graph's non-blocking guard for one call; a second thread gets Busy."""

    __slots__ = ("api", "flag")

    def __init__(self, flag: Any, api: str) -> None:
        self.flag, self.api = flag, api

    def __enter__(self) -> None:
        if not _core.lib.eagle_guard_enter(self.flag):
            raise Busy(self.api)

    def __exit__(self, *exc: object) -> None:
        _core.lib.eagle_guard_leave(self.flag)


def _refuse_non_planes(node: Node, label: str, api: str) -> None:
    """What a kind declares is memory the conflict check sees, or a value (a number, no edges)."""
    for name, array, _ in node.planes():
        if not (is_plane(array) or is_value(array)):
            raise EagleTypeError(f"{api}: node {label!r} ({node.kind}) declares plane {name!r} as a "
                            f"{type(array).__name__}, which the conflict check cannot see into: declare an "
                            "array (or an object with the buffer protocol)")


def _names(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f"{label}.{name}" for label, name in pairs[:4]) + (" ..." if len(pairs) > 4 else "")


def _viz(api: str, install: str = "eagle-viz") -> Any:
    """eagle.viz, found lazily: the pictures live in the eagle-viz package (DESIGN.md section 2)."""
    try:
        import eagle.viz as viz
    except ModuleNotFoundError as err:
        if err.name != "eagle.viz":
            raise
        raise EagleImportError(f"{api}: pictures come from the eagle-viz package: "
                               f"pip install {install}") from None
    return viz


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
