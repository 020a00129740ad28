"""Tables: arrays every sample reads whole, gathered at computed indices; the sample's index.

A ``Table`` parameter is an array of any shape shared by all samples (weights,
a lookup table, a neighbour's plane).  ``t[i]``, ``t[i, j]`` (one integer index
per axis) read it at indices the kernel computes: a :class:`~hawk.ir.Gather`.
What an index outside the table does is the annotation's:

- ``Table``: checked.  The read takes cell 0 (never memory outside the table)
  and the call raises ``IndexError`` after the launch, naming the kernel, the
  table, the read's line, the first sample that read out of range (the
  smallest, so the same on any thread count) and its index and axis;
- ``Table.clamp``: the index is clamped to ``0 … size - 1`` on its axis;
- ``Table.wrap``: the index goes around, as Python's ``%`` (``-1`` is the last).

``hawk.sample()`` is the sample's own index (int64), and ``i, j =
hawk.sample2(width)`` the row and column of a grid of that width flattened into
samples, row-major (``sample() // width``, ``sample() % width``).

A ``Scatter`` parameter is an array the samples write at computed indices: a
:class:`~hawk.ir.ScatterAdd`.  ``s[k] += v`` sums, each cell ``0.0 + T`` over
sample positions (eagle's fixed tree, -0.0 where a sample added nothing), and
``s[k] = v`` places, every cell exactly once (checked).  A Table's gradient is
the same sum of its reads' adjoints.  The compiled code stores each sample's
value and cell per site, then one call on one thread counting-sorts them by
cell and adds each cell's along the trie of sample indices.

This module holds the front end's part (called from :mod:`hawk.frontend`), the
reference evaluator's, the C/CUDA emitters' and the errors a launch raises.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from eagle.extend import EagleIndexError, EagleTypeError, EagleValueError
from hawk import grid_index, intrinsics, records
from hawk.ir import Const, Gather, If, KernelIR, Loop, Op, Operand, ScatterAdd, Slot, Var, walk
from hawk.types import NUMPY

#: The scratch cells of a launch with checked accesses: the smallest ``sample * sites + site`` that
#: went out of range (INT64_MAX when none did), its index and axis, and the lock word that
#: keeps the three together.
BOUNDS = "_bounds"
NONE = np.iinfo(np.int64).max
#: The integer types an index may have (uint64 could exceed int64: cast it first).
_INDEX_TYPES = ("i32", "i64", "u32", "wi")


def sample() -> int:
    """The sample's own index (inside a kernel only).

    >>> from hawk import Scalar, Table
    >>> @hawk.kernel
    ... def left(x: Scalar, t: Table.clamp) -> Scalar:
    ...     return t[hawk.sample() - 1]             # the neighbour to the left, clamped at 0
    >>> x = np.array([1.0, 2.0, 4.0])
    >>> left(x, x)
    array([1., 1., 2.])
    >>> left.vjp(x, x, np.ones(3))["t"]          # cell 0 was read by samples 0 and 1
    array([2., 1., 0.])

    A ``Scatter`` is written at computed indices: ``s[k] = v`` places (every cell exactly once,
    checked), ``s[k] += v`` sums in eagle's fixed order:

    >>> from hawk import Int32, Scatter
    >>> @hawk.kernel
    ... def spread(x: Scalar, k: Int32, backwards: Scatter, counts: Scatter):
    ...     backwards[2 - hawk.sample()] = x
    ...     counts[k] += 1.0
    >>> backwards, counts = np.zeros(3), np.zeros(2)
    >>> spread(x, np.array([1, 0, 1], np.int32), backwards, counts)
    >>> backwards, counts
    (array([4., 2., 1.]), array([1., 2.]))
    """
    raise EagleTypeError("hawk.sample: only inside a hawk kernel (the index of the sample it computes)")


def sample2(width: int) -> tuple[int, int]:
    """``i, j = hawk.sample2(width)``: the row and column of the sample in a row-major grid of
    ``width`` columns flattened into samples (inside a kernel only).

    >>> from hawk import Int32, Table
    >>> @hawk.kernel
    ... def row(x: Int32, t: Table[Int32]) -> Int32:
    ...     i, j = hawk.sample2(3)
    ...     return t[i]
    >>> row(np.zeros(6, np.int32), np.array([10, 20], np.int32))
    array([10, 10, 10, 20, 20, 20], dtype=int32)
    """
    raise EagleTypeError("hawk.sample2: only inside a hawk kernel, as `i, j = hawk.sample2(width)`")


intrinsics.register(sample, "sample", 0)
intrinsics.register(sample2, "sample2", 1)


# ------------------------------------------------------------ front end


def is_table(lowerer: Any, name: str) -> bool:
    slot = lowerer.param_slot.get(name)
    return slot is not None and lowerer.slots[slot].table is not None


def gather(lowerer: Any, node: ast.Subscript) -> Var:
    """``t[i, j]`` of a Table parameter: one integer index per axis."""
    src, name = lowerer.src, node.value.id
    slot_index = lowerer.param_slot[name]
    slot = lowerer.slots[slot_index]
    if slot.role != "read":
        raise src.refuse(node, f"{name!r} is a Scatter, which a kernel writes (s[k] += v, s[k] = v) but "
                               "does not read; read the values it adds from where they come")
    index = _indices(lowerer, node, slot)
    mode = lowerer.src.params[slot_index][1].bounds
    site = lowerer.sites if mode == "check" else 0
    lowerer.sites += mode == "check"
    dst = Var(_stored(slot.dtype), False, name)
    line = getattr(node, "lineno", 0) + src.line_offset
    lowerer.body.append(Gather(dst, slot_index, index, mode, site, line))
    return dst


def scatter(lowerer: Any, node: ast.stmt) -> bool:
    """``s[k] += v`` (a sum in the fixed order) or ``s[k] = v`` (a permutation) into a Scatter
    parameter; False when ``node`` is another statement."""
    target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
        node.target if isinstance(node, ast.AugAssign) else None
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and target.value.id in lowerer.param_slot
            and lowerer.slots[lowerer.param_slot[target.value.id]].role == "readwrite"
            and is_table(lowerer, target.value.id)):
        return False
    src, name = lowerer.src, target.value.id
    exclusive = isinstance(node, ast.Assign)
    if isinstance(node, ast.AugAssign) and not isinstance(node.op, ast.Add):
        raise src.refuse(node, f"a Scatter takes {name}[k] += v (a sum) or {name}[k] = v (each cell once)")
    if lowerer.scatters.setdefault(name, exclusive) != exclusive:
        raise src.refuse(node, f"{name!r} is written both with = and with +=; a Scatter is a sum (+=) or a "
                               "permutation (=): use two Scatters")
    slot_index = lowerer.param_slot[name]
    slot = lowerer.slots[slot_index]
    index = _indices(lowerer, target, slot)
    value = lowerer.conform(lowerer.expr(node.value), slot.dtype, node.value,
                            f"{name!r} is {slot.dtype} but is given a value of another kind")
    mode = lowerer.src.params[slot_index][1].bounds
    lowerer.body.append(ScatterAdd(slot_index, index, value, mode, exclusive, lowerer.sites if mode == "check"
                                   else 0, getattr(node, "lineno", 0) + src.line_offset))
    lowerer.sites += mode == "check"
    return True


def _indices(lowerer: Any, node: ast.Subscript, slot: Slot) -> tuple[Operand, ...]:
    """The integer indices of ``t[i, j]``: one per axis of the array."""
    src, name = lowerer.src, node.value.id
    written = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if slot.table and len(written) != len(slot.table):
        raise src.refuse(node, f"{name!r} is a Table of shape {slot.table} in this call: read it with "
                               f"{len(slot.table)} ind{'ices' if len(slot.table) != 1 else 'ex'} "
                               f"({name}[{', '.join('ijkl'[:len(slot.table)])}]), got {len(written)}")
    index = []
    for part in written:
        if isinstance(part, ast.Slice):
            raise src.refuse(part, f"{name}[...] reads one cell: slices are not in hawk; read each cell "
                                   "at its index")
        value = lowerer.expr(part)
        if value.dtype not in _INDEX_TYPES:
            raise src.refuse(part, f"the index {ast.unparse(part)!r} of Table {name!r} is {value.dtype}; an "
                                   "index is an integer: write hawk.math.int32(...) (floor first to round "
                                   "down a float)")
        index.append(value if isinstance(value, Var) else Const(int(value.value), "i64"))
    return tuple(index)


def sample_index(lowerer: Any) -> Var:
    dst = Var("i64", False, "sample")
    lowerer.body.append(Op(dst, "sample", ()))
    return dst


def unpack_sample2(lowerer: Any, node: ast.Assign) -> bool:
    """``i, j = hawk.sample2(width)``: False when ``node`` is another assignment."""
    target, value = node.targets[0], node.value
    if not (len(node.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Call)
            and intrinsics.lookup(lowerer.resolve(value.func)) == ("sample2", 1)):
        return False
    src = lowerer.src
    if len(target.elts) != 2 or len(value.args) != 1 or value.keywords:
        raise src.refuse(node, "write `i, j = hawk.sample2(width)`: two names, one width")
    width = lowerer.expr(value.args[0])
    if width.dtype not in _INDEX_TYPES or not (isinstance(width, Const) or width.uniform):
        raise src.refuse(value, "hawk.sample2(width) takes an integer width the same for every sample: a "
                                "number or a Param[Int32]")
    for name, part in zip(target.elts, grid_index.row_col(lowerer, sample_index(lowerer),
                                                          lowerer.cast(width, "i64")), strict=True):
        lowerer.assign(name, part, value)
    return True


def _stored(dtype: str) -> str:
    return {"wf": "f64", "wi": "i64"}.get(dtype, dtype)


# ------------------------------------------------------------ reference


def flat_index(slot: Slot, index: list[np.ndarray], mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The flat (C-order) cell of each sample's read and whether its index was in range (a read
    out of range takes cell 0, as the compiled code does)."""
    flat = np.zeros(np.broadcast(*index).shape if index else (), np.int64)
    inside = np.ones(flat.shape, bool)
    for k, (extent, i) in enumerate(zip(slot.table, index, strict=True)):
        i = np.asarray(i).astype(np.int64)
        if mode == "clamp":
            i = np.clip(i, 0, extent - 1)
        elif mode == "wrap":
            i = np.remainder(i, extent)
        else:
            inside &= (i >= 0) & (i < extent)
        stride = int(np.prod(slot.table[k + 1:], dtype=np.int64))
        flat = flat + i * stride
    return np.where(inside, flat, 0), inside


