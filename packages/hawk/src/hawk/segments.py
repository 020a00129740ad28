"""The ``"segmented"`` policy of a dispatch group: the samples partitioned by selector, one kernel
per arm over its segment.

A launch of a kernel whose group runs segmented is, on a libeagle program:

1. ``epoch``: one call that counts the launches (a cell);
2. ``count``: per block of ``EAGLE_BLOCK`` samples, how many take each segment (the arms in case
   order, then the samples no case takes when there is no ``case _``; a sample whose ``skip``
   plane is non-zero takes none), stamped with the epoch;
3. ``scan``: one call that turns the counts of the blocks stamped this launch into each block's
   first position in each segment, and each segment's start and length (``_segments``);
4. ``scatter``: per block, each sample's index at its position of one index plane: a stable
   partition (each segment's indices ascending), whatever the thread count;
5. one kernel per segment: the whole kernel with the match resolved to that arm, whose sample
   loop runs over the positions ``j`` of its segment, the sample ``i = index[start + j]``.

The count is read at run time, so a graph runs it at any logical size (``set_logical_size``):
blocks past it run in neither ``count`` nor ``scatter``, and their stale counts carry an old
epoch, which ``scan`` leaves out.  An arm kernel writes sample ``i``, not ``j``, so it is never
block-fused, and its sample loop is never interleaved; where the kernel holds a loop it runs in
blocks of lanes (:mod:`hawk.lanes`), each lane the sample at its position.

A kernel is split only where that is sure to mean what the switch form means: one phase (no
reduction), no Scatter, no checked Table read, no cell written, one segmented group, its selector
a per-sample parameter as the call passed it.  The rest is refused by name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle import extend
from eagle.extend import EagleValueError
from eagle.native import Library, compile_library
from hawk import emit, libm, tables
from hawk.dispatch_groups import Chosen, Group
from hawk.ir import KernelIR, Op, ScatterAdd, Slot, walk
from hawk.phases import split

#: samples per block of the count and scatter items: libeagle's (eagle.h)
BLOCK = extend.BLOCK
#: threads per GPU block of the partition's kernels
_THREADS = 256


def split_group(ir: KernelIR, chosen: Chosen) -> Group | None:
    """The group of ``ir`` that runs segmented under ``chosen`` (None: none does)."""
    found = [g for g in ir.groups if chosen.policy(g) == "segmented"]
    return found[0] if found else None


def refuse(ir: KernelIR, chosen: Chosen, checked: bool, who: str) -> None:
    """Refuse a kernel "segmented" cannot run right, naming the group and why."""
    found = [g for g in ir.groups if chosen.policy(g) == "segmented"]
    if not found:
        return
    group = found[0]
    why = group.unsplittable
    if len(found) > 1:
        why = f"groups {', '.join(repr(g.name) for g in found)} would all split the samples (one per kernel)"
    elif ir.reductions:  # every arm kernel would run the kernel's phases again
        why = "the kernel reduces across samples (hawk.sum, ...), which every arm kernel would do again"
    elif any(isinstance(s, ScatterAdd) for s in walk(ir.body)):
        why = "the kernel writes a Scatter, whose fixed order runs over all samples"
    elif checked:
        why = "the kernel has checked Table reads, whose first failing sample is one launch's"
    elif not ir.own_writes:
        why = "the kernel writes a one-cell value"
    if why is not None:
        raise EagleValueError(f"{who}: dispatch group {group.name!r} (line {group.line}) cannot run "
                         f"\"segmented\": {why}; use policy \"switch\" or \"predicated\" for it")


def segments(group: Group) -> int:
    """The segments of a group: its arms, and the samples no case takes when no arm is ``case _``."""
    return len(group.arms) + (group.arms[-1] is not None if group.arms else 1)


# ----------------------------------------------------------------------------- the C


class SegmentEmitter(emit.Emitter):
    """An arm kernel's function: its sample loop runs over the positions of segment ``arm`` (in
    blocks of lanes where the kernel holds a loop, each lane a sample the index plane gives); the
    index plane and the segments' cell are its last two slots."""

    def __init__(self, slots: list[Slot], arm: int, count: int) -> None:
        super().__init__(slots)
        self.arm, self.count = arm, count

    def positions(self) -> list[str]:
        # this thread's positions are [begin, stop): its range, cut at the segment's length
        cell = len(self.slots) - 1
        return [f"    const int64_t first = s{cell}[{self.arm}], count = s{cell}[{self.count + self.arm}];",
                "    const int64_t stop = end < count ? end : count < begin ? begin : count;"]

    stop = "stop"
    skips_blocks = False  # a segment holds the samples that take its arm

    def sample_at(self, position: str) -> str:
        return f"s{len(self.slots) - 2}[first + {position}]"

    def interleaved(self, loop: list[Any], varying: list[Any]) -> list[str]:
        return ["    const int64_t rest = begin;"]

    def loop_open(self) -> list[str]:
        # the index plane is a partition: no two positions are one sample
        return ["    HK_SAMPLES", "    for (int64_t j = rest; j < stop; ++j) {",
                f"        const int64_t i = {self.sample_at('j')};"]


