"""hawk kernel launches lowered onto eagle's targets: one launch, or a fused run of them.

A launch is its phases (:mod:`hawk.phases`): on the CPU each phase a C
function over sample ranges, libeagle's fixed-order finish of the block
partials between them; on the GPU each phase a grid-stride CUDA kernel, the
graph's fixed-order reduction of the operand plane between them.  A fused run
(:func:`host_run`, :func:`gpu_run`: the ``fuser`` of the launches'
``eagle.extend.Fusible``) is the same, from the IR :func:`hawk.fusion.fuse`
makes of the run, with scratch of its own for its reductions, its Scatters' sort-and-sum after
its samples and, on the CPU, one check of its cells after it, where the first launch that went
wrong raises (:mod:`hawk.run_checks`).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eagle import extend
from eagle.native import Library, compile_libraries
from eagle.plan import BoundPlan, Plan
from eagle.plan import Param as PlanParam
from hawk import checks, emit, fusion, libm, run_checks, tables
from hawk.ir import Slot
from hawk.phases import Phased, split
from hawk.types import NUMPY, strong

#: How a by-value slot is stored in its eagle_arg (eagle.plan.VALUE_TYPES).
VALUE_TYPE = {"f64": "f64", "f32": "f32", "i64": "i64", "i32": "i32", "u32": "u32", "u64": "u64",
              "bool": "i64"}
#: C source of a fused run -> its library and phase functions (identical runs compile once).
_LIBRARIES: dict[str, tuple[Library, list[Any]]] = {}


@dataclass
class _Shaped:
    """A fused run of one shape: its IR, its phases, the members' IRs (held, so that their ids,
    part of the shape, stay theirs), and what is made of it once: its source per dialect and
    the plan its argument block is filled by."""

    fused: fusion.Fused
    phased: Phased
    irs: list[Any]
    sources: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    plan: Plan | None = None

    def source(self, dialect: str) -> str:
        return self.named(dialect)[0]

    def named(self, dialect: str) -> tuple[str, str]:
        """The source in ``dialect`` (and the emission rule) and its symbol prefix: for C,
        :data:`PREFIX` and the digest of the run's code, so that runs compiled into one library
        keep their symbols apart."""
        at = (dialect, emit.INTERLEAVED_FROM, emit.INTERLEAVED_BELOW)
        if at not in self.sources:
            source = emit.source(self.fused.ir, self.phased, PREFIX, dialect)
            if dialect == "c":
                prefix = f"{PREFIX}_{hashlib.sha256(source.encode()).hexdigest()[:16]}"
                self.sources[at] = (emit.source(self.fused.ir, self.phased, prefix, dialect), prefix)
            else:
                self.sources[at] = (source, PREFIX)
        return self.sources[at]

    def slots(self, args: Sequence[Any], n: int) -> list[Any]:
        """The argument slots of the phase functions, as ``Program.kernel`` takes them."""
        if self.plan is None:
            self.plan = Plan(None, plan_params(self.phased.slots), name="run")
        return BoundPlan(self.plan, [*args, n]).slots()


#: The most shapes of fused runs a process keeps (:data:`_RUNS`), the least recently used going
#: first: a build asks for each of its runs once, so this bounds what many builds leave behind.
MAX_RUNS = 512
#: The shape of a fused run (its IRs by id, its planes by first use, which are live) -> it; an entry
#: holds the IRs whose ids it is keyed by, so no other IR takes those ids while it lives.
_RUNS: OrderedDict[tuple[Any, ...], _Shaped] = OrderedDict()
#: The symbol prefix of a fused run's functions.
PREFIX = "hk_run"


def scratch(slots: Sequence[Slot], n: int, device: Any) -> list[Any]:
    """Reduction scratch for ``slots`` (those after the kernel's own): on the CPU a partial per
    sample block, on the GPU the operand of every sample (the graph reduces the plane), and
    the one-cell result."""
    if not slots:  # most launches: worked out at each of a recording's calls
        return []
    blocks = -(-n // extend.BLOCK)

    def shape(s: Slot) -> tuple[int, ...]:
        if s.table is not None or (s.reduction is None and not s.cell):  # a scatter's (hawk.tables)
            return s.table or (s.components, n)
        return (1,) if s.cell else (max(blocks, 1),) if device is None else (n,)

    def made(s: Slot) -> Any:
        clean = tables.clean(s.name)  # a check cell starts as no error, on the host or the device
        if clean is not None:
            return clean if device is None else extend.device_copy_like(device, clean)
        if device is not None:
            return extend.empty_like_device(device, shape(s), NUMPY[s.dtype])
        return np.zeros(1, np.int64) if s.name == tables.ENDED else np.empty(shape(s), NUMPY[s.dtype])

    return [made(s) for s in slots]


def plan_params(slots: Sequence[Slot]) -> list[PlanParam]:
    """The eagle.plan parameters of a phase function's argument block (``n`` last)."""
    return [*(PlanParam(s.name, s.role, VALUE_TYPE[strong(s.dtype)]) for s in slots),
            PlanParam("n", "value", "i64")]


def emit_phases(program: Any, phased: Phased, functions: Sequence[Any], slots: list[Any], args: Sequence[Any],
                n: int, accesses: Sequence[tuple[Any, str]], per_sample: bool) -> None:
    """The phases of a launch (``args``: an array or value per slot of ``phased``) on a host program."""
    # a phase before a reduction writes only its sample of a scratch plane: it may be block-fused
    # with the per-sample kernels before it, unless it reads a plane whole (a Table)
    early = not any(s.table is not None and s.role == "read" for s in phased.slots)
    for j in range(len(phased.phases) - 1):
        program.kernel(functions[j], slots, n, per_sample=early, accesses=accesses)
        for reduction in phased.reductions:
            if reduction.phase == j:
                program.reduce_partials(args[reduction.partials], args[reduction.cell], n, reduction.op)
    # a kernel that reduces or writes a cell runs over an empty batch too: its cells get the
    # reductions' identities, as eagle.reduce writes them; one that only stores cells is one
    # call on the running thread (its first sample), not a pass of the team over the samples
    final = min(n, 1) if phased.cells_only else n
    last = len(phased.phases) - 1
    program.kernel(functions[last], slots, final, per_sample=per_sample, accesses=accesses,
                   empty_call=not per_sample)
    if phased.scatters:  # the Table-shaped outputs: summed by one call on one thread, over no samples too
        program.kernel(functions[last + 1], slots, 1, per_sample=False, accesses=accesses, empty_call=True)


def typed_args(slots: Sequence[Slot], args: Sequence[Any]) -> list[Any]:
    """A launch's arguments for a CUDA kernel: planes as they are, values as their slots' types
    (one per slot: a trailing ``n`` is left out)."""
    return [a if s.role != "value" else np.dtype(NUMPY[strong(s.dtype)]).type(a)
            for a, s in zip(args, slots, strict=False)]


def emit_gpu_phases(gpu: Any, source: str, phased: Phased, prefix: str, args: Sequence[Any], n: int) -> None:
    """The phases of a launch on a GPU program: one NVRTC module (``source``), a kernel per phase."""
    module = extend.cuda_module(source, prefix, gpu.device)
    typed = typed_args(phased.slots, args)
    typed.append(np.int64(n))  # n: the plane length; the logical end comes last
    for j in range(len(phased.phases)):
        gpu.samples_kernel(module.function(f"{prefix}_p{j}"), typed, n)
        for reduction in phased.reductions:
            if reduction.phase == j:
                gpu.reduce(args[reduction.partials], args[reduction.cell], reduction.op)
    if phased.scatters:  # one thread, told the samples the phases ran (the logical end)
        def one_thread(base: Sequence[Any], logical: int) -> tuple[list[Any], tuple[int, int, int]]:
            return [*base, np.int64(min(n, logical))], (1, 1, 1)

        gpu.kernel(module.function(f"{prefix}_s"), typed, (1, 1, 1), (1, 1, 1), sized=one_thread)


def _fused(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
           ) -> tuple[_Shaped, list[Any]]:
    """The fused run of launches (KernelBounds) and its arguments per slot (scratch of its own
    included).  Runs of one shape (the same IRs, the same planes shared, the same planes live:
    a long chain cut at the size cap) are fused once."""
    members, planes = [], {}
    for bound in bounds:
        ir = bound.plan.compiled.ir
        keys = []
        for arg, slot in zip(bound.args, ir.slots, strict=False):
            keys.append(None if slot.role == "value" else planes.setdefault(key(arg), (len(planes), arg))[0])
        members.append((ir, keys))
    alive = tuple(live(arg) for _, arg in planes.values())
    shape = (tuple((id(ir), tuple(keys)) for ir, keys in members), alive)
    shaped = _RUNS.get(shape)
    if shaped is None:
        fused = fusion.fuse(members, alive.__getitem__, "run")
        shaped = _RUNS[shape] = _Shaped(fused, split(fused.ir, shared=True), [ir for ir, _ in members])
        if len(_RUNS) > MAX_RUNS:
            _RUNS.popitem(last=False)
    else:
        _RUNS.move_to_end(shape)
    args = [bounds[m].args[k] for m, k in shaped.fused.origins]
    device = next((a for a in args if extend.on_device(a)), None)
    return shaped, [*args, *scratch(shaped.phased.slots[len(args):], bounds[0].samples, device)]


def _accesses(phased: Phased, args: Sequence[Any], planes: int) -> list[tuple[Any, str]]:
    return [(a, s.role) for a, s in zip(args[:planes], phased.slots, strict=False) if s.role != "value"]


def source(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool],
           dialect: str) -> str:
    """The C (``dialect`` "c") or CUDA C ("cuda") of a fused run of launches: the prelude, then a
    function ``hk_run_p<j>`` per phase; ``key`` and ``live`` as :func:`host_run` takes them."""
    return _fused(bounds, key, live)[0].source(dialect)