def evaluate(ir: KernelIR, stmt: Gather, table: np.ndarray, index: list[Any], n: int,
             mask: np.ndarray | None) -> tuple[np.ndarray, tuple[int, int, int] | None]:
    """What ``stmt`` reads per sample (cell 0 out of range), and :func:`outside` of it."""
    slot = ir.slots[stmt.slot]
    index = [np.broadcast_to(i, (n,)) for i in index]
    flat, inside = flat_index(slot, index, stmt.mode)
    return np.asarray(table).reshape(-1)[flat], outside(ir, stmt, index, inside, mask)


def outside(ir: KernelIR, stmt: Gather | ScatterAdd, index: list[np.ndarray], inside: np.ndarray,
            mask: np.ndarray | None) -> tuple[int, int, int] | None:
    """(key, index, axis) of the first sample the mask keeps that accessed a cell outside the
    array (what :func:`bounds_error` takes), None when none did.  The reference keeps the smallest
    key of the launch, as the compiled code does, and raises after evaluating it all."""
    bad = ~inside if mask is None else ~inside & mask
    if not bad.any():
        return None
    sample_number = int(np.argmax(bad))
    extents = ir.slots[stmt.slot].table
    axis = next(k for k, (i, d) in enumerate(zip(index, extents, strict=True))
                if not 0 <= int(i[sample_number]) < d)
    return sample_number * sites(ir) + stmt.site, int(index[axis][sample_number]), axis