class CudaSegmentEmitter(emit.CudaEmitter):
    """An arm kernel for the GPU: a grid-stride loop over the positions of its segment, whose
    count the device holds."""

    def __init__(self, slots: list[Slot], arm: int, count: int) -> None:
        super().__init__(slots)
        self.arm, self.count = arm, count

    def loop_open(self) -> list[str]:
        index, cell = len(self.slots) - 2, len(self.slots) - 1
        return [f"    const int64_t first = s{cell}[{self.arm}], count = s{cell}[{self.count + self.arm}];",
                "    const int64_t stride = (int64_t)blockDim.x * gridDim.x;",
                "    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;"
                " j < (end < count ? end : count); j += stride) {",
                f"        const int64_t i = s{index}[first + j];"]


def _segment_of(group: Group, ctype: str) -> str:
    """``hk_segment_of(v)``: the segment of a selector value."""
    tests = []
    for k, values in enumerate(group.arms):
        if values is None:
            break
        alternatives = values if isinstance(values, tuple) else (values,)
        tests.append(f"    if ({' || '.join(f'v == ({ctype}){v}' for v in alternatives)}) return {k};")
    return (f"HK_FN int64_t hk_segment_of({ctype} v)\n{{\n" + "\n".join(tests) +
            f"\n    return {len(tests)};\n}}\n")


def _blocks(group: Group, selector: str, skip: str | None) -> str:
    """What both targets' partitions share, per block of samples ``[b0, b1)``: counting each
    segment's samples, scattering their indices, and the scan over ``nb`` blocks' counts (a block
    whose stamp is not ``epoch`` left out; ``stamps`` NULL: none is)."""
    s = segments(group)
    skipped = "0" if skip is None else "(skip[i] != 0)"
    sel, flags = f"const {selector} *sel", f"const {skip or 'uint8_t'} *skip"
    return _segment_of(group, selector) + f"""
HK_FN void hk_count_block({sel}, {flags}, int64_t *counts, int64_t b0, int64_t b1)
{{
    (void)skip;
    int64_t c[{s}] = {{0}};
    for (int64_t i = b0; i < b1; ++i)
        if (!{skipped})
            c[hk_segment_of(sel[i])] += 1;
    for (int64_t k = 0; k < {s}; ++k)
        counts[k] = c[k];
}}

HK_FN void hk_scatter_block({sel}, {flags}, const int64_t *firsts, int64_t *index, int64_t b0,
                            int64_t b1)
{{
    (void)skip;
    int64_t at[{s}];
    for (int64_t k = 0; k < {s}; ++k)
        at[k] = firsts[k];
    for (int64_t i = b0; i < b1; ++i)
        if (!{skipped})
            index[at[hk_segment_of(sel[i])]++] = i;
}}

HK_FN void hk_scan_blocks(int64_t *blocks, int64_t *seg, int64_t nb, const int64_t *stamps,
                          int64_t epoch)
{{
    int64_t at[{s}] = {{0}}, total = 0;
    for (int64_t blk = 0; blk < nb; ++blk)
        if (!stamps || stamps[blk] == epoch)
            for (int64_t k = 0; k < {s}; ++k)
                at[k] += blocks[blk * {s} + k];
    for (int64_t k = 0; k < {s}; ++k) {{
        const int64_t c = at[k];
        seg[k] = total;
        seg[{s} + k] = c;
        at[k] = total;
        total += c;
    }}
    for (int64_t blk = 0; blk < nb; ++blk)
        if (!stamps || stamps[blk] == epoch)
            for (int64_t k = 0; k < {s}; ++k) {{
                const int64_t c = blocks[blk * {s} + k];
                blocks[blk * {s} + k] = at[k];
                at[k] += c;
            }}
}}
"""


