"""A recorded forward fuses and stores only what its reverse reads; the reverse recomputes the rest.

The temporaries a fused run keeps in registers are recomputed by the fused
reverse of the same run, or, where the pass reverses the kernels otherwise
(``fuse=False``, a ``wrt`` that starts inside the run), by the kernels run
again on arrays of the pass.  Either way the gradients have the bits of a
forward built unfused (``EAGLE_FUSE=0``), which stores every plane, for any
number of threads.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle import _core, extend
from eagle.diff.steps import place
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

N = 3000


@hawk.kernel
def bend(x: Scalar, c: Param, d: Param) -> Scalar:
    return c * x + hm.sin(d * x)


@hawk.kernel
def guard(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(hm.abs(s) < lim))  # the loop goes on while some sample is below


@hawk.kernel
def damp(x: Mutable[Scalar], c: Param) -> None:
    x = x * c


@eagle.Graph.builder
def chain(x, record=False):
    g = eagle.Graph(record=record)
    for k in range(16):
        x = bend(x, 1.0 + 0.01 * k, 0.25)
    g.result = x
    return g


@eagle.Graph.builder
def mixed(x, y, flag, record=False):
    g = eagle.Graph(record=record)
    a = bend(bend(x, 1.5, 0.1), 1.0, 0.5)
    b = bend(bend(y[y.size // 2:], 0.5, 0.2), 1.0, 0.25)  # a view of an argument
    damp(a, 0.9)  # a Mutable ends what can be left unstored
    c = bend(bend(a, 1.0, 0.3), 1.1, 0.0)
    for _ in range(3):  # a device loop reads c: it stays stored
        if not flag:
            break
        c = bend(c, 1.0, 0.1)
        guard(c, 1e30, flag)
    g.result = (bend(bend(c, 1.0, 0.2), 0.7, 0.0), bend(b, 1.0, 0.4))
    return g


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"threads{n}")
def team(request: pytest.FixtureRequest):
    before = _core.num_threads()
    _core.set_num_threads(request.param)
    yield request.param
    _core.set_num_threads(before)


def recorded(build, arrays, monkeypatch, fuse: bool) -> eagle.Graph:
    monkeypatch.setenv("EAGLE_FUSE", "1" if fuse else "0")
    g = build(**{k: v.copy() for k, v in arrays.items()}, record=True)
    monkeypatch.delenv("EAGLE_FUSE")
    return g


def gradients(g, seeds, wrt, fuse=True):
    g()
    return eagle.diff.reverse(g.record, seeds, wrt=wrt, fuse=fuse)


def same(a, b) -> None:
    for name in a:
        for x, y in zip(eagle.extend.flatten(a[name]), eagle.extend.flatten(b[name]), strict=True):
            np.testing.assert_array_equal(x, y)


def unstored(g) -> list[np.ndarray]:
    """The temporaries the fused forward does not store."""
    missing = g.record._forward.unstored
    return [a for a in extend.view(g).temporaries if place(a) in missing]


def test_the_fused_forward_leaves_temporaries_unstored_and_the_gradients_keep_their_bits(team, monkeypatch):
    x = np.linspace(0.5, 1.5, N)
    seeds = {"result": np.linspace(1.0, 2.0, N)}
    g = recorded(chain, {"x": x}, monkeypatch, fuse=True)
    stored = recorded(chain, {"x": x}, monkeypatch, fuse=False)
    assert g.fused and not stored.fused
    dropped = unstored(g)
    assert dropped and not unstored(stored)
    for a in dropped:
        a[...] = np.nan  # the run must not write them, nor the reverse read them
    want = gradients(stored, seeds, ("x", "x[6].c"))
    got = gradients(g, seeds, ("x", "x[6].c"))
    assert all(np.isnan(a).all() for a in dropped)
    same(got, want)
    same(gradients(g, seeds, ("x", "x[6].c"), fuse=False), want)  # every kernel reads values again
    g()
    extend.state(g)["names"].arguments["x"][...] = 7.0  # the argument's snapshot is taken after the run
    same(eagle.diff.reverse(g.record, seeds, wrt=("x", "x[6].c")), want)
    np.testing.assert_array_equal(g.result, stored.result)


def test_a_wrt_inside_a_fused_run_recomputes_the_values_before_it(team, monkeypatch):
    x = np.linspace(0.5, 1.5, N)
    seeds = {"result": np.linspace(1.0, 2.0, N)}
    g = recorded(chain, {"x": x}, monkeypatch, fuse=True)
    stored = recorded(chain, {"x": x}, monkeypatch, fuse=False)
    for wrt in (("x[9].d",), ("x[12].c", "x[5].d")):
        same(gradients(g, seeds, wrt), gradients(stored, seeds, wrt))
        same(gradients(g, seeds, wrt, fuse=False), gradients(stored, seeds, wrt))


def test_mutables_views_and_loops_beside_fused_runs_keep_their_bits(team, monkeypatch, gradcheck):
    arrays = {"x": np.linspace(0.5, 1.5, N), "y": np.linspace(-1.0, 1.0, 2 * N),
              "flag": np.ones(1, np.uint32)}
    seeds = {"result": (np.linspace(1.0, 2.0, N), np.linspace(-1.0, 1.0, N))}
    g = recorded(mixed, arrays, monkeypatch, fuse=True)
    stored = recorded(mixed, arrays, monkeypatch, fuse=False)
    assert unstored(g)
    same(gradients(g, seeds, ("x", "y")), gradients(stored, seeds, ("x", "y")))
    same(gradients(g, seeds, ("x", "y"), fuse=False), gradients(stored, seeds, ("x", "y")))
    small = {"x": np.linspace(0.5, 1.5, 6), "y": np.linspace(-1.0, 1.0, 12), "flag": np.ones(1, np.uint32)}
    gradcheck(mixed, small, {"result": (np.ones(6), np.ones(6))}, ("x", "y"))


@eagle.Graph.builder
def forked(x, y, record=False):
    g = eagle.Graph(record=record)
    with g.parallel() as p:
        with p.branch():
            a = bend(bend(bend(x, 1.2, 0.3), 0.9, 0.2), 1.0, 0.1)
        with p.branch():
            b = bend(bend(bend(y, 0.8, 0.4), 1.1, 0.5), 1.0, 0.6)
    g.result = bend(bend(a, 1.0, 0.7), 1.0, 0.0), bend(bend(b, 0.5, 0.8), 1.0, 0.0)
    return g


def test_fork_branches_and_a_bind_keep_the_bits_of_a_forward_built_unfused(team, monkeypatch):
    arrays = {"x": np.linspace(0.5, 1.5, N), "y": np.linspace(-1.0, 1.0, N)}
    seeds = {"result": (np.linspace(1.0, 2.0, N), np.linspace(-1.0, 1.0, N))}
    wrt = ("x", "y", "bend[1].d")
    g = recorded(forked, arrays, monkeypatch, fuse=True)
    stored = recorded(forked, arrays, monkeypatch, fuse=False)
    assert unstored(g)
    same(gradients(g, seeds, wrt), gradients(stored, seeds, wrt))
    moved = {k: v + 0.25 for k, v in arrays.items()}
    g.bind(**{k: v.copy() for k, v in moved.items()})  # lowered again: a new Record, recomputed the same way
    stored.bind(**{k: v.copy() for k, v in moved.items()})
    assert unstored(g)
    same(gradients(g, seeds, wrt), gradients(stored, seeds, wrt))
    same(gradients(g, seeds, wrt, fuse=False), gradients(stored, seeds, wrt))