# ---------------------------------------------------------- C and CUDA


def c_gather(emitter: Any, s: Gather) -> str:
    """The C (and CUDA C) of one gather, as one statement."""
    slot = emitter.slots[s.slot]
    terms = []
    for k, (extent, i) in enumerate(zip(slot.table, s.index, strict=True)):
        value = f"(int64_t){emitter.operand(i)}"
        if s.mode != "check":
            value = f"hk_{s.mode}_index({value}, {extent}LL)"
        stride = int(np.prod(slot.table[k + 1:], dtype=np.int64))
        terms.append((value, extent, stride))
    flat = " + ".join(f"{v} * {stride}LL" if stride != 1 else v for v, _, stride in terms)
    read = f"{emitter.var(s.dst)} = s{s.slot}[{grid_index.narrow(flat, slot.table)}];"
    if s.mode != "check":
        return read
    inside = grid_index.narrow(f"hk_in ? {flat} : 0", slot.table)
    return f"{{ {_check(emitter, s, terms)} {emitter.var(s.dst)} = s{s.slot}[{inside}]; }}"


def _check(emitter: Any, s: Gather | ScatterAdd, terms: list[tuple[str, int, int]]) -> str:
    """``hk_in``: whether a checked access is inside the array; outside, the smallest key of the
    call so far (sample * sites + site) with the index and axis that were out of range."""
    key = f"({emitter.sample}) * {emitter.bound_sites}LL + {s.site}LL"
    if s.member:  # a fused run's: its members in order, then samples (hawk.run_checks)
        key = f"({s.member}LL * n + {emitter.sample}) * {emitter.bound_sites}LL + {s.site}LL"
    checks = " && ".join(f"(uint64_t)({v}) < {extent}ULL" for v, extent, _ in terms)
    index, axis = "0", "0"
    for k in reversed(range(len(terms))):  # the first axis out of range
        v, extent, _ = terms[k]
        outside = f"(uint64_t)({v}) >= {extent}ULL"
        index, axis = f"({outside} ? {v} : {index})", f"({outside} ? {k} : {axis})"
    return (f"const uint8_t hk_in = {checks}; const uint8_t hk_new = !hk_in && {key} < hk_bad; "
            f"hk_bad_at = hk_new ? {index} : hk_bad_at; hk_bad_axis = hk_new ? {axis} : hk_bad_axis; "
            f"hk_bad = hk_new ? {key} : hk_bad;")