def _partition(group: Group, selector: str, skip: str | None) -> str:
    """The partition's four functions for selectors of C type ``selector`` and a skip plane of C
    type ``skip`` (None: no skip plane)."""
    s = segments(group)
    sel, flags = f"const {selector} *sel = a[0].ptr", f"const {skip or 'uint8_t'} *skip = a[1].ptr"
    each_block = """for (int64_t b0 = begin; b0 < end;) {
        const int64_t blk = b0 / EAGLE_BLOCK;
        const int64_t b1 = (blk + 1) * EAGLE_BLOCK < end ? (blk + 1) * EAGLE_BLOCK : end;"""
    return _blocks(group, selector, skip) + f"""
EAGLE_API void hk_seg_epoch(int64_t begin, int64_t end, const eagle_arg *a)
{{
    (void)begin; (void)end;
    ((int64_t *)a[0].ptr)[0] += 1;
}}

/* a: selector, skip, blocks (nb x {s}), stamps (nb), epoch */
EAGLE_API void hk_seg_count(int64_t begin, int64_t end, const eagle_arg *a)
{{
    {sel};
    {flags};
    int64_t *blocks = a[2].ptr, *stamps = a[3].ptr;
    const int64_t epoch = ((const int64_t *)a[4].ptr)[0];
    {each_block}
        hk_count_block(sel, skip, blocks + blk * {s}, b0, b1);
        stamps[blk] = epoch;
        b0 = b1;
    }}
}}

/* a: blocks, stamps, epoch, segments (2 x {s}: starts, counts), nb */
EAGLE_API void hk_seg_scan(int64_t begin, int64_t end, const eagle_arg *a)
{{
    (void)begin; (void)end;
    hk_scan_blocks(a[0].ptr, a[3].ptr, a[4].i64, a[1].ptr, ((const int64_t *)a[2].ptr)[0]);
}}

/* a: selector, skip, blocks (each block's first positions), index */
EAGLE_API void hk_seg_scatter(int64_t begin, int64_t end, const eagle_arg *a)
{{
    {sel};
    {flags};
    const int64_t *blocks = a[2].ptr;
    {each_block}
        hk_scatter_block(sel, skip, blocks + blk * {s}, a[3].ptr, b0, b1);
        b0 = b1;
    }}
}}
"""


def _cuda_partition(group: Group, selector: str, skip: str | None) -> str:
    """The partition on the GPU: counting and scattering a grid-stride loop over blocks of
    ``EAGLE_BLOCK`` samples up to the logical end (so no epoch: the end says which blocks ran),
    the scan one thread."""
    s, b = segments(group), BLOCK
    sel, flags = f"const {selector} *sel", f"const {skip or 'uint8_t'} *skip"
    each_block = (f"for (int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; blk * {b} < end;"
                  f" blk += (int64_t)gridDim.x * blockDim.x) {{\n"
                  f"        const int64_t b1 = (blk + 1) * {b} < end ? (blk + 1) * {b} : end;")
    return _blocks(group, selector, skip) + f"""
extern "C" __global__ void hk_seg_count({sel}, {flags}, int64_t *blocks, const int64_t end)
{{
    {each_block}
        hk_count_block(sel, skip, blocks + blk * {s}, blk * {b}, b1);
    }}
}}

extern "C" __global__ void hk_seg_scan(int64_t *blocks, int64_t *seg, const int64_t end)
{{
    hk_scan_blocks(blocks, seg, (end + {b} - 1) / {b}, 0, 0);
}}

extern "C" __global__ void hk_seg_scatter({sel}, {flags}, const int64_t *blocks, int64_t *index,
                                          const int64_t end)
{{
    {each_block}
        hk_scatter_block(sel, skip, blocks + blk * {s}, index, blk * {b}, b1);
    }}
}}
"""


def arm_ir(ir: KernelIR, group: Group) -> KernelIR:
    """An arm kernel's IR: the kernel's (the match resolved to that arm), with the index plane
    and the segments' cell as two more read slots."""
    return dataclasses.replace(ir, slots=[*ir.slots, Slot("_index", "read", "i64"),
                                          Slot("_segments", "read", "i64", table=(2 * segments(group),))])


