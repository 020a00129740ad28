"""hawk kernel launches lowered onto eagle's targets: one launch, or a fused run of them.

A launch is its phases (:mod:`hawk.phases`): on the CPU each phase a C
function over sample ranges, libeagle's fixed-order finish of the block
partials between them; on the GPU each phase a grid-stride CUDA kernel, the
graph's fixed-order reduction of the operand plane between them.  A fused run
(:func:`host_run`, :func:`gpu_run`: the ``fuser`` of the launches'
``eagle.extend.Fusible``) is the same, from the IR :func:`hawk.fusion.fuse`
makes of the run, with scratch of its own for its reductions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eagle import extend
from eagle.native import Library, compile_library
from eagle.plan import BoundPlan, Plan
from eagle.plan import Param as PlanParam
from hawk import emit, fusion, libm
from hawk.ir import Slot
from hawk.phases import Phased, split
from hawk.types import NUMPY, strong

#: How a by-value slot is stored in its eagle_arg (eagle.plan.VALUE_TYPES).
VALUE_TYPE = {"f64": "f64", "f32": "f32", "i64": "i64", "i32": "i32", "u32": "u32", "u64": "u64",
              "bool": "i64"}
#: C source of a fused run -> its library and phase functions (identical runs compile once).
_LIBRARIES: dict[str, tuple[Library, list[Any]]] = {}
#: The shape of a fused run (its IRs by id, its planes by first use, which are live) -> its fused
#: IR, its phases and the IRs (held, so that their ids stay theirs).
_RUNS: dict[tuple[Any, ...], tuple[fusion.Fused, Phased, list[Any]]] = {}
#: id of a fused run's Phased (held in _RUNS) -> its source per dialect (and emission rule)
_SOURCES: dict[tuple[int, str, int], str] = {}
#: The symbol prefix of a fused run's functions.
PREFIX = "hk_run"


def scratch(slots: Sequence[Slot], n: int, device: Any) -> list[Any]:
    """Reduction scratch for ``slots`` (those after the kernel's own): on the CPU a partial per
    sample block, on the GPU the operand of every sample (the graph reduces the plane), and
    the one-cell result."""
    blocks = -(-n // extend.BLOCK)
    return [np.empty(1 if s.cell else max(blocks, 1), NUMPY[s.dtype]) if device is None else
            extend.empty_like_device(device, (1 if s.cell else n,), NUMPY[s.dtype]) for s in slots]


def plan_params(slots: Sequence[Slot]) -> list[PlanParam]:
    """The eagle.plan parameters of a phase function's argument block (``n`` last)."""
    return [*(PlanParam(s.name, s.role, VALUE_TYPE[strong(s.dtype)]) for s in slots),
            PlanParam("n", "value", "i64")]


def emit_phases(program: Any, phased: Phased, functions: Sequence[Any], slots: list[Any], args: Sequence[Any],
                n: int, accesses: Sequence[tuple[Any, str]], per_sample: bool) -> None:
    """The phases of a launch (``args``: an array or value per slot of ``phased``) on a host program."""
    for j in range(len(phased.phases) - 1):
        # a phase before a reduction writes only its sample of a scratch plane: it may be
        # block-fused with the per-sample kernels before it
        program.kernel(functions[j], slots, n, per_sample=True, accesses=accesses)
        for reduction in phased.reductions:
            if reduction.phase == j:
                program.reduce_partials(args[reduction.partials], args[reduction.cell], n, reduction.op)
    # a kernel that reduces or writes a cell runs over an empty batch too: its cells get the
    # reductions' identities, as eagle.reduce writes them; one that only stores cells is one
    # call on the running thread (its first sample), not a pass of the team over the samples
    final = min(n, 1) if phased.cells_only else n
    program.kernel(functions[-1], slots, final, per_sample=per_sample, accesses=accesses,
                   empty_call=not per_sample)


def emit_gpu_phases(gpu: Any, source: str, phased: Phased, prefix: str, args: Sequence[Any], n: int) -> None:
    """The phases of a launch on a GPU program: one NVRTC module (``source``), a kernel per phase."""
    module = extend.cuda_module(source, prefix, gpu.device)
    typed = [a if s.role != "value" else np.dtype(NUMPY[strong(s.dtype)]).type(a)
             for a, s in zip(args, phased.slots, strict=False)]
    typed.append(np.int64(n))  # n: the plane length; the logical end comes last
    for j in range(len(phased.phases)):
        gpu.samples_kernel(module.function(f"{prefix}_p{j}"), typed, n)
        for reduction in phased.reductions:
            if reduction.phase == j:
                gpu.reduce(args[reduction.partials], args[reduction.cell], reduction.op)


def _fused(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
           ) -> tuple[fusion.Fused, Phased, list[Any]]:
    """The fused IR of a run of launches (KernelBounds), its phases, and its arguments per slot
    (scratch of its own included).  Runs of one shape (the same IRs, the same planes shared, the
    same planes live: a long chain cut at the size cap) are fused once."""
    members, planes = [], {}
    for bound in bounds:
        ir = bound.plan.compiled.ir
        keys = []
        for arg, slot in zip(bound.args, ir.slots, strict=False):
            keys.append(None if slot.role == "value" else planes.setdefault(key(arg), (len(planes), arg))[0])
        members.append((ir, keys))
    alive = tuple(live(arg) for _, arg in planes.values())
    shape = (tuple((id(ir), tuple(keys)) for ir, keys in members), alive)
    held = _RUNS.get(shape)
    if held is None:
        fused = fusion.fuse(members, alive.__getitem__, "run")
        held = _RUNS[shape] = (fused, split(fused.ir, shared=True), [ir for ir, _ in members])
    fused, phased, _ = held
    args = [bounds[m].args[k] for m, k in fused.origins]
    device = next((a for a in args if extend.on_device(a)), None)
    return fused, phased, [*args, *scratch(phased.slots[len(args):], bounds[0].samples, device)]


def _accesses(phased: Phased, args: Sequence[Any], planes: int) -> list[tuple[Any, str]]:
    return [(a, s.role) for a, s in zip(args[:planes], phased.slots, strict=False) if s.role != "value"]


def source(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool],
           dialect: str) -> str:
    """The C (``dialect`` "c") or CUDA C ("cuda") of a fused run of launches: the prelude, then a
    function ``hk_run_p<j>`` per phase; ``key`` and ``live`` as :func:`host_run` takes them."""
    fused, phased, _ = _fused(bounds, key, live)
    return _source(fused, phased, dialect)


