"""Empty batches: a reduction over no samples writes its identity, on every path, as eagle.reduce does."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import eagle
import hawk
from hawk import Int32, Mutable, Scalar, UInt32
from hawk import math as hm

#: op -> (what a float64 reduction over no samples gives, what an int32 one gives)
IDENTITY = {"sum": (0.0, 0), "max": (-np.inf, np.iinfo(np.int32).min),
            "min": (np.inf, np.iinfo(np.int32).max)}


@hawk.kernel
def reduced(x: Scalar, k: Int32, s: Mutable[Scalar], top: Mutable[Scalar], low: Mutable[Scalar],
            ktop: Mutable[Int32], klow: Mutable[Int32], some: Mutable[UInt32], every: Mutable[UInt32],
            bmax: Mutable[UInt32]):
    s = hawk.sum(x)
    top = hawk.max(x)
    low = hawk.min(x)
    ktop = hawk.max(k)
    klow = hawk.min(k)
    some = hm.uint32(hawk.any(x > 0.0))
    every = hm.uint32(hawk.all(x > 0.0))
    bmax = hm.uint32(hawk.max(x > 0.0)) + hm.uint32(hawk.min(x > 0.0)) * 2  # any + 2 * all


@hawk.kernel
def count(x: Scalar, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(x < 10.0))


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return x * 2.0


EXPECTED = [0.0, -np.inf, np.inf, IDENTITY["max"][1], IDENTITY["min"][1], 0, 1, 2]


def cells():
    """Cells holding values a reduction must overwrite."""
    return [np.full(1, 7.0), np.full(1, 7.0), np.full(1, 7.0), np.full(1, 7, np.int32),
            np.full(1, 7, np.int32), *(np.full(1, 7, np.uint32) for _ in range(3))]


def test_a_call_over_no_samples_writes_the_identities():
    x, k = np.zeros(0), np.zeros(0, np.int32)
    for run in (reduced, reduced.reference):
        out = cells()
        run(x, k, *out)
        assert [o[0] for o in out] == EXPECTED


def test_a_planned_kernel_over_no_samples_writes_the_identities():
    out = cells()
    bound = reduced.plan(np.zeros(0), np.zeros(0, np.int32), *out)
    eagle.Graph().add(bound, name="r").build().launch()
    assert [o[0] for o in out] == EXPECTED


def test_reductions_of_bools_count_and_max_min_are_any_all():
    x = np.array([-1.0, 2.0, 3.0])
    out = cells()
    reduced(x, np.array([4, -2, 9], np.int32), *out)
    assert [o[0] for o in out] == [4.0, 3.0, -1.0, 9, -2, 1, 0, 1]
    count_ = np.zeros(1, np.uint32)
    count(np.array([1.0, 2.0, 30.0]), count_)
    assert count_[0] == 2  # a sum of bools counts


def test_hawk_reductions_of_no_values_outside_a_kernel():
    empty = np.zeros(0)
    assert (hawk.sum(empty), hawk.max(empty), hawk.min(empty)) == (0.0, -np.inf, np.inf)
    assert hawk.max(np.zeros(0, np.int32)) == IDENTITY["max"][1]
    assert (hawk.any(empty > 0), hawk.all(empty > 0)) == (False, True)


@pytest.mark.parametrize("op", ["sum", "max", "all"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint32])
def test_eagle_reduce_over_no_samples_writes_the_identity(op, dtype):
    out = np.full(1, 7, dtype)
    eagle.Graph().add_node(eagle.reduce(np.zeros(0, dtype), out, op=op)).build().launch()
    expected = hawk.sum(np.zeros(0, dtype)) if op == "sum" else hawk.max(np.zeros(0, dtype)) \
        if op == "max" else 1
    assert out[0] == expected


@pytest.mark.timeout(20, method="thread")  # a hang in native code ends the run
def test_an_uncapped_builder_loop_over_an_empty_batch_returns():
    @eagle.Graph.builder
    def grow(x, flag):
        g = eagle.Graph()
        while flag:  # a count over no samples is 0: the loop ends
            x = dbl(x)
            count(x, flag)
        g.result = x
        return g

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uncapped-loop warning
        g = grow(np.zeros(0), np.ones(1, np.uint32))
    assert g().shape == (0,)


def test_a_returned_cell_and_a_params_gradient_over_no_samples():
    @hawk.kernel
    def shifted(x: Scalar, p: hawk.Param):
        return x * p, hawk.max(x) + p

    y, top = shifted(np.zeros(0), 2.0)  # the cell was np.empty's garbage
    assert y.shape == (0,) and top[0] == -np.inf
    grads = shifted.vjp(np.zeros(0), 2.0, np.zeros(0), np.ones(1))
    assert grads["p"][0] == 1.0 and grads["x"].shape == (0,)  # d(max + p)/dp; no sample adds to it