def host_run(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
             ) -> Callable[[Any], object]:
    """A fused run of launches (KernelBounds) on the CPU: each phase one C function over the whole
    run; ``key(array)``: equal for the very same view; ``live(array)``: whether a plane is read
    after the run (its ``eagle.extend.Fusible`` fuser)."""
    shaped, args = _fused(bounds, key, live)
    functions = _functions(shaped)
    n = bounds[0].samples
    slots = shaped.slots(args, n)
    phased, fused = shaped.phased, shaped.fused
    accesses = _accesses(phased, args, len(fused.origins))
    cells = tables.check_cells(phased.slots, args)
    names = [bound.plan.name for bound in bounds]

    def emit_run(program: Any) -> None:
        emit_phases(program, phased, functions, slots, args, n, accesses, fused.ir.per_sample)
        if cells:  # checked reads, placing Scatters: the first launch that went wrong raises
            program.callback(lambda: run_checks.check(fused, shaped.irs, names, cells, n),
                             touches=list(cells.values()))

    return emit_run


def _functions(shaped: _Shaped) -> list[Any]:
    """The phase functions of a fused run: compiled before, or stand-ins the build patches once
    it has compiled its new runs together (``extend.deferred_kernels``), else compiled now."""
    source, prefix = shaped.named("c")
    held = _LIBRARIES.get(source)
    if held is not None:
        return held[1]
    # a phase function each, then the Scatters' finish (hawk.tables.c_finish)
    names = (*(f"{prefix}_p{j}" for j in range(len(shaped.phased.phases))),
             *([f"{prefix}_s"] if shaped.phased.scatters else []))
    item = (source, prefix, names)
    deferred = extend.deferred_kernels(_compile_runs, item, len(names))
    return deferred if deferred is not None else _compile_runs([item])[0][0]


