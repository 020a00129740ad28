"""What the machine allows, measured in the same run as the table: the compute and memory limits.

The compute limit of a chain of per-sample kernels is the chain held in
registers: a small C program, compiled with eagle's own flags
(``eagle.native.compile_library``: ``-O3 -march=native -ffp-contract=off``,
so the same arithmetic in the same order, no contraction), carries each
block of 64 samples through every kernel in vector registers and stores it
once.  It runs on one thread and on two (plain pthreads), and the faster is
the limit: at 16 samples starting a thread costs more than the work.  The
capped loop's limit does each turn's pass and count the same way, one
barrier per turn.

The memory limit is the bytes a case must read and write once, at the
bandwidth a STREAM triad reaches in this run; it binds only where the
planes do not fit in the cache.
"""

from __future__ import annotations

import cffi
import numpy as np

from eagle.native import compile_library

# STREAM's triad, a[i] = b[i] + s * c[i], over `threads` threads.
TRIAD = r"""
#include <pthread.h>
#include <stdint.h>
typedef struct { double *a; const double *b, *c; double s; int64_t lo, hi; } part;
static void *run(void *p)
{ part *q = p; for (int64_t i = q->lo; i < q->hi; ++i) q->a[i] = q->b[i] + q->s * q->c[i]; return 0; }
void triad(double *a, const double *b, const double *c, double s, int64_t n, int threads)
{
    pthread_t t[64]; part parts[64];
    for (int k = 0; k < threads; ++k) {
        parts[k] = (part){a, b, c, s, n * k / threads, n * (k + 1) / threads};
        if (k) pthread_create(&t[k], 0, run, &parts[k]);
    }
    run(&parts[0]);
    for (int k = 1; k < threads; ++k) pthread_join(t[k], 0);
}
"""

# The chain x = scale(x, c); x = shift(x, d); ... over planes of n samples, and the capped loop
# x = 2 x until no sample is below 100, each block of 64 samples in eight vectors of registers.
LIMITS = r"""
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
typedef double vec __attribute__((vector_size(64)));
enum { V = 8, LANES = 8, BLOCK = V * LANES };

typedef struct {
    double *const *planes; int64_t n, lo, hi; int length; double c, d;
    const double *x0; int cap, id, threads, turns; int64_t (*counts)[64]; pthread_barrier_t *barrier;
} part;

static void chain_block(double *x, int64_t m, int length, double c, double d)
{
    vec v[V];
    memset(v, 0, sizeof v);
    memcpy(v, x, m * sizeof(double));
    for (int k = 0; k < length; ++k)
        if (k % 2 == 0) for (int j = 0; j < V; ++j) v[j] = v[j] * c;
        else for (int j = 0; j < V; ++j) v[j] = v[j] + d;
    memcpy(x, v, m * sizeof(double));
}

static void *chain_run(void *p)
{
    const part *q = p;
    for (int64_t b = q->lo; b < q->hi; b += BLOCK) {  /* block b of the planes laid end to end */
        int64_t plane = b / q->n, i = b % q->n, m = q->n - i < BLOCK ? q->n - i : BLOCK;
        chain_block(q->planes[plane] + i, m, q->length, q->c, q->d);
        b -= BLOCK - m;
    }
    return 0;
}

static void *settle_run(void *p)
{
    part *q = p;
    double *x = q->planes[0];
    const double *from = q->x0;
    for (int turn = 0; turn < q->cap; ++turn) {
        int64_t below = 0;
        for (int64_t i = q->lo; i < q->hi; ++i) { x[i] = 2.0 * from[i]; below += x[i] < 100.0; }
        from = x;
        q->counts[turn % 2][q->id] = below;
        pthread_barrier_wait(q->barrier);
        int64_t total = 0;
        for (int k = 0; k < q->threads; ++k) total += q->counts[turn % 2][k];
        q->turns = turn + 1;
        if (!total) break;
    }
    return 0;
}

static int team(void *(*run)(void *), part *parts, int threads)
{
    pthread_t t[64];
    for (int k = 1; k < threads; ++k) pthread_create(&t[k], 0, run, &parts[k]);
    run(&parts[0]);
    for (int k = 1; k < threads; ++k) pthread_join(t[k], 0);
    return parts[0].turns;
}

/* Each entry point takes one prepared block of arguments: a call costs what the work costs. */
typedef struct {
    double *const *planes; int64_t nplanes, n, length; double c, d; int64_t threads;
} chain_args;
typedef struct { const double *x0; double *x; int64_t n, cap, threads, turns; } settle_args;

/* Blocks are cut per plane, so no block spans two planes; threads take equal runs of blocks. */
void chain(const chain_args *a)
{
    part parts[64];
    int64_t per = (a->n + BLOCK - 1) / BLOCK, blocks = per * a->nplanes;
    for (int k = 0; k < a->threads; ++k) {
        int64_t lo = blocks * k / a->threads, hi = blocks * (k + 1) / a->threads;
        parts[k] = (part){.planes = a->planes, .n = a->n, .length = (int)a->length, .c = a->c, .d = a->d,
                          .lo = lo / per * a->n + lo % per * BLOCK, .hi = hi / per * a->n + hi % per * BLOCK};
    }
    team(chain_run, parts, (int)a->threads);
}

void settle(settle_args *a)
{
    part parts[64];
    int64_t counts[2][64];
    int threads = (int)a->threads;
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, 0, threads);
    for (int k = 0; k < threads; ++k)
        parts[k] = (part){.planes = &a->x, .x0 = a->x0, .lo = a->n * k / threads,
                          .hi = a->n * (k + 1) / threads, .cap = (int)a->cap, .id = k, .threads = threads,
                          .counts = counts, .barrier = &barrier};
    a->turns = team(settle_run, parts, threads);
    pthread_barrier_destroy(&barrier);
}
"""