@dataclass
class Split:
    """A kernel's code for one signature, choice of policies and skip type, split by a group: the
    partition's functions and one function per segment, in one library."""

    group: Group
    library: Library
    arms: list[Any]  # one eagle_kernel_fn per segment
    cuda: str  # the same for the GPU: CUDA C of the partition and the arm kernels
    prefix: str  # of the arm kernels' names: {prefix}_a0 ...

    def function(self, name: str) -> Any:
        return self.library.kernel(name)


def compile_split(kernel: Any, signature: tuple, chosen: Chosen, skip_type: str | None) -> Split:
    """The split code of ``kernel`` (compiled once per signature, choice and skip plane C type)."""
    key = (signature, chosen, skip_type)
    found = kernel._splits.get(key)
    if found is not None:
        return found
    whole = kernel.ir_of(signature, chosen)
    group = split_group(whole, chosen)
    count = segments(group)
    prefix = f"hk_{kernel.__name__}"
    functions: dict[str, list[str]] = {"c": [], "cuda": []}
    ops: set[str] = set()
    for arm in range(count):
        ir = arm_ir(kernel.ir_of(signature, dataclasses.replace(chosen, arm=(group.name, arm))), group)
        phased = split(ir)
        for dialect, emitter_type in (("c", SegmentEmitter), ("cuda", CudaSegmentEmitter)):
            emitter = emitter_type(phased.slots, arm, count)
            emitter.bound_sites = max(tables.sites(ir), 1)
            functions[dialect].append(emitter.function(f"{prefix}_a{arm}", phased.phases[0]))
        ops |= {s.op for s in walk(phased.phases[0]) if isinstance(s, Op)}
    sel_type = emit.CTYPES[whole.slots[group.selector].dtype]
    head = f"\n/* hawk kernel {whole.name}, split by group {group.name} */\n"
    source, cuda = ((emit.prelude(dialect, ops) + head + partition(group, sel_type, skip_type) + "\n"
                     + "\n\n".join(functions[dialect]) + "\n")
                    for dialect, partition in (("c", _partition), ("cuda", _cuda_partition)))
    libm.load()
    library = Library(compile_library(source, name=f"hawk_{kernel.__name__}_split"))
    found = Split(group, library, [library.kernel(f"{prefix}_a{arm}") for arm in range(count)], cuda, prefix)
    kernel._splits[key] = found
    return found