def _source(fused: fusion.Fused, phased: Phased, dialect: str) -> str:
    at = (id(phased), dialect, emit.INTERLEAVED_FROM)
    if at not in _SOURCES:
        _SOURCES[at] = emit.source(fused.ir, phased, PREFIX, dialect)
    return _SOURCES[at]


def host_run(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
             ) -> Callable[[Any], object]:
    """A fused run of launches (KernelBounds) on the CPU: each phase one C function over the whole
    run; ``key(array)``: equal for the very same view; ``live(array)``: whether a plane is read
    after the run (its ``eagle.extend.Fusible`` fuser)."""
    fused, phased, args = _fused(bounds, key, live)
    source = _source(fused, phased, "c")
    held = _LIBRARIES.get(source)
    if held is None:
        libm.load()  # the functions the library calls
        library = Library(compile_library(source, name="hawk_run"))
        held = _LIBRARIES[source] = (library, [library.kernel(f"{PREFIX}_p{j}")
                                               for j in range(len(phased.phases))])
    library, functions = held
    n = bounds[0].samples
    slots = BoundPlan(Plan(functions[-1], plan_params(phased.slots), name="run", owner=library),
                      [*args, n]).slots()
    accesses = _accesses(phased, args, len(fused.origins))

    def emit_run(program: Any) -> None:
        emit_phases(program, phased, functions, slots, args, n, accesses, fused.ir.per_sample)

    return emit_run


def gpu_run(bounds: Sequence[Any], key: Callable[[Any], int], live: Callable[[Any], bool]
            ) -> Callable[[Any], object]:
    """A fused run of launches in a CUDA graph: each phase one CUDA kernel over the whole run."""
    fused, phased, args = _fused(bounds, key, live)
    n = bounds[0].samples
    cuda_source = _source(fused, phased, "cuda")

    def emit_run(gpu: Any) -> None:
        emit_gpu_phases(gpu, cuda_source, phased, PREFIX, args, n)

    return emit_run


def fusible(bound: Any, target: str) -> extend.Fusible | None:
    """A launch's offer to join a fused run on ``target`` ("cpu" or "gpu")."""
    size = bound.plan.compiled.fused_size
    if size is None:
        return None
    # a launch whose per-sample work waits for its reductions ends a run (a later member would
    # wait too); one whose reductions only fill cells lets the next share its reduction phase
    phased = bound.plan.compiled.phased
    return extend.Fusible(host_run if target == "cpu" else gpu_run, bound, bound.samples,
                          tuple((a, role) for _, a, role in bound.planes()), size,
                          last=len(phased.phases) > 1 and not phased.cells_only,
                          reduces=bool(phased.reductions))
