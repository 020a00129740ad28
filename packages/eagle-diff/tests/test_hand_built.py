"""Hand-built graphs with record=True: plane names, Params, opaque nodes with vjps, forks,
reduce and copy nodes, skippable and repeat_while steps, plans of a plain C library."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle.graph import SkipGuard, opaque, repeat_while, skippable
from eagle.native import compile_library
from eagle.plan import Plan
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

N = 6


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def wave(v: Scalar) -> Scalar:
    return hm.sin(v) * v


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def grow(x: Mutable[Scalar], a: Param, flag: Mutable[UInt32]) -> None:
    x = a * x + 0.1 * hm.sin(x)
    flag = hm.uint32(hawk.sum(x < 20.0))


def ramp(lo: float, hi: float, n: int = N) -> np.ndarray:
    return np.linspace(lo, hi, n)


def make(x: np.ndarray, a: float = 2.0, record: bool = False) -> tuple[eagle.Graph, dict[str, np.ndarray]]:
    """affine -> an opaque square -> a fork (wave | dbl) -> a sum and a copy."""
    g = eagle.Graph(record=record)
    first = affine.plan(x, a, 0.5)
    g.add(first, name="aff")
    y = first.outputs[0]
    z = np.zeros(N)
    g.add_node(opaque(lambda: np.multiply(y, y, out=z), reads={"y": y}, writes={"z": z}), name="sq")
    w, d = wave.plan(z), dbl.plan(y)
    g.add_group([w, d], names=["w", "d"])
    total, kept = np.zeros(1), np.zeros(N)
    g.add_node(eagle.reduce(w.outputs[0], total), name="total")
    g.add_node(eagle.copy(d.outputs[0], into=kept), name="keep")
    g.build()
    return g, {"total": total, "kept": kept}


def square_vjp(primals, cotangents):
    return {"y": 2.0 * primals["y"] * cotangents["z"]}


SEEDS = {"total.out": np.array([1.5]), "into": ramp(1.0, -1.0)}


def loss(x: np.ndarray, a: float = 2.0) -> float:
    g, out = make(x, a)
    g()
    return float(1.5 * out["total"][0] + np.sum(ramp(1.0, -1.0) * out["kept"]))


def test_plane_names_and_the_default_gradients(numeric_gradient):
    x = ramp(0.1, 0.9)
    g, _ = make(x, record=True)
    g()
    assert {"a", "b", "y", "z", "aff.x", "aff.a", "sq.y", "total.out", "keep.into", "into"} <= set(
        g.record.names)
    assert "x" not in g.record.names  # aff's x, d's x and total's x are three arrays
    grads = eagle.diff.reverse(g.record, SEEDS, vjps={"sq": square_vjp})
    assert list(grads) == ["aff.x", "a", "b"]  # the float inputs, then the kernel's Params
    np.testing.assert_allclose(grads["aff.x"], numeric_gradient(lambda v: loss(v["x"]), {"x": x}, "x"),
                               rtol=1e-6)
    a = np.array([2.0])
    by_a = numeric_gradient(lambda v: loss(x, float(v["a"][0])), {"a": a}, "a")
    np.testing.assert_allclose(grads["a"], by_a, rtol=1e-6)
    assert grads["a"].shape == (1,)


def test_an_opaque_node_on_the_path_needs_a_vjp():
    g, _ = make(ramp(0.1, 0.9), record=True)
    g()
    with pytest.raises(TypeError, match=r"node 'sq' \(opaque\) is on the reverse path and has no derivative: "
                                        r"pass vjps=\{'sq': fn\}"):
        eagle.diff.reverse(g.record, SEEDS)
    # off the path (only the copy's branch is seeded) it is not needed
    grads = eagle.diff.reverse(g.record, {"into": np.ones(N)}, wrt=("aff.x",))
    np.testing.assert_allclose(grads["aff.x"], np.full(N, 4.0))


def test_vjps_take_the_place_of_a_kernels_derivative():
    g, _ = make(ramp(0.1, 0.9), record=True)
    g()
    seen = {}

    def fake(primals, cotangents):
        seen.update(primals=sorted(primals), cotangents=sorted(cotangents))
        return {"x": 10.0 * cotangents["out"]}

    grads = eagle.diff.reverse(g.record, {"into": np.ones(N)}, wrt=("aff.x",), vjps={"aff": fake})
    np.testing.assert_array_equal(grads["aff.x"], np.full(N, 20.0))  # 10 * d(2y)/dy
    assert seen == {"primals": ["a", "b", "x"], "cotangents": ["out"]}


def test_what_a_vjp_returns_is_checked():
    g, _ = make(ramp(0.1, 0.9), record=True)
    g()
    with pytest.raises(KeyError, match="the vjp of 'sq' returned gradients for 'z', which the node does not"):
        eagle.diff.reverse(g.record, SEEDS, vjps={"sq": lambda p, c: {"z": c["z"]}})
    with pytest.raises(TypeError, match="the vjp of 'sq' returned list"):
        eagle.diff.reverse(g.record, SEEDS, vjps={"sq": lambda p, c: []})
    with pytest.raises(KeyError, match="vjps names 'nope', which no node of the graph is called"):
        eagle.diff.reverse(g.record, SEEDS, vjps={"nope": square_vjp})


def test_names_that_mean_several_arrays_or_none():
    g, _ = make(ramp(0.1, 0.9), record=True)
    g()
    with pytest.raises(KeyError, match=r"'out' names different arrays in the nodes 'aff', 'd', 'total', 'w': "
                                       r"write '<node label>.out'"):
        eagle.diff.reverse(g.record, {"out": np.ones(N)})
    with pytest.raises(KeyError, match="'t' is not a plane of the graph"):
        eagle.diff.reverse(g.record, {"t": np.ones(N)})
    with pytest.raises(TypeError, match="'a' is a Param, one number: it can be in wrt, not seeded"):
        eagle.diff.reverse(g.record, {"a": np.ones(1)})


def test_an_opaque_node_that_updates_a_plane_in_place():
    x, acc = ramp(0.1, 0.9), ramp(1.0, 2.0)
    g = eagle.Graph(record=True)
    g.add_node(opaque(lambda: np.multiply(acc, x, out=acc), reads={"x": x, "acc": acc}, writes={"acc": acc}),
               name="scale")
    g.build()
    g()
    def scale_vjp(p, c):
        return {"x": c["acc"] * p["acc"], "acc": c["acc"] * p["x"]}

    grads = eagle.diff.reverse(g.record, {"acc": np.ones(N)}, vjps={"scale": scale_vjp})
    np.testing.assert_allclose(grads["acc"], x)  # with respect to acc's value before the run
    np.testing.assert_allclose(grads["x"], ramp(1.0, 2.0))


def test_a_max_reduce_sends_its_adjoint_to_the_largest_sample():
    x, top = np.array([0.3, 0.9, 0.2, 0.5]), np.zeros(1)
    g = eagle.Graph(record=True)
    sq = wave.plan(x)
    g.add(sq, name="w")
    g.add_node(eagle.reduce(sq.outputs[0], top, op="max"), name="top")
    g.build()
    g()
    grads = eagle.diff.reverse(g.record, {"top.out": np.ones(1)}, wrt=("v",))
    expected = np.zeros(4)
    expected[1] = np.cos(0.9) * 0.9 + np.sin(0.9)
    np.testing.assert_allclose(grads["v"], expected)


@pytest.mark.parametrize("skip", [0, 1])
def test_a_skippable_step(skip):
    x, flag = ramp(0.1, 0.9), np.array([skip], np.uint32)
    g = eagle.Graph(record=True)
    w = wave.plan(x)
    g.add(w, name="w")
    g.add_node(skippable(dbl.plan(w.outputs[0]).launch, SkipGuard.nonzero(flag)), name="maybe")
    g.build()
    g()
    grads = eagle.diff.reverse(g.record, {"maybe.out": np.ones(N)}, wrt=("v",))
    derivative = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(grads["v"], np.zeros(N) if skip else 2 * derivative)


def test_a_repeat_while_step_and_its_param(numeric_gradient):
    def run(x0: np.ndarray, a: float, record: bool = False) -> tuple[eagle.Graph, np.ndarray]:
        x, flag = x0.copy(), np.ones(1, np.uint32)
        g = eagle.Graph(record=record)
        g.add_node(repeat_while(grow.plan(x, a, flag).launch, flag, max_iters=40), name="grow")
        g.build()
        g()
        return g, x

    def loss(v):
        return float(np.sum(ramp(1.0, 2.0) * run(v["x"], float(v["a"][0]))[1]))

    x0, a = ramp(0.5, 1.5), np.array([1.5])
    g, _ = run(x0, 1.5, record=True)
    assert g.record._forward.tapes[0].turns > 5
    grads = eagle.diff.reverse(g.record, {"x": ramp(1.0, 2.0)})  # x as it was, and the Param a
    assert list(grads) == ["x", "a"]
    for name in ("x", "a"):  # the Param's adjoint gathers every turn's
        np.testing.assert_allclose(grads[name], numeric_gradient(loss, {"x": x0, "a": a}, name), rtol=1e-6)


SCALE_C = r"""
#include "eagle/eagle.h"
void scale3(int64_t begin, int64_t end, const eagle_arg *args)
{
    const double *x = args[0].ptr;
    double *y = args[1].ptr;
    for (int64_t i = begin; i < end; ++i)
        y[i] = 3.0 * x[i];
}
"""


def test_a_plan_of_a_plain_library_needs_a_vjp():
    plan = Plan.from_library(compile_library(SCALE_C, name="diff_scale3"), "scale3",
                             [("x", "read"), ("y", "write")])
    x, y = ramp(0.1, 0.9), np.zeros(N)
    g = eagle.Graph(record=True)
    g.add(plan.bind(x, y), name="scale3")
    g.build()
    g()
    with pytest.raises(TypeError, match=r"node 'scale3' \(plan\) is on the reverse path and has no"):
        eagle.diff.reverse(g.record, {"y": np.ones(N)})
    grads = eagle.diff.reverse(g.record, {"y": np.ones(N)},
                               vjps={"scale3": lambda p, c: {"x": 3.0 * c["y"]}})
    assert list(grads) == ["x"]
    np.testing.assert_array_equal(grads["x"], np.full(N, 3.0))


@eagle.Graph.builder
def twice(g: eagle.Graph, v):
    return dbl(dbl(v))


def test_a_block_on_a_hand_made_graph():
    src, dst = ramp(0.0, 1.0), np.zeros(N)
    h = eagle.Graph(record=True)
    h.add_node(opaque(lambda: np.add(src, 1.0, out=dst), reads={"x": src}, writes={"y": dst}), name="shift")
    z = twice(h, dst)
    h.build()
    h()
    np.testing.assert_array_equal(z, 4 * (src + 1))
    assert h.node_labels() == ["shift", "dbl", "dbl"]
    with pytest.raises(KeyError, match=r"'dbl.out' names arrays of 2 nodes labelled 'dbl': write "
                                       r"'dbl\[0\].out' ... 'dbl\[1\].out' \(in node order\)"):
        eagle.diff.reverse(h.record, {"dbl.out": np.ones(N)})
    grads = eagle.diff.reverse(h.record, {"dbl[1].out": np.ones(N)},
                               vjps={"shift": lambda p, c: {"x": c["y"]}})
    assert list(grads) == ["shift.x"]  # dbl has an x too
    np.testing.assert_array_equal(grads["shift.x"], np.full(N, 4.0))


def overlapping(base: np.ndarray, write: bool) -> eagle.Graph:
    """o = base[:5] + base[3:], by an opaque node; with ``write``, it also scales base[3:] in place."""
    left, right, out = base[:5], base[3:], np.zeros(5)

    def step() -> None:
        np.add(left, right, out=out)
        if write:
            np.multiply(right, 0.5, out=right)

    g = eagle.Graph(record=True)
    writes = {"o": out, "r": right} if write else {"o": out}
    g.add_node(opaque(step, reads={"l": left, "r": right}, writes=writes), name="overlap")
    g.build()
    g()
    return g


def test_planes_that_overlap_and_are_only_read_each_add_their_part(numeric_gradient):
    g = overlapping(ramp(0.1, 0.9, 8), write=False)
    grads = eagle.diff.reverse(g.record, {"o": np.ones(5)}, vjps={"overlap": lambda p, c: {"l": c["o"],
                                                                                         "r": c["o"]}})
    # a name is its memory: base[3:5] is read through both planes
    expected = numeric_gradient(lambda a: float(np.sum(a["b"][:5] + a["b"][3:])), {"b": ramp(0.1, 0.9, 8)},
                                "b")
    np.testing.assert_allclose(grads["l"], expected[:5], rtol=1e-6)
    np.testing.assert_allclose(grads["r"], expected[3:], rtol=1e-6)


def test_a_node_reading_one_view_and_writing_another_of_one_memory():
    g = overlapping(ramp(0.1, 0.9, 8), write=True)
    with pytest.raises(ValueError, match=r"node 'overlap' reads overlap\.l and writes overlap\.r, which "
                                         r"share memory without being one view of it: write the result to"):
        eagle.diff.reverse(g.record, {"o": np.ones(5)},
                           vjps={"overlap": lambda p, c: {"l": c["o"], "r": c["o"]}})
