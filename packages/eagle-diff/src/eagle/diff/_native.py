"""The small native items of a recorded run and of a reverse pass.

Kept state and adjoints are plain arrays; moving them is done by kernels
of libeagle's own kernel type, so a recorded graph and its reverse pass
still replay in one native call each, and per-sample items (copies,
zeroing, accumulation) block-fuse with the hawk kernels around them.

A per-sample item treats a C-contiguous array of ``n`` samples as
``(k, n)``: sample ``i`` owns elements ``c*n + i``, the layout of hawk's
planes, so it touches exactly what a hawk kernel's sample ``i`` touches.

A *tape* keeps one slot per loop turn: a header of int64 fields (data
pointer, capacity in bytes, bytes per turn, most turns, read index,
failed) and a uint32 turn count, which is also the cell a reverse loop
counts down.  Its memory grows by doubling, never past the most turns a
capped loop can take.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from typing import Any

import numpy as np

from eagle.extend import Program
from eagle.native import Library, compile_library

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "eagle/eagle.h"

enum { DATA, CAP, SLOT, TURNS, INDEX, FAILED, CUR };

/* args: header, count cell */
void eagle_diff_tape_reset(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    *(uint32_t *)a[1].ptr = 0;
    ((int64_t *)a[0].ptr)[FAILED] = 0;
}

/* Take the next slot (growing the memory by doubling, never past the most
 * turns): the slot this turn's puts write. */
void eagle_diff_tape_claim(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    int64_t *h = a[0].ptr;
    uint32_t *count = a[1].ptr;
    int64_t need = ((int64_t)*count + 1) * h[SLOT];
    if (need > h[CAP]) {
        int64_t cap = h[CAP] ? 2 * h[CAP] : h[SLOT];
        while (cap < need)
            cap *= 2;
        if (h[TURNS] >= 0 && cap > h[TURNS] * h[SLOT])
            cap = h[TURNS] * h[SLOT];
        if (cap < need)
            cap = need;
        void *p = realloc((void *)(intptr_t)h[DATA], (size_t)cap);
        if (!p) {
            h[FAILED] = 1;
            h[CUR] = -1;
            return;
        }
        h[DATA] = (int64_t)(intptr_t)p;
        h[CAP] = cap;
    }
    h[CUR] = *count;
    *count += 1;
}

void eagle_diff_tape_rewind(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    ((int64_t *)a[0].ptr)[INDEX] = *(uint32_t *)a[1].ptr;
}

/* The slot before the read index: the one the gets read. */
void eagle_diff_tape_back(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    int64_t *h = a[0].ptr;
    h[CUR] = --h[INDEX];
}

/* Per sample, one array of the current slot: args header, offset in the
 * slot, array, k, n, itemsize. */
void eagle_diff_tape_put(int64_t b, int64_t e, const eagle_arg *a)
{
    const int64_t *h = a[0].ptr;
    if (h[CUR] < 0)
        return;
    char *slot = (char *)(intptr_t)h[DATA] + h[CUR] * h[SLOT] + a[1].i64;
    int64_t k = a[3].i64, n = a[4].i64, size = a[5].i64;
    for (int64_t c = 0; c < k; ++c)
        memcpy(slot + (c * n + b) * size, (const char *)a[2].ptr + (c * n + b) * size,
               (size_t)((e - b) * size));
}

void eagle_diff_tape_get(int64_t b, int64_t e, const eagle_arg *a)
{
    const int64_t *h = a[0].ptr;
    const char *slot = (const char *)(intptr_t)h[DATA] + h[CUR] * h[SLOT] + a[1].i64;
    int64_t k = a[3].i64, n = a[4].i64, size = a[5].i64;
    for (int64_t c = 0; c < k; ++c)
        memcpy((char *)a[2].ptr + (c * n + b) * size, slot + (c * n + b) * size,
               (size_t)((e - b) * size));
}

/* Room for `turns` slots that another copy fills (a GPU run's tape, read home), the count set:
 * the memory, or NULL (failed set) when it cannot be had. */
void *eagle_diff_tape_room(int64_t *h, uint32_t *count, int64_t turns)
{
    int64_t need = turns * h[SLOT];
    h[FAILED] = 0;
    *count = (uint32_t)turns;
    if (need > h[CAP]) {
        void *p = realloc((void *)(intptr_t)h[DATA], (size_t)need);
        if (!p) {
            h[FAILED] = 1;
            *count = 0;
            return NULL;
        }
        h[DATA] = (int64_t)(intptr_t)p;
        h[CAP] = need;
    }
    return need ? (void *)(intptr_t)h[DATA] : NULL;
}

void eagle_diff_tape_free(int64_t *h)
{
    free((void *)(intptr_t)h[DATA]);
    h[DATA] = h[CAP] = 0;
}

/* per-sample items over (k, n): args src, dst, k, n, itemsize */
void eagle_diff_copy(int64_t b, int64_t e, const eagle_arg *a)
{
    int64_t k = a[2].i64, n = a[3].i64, size = a[4].i64;
    for (int64_t c = 0; c < k; ++c)
        memcpy((char *)a[1].ptr + (c * n + b) * size, (const char *)a[0].ptr + (c * n + b) * size,
               (size_t)((e - b) * size));
}

/* args dst, k, n, itemsize */
void eagle_diff_zero(int64_t b, int64_t e, const eagle_arg *a)
{
    int64_t k = a[1].i64, n = a[2].i64, size = a[3].i64;
    for (int64_t c = 0; c < k; ++c)
        memset((char *)a[0].ptr + (c * n + b) * size, 0, (size_t)((e - b) * size));
}

/* dst += src; args src, dst, k, n */
#define ACC(name, T)                                                                              \
    void name(int64_t b, int64_t e, const eagle_arg *a)                                           \
    {                                                                                             \
        const T *src = a[0].ptr;                                                                  \
        T *dst = a[1].ptr;                                                                        \
        int64_t k = a[2].i64, n = a[3].i64;                                                       \
        for (int64_t c = 0; c < k; ++c)                                                           \
            for (int64_t i = c * n + b; i < c * n + e; ++i)                                       \
                dst[i] += src[i];                                                                 \
    }
ACC(eagle_diff_acc_f64, double)
ACC(eagle_diff_acc_f32, float)

/* dst += cell[0] (the reverse of a sum); args cell, dst, k, n */
#define SPREAD(name, T)                                                                           \
    void name(int64_t b, int64_t e, const eagle_arg *a)                                           \
    {                                                                                             \
        T v = *(const T *)a[0].ptr;                                                               \
        T *dst = a[1].ptr;                                                                        \
        int64_t k = a[2].i64, n = a[3].i64;                                                       \
        for (int64_t c = 0; c < k; ++c)                                                           \
            for (int64_t i = c * n + b; i < c * n + e; ++i)                                       \
                dst[i] += v;                                                                      \
    }
SPREAD(eagle_diff_spread_f64, double)
SPREAD(eagle_diff_spread_f32, float)

/* The reverse of a max (is_max) or min over x[0:n]: every sample equal to
 * it gets the cell's adjoint (ties all do, as in hawk).  One item over all
 * of x, so the extremum is found in one fixed order.
 * args x, cell adjoint, dst, n, is_max */
#define EXTREMUM(name, T)                                                                         \
    void name(int64_t b, int64_t e, const eagle_arg *a)                                           \
    {                                                                                             \
        (void)b; (void)e;                                                                         \
        const T *x = a[0].ptr;                                                                    \
        T v = *(const T *)a[1].ptr, *dst = a[2].ptr, m = x[0];                                    \
        int64_t n = a[3].i64;                                                                     \
        for (int64_t i = 1; i < n; ++i)                                                           \
            if (a[4].i64 ? x[i] > m : x[i] < m)                                                   \
                m = x[i];                                                                         \
        for (int64_t i = 0; i < n; ++i)                                                           \
            if (x[i] == m)                                                                        \
                dst[i] += v;                                                                      \
    }
EXTREMUM(eagle_diff_extremum_f64, double)
EXTREMUM(eagle_diff_extremum_f32, float)
"""

