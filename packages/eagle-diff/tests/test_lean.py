"""A reverse pass derives only what was asked: the gradients toward ``wrt`` from the seeds.

A kernel's reverse takes cotangents only for the outputs on the path to a
seed (the others' are symbolic zeros) and stores gradients only for the
inputs on the path from a ``wrt`` name: a ``Param``'s cross-sample sum
exists only when its gradient is asked for, so a chain of per-sample
kernels reverses as one block-fused run, with one barrier.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import eagle.diff.fused
import hawk
from hawk import Int32, Mutable, Param, Scalar, UInt32
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


def test_a_chain_reversed_toward_its_argument_alone_has_one_barrier(threads, monkeypatch):
    monkeypatch.setattr(eagle.diff.fused, "MAX_STATEMENTS", 1000)  # the whole chain one run
    x = np.linspace(0.5, 1.5, N)
    g = chain(x.copy(), record=True)
    g()
    seed = np.linspace(1.0, 2.0, N)
    toward_x = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))
    assert barriers(g.record) == (1 if threads > 1 else 0)
    # asking for the Params too adds their sums, all in the one phase of the one fused reverse
    # (its final phase only stores their cells, as one small item), and leaves x's gradient bit
    # for bit as it was
    params = tuple(f"x[{k}].{'c' if k % 2 == 0 else 'd'}" for k in range(10))  # by the name they rebind
    g.record._passes.clear()
    everything = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x", *params))
    assert barriers(g.record) == (1 if threads > 1 else 0)
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


@hawk.kernel
def mix(a: Scalar, b: Scalar, w: Param) -> Scalar:
    return 0.5 * a * b + w * hm.exp(0.1 * a)


@hawk.kernel
def nudge(x: Mutable[Scalar], y: Scalar, p: Param) -> None:
    x = x * p + 0.1 * y * y


@hawk.kernel
def spin(v: Scalar, t: Param) -> Scalar:
    return v[0] * hm.cos(t) - v[1] * hm.sin(t) + v[2] * v[0]


@hawk.kernel
def hop(x: Scalar, k: Param[Int32]) -> Scalar:
    return x * hm.float64(k) * 0.5


@eagle.Graph.builder
def tangle(x, y, v, record=False):
    """Inputs read by several kernels of one run (and twice by one), a Mutable rewritten and read
    again, a plane of three values per sample, Params on the way (an integer one too)."""
    g = eagle.Graph(record=record)
    a = mix(x, y, 0.3)
    b = mix(a, x, 0.7)
    nudge(y, b, 1.1)
    c = mix(y, y, 0.2)
    d = spin(v, 0.4)
    e = mix(c, d, 0.9)
    nudge(e, a, 0.8)
    g.result = hop(mix(e, b, 0.1), 3)
    return g


@pytest.mark.parametrize("cap", [1000, 24])
def test_a_fused_reverse_gives_the_unfused_bits(threads, cap, monkeypatch):
    """The whole graph as one run, and cut into runs of a few kernels by the size cap."""
    monkeypatch.setattr(eagle.diff.fused, "MAX_STATEMENTS", cap)
    rng = np.random.default_rng(3)
    args = {"x": rng.uniform(0.5, 1.5, N), "y": rng.uniform(0.5, 1.5, N), "v": rng.uniform(-1, 1, (3, N))}
    g = tangle(**{k: a.copy() for k, a in args.items()}, record=True)
    g()
    seed = rng.standard_normal(N)
    params = tuple(n for n in g.record.names if "." in n)
    assert len(params) == 8
    for wrt in (("x",), ("x", "y", "v"), ("y", *params)):
        fused = eagle.diff.reverse(g.record, {"result": seed}, wrt=wrt)
        alone = eagle.diff.reverse(g.record, {"result": seed}, wrt=wrt, fuse=False)
        assert set(fused) == set(wrt) and all(np.isfinite(fused[name]).all() for name in wrt)
        for name in wrt:
            np.testing.assert_array_equal(fused[name], alone[name])
    # one run: the fused reverse launches one vjp kernel, the unfused one per kernel on the path
    launches = {key[-1]: [] for key in g.record._passes}
    for key, reverse_pass in g.record._passes.items():
        launches[key[-1]].append(vjp_launches(reverse_pass))
    assert min(launches[False]) >= 8
    assert launches[True] == [1, 1, 1] if cap == 1000 else 1 < min(launches[True]) < min(launches[False])


def vjp_launches(reverse_pass) -> int:
    return sum(isinstance(kept, hawk.KernelBound) for kept in reverse_pass.ctx.keep)


@hawk.kernel
def ease(x: Scalar, y: Scalar) -> Scalar:
    return 0.8 * x + 0.2 * y


@hawk.kernel
def under(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(lim > s))  # samples still under the limit


@eagle.Graph.builder
def relaxing(x, flag, record=False):
    g = eagle.Graph(record=record)
    y = shift(x, 0.5)
    for _ in range(12):  # capped: the guard's sum leaves early
        if not flag:
            break
        x = shift(scale(ease(x, y), 1.01), 0.2)
        under(x, 1.6, flag)
    g.result = x
    return g


def test_a_loop_turn_reverses_fused_with_the_unfused_bits(threads):
    rng = np.random.default_rng(4)
    g = relaxing(rng.uniform(0.5, 1.0, N), np.ones(1, np.uint32), record=True)
    g()
    assert 1 < g.record._forward.tapes[0].turns < 12
    seed = rng.standard_normal(N)
    for wrt in (("x",), ("x", *(n for n in g.record.names if "." in n))):
        fused = eagle.diff.reverse(g.record, {"result": seed}, wrt=wrt)
        alone = eagle.diff.reverse(g.record, {"result": seed}, wrt=wrt, fuse=False)
        for name in wrt:
            np.testing.assert_array_equal(fused[name], alone[name])
    # the turn's three kernels reverse as one vjp kernel (and the shift before the loop alone)
    launches = sorted((key[-1], vjp_launches(p)) for key, p in g.record._passes.items())
    assert launches == [(False, 4), (False, 4), (True, 2), (True, 2)]


@hawk.kernel
def blend(a: Scalar, b: Scalar, w: Param) -> Scalar:
    return 0.5 * a * b + w * a


@eagle.Graph.builder
def algebraic(x, y, record=False):
    g = eagle.Graph(record=record)
    a = blend(x, y, 0.3)
    nudge(y, a, 1.1)
    b = scale(ease(blend(y, x, 0.7), a), 0.9)
    g.result = blend(b, b, 0.2)
    return g


def test_a_fused_reverse_kernel_is_its_ir_as_the_reference_evaluates_it():
    """The one generated function of a fused run, compiled, against hawk's NumPy evaluator of its
    IR (arithmetic only: libm's transcendental functions are not NumPy's)."""
    rng = np.random.default_rng(5)
    g = algebraic(rng.uniform(0.5, 1.5, N), rng.uniform(0.5, 1.5, N), record=True)
    g()
    params = tuple(n for n in g.record.names if "." in n)
    eagle.diff.reverse(g.record, {"result": rng.standard_normal(N)}, wrt=("x", *params))
    (reverse_pass,) = g.record._passes.values()
    bounds = [kept for kept in reverse_pass.ctx.keep if isinstance(kept, hawk.KernelBound)]
    assert 1 < len(bounds) < 5  # runs of the size cap, each one function
    sums = 0
    for bound in bounds:
        kernel = bound.plan.source
        inputs = bound.args[:len(kernel.params)]
        compiled, reference = kernel(*inputs), kernel.reference(*inputs)
        assert set(compiled) == set(reference)
        sums += sum(compiled[name].shape == (1,) for name in compiled)
        for name in compiled:
            np.testing.assert_array_equal(compiled[name], reference[name])
    assert sums == len(params) == 5  # every Param's gradient: a sum of one of the functions
