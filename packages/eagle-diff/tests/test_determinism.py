"""Gradients are the same bits for any number of threads (DESIGN.md section 4)."""

from __future__ import annotations

import numpy as np

import eagle
import eagle.diff
import hawk
from eagle import _core
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

N = 5000  # several blocks of samples: the team shares the work


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def wave(v: Scalar) -> Scalar:
    return hm.sin(v) * v + 0.01 * v * hawk.sum(v)  # a cross-sample sum: its adjoint is summed too


@hawk.kernel
def mix(a: Scalar, b: Scalar) -> Scalar:
    return a * b + hm.exp(-a * a)


@hawk.kernel
def grow(x: Scalar) -> Scalar:
    return 1.2 * x + 0.1 * hm.cos(x)


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@eagle.Graph.builder
def busy(x, flag, record=False):
    g = eagle.Graph(record=record)
    a = affine(x, 1.3, 0.2)
    with g.parallel() as p:
        with p.branch() as b1:
            u = wave(a)
        with p.branch() as b2:
            v = grow(a)
    for _ in range(20):
        if not flag:
            break
        u = mix(grow(u), v)  # v is read by every turn: its adjoint gathers them all
        below(u, 5.0, flag)
    g.result = (u, v)
    return g


def gradients(threads: int) -> tuple[np.ndarray, ...]:
    before = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        x = np.random.default_rng(7).uniform(0.1, 1.0, N)
        g = busy(x, np.ones(1, np.uint32), record=True)
        g()
        seeds = {"result": (np.random.default_rng(1).normal(size=N), np.random.default_rng(2).normal(size=N))}
        grads = eagle.diff.reverse(g.record, seeds, wrt=("x",))
        return grads["x"], *g.result
    finally:
        _core.set_num_threads(before)


def test_the_same_bits_for_one_two_and_four_threads():
    one = gradients(1)
    assert np.all(np.isfinite(one[0])) and np.any(one[0] != 0)
    for threads in (2, 4):
        for a, b in zip(one, gradients(threads), strict=True):
            assert np.array_equal(a, b)