#: The header fields of a tape (the enum at the top of SOURCE).
DATA, CAP, SLOT, TURNS, INDEX, FAILED, CUR = range(7)


@functools.cache
def library() -> Library:
    return Library(compile_library(SOURCE, name="eagle_diff"))


def _fn(name: str) -> Any:
    return library().kernel(f"eagle_diff_{name}")


def _suffix(dtype: np.dtype) -> str:
    return "f64" if dtype == np.float64 else "f32"


def layout(array: np.ndarray) -> tuple[int, int]:
    """``(k, n)``: the components and samples of a C-contiguous array."""
    n = int(array.shape[-1]) if array.ndim else 1
    return (array.size // n if n else 0), n


def per_sample(array: np.ndarray) -> bool:
    """Whether per-sample items can move this array (else a libeagle copy item does)."""
    return array.flags.c_contiguous and array.size > 0


def copy(program: Program, src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[...] = src``: a per-sample item, or a strided copy item."""
    if per_sample(src) and per_sample(dst):
        k, n = layout(src)
        program.kernel(_fn("copy"), [src, dst, k, n, src.itemsize], n,
                       accesses=[(src, "read"), (dst, "write")])
    else:
        program.copy(src, dst)


def _strided(*arrays: np.ndarray) -> bool:
    """Whether an item's arrays are not all C-contiguous: an adjoint that is the view of a shared
    memory adjoint takes its place's layout, which these (k, n) items cannot walk, so a host
    callback does it with NumPy."""
    return not all(a.flags.c_contiguous for a in arrays)


def zero(program: Program, dst: np.ndarray) -> None:
    if _strided(dst):
        program.callback(lambda: dst.fill(0))
        return
    k, n = layout(dst)
    program.kernel(_fn("zero"), [dst, k, n, dst.itemsize], n, accesses=[(dst, "write")])


def accumulate(program: Program, src: np.ndarray, dst: np.ndarray) -> None:
    """``dst += src``, both of one shape and float dtype."""
    if _strided(src, dst):
        program.callback(lambda: np.add(dst, src, out=dst))
        return
    k, n = layout(dst)
    program.kernel(_fn(f"acc_{_suffix(dst.dtype)}"), [src, dst, k, n], n,
                   accesses=[(src, "read"), (dst, "readwrite")])


def spread(program: Program, cell: np.ndarray, dst: np.ndarray) -> None:
    """``dst += cell[0]``: the adjoint of a sum sent back to every sample."""
    k, n = layout(dst)
    program.kernel(_fn(f"spread_{_suffix(dst.dtype)}"), [cell, dst, k, n], n,
                   accesses=[(cell, "read"), (dst, "readwrite")])


def extremum(program: Program, x: np.ndarray, cell: np.ndarray, dst: np.ndarray, is_max: bool) -> None:
    """The adjoint of ``max(x)`` / ``min(x)`` sent to the samples equal to it."""
    program.kernel(_fn(f"extremum_{_suffix(dst.dtype)}"), [x, cell, dst, x.size, int(is_max)], 1,
                   per_sample=False, accesses=[(x, "read"), (cell, "read"), (dst, "readwrite")])


def _free(header: np.ndarray) -> None:
    library()._dll.eagle_diff_tape_free(ctypes.c_void_p(header.ctypes.data))


class Tape:
    """One slot per loop turn holding ``arrays`` (their bytes, in order), at most ``turns`` slots
    (-1: no cap).  The memory is libeagle's side's (realloc), freed with this object."""

    def __init__(self, turns: int, sizes: list[int]) -> None:
        self.sizes = sizes  # bytes of each array of a slot, in order
        self.header = np.zeros(7, np.int64)
        self.header[SLOT], self.header[TURNS] = sum(sizes), turns
        self.count = np.zeros(1, np.uint32)  # turns saved; a reverse loop's trip count
        weakref.finalize(self, _free, self.header)  # the finalizer keeps the header alive

    @property
    def turns(self) -> int:
        return int(self.count[0])

    @property
    def failed(self) -> bool:
        return bool(self.header[FAILED])

    @property
    def nbytes(self) -> int:
        """Bytes the tape holds now (its capacity)."""
        return int(self.header[CAP])

    def room(self, turns: int) -> int:
        """Make room for ``turns`` slots filled by another copy (a GPU run's tape) and count them
        saved: the address of the slots (0 for none, or when the memory cannot be had: failed)."""
        fn = library()._dll.eagle_diff_tape_room
        fn.restype = ctypes.c_void_p
        return fn(ctypes.c_void_p(self.header.ctypes.data), ctypes.c_void_p(self.count.ctypes.data),
                  ctypes.c_int64(turns)) or 0

    def _claim(self, program: Program, step: str) -> None:
        program.kernel(_fn(f"tape_{step}"), [self.header, self.count], 1, per_sample=False)

    def _each(self, program: Program, step: str, arrays: list[np.ndarray | None], role: str) -> None:
        # One per-sample item per array: they block-fuse with the kernels of the turn around them.
        offset = 0
        for a, size in zip(arrays, self.sizes, strict=True):
            if a is not None:
                k, n = layout(a)
                program.kernel(_fn(f"tape_{step}"), [self.header, offset, a, k, n, a.itemsize], n,
                               accesses=[(a, role)])
            offset += size

    def reset(self, program: Program) -> None:
        self._claim(program, "reset")

    def save(self, program: Program, arrays: list[np.ndarray]) -> None:
        """Put ``arrays`` in the next slot (at the start of a turn)."""
        self._claim(program, "claim")
        self._each(program, "put", arrays, "read")

    def rewind(self, program: Program) -> None:
        self._claim(program, "rewind")

    def restore(self, program: Program, arrays: list[np.ndarray | None]) -> None:
        """Copy the slot before the read index into ``arrays`` (the index steps back); None: an
        array of the slot not wanted."""
        self._claim(program, "back")
        self._each(program, "get", arrays, "write")