@dataclass
class Scratch:
    """A split launch's own planes: the index plane, the segments' cell and the partition's."""

    index: np.ndarray
    cell: np.ndarray
    blocks: np.ndarray
    stamps: np.ndarray
    epoch: np.ndarray

    @classmethod
    def make(cls, n: int, count: int, device: Any = None) -> Scratch:
        """On the host; beside ``device`` (a device array) on the GPU, where the partition needs
        no stamps or epoch (the logical end says which blocks ran)."""
        nb = max(-(-n // BLOCK), 1)
        if device is not None:
            def made(size: int) -> Any:
                return extend.empty_like_device(device, (size,), np.int64)
            return cls(made(max(n, 1)), made(2 * count), made(nb * count), made(1), made(1))
        return cls(np.zeros(n, np.int64), np.zeros(2 * count, np.int64), np.zeros(nb * count, np.int64),
                   np.full(nb, -1, np.int64), np.zeros(1, np.int64))


@dataclass
class SplitLaunch:
    """What a launch split by a group adds to it: the code, its scratch, the selector plane and
    the skip plane (None: every sample runs)."""

    code: Split
    scratch: Scratch
    selector: np.ndarray
    skip: np.ndarray | None

    @classmethod
    def make(cls, kernel: Any, compiled: Any, args: list[Any], n: int, skip: Any, who: str) -> SplitLaunch:
        group = split_group(compiled.ir, compiled.chosen)
        if skip is not None:
            skip = _skip_plane(skip, n, who)
        # a skip plane is tested != 0: by its items' bits, whatever its integer type
        code = compile_split(kernel, compiled.signature, compiled.chosen,
                             None if skip is None else f"uint{8 * np.dtype(skip.dtype).itemsize}_t")
        selector = args[group.selector]
        device = selector if extend.on_device(selector) else None
        return cls(code, Scratch.make(n, segments(group), device), selector, skip)

    def emit(self, program: Any, slots: list[Any], accesses: list[tuple[Any, str]], n: int) -> None:
        """The partition, then one item per segment, on a host program; ``slots``: the launch's
        argument slots (``n`` last), ``accesses`` its planes' roles."""
        code, s, selector, skip = self.code, self.scratch, self.selector, self.skip
        skip_plane = skip if skip is not None else s.epoch  # never read without a skip plane
        read = [(selector, "read"), *([(skip, "read")] if skip is not None else [])]
        program.kernel(code.function("hk_seg_epoch"), [s.epoch], 1, per_sample=False,
                       accesses=[(s.epoch, "readwrite")], empty_call=True)
        program.kernel(code.function("hk_seg_count"), [selector, skip_plane, s.blocks, s.stamps, s.epoch], n,
                       per_sample=False, accesses=[*read, (s.epoch, "read"), (s.blocks, "write"),
                                                   (s.stamps, "write")])
        program.kernel(code.function("hk_seg_scan"), [s.blocks, s.stamps, s.epoch, s.cell, s.stamps.size], 1,
                       per_sample=False, empty_call=True,
                       accesses=[(s.blocks, "readwrite"), (s.stamps, "read"), (s.epoch, "read"),
                                 (s.cell, "write")])
        program.kernel(code.function("hk_seg_scatter"), [selector, skip_plane, s.blocks, s.index], n,
                       per_sample=False, accesses=[*read, (s.blocks, "read"), (s.index, "write")])
        arm_slots = [*slots[:-1], s.index, s.cell, slots[-1]]
        arm_accesses = [*accesses, (s.index, "read"), (s.cell, "read")]
        for fn in code.arms:
            program.kernel(fn, arm_slots, n, per_sample=False, accesses=arm_accesses)


    def emit_gpu(self, gpu: Any, typed: list[Any], n: int) -> None:
        """The partition, then one grid-stride kernel per segment, on a GPU program; ``typed``:
        the launch's arguments per slot, values typed, without ``n``."""
        code, s = self.code, self.scratch
        module = extend.cuda_module(code.cuda, f"{code.prefix}_split", gpu.device)
        skip = self.skip if self.skip is not None else s.epoch  # never read without a skip plane

        def blocks(base: list[Any], logical: int) -> tuple[list[Any], tuple[int, int, int]]:
            end = min(n, logical)
            threads = -(-end // BLOCK)  # one per block of samples
            return [*base, np.int64(end)], (max(min(-(-threads // _THREADS), 65535), 1), 1, 1)

        def one_thread(base: list[Any], logical: int) -> tuple[list[Any], tuple[int, int, int]]:
            return [*base, np.int64(min(n, logical))], (1, 1, 1)

        gpu.kernel(module.function("hk_seg_count"), [self.selector, skip, s.blocks], (1, 1, 1),
                   (_THREADS, 1, 1), sized=blocks)
        gpu.kernel(module.function("hk_seg_scan"), [s.blocks, s.cell], (1, 1, 1), (1, 1, 1), sized=one_thread)
        gpu.kernel(module.function("hk_seg_scatter"), [self.selector, skip, s.blocks, s.index], (1, 1, 1),
                   (_THREADS, 1, 1), sized=blocks)
        for arm in range(len(code.arms)):
            gpu.samples_kernel(module.function(f"{code.prefix}_a{arm}"),
                               [*typed, s.index, s.cell, np.int64(n)], n)



def _skip_plane(skip: Any, n: int, who: str) -> Any:
    if extend.on_device(skip):
        if tuple(skip.shape) != (n,) or np.dtype(skip.dtype).kind not in "biu":
            raise EagleValueError(f"{who}: skip= is an integer or bool plane of {n} samples (a terminated "
                             f"plane); got a device array of shape {tuple(skip.shape)}")
        return skip
    if not (isinstance(skip, np.ndarray) and skip.shape == (n,) and skip.dtype.kind in "biu"
            and skip.flags.c_contiguous):
        shown = f"{skip.dtype} array of shape {skip.shape}" if isinstance(skip, np.ndarray) else \
            type(skip).__name__
        raise EagleValueError(f"{who}: skip= is a contiguous integer or bool plane of {n} samples (a "
                         f"terminated plane); got a {shown}")
    return skip