def c_helpers() -> str:
    """The index functions of clamped and wrapped reads, and the bounds cell's atomic minimum."""
    return """
HK_FN int64_t hk_clamp_index(int64_t k, int64_t d) { return k < 0 ? 0 : k >= d ? d - 1 : k; }
HK_FN int64_t hk_wrap_index(int64_t k, int64_t d) { int64_t r = k % d; return r < 0 ? r + d : r; }
"""


def c_bounds(emitter: Any, body: list[Any]) -> tuple[list[str], list[str]]:
    """The per-call smallest bad key of a function with checked reads, and its atomic minimum into
    the bounds cell after the sample loop (a minimum: the same on any thread count); for C with
    scatters, the end of the samples it ran, kept by an atomic maximum."""
    ran: list[str] = []
    if emitter.dialect == "c" and any(isinstance(s, ScatterAdd) for s in walk(body)):
        ended = next(k for k, s in enumerate(emitter.slots) if s.name == ENDED)
        ran = [f"    if (end > begin) {{ int64_t seen = __atomic_load_n(s{ended}, __ATOMIC_RELAXED);",
               f"        while (end > seen && !__atomic_compare_exchange_n(s{ended}, &seen, end, 0, "
               "__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} }"]
    if not any(isinstance(s, (Gather, ScatterAdd)) and s.mode == "check" for s in walk(body)):
        return [], ran
    cell = next(k for k, s in enumerate(emitter.slots) if s.name == BOUNDS)
    head = ["    int64_t hk_bad = INT64_MAX, hk_bad_at = 0, hk_bad_axis = 0;"]
    if emitter.dialect == "c":  # the cell's key, index and axis under its lock word (the error path)
        tail = ["    if (hk_bad != INT64_MAX) {",
                f"        while (__atomic_exchange_n(&s{cell}[3], 1, __ATOMIC_ACQUIRE)) {{}}",
                f"        if (hk_bad < s{cell}[0]) {{ s{cell}[0] = hk_bad; s{cell}[1] = hk_bad_at; "
                f"s{cell}[2] = hk_bad_axis; }}",
                f"        __atomic_store_n(&s{cell}[3], 0, __ATOMIC_RELEASE); }}"]
    else:  # the same under a lock word taken by atomicCAS, the section inside the winning branch
        # (no thread spins on another of its warp: safe before sm_70 too); a thread leaves as soon
        # as the cell holds a smaller key, so a launch of many bad samples does not queue on it
        tail = ["    if (hk_bad != INT64_MAX) {",
                f"        volatile int64_t *hk_cell = s{cell};",
                f"        unsigned long long *hk_lock = (unsigned long long *)&s{cell}[3];",
                "        while (hk_bad < hk_cell[0]) {",
                "            if (atomicCAS(hk_lock, 0ull, 1ull) == 0ull) {",
                "                __threadfence();",
                "                if (hk_bad < hk_cell[0]) { hk_cell[0] = hk_bad; hk_cell[1] = hk_bad_at; "
                "hk_cell[2] = hk_bad_axis; }",
                "                __threadfence();",
                "                atomicExch(hk_lock, 0ull);",
                "                break;",
                "            }",
                "        }",
                "    }"]
    return head, tail + ran


