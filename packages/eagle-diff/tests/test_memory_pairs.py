"""eagle.diff.memory.pairs: the places sharing memory, as np.shares_memory finds them."""

from __future__ import annotations

import numpy as np

from eagle.diff import memory
from eagle.diff.views import extent


def _sweep(arrays):
    """The pairs by extent order and np.shares_memory: what pairs() answered before libeagle's index."""
    spans = sorted(((extent(a), p, a) for p, a in arrays.items() if a.size), key=lambda span: span[0])
    return [(p, q) for k, (_, p, a) in enumerate(spans) for _, q, b in spans[k + 1:]
            if np.shares_memory(a, b)]


def test_pairs_match_shares_memory_in_the_same_order():
    rng = np.random.default_rng(18)
    for _ in range(200):
        base = np.zeros((6, 8))
        arrays = {}
        for k in range(int(rng.integers(1, 7))):
            r0, c0 = int(rng.integers(0, 6)), int(rng.integers(0, 8))
            step = int(rng.integers(1, 3))
            arrays[("p", k)] = base[r0:r0 + int(rng.integers(0, 3)), c0::step]
        assert memory.pairs(arrays) == _sweep(arrays)
