"""Overlap test and candidate index: eagle against NumPy and the all-pairs loop.

Run: ``python benchmarks/bench_overlap.py``.  Every figure is the median of
REPEATS runs in this process, after one warm-up run.
"""

from __future__ import annotations

import numpy as np
from harness import fmt, median_time, table
from numpy.lib.stride_tricks import as_strided

from eagle._core import ffi, lib
from eagle._views import MAX_WORK, candidate_pairs, view_of

REPEATS = 5
PAIRS = 20_000
ACCESSES = 10_000
BASES = 50
WRITE_SHARE = 0.3
ALL_PAIRS_BUDGET_S = 10.0  # time the all-pairs loop in full only below this estimate
SAMPLE_PAIRS = 200_000


def random_2d_views(rng: np.random.Generator, base: np.ndarray, n: int) -> list[np.ndarray]:
    """2-D views of ``base`` with mixed item sizes and strides of either sign."""
    views = []
    for _ in range(n):
        dtype = np.dtype([np.uint8, np.int16, np.float64][int(rng.integers(3))])
        shape = tuple(int(s) for s in rng.integers(1, 9, size=2))
        strides = tuple(int(s) * (dtype.itemsize if rng.random() < 0.6 else 1)
                        for s in rng.integers(-24, 25, size=2))
        offset = int(rng.integers(0, 256))
        first = base[offset:offset + dtype.itemsize].view(dtype)
        views.append(as_strided(first, shape=shape, strides=strides))
    return views


def bench_pair_test(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    base = np.zeros(4096, np.uint8)
    a_arrays = random_2d_views(rng, base, PAIRS)
    b_arrays = random_2d_views(rng, base, PAIRS)
    pairs = list(zip(a_arrays, b_arrays, strict=True))
    view_pairs = [(view_of(a), view_of(b)) for a, b in pairs]
    eagle_overlap, may_share = lib.eagle_overlap, np.may_share_memory

    def eagle() -> None:
        for a, b in view_pairs:
            eagle_overlap(a, b, MAX_WORK)

    def numpy() -> None:
        for a, b in pairs:
            may_share(a, b, max_work=MAX_WORK)

    overlapping = sum(eagle_overlap(a, b, MAX_WORK) != lib.EAGLE_OVERLAP_NO for a, b in view_pairs)
    t_eagle, t_numpy = median_time(eagle, REPEATS), median_time(numpy, REPEATS)
    note = f"{overlapping} of {PAIRS} pairs overlap"
    return [
        ("eagle_overlap, cffi loop over prepared views", fmt(t_eagle),
         f"{PAIRS / t_eagle:,.0f} pairs/s"),
        ("numpy.may_share_memory, same pairs and cap", fmt(t_numpy),
         f"{PAIRS / t_numpy:,.0f} pairs/s; eagle is {t_numpy / t_eagle:.2f}x; {note}"),
    ]


def random_accesses(rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    """Row/column blocks of 2-D float64 arrays of assorted sizes, some stepped or reversed."""
    bases = [np.zeros((int(r), int(c))) for r, c in rng.integers(16, 400, size=(BASES, 2))]
    accesses = []
    for _ in range(ACCESSES):
        x = bases[int(rng.integers(BASES))]
        rows = sorted(int(v) for v in rng.integers(0, x.shape[0] + 1, size=2))
        cols = sorted(int(v) for v in rng.integers(0, x.shape[1] + 1, size=2))
        step = int(rng.choice([1, 1, 2, 3, -1]))
        block = x[rows[0]:rows[1] + 1, cols[0]:cols[1] + 1][:, ::step]
        accesses.append(block)
    return accesses, rng.random(ACCESSES) < WRITE_SHARE


def bench_index(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    accesses, writes = random_accesses(rng)
    n = len(accesses)
    views = ffi.new("eagle_view[]", n)
    for k, array in enumerate(accesses):
        views[k] = view_of(array)[0]
    flags = np.ascontiguousarray(writes, dtype=np.uint8)
    flags_ptr = ffi.from_buffer("uint8_t[]", flags)
    out, count = ffi.new("int64_t **"), ffi.new("int64_t *")

    def index(exact: int) -> int:
        lib.eagle_candidate_pairs(views, flags_ptr, n, exact, MAX_WORK, out, count)
        lib.eagle_free(out[0])
        return int(count[0])

    loose_pairs, exact_pairs = index(0), index(1)
    t_loose = median_time(lambda: index(0), REPEATS)
    t_exact = median_time(lambda: index(1), REPEATS)
    t_python = median_time(lambda: candidate_pairs(accesses, writes), 3)

    # The all-pairs reference: the extent-only test (max_work 0) on every pair.
    total = n * (n - 1) // 2
    i_idx = rng.integers(0, n, size=SAMPLE_PAIRS)
    j_idx = rng.integers(0, n, size=SAMPLE_PAIRS)
    sample = [(views + int(i), views + int(j)) for i, j in zip(i_idx, j_idx, strict=True)]
    eagle_overlap = lib.eagle_overlap

    def sampled() -> None:
        for a, b in sample:
            eagle_overlap(a, b, 0)

    per_pair = median_time(sampled, 3) / SAMPLE_PAIRS
    if per_pair * total <= ALL_PAIRS_BUDGET_S:
        def all_pairs() -> None:
            for i in range(n):
                for j in range(i + 1, n):
                    eagle_overlap(views + i, views + j, 0)
        t_all, how = median_time(all_pairs, 1), "timed in full"
    else:
        t_all = per_pair * total
        how = f"estimated from {SAMPLE_PAIRS:,} sampled pairs (full loop would take over " \
              f"{ALL_PAIRS_BUDGET_S:.0f} s)"
    return [
        ("eagle_candidate_pairs, extent-only", fmt(t_loose),
         f"{loose_pairs:,} pairs; {t_all / t_loose:,.0f}x faster than all-pairs"),
        ("eagle_candidate_pairs, exact", fmt(t_exact),
         f"{exact_pairs:,} pairs; {t_all / t_exact:,.0f}x faster than all-pairs"),
        ("candidate_pairs() from arrays, incl. view_of", fmt(t_python),
         f"view conversion is {(t_python - t_exact) / t_python:.0%} of it"),
        (f"all-pairs extent test, {total:,} cffi calls", fmt(t_all), how),
    ]


def main() -> None:
    rng = np.random.default_rng(2024)
    table(f"overlap test: {PAIRS:,} random 2-D view pairs, max_work={MAX_WORK} "
          f"(medians of {REPEATS})", bench_pair_test(rng))
    table(f"candidate index: {ACCESSES:,} accesses over {BASES} arrays, {WRITE_SHARE:.0%} "
          f"writes (medians of {REPEATS})", bench_index(rng))


if __name__ == "__main__":
    main()