def _checked(ir: KernelIR) -> list[Gather | ScatterAdd]:
    return [s for s in walk(ir.body) if isinstance(s, (Gather, ScatterAdd)) and s.mode == "check"]


def sites(ir: KernelIR) -> int:
    """The checked reads and writes of ``ir`` (what a bounds key counts in)."""
    return 1 + max((s.site for s in _checked(ir)), default=-1)


def bounds_error(ir: KernelIR, key: int, index: int, axis: int, api: str) -> IndexError:
    """The error of a launch whose first out-of-range access has ``key`` (sample * sites + site),
    at ``index`` on ``axis``."""
    sample_number, site = divmod(key, sites(ir))
    access = next(s for s in _checked(ir) if s.site == site)
    slot = ir.slots[access.slot]
    what = f"read Table {slot.name!r}" if isinstance(access, Gather) else f"wrote Scatter {slot.name!r}"
    kind = "Table" if isinstance(access, Gather) else "Scatter"
    return EagleIndexError(f"{api}: sample {sample_number} {what} (shape {slot.table}) at index {index} on "
                           "axis "
                      f"{axis}, out of range, at line {access.line}; compute an index inside 0 … size - 1 "
                      f"on each axis, or annotate it {kind}.clamp (the nearest edge) or {kind}.wrap (around)")


#: The scratch cell of a launch that scatters, on the CPU: the end of the samples its last phase
#: ran (their most, kept by an atomic maximum), which its finish reads and clears.
ENDED = "_ended"
#: The scratch cells of a launch that places values (``s[k] = v``): the first cell written other
#: than once, how many times, and the first two samples that wrote it (-1: none).
PLACES = "_places"


def places_error(ir: KernelIR, cells: np.ndarray, api: str) -> ValueError:
    """The error of a launch whose placing Scatter wrote a cell other than once."""
    scatter_slot, cell, count, first, second = (int(v) for v in cells)
    slot = ir.slots[scatter_slot]
    at = np.unravel_index(cell, slot.table)
    by = "no sample" if count == 0 else f"{count} samples ({first}, {second}, ...)" if count > 2 else \
        f"2 samples ({first} and {second})" if count == 2 else f"1 sample ({first})"
    return EagleValueError(f"{api}: Scatter {slot.name!r} cell {tuple(int(i) for i in at)} was written by "
                           f"{by}; "
                      f"{slot.name}[k] = v writes every cell exactly once (the indices a permutation of "
                      f"the cells): compute such indices, or sum with {slot.name}[k] += v")


def clean(name: str) -> np.ndarray | None:
    """A new check cell named ``name`` holding no error (None for another scratch slot)."""
    return np.array([NONE, 0, 0, 0]) if name == BOUNDS else np.full(5, -1) if name == PLACES else None


def check_cells(slots: Sequence[Slot], args: Sequence[Any]) -> dict[str, Any]:
    """The check cells (:data:`BOUNDS`, :data:`PLACES`) among the arguments of a launch or a
    fused run, by name."""
    return {s.name: a for a, s in zip(args, slots, strict=False) if s.name in (BOUNDS, PLACES)}


def check(ir: KernelIR, cells: dict[str, np.ndarray], api: str) -> None:
    """Raise the error a launch recorded in its check cells (:data:`BOUNDS`, :data:`PLACES`), and
    clear them for the next launch."""
    bounds, places = cells.get(BOUNDS), cells.get(PLACES)
    if bounds is not None and int(bounds[0]) != NONE:
        key, index, axis = (int(v) for v in bounds[:3])
        bounds[...] = (NONE, 0, 0, 0)
        raise bounds_error(ir, key, index, axis, api)
    if places is not None and int(places[0]) >= 0:
        found = places.copy()
        places[...] = -1
        raise places_error(ir, found, api)


# ------------------------------------------------- scatters (a gather's adjoint)


def scattered(ir: KernelIR) -> set[int]:
    """The Scatter parameters of ``ir`` (Table-shaped slots it writes in place)."""
    return {k for k, s in enumerate(ir.slots) if s.table is not None and s.role == "readwrite"}


def unchecked(mode: str) -> str:
    """The mode of an access a derivative adds beside a checked one (which raises on its own)."""
    return "clamp" if mode == "check" else mode


