"""eagle's own CUDA kernels: the fixed-order reduction, loop counters, switch keys.

One CUDA C translation unit, compiled by NVRTC once (cached on disk) and
loaded once per device.

The reduction is libeagle's tree (reduce.c, DESIGN.md section 4): over a
block of EAGLE_BLOCK samples, add adjacent pairs level by level, carrying an
odd last value up unchanged; then the block results by the same tree,
EAGLE_BLOCK at a time, until one value is left.  One CUDA block reduces one
sample block; its threads share each level, which is the same pairs in the
same order, so ``eagle.reduce`` and ``hawk.sum`` give the CPU's bits.
"""

from __future__ import annotations

import numpy as np

from eagle import _cuda
from eagle._core import BLOCK

#: Threads of a reducing CUDA block (any count gives the same bits).
REDUCE_THREADS = 256

#: The reducible dtypes by their kernel suffix and C type (bool reduces as its bytes).
C_TYPES = {"f8": "double", "f4": "float", "i8": "long long", "i4": "int", "u8": "unsigned long long",
           "u4": "unsigned int", "u1": "unsigned char"}
_UNSIGNED = {"long long": "unsigned long long", "int": "unsigned int"}
OPS = ("sum", "max", "min", "all", "any")


def _suffix(dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    return "u1" if dtype == np.bool_ else dtype.str[1:]


def reduce_name(dtype: np.dtype, op: str) -> str:
    return f"eg_reduce_{_suffix(dtype)}_{op}"


def reducible(dtype: np.dtype) -> bool:
    return np.dtype(dtype).isnative and _suffix(dtype) in C_TYPES


def _identity(dtype: np.dtype, op: str) -> str:
    """The C literal of ``op`` over no values: 0, 1, or the lowest/highest value of ``dtype``."""
    if op not in ("max", "min"):
        return "1" if op == "all" else "0"
    if dtype.kind == "f":
        return f"{'-' if op == 'max' else ''}(1.0 / 0.0)"
    info = np.iinfo(dtype)
    value = int(info.min if op == "max" else info.max)
    return f"({C_TYPES[_suffix(dtype)]})({value + 1}LL - 1)" if value < 0 else f"{value}ULL"


def _reduce_kernel(suffix: str, op: str) -> str:
    t = C_TYPES[suffix]
    dtype = np.dtype(suffix)
    u = _UNSIGNED.get(t, t)
    combine = {"sum": f"({t})(({u})a + ({u})b)",
               "max": "(a != a) ? a : (b != b) ? b : (a >= b ? a : b)",
               "min": "(a != a) ? a : (b != b) ? b : (a <= b ? a : b)",
               "all": f"({t})(a != 0 && b != 0)", "any": f"({t})(a != 0 || b != 0)"}[op]
    leaf = f"({t})(v != 0)" if op in ("all", "any") else "v"
    # An empty range gives the identity, as on the CPU (libeagle's reduce_identity).
    empty = f"out[0] = {_identity(dtype, op)};"
    return f"""
static __device__ __forceinline__ {t} {reduce_name(dtype, op)}_op({t} a, {t} b) {{ return {combine}; }}
static __device__ __forceinline__ {t} {reduce_name(dtype, op)}_leaf({t} v) {{ return {leaf}; }}
extern "C" __global__ void {reduce_name(dtype, op)}(const {t} *__restrict__ x, {t} *__restrict__ out,
                                                const long long n)
{{
    __shared__ {t} level[2][EG_BLOCK / 2 + 1];
    if (n <= 0) {{
        if (blockIdx.x == 0 && threadIdx.x == 0) {{ {empty} }}
        return;
    }}
    const long long base = (long long)blockIdx.x * EG_BLOCK;
    if (base >= n)
        return;
    const long long count = n - base < EG_BLOCK ? n - base : EG_BLOCK;
    int m = (int)(count / 2);
    for (int i = threadIdx.x; i < m; i += blockDim.x)
        level[0][i] = {reduce_name(dtype, op)}_op({reduce_name(dtype, op)}_leaf(x[base + 2 * i]),
                                                {reduce_name(dtype, op)}_leaf(x[base + 2 * i + 1]));
    if (count & 1) {{
        if (threadIdx.x == 0)
            level[0][m] = {reduce_name(dtype, op)}_leaf(x[base + count - 1]);
        m += 1;
    }}
    __syncthreads();
    int src = 0;
    while (m > 1) {{  /* two buffers: a level never overwrites what it reads */
        const int h = m / 2;
        for (int i = threadIdx.x; i < h; i += blockDim.x)
            level[1 - src][i] = {reduce_name(dtype, op)}_op(level[src][2 * i], level[src][2 * i + 1]);
        if ((m & 1) && threadIdx.x == 0)
            level[1 - src][h] = level[src][m - 1];
        m = h + (m & 1);
        src = 1 - src;
        __syncthreads();
    }}
    if (threadIdx.x == 0)
        out[blockIdx.x] = level[src][0];
}}
"""


LOOP_KERNELS = """
/* A capped or counted loop runs as a WHILE (or DO) node on `go`; `left` counts the turns left.
 * kind 0: while cell != 0, 1: do-while cell != 0, 2: cell[0] turns (read once, at the start). */
extern "C" __global__ void eg_loop_start(const unsigned int *cell, unsigned long long *left,
                                         unsigned int *go, const long long cap, const int kind)
{
    unsigned long long turns = cap < 0 ? ~0ULL : (unsigned long long)cap;
    if (kind == 2 && (unsigned long long)cell[0] < turns)
        turns = cell[0];
    left[0] = turns;
    go[0] = turns > 0 && (kind != 0 || cell[0] != 0);
}

extern "C" __global__ void eg_loop_turn(const unsigned int *cell, unsigned long long *left,
                                        unsigned int *go, const int kind)
{
    left[0] -= 1;
    go[0] = left[0] > 0 && (kind == 2 || cell[0] != 0);
}

/* The arm of an if/elif/else chain: the index of the first of its ncells guard cells (device
 * or pinned addresses) that holds non-zero, or ncells (the else arm) when none does. */
extern "C" __global__ void eg_chain_key(const unsigned long long *cells, const unsigned int ncells,
                                        unsigned int *key)
{
    unsigned int found = ncells;
    for (unsigned int i = 0; i < ncells && found == ncells; ++i)
        if (*(const unsigned int *)cells[i] != 0)
            found = i;
    key[0] = found;
}
/* The index of cell[0] among a switch's keys, or nkeys (the default arm) when it is none of them. */
extern "C" __global__ void eg_switch_index(const unsigned int *cell, const unsigned int *keys,
                                           const unsigned int nkeys, unsigned int *index)
{
    unsigned int found = nkeys;
    for (unsigned int i = 0; i < nkeys; ++i)
        if (keys[i] == cell[0] && found == nkeys)
            found = i;
    index[0] = found;
}
"""


def source() -> str:
    """The whole translation unit: every reduction kernel, then the loop and switch kernels."""
    reductions = "".join(_reduce_kernel(suffix, op) for suffix in C_TYPES for op in OPS)
    return f"#define EG_BLOCK {BLOCK}\n{reductions}{LOOP_KERNELS}"


def module(device: int) -> _cuda.Module:
    return _cuda.module(source(), "eagle_kernels", device)


def reduce_passes(n: int) -> list[int]:
    """The sample counts of the passes that reduce ``n`` values to one: n, its block count, ..."""
    counts = [n]
    while counts[-1] > BLOCK:
        counts.append(-(-counts[-1] // BLOCK))
    return counts
