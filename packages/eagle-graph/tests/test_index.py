"""eagle_candidate_pairs against the all-pairs answer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from eagle._core import CoreError, ffi, lib
from eagle._views import candidate_pairs, view_of


def copy_view(view: Any, **changes: int) -> Any:
    out = ffi.new("eagle_view *")
    out[0] = view[0]
    for name, value in changes.items():
        setattr(out, name, value)
    return out


def extent(view: Any) -> tuple[int, int]:
    bounds = ffi.new("uintptr_t[2]")
    lib.eagle_view_extent(view, bounds, bounds + 1)
    return int(bounds[0]), int(bounds[1])


def all_pairs(views: list[Any], writes: np.ndarray, exact: bool, max_work: int) -> np.ndarray:
    """The O(n^2) reference: every pair checked on its own."""
    bounds = [extent(v) for v in views]
    pairs = []
    for i in range(len(views)):
        lo_i, hi_i = bounds[i]
        for j in range(i + 1, len(views)):
            lo_j, hi_j = bounds[j]
            if not (writes[i] or writes[j]) or views[i].device != views[j].device:
                continue
            if not (lo_i < hi_i and lo_j < hi_j and lo_i < hi_j and lo_j < hi_i):
                continue
            if exact and lib.eagle_overlap(views[i], views[j], max_work) == lib.EAGLE_OVERLAP_NO:
                continue
            pairs.append((i, j))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def random_accesses(rng: np.random.Generator, n: int) -> tuple[list[Any], np.ndarray]:
    """n views over a few base arrays (some on a second device, some empty), ~30% writes."""
    bases = [np.zeros(int(size), np.uint8) for size in rng.integers(256, 2048, size=5)]
    views = []
    for _ in range(n):
        base = bases[int(rng.integers(len(bases)))]
        dtype = np.dtype([np.uint8, np.int16, np.float64][int(rng.integers(3))])
        ndim = int(rng.integers(1, 4))
        lengths = rng.choice(8, size=ndim, p=[.02, .1, .18, .2, .2, .1, .1, .1])
        shape = tuple(int(s) for s in lengths)
        strides = tuple(int(s) * (dtype.itemsize if rng.random() < 0.6 else 1)
                        for s in rng.integers(-24, 25, size=ndim))
        offset = int(rng.integers(0, base.size - dtype.itemsize))
        first = base[offset:offset + dtype.itemsize].view(dtype)
        view = view_of(as_strided(first, shape=shape, strides=strides))
        if rng.random() < 0.1:
            view = copy_view(view, device=1)  # same addresses, other memory
        views.append(view)
    writes = rng.random(n) < 0.3
    return views, writes


@pytest.mark.parametrize("seed", range(8))
def test_matches_all_pairs(seed: int) -> None:
    """Extent-only and exact (uncapped and capped) answers equal the all-pairs loop."""
    rng = np.random.default_rng(seed)
    views, writes = random_accesses(rng, 300)
    loose = candidate_pairs(views, writes, exact=False)
    np.testing.assert_array_equal(loose, all_pairs(views, writes, False, -1))
    assert len(loose) > 200  # the sets are dense enough to test something
    for max_work in (-1, 0, 1, 3):
        exact = candidate_pairs(views, writes, exact=True, max_work=max_work)
        np.testing.assert_array_equal(exact, all_pairs(views, writes, True, max_work))
    dropped = len(loose) - len(candidate_pairs(views, writes, exact=True, max_work=-1))
    assert dropped > 0  # the exact test removed extent-only false alarms


def test_exact_pairs_are_sound() -> None:
    """Every truly overlapping write pair is reported, checked with NumPy."""
    rng = np.random.default_rng(42)
    base = np.zeros(600, np.uint8)
    arrays = []
    for _ in range(150):
        offset = int(rng.integers(0, 590))
        first = base[offset:offset + 2].view(np.int16)
        shape = tuple(int(s) for s in rng.integers(1, 5, size=2))
        strides = tuple(int(s) for s in rng.integers(-30, 31, size=2))
        arrays.append(as_strided(first, shape=shape, strides=strides))
    writes = rng.random(len(arrays)) < 0.5
    found = {tuple(p) for p in candidate_pairs(arrays, writes, exact=True, max_work=2)}
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            if (writes[i] or writes[j]) and np.shares_memory(arrays[i], arrays[j], max_work=-1):
                assert (i, j) in found, (i, j)


def test_readers_pair_only_with_writers() -> None:
    """Many reads of one array and one write: only the write's pairs come back."""
    x = np.zeros(1000, np.float64)
    arrays = [x[k:k + 100] for k in range(0, 800, 10)]
    writes = np.zeros(len(arrays), bool)
    writes[40] = True
    pairs = candidate_pairs(arrays, writes)
    assert pairs.dtype == np.int64 and pairs.shape[1] == 2
    assert all(40 in p for p in pairs.tolist())
    assert len(pairs) == 18  # x[310:410] .. x[490:590], less x[400:500] itself


def test_views_and_arrays_mix_and_order_is_sorted() -> None:
    """Hand-built views and arrays can be mixed; rows are sorted with i < j."""
    x = np.zeros(64, np.uint8)
    items = [x[10:20], view_of(x[0:64]), x[30:40], view_of(x[15:35])]
    pairs = candidate_pairs(items, [True, True, False, False])
    assert pairs.tolist() == [[0, 1], [0, 3], [1, 2], [1, 3]]


def test_empty_and_single() -> None:
    """n == 0 and n == 1 give no pairs."""
    for items in ([], [np.zeros(4)]):
        pairs = candidate_pairs(items, [True] * len(items))
        assert pairs.shape == (0, 2) and pairs.dtype == np.int64
    pairs = ffi.new("int64_t **")
    npairs = ffi.new("int64_t *")
    assert lib.eagle_candidate_pairs(ffi.NULL, ffi.NULL, 0, 1, -1, pairs, npairs) == lib.EAGLE_OK
    assert pairs[0] == ffi.NULL and npairs[0] == 0


def test_bad_arguments_are_refused() -> None:
    """A malformed view, a negative n or a wrong writes length."""
    good = view_of(np.zeros(8))
    bad = copy_view(good, itemsize=0)
    with pytest.raises(CoreError, match=r"^eagle\.candidate_pairs: .*views\[1\]: itemsize < 1"):
        candidate_pairs([good, bad], [True, True])
    with pytest.raises(ValueError, match=r"^eagle\.candidate_pairs: writes has shape"):
        candidate_pairs([good, good], [True])
    pairs = ffi.new("int64_t **")
    npairs = ffi.new("int64_t *")
    assert lib.eagle_candidate_pairs(good, ffi.NULL, -1, 1, -1, pairs, npairs) == lib.EAGLE_ERR_ARG