def without_scatters(body: list[Any]) -> list[Any]:
    """``body`` without its ScatterAdds (a vjp re-runs the forward statements, not its writes)."""
    out = []
    for s in body:
        if isinstance(s, If):
            out.append(If(s.cond, without_scatters(s.then), without_scatters(s.orelse)))
        elif isinstance(s, Loop):
            out.append(replace(s, body=without_scatters(s.body)))
        elif not isinstance(s, ScatterAdd):
            out.append(s)
    return out


def gradient_slots(primal: KernelIR, wanted: list[int], slots: list[Slot]) -> dict[int, int]:
    """The gradient slot of each wanted Table of ``primal`` (appended to ``slots``): shaped like
    the Table, filled by the ScatterAdds of its reads' adjoints."""
    out = {}
    for k in wanted:
        slot = primal.slots[k]
        if slot.table is not None:
            slots.append(Slot(f"grad_{slot.name}", "write", slot.dtype, table=slot.table))
            out[k] = len(slots) - 1
    return out


@dataclass(frozen=True)
class Scatter:
    """The ScatterAdds into one Table-shaped output and their scratch: per sample and site the
    value added and its flat cell (-1: the site did not run), and the counting sort's samples,
    values and cell starts."""

    target: int
    sites: tuple[int, ...]  # ids of the ScatterAdd statements, in the body's order
    values: int
    cells: int
    order: int
    sorted: int
    starts: int
    exclusive: bool = False  # s[k] = v: each cell placed once
    #: the row each site records into (parallel to ``sites``: a site in a loop has one per turn,
    #: :mod:`hawk.records`), and how many rows of n there are
    rows: tuple[records.Row, ...] = ()
    count: int = 1


def scatter_scratch(ir: KernelIR, slots: list[Slot]) -> list[Scatter]:
    """A :class:`Scatter` for every Table-shaped output of ``ir``, its scratch appended to ``slots``."""
    out = []
    for k, slot in enumerate(ir.slots):
        if slot.role == "read" or slot.table is None:
            continue
        statements = [s for s in walk(ir.body) if isinstance(s, ScatterAdd) and s.slot == k]
        sites = tuple(map(id, statements))
        exclusive = any(s.exclusive for s in statements)
        if exclusive and not any(s.name == PLACES for s in slots):
            slots.append(Slot(PLACES, "readwrite", "i64", table=(5,)))
        first = len(slots)
        at, rows = records.layout(ir.body, k)
        count = max(rows, 1)
        slots += [Slot(f"_{slot.name}_values", "write", slot.dtype, count),
                  Slot(f"_{slot.name}_cells", "write", "i64", count),
                  Slot(f"_{slot.name}_order", "write", "i64", count),
                  Slot(f"_{slot.name}_sorted", "write", slot.dtype, count),
                  Slot(f"_{slot.name}_starts", "write", "i64", table=(int(np.prod(slot.table)) + 1,))]
        out.append(Scatter(k, sites, first, first + 1, first + 2, first + 3, first + 4, exclusive,
                           tuple(at[site] for site in sites), count))
    if out:
        slots.append(Slot(ENDED, "readwrite", "i64", table=(1,)))
    return out


def c_record_inits(emitter: Any, body: list[Any]) -> list[str]:
    """For a function whose body scatters, before its sample loop: every row of its samples'
    records marked "no cell" (-1), each sample by the thread that then runs it (a row per turn of
    a loop: a C loop, not a statement per row, :mod:`hawk.records`)."""
    scatters = {scatter.cells: scatter.count for scatter, _ in emitter.scatter_sites.values()}
    if not scatters or not any(isinstance(s, ScatterAdd) for s in walk(body)):
        return []
    if emitter.dialect == "c":
        samples = "for (int64_t i = begin; i < end; ++i)"
    else:
        samples = ("for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < end; "
                   "i += (int64_t)blockDim.x * gridDim.x)")
    return [f"    for (int64_t r = 0; r < {count}LL; ++r) {samples} s{cells}[r * n + i] = -1;"
            for cells, count in sorted(scatters.items())]


