"""The C sample loop's vector forms, held to the reference bit for bit on masks chosen to reach
every path: the guarded loop (a top-level ``if`` tested per block of samples, the block run with
the ``else`` arm alone where no sample takes the ``then`` arm) and lane blocks (a body holding a
loop, in blocks of ``hawk.lanes.BLOCK`` samples whose masked statements vectorise).  The masks:
nothing taken, everything taken, runs of samples that start and end off a block's edge, a lone
sample, one sample in a hundred; sizes around a block's."""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm
from hawk.emit import GUARD_BLOCK
from hawk.lanes import BLOCK


@hawk.kernel
def guarded(fate: UInt32, x: Mutable[Scalar], seed: Param[Int32]) -> Scalar:
    """A draw under the guard, an ``else`` arm that writes, and statements after the ``if``."""
    if fate == 0:
        u = hawk.random.uniform(seed, 3)
        x = x + u
        y = u * 2.0
        if u < 0.5:
            y = y - x
    else:
        x = x * 0.5
        y = x - 1.0
    return y + hm.float64(fate)


@hawk.kernel
def laned(fate: UInt32, x: Mutable[Scalar], k: Mutable[UInt32], seed: Param[Int32]):
    """A loop under the guard (lane blocks), a loop in each arm of a per-sample ``if`` inside it."""
    if fate == 0:
        u = hawk.random.uniform(seed, k)
        k = k + hm.uint32(1)
        if u < 0.3:
            for _ in range(5):
                x = x - (x * x - u) / (2.0 * x + 3.0)
        else:
            for _ in range(3):
                x = hm.sqrt(x * x + u)


def masks(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(n)
    off = GUARD_BLOCK // 2
    run = np.ones(n, np.uint32)
    run[off:off + 3 * GUARD_BLOCK] = 0  # live samples from the middle of a block to the middle of another
    lone = np.ones(n, np.uint32)
    lone[n // 2] = 0
    return {"none live": np.ones(n, np.uint32), "all live": np.zeros(n, np.uint32), "a run": run,
            "one": lone, "one in a hundred": (rng.random(n) >= 0.01).astype(np.uint32),
            "half": rng.integers(0, 2, n).astype(np.uint32)}


SIZES = [1, GUARD_BLOCK - 1, BLOCK + 1, 4 * BLOCK + 5, 1500]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("mask", list(masks(1)))
def test_the_guarded_loop_gives_the_references_bits(n, mask, threads):
    fate = masks(n)[mask]
    x = np.random.default_rng(2).uniform(0.5, 2.0, n)
    got_x, want_x = x.copy(), x.copy()
    got = guarded(fate, got_x, 11)
    want = guarded.reference(fate, want_x, 11)
    assert got.tobytes() == want.tobytes() and got_x.tobytes() == want_x.tobytes()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("mask", list(masks(1)))
def test_lane_blocks_give_the_references_bits(n, mask, threads):
    fate = masks(n)[mask]
    rng = np.random.default_rng(4)
    x, k = rng.uniform(0.5, 2.0, n), rng.integers(0, 50, n).astype(np.uint32)
    got, want = (x.copy(), k.copy()), (x.copy(), k.copy())
    laned(fate, *got, 5)
    laned.reference(fate, *want, 5)
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True))


def test_the_forms_are_the_ones_printed():
    """The kernels above take the forms these tests are for (a change of form would leave the
    tests above passing on a path they no longer reach)."""
    fate, x, k = np.zeros(8, np.uint32), np.ones(8), np.zeros(8, np.uint32)
    assert f"b += {GUARD_BLOCK}" in guarded.c_source(fate, x, 1)
    source = laned.c_source(fate, x, k, 1)
    assert f"i += {BLOCK}" in source and "HK_LANES" in source