def _compile_runs(items: list[tuple[str, str, tuple[str, ...]]]) -> list[tuple[list[Any], Library]]:
    """Each (source, prefix, function names) compiled (those not cached, in one translation unit):
    its functions and their library."""
    libm.load()  # the functions the libraries call
    paths = compile_libraries([source for source, _, _ in items], "hawk_run", _one_unit)
    loaded: dict[Path, Library] = {}
    out = []
    for (source, _, names), path in zip(items, paths, strict=True):
        held = _LIBRARIES.get(source)
        if held is None:
            library = loaded.get(path) or loaded.setdefault(path, Library(path))
            held = _LIBRARIES[source] = (library, [library.kernel(name) for name in names])
        out.append((held[1], held[0]))
    return out


def _one_unit(sources: Sequence[str]) -> str | None:
    """The C sources of runs as one translation unit: the prelude they share, once, then each
    run's functions; None when one does not start with it."""
    prelude = emit.prelude("c")
    if not all(source.startswith(prelude) for source in sources):
        return None
    return prelude + "".join(source[len(prelude):] for source in sources)


def gpu_run(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
            ) -> Callable[[Any], object]:
    """A fused run of launches in a CUDA graph: each phase one CUDA kernel over the whole run."""
    shaped, args = _fused(bounds, key, live)
    n = bounds[0].samples
    cuda_source = shaped.source("cuda")
    cells = tables.check_cells(shaped.phased.slots, args)
    names = [bound.plan.name for bound in bounds]

    def emit_run(gpu: Any) -> None:
        emit_gpu_phases(gpu, cuda_source, shaped.phased, PREFIX, args, n)
        if cells:  # checked reads, placing Scatters: the wait raises the first launch's that went wrong
            checks.on_gpu(gpu, cells,
                          lambda found: run_checks.check(shaped.fused, shaped.irs, names, found, n))

    return emit_run


def fusible(bound: Any, target: str) -> extend.Fusible | None:
    """A launch's offer to join a fused run on ``target`` ("cpu" or "gpu")."""
    size = bound.plan.compiled.fused_size
    if size is None:
        return None
    # a launch whose per-sample work waits for its reductions ends a run (a later member would
    # wait too); one whose reductions only fill cells lets the next share its reduction phase
    phased = bound.plan.compiled.phased
    read_whole = [k for k, s in enumerate(phased.slots) if s.table is not None and s.role == "read"]
    # a Scatter's plane (a Table's gradient too) is written whole after the run's samples
    scattered = [scatter.target for scatter in phased.scatters]
    return extend.Fusible(host_run if target == "cpu" else gpu_run, bound, bound.samples, bound.planes, size,
                          last=len(phased.phases) > 1 and not phased.cells_only,
                          reduces=bool(phased.reductions), whole=lambda: [bound.args[k] for k in read_whole],
                          scatters=lambda: [bound.args[k] for k in scattered])