def c_scatter(emitter: Any, s: ScatterAdd) -> str:
    """A sample's ScatterAdd: its value and flat cell, into the site's scratch."""
    scatter, row = emitter.scatter_sites[id(s)]
    slot = emitter.slots[s.slot]
    terms = [(f"(int64_t){emitter.operand(i)}", extent, int(np.prod(slot.table[k + 1:], dtype=np.int64)))
             for k, (extent, i) in enumerate(zip(slot.table, s.index, strict=True))]
    wrapped = "clamp" if s.mode == "check" else s.mode
    flat = " + ".join(f"hk_{wrapped}_index({v}, {extent}LL) * {stride}LL" for v, extent, stride in terms)
    at = f"({row.c(emitter.var)}) * n + {emitter.sample}"
    stores = f"s{scatter.values}[{at}] = {emitter.operand(s.value)};"
    if s.mode != "check":
        return f"s{scatter.cells}[{at}] = {flat}; {stores}"
    # a checked index out of range writes nothing (cell -1) and is the launch's error
    return f"{{ {_check(emitter, s, terms)} s{scatter.cells}[{at}] = hk_in ? {flat} : -1; {stores} }}"


def c_finish(emitter: Any, scatters: list[Scatter], name: str) -> str:
    """The function that sums every scatter's contributions into its output, on one thread: C
    (``begin == 0``) or CUDA (the first thread of the grid)."""
    lines = [emitter.header(name), *emitter.arguments(), f"    if ({emitter.first_sample()}) {{"]
    places = next((k for k, slot in enumerate(emitter.slots) if slot.name == PLACES), None)
    if emitter.dialect == "c":  # the samples the last phase ran (a logical size may cut them)
        ended = next(k for k, slot in enumerate(emitter.slots) if slot.name == ENDED)
        lines.append(f"        const int64_t ran = s{ended}[0];")
        lines.append(f"        s{ended}[0] = 0;")
    else:  # the launch's own logical end (runs.emit_gpu_phases)
        lines.append("        const int64_t ran = end;")
    for s in scatters:
        slot = emitter.slots[s.target]
        how = f"place_{slot.dtype}(s{places}, {s.target}LL, " if s.exclusive else f"scatter_{slot.dtype}("
        lines.append(f"        hk_{how}s{s.target}, {int(np.prod(slot.table))}LL, "
                     f"s{s.values}, s{s.cells}, s{s.order}, s{s.sorted}, s{s.starts}, {s.count}LL, n, "
                     "ran);")
    return "\n".join([*lines, "    }", "}"])


def c_scatter_helpers() -> str:
    """``hk_scatter_<t>``: the contributions of every sample and site, counting-sorted by cell
    (sample-major, then site), each cell's summed as ``0.0 + T`` along the trie of sample
    indices with a stack of partials: T over sample positions with -0.0 where a sample added
    nothing (an empty subtree adds nothing), in L - 1 additions for L contributions; and
    ``hk_place_<t>``: each cell its one value, the first cell written other than once noted in
    the :data:`PLACES` cells."""
    out = ["""HK_FN int hk_level(int64_t a, int64_t b)  /* the bit length of a ^ b (a != b) */
{
#if defined(__CUDA_ARCH__)
    return 64 - __clzll((long long)(a ^ b));
#elif defined(__GNUC__)
    return 64 - __builtin_clzll((unsigned long long)(a ^ b));
#else
    uint64_t x = (uint64_t)(a ^ b);
    int l = 0;
    while (x) { ++l; x >>= 1; }
    return l;
#endif
}"""]
    for t, c, zero in (("f64", "double", "0.0"), ("f32", "float", "0.0f")):
        out.append(f"""HK_FN void hk_sort_cells_{t}(const int64_t *cell, const {c} *val, int64_t *order,
                                  {c} *sorted, int64_t *start, int64_t m, int64_t sites, int64_t n,
                                  int64_t ran)
{{  /* each cell's (sample, value) pairs, sample-major then site; then start[j] ends cell j's */
    for (int64_t j = 0; j <= m; ++j) start[j] = 0;
    for (int64_t r = 0; r < sites; ++r)  /* the samples that ran: [0, ran) of planes of n */
        for (int64_t i = 0; i < ran; ++i) if (cell[r * n + i] >= 0) start[cell[r * n + i] + 1] += 1;
    for (int64_t j = 0; j < m; ++j) start[j + 1] += start[j];
    for (int64_t i = 0; i < ran; ++i)
        for (int64_t r = 0; r < sites; ++r) {{
            const int64_t k = cell[r * n + i];
            if (k >= 0) {{ order[start[k]] = i; sorted[start[k]++] = val[r * n + i]; }}
        }}
}}
HK_FN void hk_scatter_{t}({c} *out, int64_t m, const {c} *val, const int64_t *cell,
                               int64_t *order, {c} *sorted, int64_t *start, int64_t sites, int64_t n,
                               int64_t ran)
{{
    hk_sort_cells_{t}(cell, val, order, sorted, start, m, sites, n, ran);
    int64_t e = 0;
    for (int64_t j = 0; j < m; ++j) {{
        {c} value[66];
        int64_t at[66];
        int depth = 0;
        while (e < start[j]) {{
            const int64_t p = order[e];
            {c} v = sorted[e];
            for (++e; e < start[j] && order[e] == p; ++e) v = v + sorted[e];
            const int joins = depth ? hk_level(at[depth - 1], p) : 0;
            while (depth >= 2 && hk_level(at[depth - 2], at[depth - 1]) <= joins) {{
                value[depth - 2] = value[depth - 2] + value[depth - 1];
                --depth;
            }}
            at[depth] = p;
            value[depth++] = v;
        }}
        while (depth >= 2) {{ value[depth - 2] = value[depth - 2] + value[depth - 1]; --depth; }}
        out[j] = {zero} + (depth ? value[0] : -{zero});
    }}
}}
HK_FN void hk_place_{t}(int64_t *err, int64_t slot, {c} *out, int64_t m, const {c} *val,
                             const int64_t *cell, int64_t *order, {c} *sorted, int64_t *start, int64_t sites,
                             int64_t n, int64_t ran)
{{
    hk_sort_cells_{t}(cell, val, order, sorted, start, m, sites, n, ran);
    int64_t e = 0;
    for (int64_t j = 0; j < m; e = start[j++]) {{
        const int64_t count = start[j] - e;
        if (count == 1) {{
            out[j] = sorted[e];
        }} else if (err[0] < 0) {{  /* the first cell not written exactly once */
            err[0] = slot; err[1] = j; err[2] = count;
            err[3] = count > 0 ? order[e] : -1;
            err[4] = count > 1 ? order[e + 1] : -1;
        }}
    }}
}}""")
    return "\n".join(out) + "\n"


