"""A reverse pass derives only what was asked: the gradients toward ``wrt`` from the seeds.

A kernel's reverse takes cotangents only for the outputs on the path to a
seed (the others' are symbolic zeros) and stores gradients only for the
inputs on the path from a ``wrt`` name: a ``Param``'s cross-sample sum
exists only when its gradient is asked for, so a chain of per-sample
kernels reverses as one block-fused run, with one barrier.
"""

from __future__ import annotations

import numpy as np

import eagle
import eagle.diff
import hawk
from hawk import Param, Scalar
from hawk import math as hm

N = 5000  # several blocks: a cross-sample sum would need its barrier


@hawk.kernel
def scale(x: Scalar, c: Param) -> Scalar:
    return x * c


@hawk.kernel
def shift(x: Scalar, d: Param) -> Scalar:
    return x + hm.sin(d * x)


@hawk.kernel
def pair(x: Scalar) -> tuple[Scalar, Scalar]:
    return 2.0 * x, hm.log(x)


@eagle.Graph.builder
def chain(x, record=False):
    g = eagle.Graph(record=record)
    for k in range(5):
        x = scale(x, 1.0 + 0.01 * k)
        x = shift(x, 0.25)
    g.result = x
    return g


def barriers(record: eagle.diff.Record) -> int:
    (reverse_pass,) = record._passes.values()
    return reverse_pass.program.stats()["barriers"]


def test_a_chain_reversed_toward_its_argument_alone_has_one_barrier(threads):
    x = np.linspace(0.5, 1.5, N)
    g = chain(x.copy(), record=True)
    g()
    seed = np.linspace(1.0, 2.0, N)
    toward_x = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))
    assert barriers(g.record) == (1 if threads > 1 else 0)
    # asking for the Params too adds their sums, all in one phase of the one fused reverse, and
    # leaves x's gradient bit for bit as it was
    params = tuple(f"x[{k}].{'c' if k % 2 == 0 else 'd'}" for k in range(10))  # by the name they rebind
    g.record._passes.clear()
    everything = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x", *params))
    assert barriers(g.record) == (2 if threads > 1 else 0)
    np.testing.assert_array_equal(toward_x["x"], everything["x"])
    assert all(everything[p].shape == (1,) and np.isfinite(everything[p]).all() for p in params)


def test_an_output_off_the_path_sends_no_cotangent():
    """log(0) = -inf on the unseeded output: its zero cotangent through d log = 1/x would make
    0/0 = NaN; a symbolic zero makes nothing."""

    @eagle.Graph.builder
    def model(x, record=False):
        g = eagle.Graph(record=record)
        doubled, _ = pair(x)
        g.result = doubled
        return g

    g = model(np.array([0.0, 1.0, 2.0]), record=True)
    g()
    grads = eagle.diff.reverse(g.record, {"result": np.ones(3)}, wrt=("x",))
    np.testing.assert_array_equal(grads["x"], [2.0, 2.0, 2.0])