_CDEF = """
typedef struct { double **planes; int64_t nplanes, n, length; double c, d; int64_t threads; } chain_args;
typedef struct { const double *x0; double *x; int64_t n, cap, threads, turns; } settle_args;
void chain(const chain_args *a);
void settle(settle_args *a);
void triad(double *a, const double *b, const double *c, double s, int64_t n, int threads);
"""
_FFI = cffi.FFI()
_FFI.cdef(_CDEF)


def _library(source: str, name: str):
    """The compiled source through cffi: a call of one prepared pointer costs a fraction of a microsecond."""
    return _FFI.dlopen(str(compile_library(source, name=name, extra_flags=("-pthread",))))


def _pointer(array: np.ndarray):
    return _FFI.cast("double *", array.ctypes.data)


def stream_triad(threads: int, medians, n: int = 1 << 24) -> float:
    """Bytes per second of a STREAM triad (a = b + s * c) over ``threads`` threads."""
    lib = _library(TRIAD, "bench_triad")
    a, b, c = np.zeros(n), np.ones(n), np.ones(n)
    pa, pb, pc = _pointer(a), _pointer(b), _pointer(c)
    t = medians({"triad": lambda: lib.triad(pa, pb, pc, 3.0, n, threads)}, repeat=9)["triad"]
    return 24 * n / t


class Limits:
    """The compute-limit programs, each as {threads: call} for the table to time."""

    def __init__(self) -> None:
        self.lib = _library(LIMITS, "bench_limits")

    @staticmethod
    def _calls(entry, kind, fields, *keep):
        def call(threads):
            args = _FFI.new(kind, {**fields, "threads": threads})

            def run():
                entry(args)
                return args

            run.keep = keep  # the arrays its pointers point into live as long as it does
            return run

        return {threads: call(threads) for threads in (1, 2)}

    def chain(self, planes: list[np.ndarray], length: int, c: float, d: float) -> dict:
        """x = x * c; x = x + d; ... ``length`` kernels over each plane, in place."""
        pointers = _FFI.new("double *[]", [_pointer(p) for p in planes])
        return self._calls(self.lib.chain, "chain_args *", {"planes": pointers, "nplanes": len(planes),
                           "n": planes[0].size, "length": length, "c": c, "d": d}, pointers, planes)

    def settle(self, x0: np.ndarray, cap: int) -> dict:
        """x = 2 x0, then x = 2 x while some sample is below 100, at most ``cap`` turns;
        a call returns its argument block (``.turns``: the turns it took)."""
        x = np.empty_like(x0)
        fields = {"x0": _pointer(x0), "x": _pointer(x), "n": x0.size, "cap": cap}
        return self._calls(self.lib.settle, "settle_args *", fields, x0, x)