def scatter_reference(ir: KernelIR, records: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]],
                      args: list[Any], n: int) -> None:
    """Each Table-shaped output as its definition says: per cell, 0.0 + eagle's fixed-order sum of
    the dense plane of what each sample added to it (in statement order), -0.0 elsewhere; or,
    placed (``s[k] = v``), the one value written to it, an error unless written exactly once."""
    from hawk.reference import fixed_order_sum  # the reference evaluator imports this module

    exclusive = {s.slot for s in walk(ir.body) if isinstance(s, ScatterAdd) and s.exclusive}
    for k, slot in enumerate(ir.slots):
        if slot.role == "read" or slot.table is None:
            continue
        cells = int(np.prod(slot.table))
        dtype = NUMPY[slot.dtype]
        if k in exclusive:
            _place_reference(ir, k, records.get(k, []), np.asarray(args[k]).reshape(-1), n)
            continue
        dense = np.full((cells, n), -0.0, dtype)
        for flat, value, active in records.get(k, []):
            samples = np.nonzero(active & (flat >= 0))[0]
            dense[flat[samples], samples] += np.broadcast_to(value, (n,))[samples].astype(dtype)
        out = np.asarray(args[k]).reshape(-1)
        for j in range(cells):
            out[j] = dtype(0.0) + fixed_order_sum(dense[j])


def _place_reference(ir: KernelIR, k: int, records: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                     out: np.ndarray, n: int) -> None:
    """``s[k] = v``: every cell its one value; the first cell written other than once is the
    launch's error, with the first two samples that wrote it (sample-major, then statement)."""
    writers: list[list[int]] = [[] for _ in range(out.size)]
    for r, (flat, _, active) in enumerate(records):
        for i in np.nonzero(active & (flat >= 0))[0]:
            writers[int(flat[i])].append(int(i) * len(records) + r)
    for cell, found in enumerate(writers):
        if len(found) != 1:
            first, second = (sorted(found) + [-len(records)] * 2)[:2]
            cells = np.array([k, cell, len(found), first // len(records) if found else -1,
                              second // len(records) if len(found) > 1 else -1])
            raise places_error(ir, cells, f"hawk.kernel {ir.name}")
    for flat, value, active in records:
        samples = np.nonzero(active & (flat >= 0))[0]
        out[flat[samples]] = np.broadcast_to(value, (n,))[samples]
