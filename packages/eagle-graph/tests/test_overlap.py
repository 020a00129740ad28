"""eagle_overlap against NumPy's solver, brute force, and its own contract."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from eagle._core import ffi, lib
from eagle._views import overlap, overlap_status, view_of

NO = lib.EAGLE_OVERLAP_NO
YES = lib.EAGLE_OVERLAP_YES
TOO_HARD = lib.EAGLE_OVERLAP_TOO_HARD
OVERFLOW = lib.EAGLE_OVERLAP_OVERFLOW
BAD_VIEW = lib.EAGLE_OVERLAP_BAD_VIEW
UNDECIDED = (TOO_HARD, OVERFLOW)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
UINTPTR_MAX = 2**64 - 1

DTYPES = (np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.float64))
BUFFER = 2048  # bytes of the shared base every random view starts in
STARTS = 192  # random views start in the first STARTS bytes, so many pairs meet
BULK_PAIRS = 20_000
HYPOTHESIS_PAIRS = 400
MIN_EACH = 2_000  # both outcomes must be this common in the bulk run


def strided(base: np.ndarray, dtype: np.dtype, offset: int, shape: tuple[int, ...],
            strides: tuple[int, ...]) -> np.ndarray:
    """A view of ``base`` whose first element is at byte ``offset`` (memory is never read)."""
    first = base[offset:offset + dtype.itemsize].view(dtype)
    return as_strided(first, shape=shape, strides=strides)


def describe(a: np.ndarray, b: np.ndarray) -> str:
    """What replays a failing case: data delta, shapes, strides, item sizes."""
    delta = a.__array_interface__["data"][0] - b.__array_interface__["data"][0]
    return (f"base_a - base_b = {delta}, shapes {a.shape} {b.shape}, strides {a.strides} "
            f"{b.strides}, itemsizes {a.itemsize} {b.itemsize}")


def make_view(data: int, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int = 1,
              device: int = -1, base: int = 0) -> object:
    """A hand-built eagle_view, for values no NumPy array can have."""
    view = ffi.new("eagle_view *")
    view.data = data
    view.base = base
    view.itemsize = itemsize
    view.ndim = len(shape)
    view.device = device
    view.shape[0:len(shape)] = list(shape)
    view.strides[0:len(strides)] = list(strides)
    return view


def extent(view: object) -> tuple[int, int]:
    bounds = ffi.new("uintptr_t[2]")
    lib.eagle_view_extent(view, bounds, bounds + 1)
    return int(bounds[0]), int(bounds[1])


def check_against_numpy(a: np.ndarray, b: np.ndarray, capped_work: int) -> int:
    """Assert exact and capped agreement with NumPy; return the exact status."""
    exact = overlap_status(a, b, -1)
    truth = np.shares_memory(a, b, max_work=-1)
    assert exact in (NO, YES), f"uncapped answer {exact}: {describe(a, b)}"
    assert (exact == YES) == truth, f"eagle {exact}, numpy {truth}: {describe(a, b)}"
    # The work counting mirrors NumPy's, so may_share_memory predicts the capped answer.
    capped = overlap_status(a, b, capped_work)
    assert (capped != NO) == np.may_share_memory(a, b, max_work=capped_work), (
        f"max_work={capped_work}: eagle {capped}: {describe(a, b)}")
    assert capped == NO or capped == exact or capped == TOO_HARD, describe(a, b)
    return exact


def random_views(rng: np.random.Generator, base: np.ndarray, n: int) -> list[np.ndarray]:
    """n random views of ``base``: ndim 1..4, lengths 0..6, strides of any sign."""
    ndim = rng.integers(1, 5, size=n)
    shapes = rng.choice(7, size=(n, 4), p=[0.03, 0.17, 0.2, 0.2, 0.15, 0.15, 0.1])
    dtypes = rng.integers(0, len(DTYPES), size=n)
    # Half the strides are whole items (as slicing makes), half any byte count.
    items = rng.integers(-6, 7, size=(n, 4))
    bytes_ = rng.integers(-40, 41, size=(n, 4))
    whole = rng.random(size=(n, 4)) < 0.5
    offsets = rng.integers(0, STARTS, size=n)
    views = []
    for k in range(n):
        dtype = DTYPES[dtypes[k]]
        d = int(ndim[k])
        strides = np.where(whole[k], items[k] * dtype.itemsize, bytes_[k])
        views.append(strided(base, dtype, int(offsets[k]), tuple(int(s) for s in shapes[k, :d]),
                             tuple(int(s) for s in strides[:d])))
    return views


def test_random_pairs_agree_with_numpy() -> None:
    """20,000 seeded random pairs: exact answers equal np.shares_memory, capped ones
    equal np.may_share_memory with the same cap."""
    rng = np.random.default_rng(20240611)
    base = np.zeros(BUFFER, np.uint8)
    a_views = random_views(rng, base, BULK_PAIRS)
    b_views = random_views(rng, base, BULK_PAIRS)
    caps = rng.integers(1, 8, size=BULK_PAIRS)
    counts = {NO: 0, YES: 0}
    for a, b, cap in zip(a_views, b_views, caps, strict=True):
        counts[check_against_numpy(a, b, int(cap))] += 1
    assert counts[NO] + counts[YES] == BULK_PAIRS
    assert counts[NO] >= MIN_EACH and counts[YES] >= MIN_EACH, counts


view_params = st.tuples(
    st.sampled_from(DTYPES),
    st.integers(0, STARTS - 1),
    st.lists(st.tuples(st.integers(0, 6), st.integers(-48, 48)), min_size=1, max_size=4),
)


@settings(max_examples=HYPOTHESIS_PAIRS, deadline=None, derandomize=True)
@given(view_params, view_params, st.integers(1, 10))
def test_hypothesis_pairs_agree_with_numpy(pa: tuple, pb: tuple, cap: int) -> None:
    """Hypothesis-shrunk pairs: exact and capped agreement with NumPy."""
    base = np.zeros(BUFFER, np.uint8)
    a, b = (strided(base, dtype, offset, tuple(n for n, _ in axes), tuple(s for _, s in axes))
            for dtype, offset, axes in (pa, pb))
    check_against_numpy(a, b, cap)


def random_slice(rng: np.random.Generator, length: int, step: int) -> slice:
    # Non-empty and mostly wide, so that both outcomes are common in 4-D.
    lo = int(rng.integers(0, length // 2 + 1))
    hi = int(rng.integers(lo + 1, length + 1))
    return slice(lo, hi, step) if step > 0 else slice(hi, lo, step)


def test_common_slicing_is_decided_with_work_one() -> None:
    """Slices of one contiguous array with equal steps need a work cap of 1 (NumPy's
    easy-fuzz property)."""
    rng = np.random.default_rng(7)
    x = np.zeros((5, 6, 7, 8), np.int16)
    decided = {NO: 0, YES: 0}
    for _ in range(2000):
        steps = [int(s) * int(rng.choice([-1, 1])) for s in rng.integers(1, 4, size=4)]
        a = x[tuple(random_slice(rng, n, s) for n, s in zip(x.shape, steps, strict=True))]
        b = x[tuple(random_slice(rng, n, s) for n, s in zip(x.shape, steps, strict=True))]
        status = overlap_status(a, b, 1)
        assert status in (NO, YES), f"max_work=1 left it undecided: {describe(a, b)}"
        assert (status == YES) == np.shares_memory(a, b, max_work=-1), describe(a, b)
        decided[status] += 1
    assert min(decided.values()) >= 100, decided


def test_numpy_hard_example_needs_six_units() -> None:
    """x[:, ::7] against x[:, 3::3]: TOO_HARD up to max_work 5, NO from 6, as in NumPy."""
    x = np.arange(4 * 20).reshape(4, 20).astype(np.int8)
    a, b = x[:, ::7], x[:, 3::3]
    assert [overlap_status(a, b, k) for k in range(1, 6)] == [TOO_HARD] * 5
    assert overlap_status(a, b, 6) == NO
    assert overlap_status(a, b, -1) == NO
    assert overlap(a, b, max_work=2) is True  # undecided reads as overlap
    assert overlap(a, b, max_work=6) is False


def test_pathological_example_answers_overlap_fast() -> None:
    """NumPy's hard knapsack instance: disjoint, but a capped search gives up quickly
    and reports overlap."""
    x = np.zeros(192163377, np.int8)  # calloc'd: never touched
    x1 = as_strided(x, strides=(36674, 61119, 85569), shape=(1049, 1049, 1049))
    x2 = as_strided(x[64023025:], strides=(12223, 12224, 1), shape=(1049, 1049, 1))
    start = time.perf_counter()
    assert overlap_status(x1, x2, 1 << 16) == TOO_HARD
    assert overlap(x1, x2) is True
    assert time.perf_counter() - start < 1.0


def test_max_work_zero_compares_extents_only() -> None:
    """max_work=0: intersecting extents are TOO_HARD, disjoint ones NO."""
    x = np.zeros(100, np.uint8)
    assert overlap_status(x[::2], x[1::2], 0) == TOO_HARD
    assert overlap_status(x[::2], x[1::2], -1) == NO
    assert overlap_status(x[:50], x[50:], 0) == NO


def brute_force(a: tuple, b: tuple) -> bool:
    """Do two (data, shape, strides, itemsize) views share a byte?  Python integers,
    so nothing overflows."""
    def intervals(data: int, shape: tuple, strides: tuple, itemsize: int) -> list:
        return [(start, start + itemsize) for index in itertools.product(*map(range, shape))
                for start in [data + sum(i * s for i, s in zip(index, strides, strict=True))]]

    return any(lo1 < hi2 and lo2 < hi1
               for lo1, hi1 in intervals(*a) for lo2, hi2 in intervals(*b))


def test_int64_extremes_never_answer_a_wrong_no() -> None:
    """Strides, item sizes and addresses near the int64 and uintptr limits give
    OVERFLOW or TOO_HARD where they cannot be solved, never a wrong NO or YES."""
    rng = np.random.default_rng(99)
    big = [INT64_MAX, INT64_MIN, 2**62, 2**62 + 1, 2**61 - 1, 3 * 2**61, 2**40 + 3]
    counts = {NO: 0, YES: 0, TOO_HARD: 0, OVERFLOW: 0}
    for _ in range(3000):
        params = []
        for _side in range(2):
            ndim = int(rng.integers(1, 3))
            shape = tuple(int(s) for s in rng.integers(1, 4, size=ndim))
            strides = tuple(int(rng.choice(big)) * int(rng.choice([-1, 1])) if rng.random() < 0.7
                            else int(rng.integers(-100, 101)) for _ in range(ndim))
            strides = tuple(max(INT64_MIN, min(INT64_MAX, s)) for s in strides)
            itemsize = int(rng.choice([1, 2, 8, 2**62]))
            params.append((shape, strides, itemsize))
        data_a = int(rng.choice([0, 2**63, UINTPTR_MAX - 2**20, int(rng.integers(0, 2**63))]))
        data_b = data_a + int(rng.integers(-3, 4)) * int(rng.choice([1, 2**62]))
        data_b = max(0, min(UINTPTR_MAX, data_b))
        a = (data_a, *params[0])
        b = (data_b, *params[1])
        status = lib.eagle_overlap(make_view(*a), make_view(*b), 1 << 12)
        counts[status] += 1
        truth = brute_force(a, b)
        message = f"status {status}, truth {truth}: a={a} b={b}"
        assert status != (NO if truth else YES), message
    assert counts[OVERFLOW] > 100 and counts[NO] > 100 and counts[YES] > 100, counts


def test_int64_extremes_specific_cases() -> None:
    """Overflow in the extent, in |stride|, and large exact solutions."""
    # Extent 2 * 2**62 does not fit in int64.
    v = make_view(1 << 40, (3,), (2**62,))
    assert lib.eagle_overlap(v, v, -1) == OVERFLOW
    assert extent(v) == (0, UINTPTR_MAX)
    # A stride of INT64_MIN fits the extent (data above 2**63) but not |stride|.
    w = make_view(2**63 + 5, (2,), (INT64_MIN,))
    assert extent(w) == (5, 2**63 + 6)
    assert lib.eagle_overlap(w, w, -1) == OVERFLOW
    # Against a small view the right-hand side fits, so |stride| itself is checked.
    assert lib.eagle_overlap(w, make_view(5, (1,), (0,)), -1) in (YES, OVERFLOW)
    assert lib.eagle_overlap(w, make_view(6, (1,), (0,)), -1) != YES
    # Addresses below 0 or past UINTPTR_MAX.
    low = make_view(10, (2,), (-100,))
    assert lib.eagle_overlap(low, low, -1) == OVERFLOW
    high = make_view(UINTPTR_MAX - 3, (1,), (0,), itemsize=8)
    assert lib.eagle_overlap(high, high, -1) == OVERFLOW
    # Large coprime strides meeting at element 2: the solver needs 128 bits.
    s1, s2, d = 2**61 - 1, 2**61 - 3, 1 << 20
    a = make_view(d, (3,), (s1,))
    b = make_view(d + 2 * s1 - 2 * s2, (3,), (s2,))
    assert lib.eagle_overlap(a, b, -1) == YES
    c = make_view(d + 2 * s1 - 2 * s2 + 1, (3,), (s2,))
    assert lib.eagle_overlap(a, c, -1) == NO


def test_different_devices_never_overlap() -> None:
    """The same addresses on two devices are two memories."""
    host = make_view(4096, (10,), (1,), device=-1)
    gpu0 = make_view(4096, (10,), (1,), device=0)
    gpu1 = make_view(4096, (10,), (1,), device=1)
    assert lib.eagle_overlap(host, gpu0, -1) == NO
    assert lib.eagle_overlap(gpu0, gpu1, -1) == NO
    assert lib.eagle_overlap(gpu1, gpu1, -1) == YES


def test_empty_views_never_overlap() -> None:
    """A zero in the shape means no bytes, whatever the strides and item size."""
    x = np.zeros(64, np.float64)
    assert overlap_status(x[3:3], x, -1) == NO
    assert overlap_status(x[3:3], x[3:3], 0) == NO
    empty = make_view(4096, (5, 0, 7), (2**62, 1, -(2**62)), itemsize=2**62)
    assert lib.eagle_overlap(empty, empty, -1) == NO
    assert extent(empty) == (0, 0)


def test_scalars_and_zero_strides() -> None:
    """0-d views and broadcast (stride 0) axes."""
    x = np.zeros(16, np.int32)
    scalar = as_strided(x[3:], shape=(), strides=())
    assert overlap_status(scalar, x[3:4], -1) == YES
    assert overlap_status(scalar, x[4:], -1) == NO
    broadcast = as_strided(x[5:], shape=(4, 3), strides=(0, 0))
    assert overlap_status(broadcast, x[5:6], -1) == YES
    assert overlap_status(broadcast, x[6:], -1) == NO


def test_base_is_a_hint_not_an_answer() -> None:
    """Views that share bytes overlap even when their base fields disagree."""
    a = make_view(8192, (10,), (1,), base=8192)
    b = make_view(8195, (10,), (1,), base=1)
    assert lib.eagle_overlap(a, b, -1) == YES


def test_extent_matches_numpy_byte_bounds() -> None:
    """eagle_view_extent is NumPy's byte_bounds for non-empty arrays."""
    from numpy.lib.array_utils import byte_bounds

    rng = np.random.default_rng(3)
    base = np.zeros(BUFFER, np.uint8)
    for array in random_views(rng, base, 500):
        expected = (0, 0) if array.size == 0 else byte_bounds(array)
        assert extent(view_of(array)) == expected, describe(array, array)


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("ndim", 33, "ndim out of range"),
    ("ndim", -1, "ndim out of range"),
    ("itemsize", 0, "itemsize < 1"),
    ("shape", -1, "negative shape"),
])
def test_bad_view_is_refused(field: str, value: int, problem: str) -> None:
    """Malformed views: BAD_VIEW from C, ValueError naming the API from Python."""
    bad = make_view(4096, (4,), (1,))
    if field == "shape":
        bad.shape[0] = value
    else:
        setattr(bad, field, value)
    good = make_view(4096, (4,), (1,))
    assert overlap_status(good, bad) == BAD_VIEW
    assert extent(bad) == (0, UINTPTR_MAX)
    with pytest.raises(ValueError, match=rf"^eagle\.overlap: .*view b: {problem}"):
        overlap(good, bad)
    with pytest.raises(ValueError, match=rf"^eagle\.overlap: .*view a: {problem}"):
        overlap(bad, good)
