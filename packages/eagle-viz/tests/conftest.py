"""The graphs the pictures are tested on, and the switch that turns skips into failures.

The nox ``viz`` session sets EAGLE_VIZ_STRICT=1: there matplotlib and Graphviz's
``dot`` are installed, and a test that would skip for want of them fails instead.
"""

from __future__ import annotations

import os
import shutil
from functools import partial
from typing import Any

import numpy as np
import pytest

import eagle
import hawk
from eagle._regions import SignalAfter, Wait
from eagle.graph import opaque
from eagle.native import Library, compile_library
from eagle.plan import Plan
from hawk import Mutable, Param, Scalar, UInt32

STRICT = os.environ.get("EAGLE_VIZ_STRICT") == "1"

KERNELS_C = r"""
#include "eagle/eagle.h"

/* x[i] *= c */
void viz_scale(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr, c = a[1].f64;
    for (int64_t i = b; i < e; ++i) x[i] *= c;
}

/* out[i] = x[i] + y[i] */
void viz_add(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *x = a[0].ptr, *y = a[1].ptr;
    double *out = a[2].ptr;
    for (int64_t i = b; i < e; ++i) out[i] = x[i] + y[i];
}
"""


def need(what: str, found: object) -> None:
    """Skip without ``what``, or fail under EAGLE_VIZ_STRICT=1."""
    if found:
        return
    if STRICT:
        pytest.fail(f"{what} is missing, and the viz session (EAGLE_VIZ_STRICT=1) runs every picture test")
    pytest.skip(f"{what} is not installed")


@pytest.fixture
def mpl() -> Any:
    """matplotlib, the plot extra."""
    try:
        import matplotlib
    except ImportError:
        matplotlib = None
    need("matplotlib (eagle-viz[plot])", matplotlib)
    return matplotlib


@pytest.fixture
def dot() -> str:
    """The path of Graphviz's dot."""
    path = shutil.which("dot")
    need("Graphviz's dot", path)
    return path


class Kernels:
    """Plans over two tiny C kernels: drawn as kernel boxes."""

    def __init__(self) -> None:
        lib = Library(compile_library(KERNELS_C, name="viz_test_kernels"))
        self.scale = Plan(lib.kernel("viz_scale"), [("state", "readwrite"), ("c", "value")], name="scale")
        self.add = Plan(lib.kernel("viz_add"), [("a", "read"), ("b", "read"), ("out", "write")], name="add")


@pytest.fixture(scope="session")
def kernels() -> Kernels:
    return Kernels()


def seed_001_graph() -> eagle.Graph:
    """Seed 001's "Seeing your graph": seed, then left and right, then combine under a skip guard.

    The nodes are opaque ops (ufunc partials), which the seed draws dashed.
    """
    x0 = np.arange(8.0)
    x, left_out, right_result, total = (np.zeros(8) for _ in range(4))
    flag = np.zeros(1, np.uint32)
    g = eagle.Graph()
    g.add_node(opaque(partial(np.copyto, x, x0), reads={"x0": x0}, writes={"x": x}), name="seed")
    g.add_group([opaque(partial(np.multiply, x, 2.0, out=left_out), reads={"x": x},
                        writes={"left_out": left_out}),
                 opaque(partial(np.add, x, 1.0, out=right_result), reads={"x": x},
                        writes={"right_result": right_result})], names=["left", "right"])
    combine = opaque(partial(np.add, left_out, right_result, out=total),
                     reads={"left_out": left_out, "right_result": right_result}, writes={"total": total})
    g.add_node(eagle.skippable(combine, eagle.SkipGuard.nonzero(flag)), name="combine")
    return g


def seed_002_graph() -> eagle.Graph:
    """Seed 002's "Record": l and r fork off x, join waits for both (Python functions)."""
    x, left, right, out = np.arange(4.0), np.zeros(4), np.zeros(4), np.zeros(4)

    def run_l():
        left[:] = 2 * x

    def run_r():
        right[:] = x + 1

    def run_join():
        out[:] = left + right

    g = eagle.Graph()
    g.add_group([opaque(run_l, reads={"x": x}, writes={"a": left}),
                 opaque(run_r, reads={"x": x}, writes={"b": right})], names=["l", "r"])
    g.add_node(opaque(run_join, reads={"a": left, "b": right}, writes={"out": out}), name="join")
    return g


def step_graph(k: Kernels) -> eagle.Graph:
    """A step as the builder would record it: a fork of kernel chains, a device loop, a guard, a sum."""
    n = 64
    pos, vel, force, energy, total = np.zeros(n), np.ones(n), np.zeros(n), np.zeros(n), np.zeros(1)
    residual = np.zeros(n)
    more, skip = np.ones(1, np.uint32), np.zeros(1, np.uint32)
    g = eagle.Graph()
    g.add(k.scale.bind(pos, 1.0), name="load")
    g.add_group([[k.add.bind(pos, vel, force), k.scale.bind(force, 0.5)],
                 opaque(lambda: np.multiply(vel, vel, out=energy), reads={"vel": vel},
                        writes={"energy": energy}),
                 k.add.bind(pos, pos, residual)],
                names=[["forces", "damp"], "kinetic", "residual"])

    def relax() -> None:
        np.multiply(residual, 0.5, out=residual)
        more[0] = np.abs(residual).max() > 1e-3

    g.add_node(eagle.repeat_while(opaque(relax, reads={"residual": residual},
                                         writes={"residual": residual, "more": more}), more, 8), name="relax")
    g.add_node(eagle.skippable(k.add.bind(force, residual, pos).launch, eagle.SkipGuard.nonzero(skip)),
               name="correct")
    g.add_node(eagle.reduce(energy, total), name="total")
    return g


def builder_graph(k: Kernels) -> eagle.Graph:
    """What the builder records, made by hand: a fork with a wait, a device loop, a match."""
    n = 64
    pos, vel, force, damped, energy = np.zeros(n), np.ones(n), np.zeros(n), np.zeros(n), np.zeros(n)
    total, more, mode = np.zeros(1), np.ones(1, np.uint32), np.zeros(1, np.uint32)
    node = eagle.graph.Node
    forces = node("signal_after", SignalAfter(node("plan", k.add.bind(pos, vel, force))))
    g = eagle.Graph()
    g.add(k.scale.bind(pos, 1.0), name="load")
    g.add_group([[forces, k.add.bind(force, vel, damped)],
                 [eagle.graph.Node("wait", Wait(forces, "out")), k.add.bind(force, vel, energy)]],
                names=[["forces", "damp"], ["wait", "kinetic"]])

    def converged() -> None:
        more[0] = 0

    relax = eagle.Body([eagle.graph.Node("plan", k.scale.bind(pos, 0.9)),
                        opaque(converged, reads={"pos": pos}, writes={"more": more})])
    g.add_node(eagle.graph.Node("device_loop", eagle.DeviceLoop(more, "while", 50, relax)), name="relax")
    arms = {0: eagle.Body([eagle.graph.Node("plan", k.add.bind(pos, damped, pos))]),
            1: eagle.Body([eagle.graph.Node("plan", k.scale.bind(damped, 0.25)),
                           eagle.graph.Node("plan", k.add.bind(pos, damped, pos))])}
    default = eagle.Body([opaque(partial(np.copyto, pos, 0.0), writes={"pos": pos})])
    g.add_node(eagle.graph.Node("device_switch", eagle.DeviceSwitch(mode, arms, default)), name="integrate")
    g.add_node(eagle.reduce(energy, total), name="total")
    return g


@hawk.kernel
def forces(x: Scalar, v: Scalar) -> Scalar:
    return -4.0 * x - 0.5 * v


@hawk.kernel
def advance(x: Mutable[Scalar], a: Scalar, dt: Param) -> None:
    x = x + dt * a


@hawk.kernel
def moving(x: Scalar, flag: Mutable[UInt32]) -> None:
    flag = hawk.math.uint32(hawk.sum(abs(x) > 1e-3))


@hawk.kernel
def kinetic(v: Scalar) -> Scalar:
    return 0.5 * v * v


@hawk.kernel
def halve(x: Scalar) -> Scalar:
    return 0.5 * x


@eagle.Graph.builder
def recorded(x, v, more, mode):
    """A graph the builder records: a fork with a wait, a capped device loop, a match."""
    g = eagle.Graph()
    with g.parallel() as p:
        with p.branch() as b:
            a = forces(x, v)
        with p.branch() as w:
            w.wait(a)
            e = kinetic(a)
    for _ in range(50):
        if not more:
            break
        advance(x, a, 0.01)
        moving(x, more)
    match mode:
        case 0:
            e = halve(e)
        case 1:
            e = kinetic(e)
        case _:
            pass
    g.result = e
    return g


@eagle.Graph.builder
def in_bodies(x, v, more):
    """Links inside a device loop's body: a fork whose second branch waits for the first, a plane
    read two nodes on, and one carried into the next turn."""
    g = eagle.Graph()
    a = forces(x, v)
    for _ in range(20):
        if not more:
            break
        with g.parallel() as p:
            with p.branch():
                e = kinetic(a)
            with p.branch() as w:
                w.wait(e)
                h = halve(a)
        a = forces(e, h)
        a = halve(a)
        a = forces(a, e)
        moving(a, more)
    g.result = a
    return g


def in_bodies_graph() -> eagle.Graph:
    n = 64
    return in_bodies(np.ones(n), np.zeros(n), np.ones(1, np.uint32))


def recorded_graph() -> eagle.Graph:
    n = 64
    return recorded(np.ones(n), np.zeros(n), np.ones(1, np.uint32), np.zeros(1, np.uint32))


def wide_fork(branches: int = 12) -> eagle.Graph:
    """One source, ``branches`` opaque ops side by side, one sink."""
    x, outs, total = np.zeros(4), [np.zeros(4) for _ in range(branches)], np.zeros(4)
    g = eagle.Graph().add_node(opaque(partial(np.copyto, x, 1.0), writes={"x": x}), name="source")
    g.add_group([opaque(partial(np.add, x, float(i), out=o), reads={"x": x}, writes={f"out{i}": o})
                 for i, o in enumerate(outs)], names=[f"branch_{i}" for i in range(branches)])
    g.add_node(opaque(partial(np.copyto, total, 0.0), reads={f"out{i}": o for i, o in enumerate(outs)},
                      writes={"total": total}), name="sink")
    return g


def chain(length: int = 200) -> eagle.Graph:
    """``length`` Python nodes, each passing one plane to the next."""
    planes = [np.zeros(2) for _ in range(length + 1)]
    g = eagle.Graph()
    for i in range(length):
        src, dst = planes[i], planes[i + 1]
        g.add_node(opaque(lambda s=src, d=dst: np.add(s, 1.0, out=d), reads={f"p{i}": src},
                          writes={f"p{i + 1}": dst}), name=f"node_{i}")
    return g


def skipping_graph() -> eagle.Graph:
    """A plane passed over a stage (a long link), a WAR-only link, tags and a long name."""
    a, b, c = np.zeros(4), np.zeros(4), np.zeros(4)
    g = eagle.Graph(record=True)
    g.add_node(opaque(partial(np.copyto, a, 1.0), writes={"a": a}), name="produce")
    g.add_node(opaque(lambda: None, reads={"b": b}, stream=object()),
               name="a_rather_long_node_name_for_a_box")
    g.add_node(opaque(partial(np.copyto, b, 2.0), writes={"b": b}, eager=True), name="overwrite")
    g.add_node(opaque(partial(np.add, a, b, out=c), reads={"a": a, "b": b}, writes={"c": c}), name="use")
    return g


class Graphs:
    """The test graphs, made fresh on each call (tests import no helper module: importlib mode)."""

    def __init__(self, kernels: Kernels) -> None:
        self.seed_001, self.seed_002 = seed_001_graph, seed_002_graph
        self.wide_fork, self.chain, self.skipping = wide_fork, chain, skipping_graph
        self.step = lambda: step_graph(kernels)
        self.builder = lambda: builder_graph(kernels)
        self.recorded = recorded_graph
        self.in_bodies = in_bodies_graph


@pytest.fixture(scope="session")
def graphs(kernels: Kernels) -> Graphs:
    return Graphs(kernels)


@pytest.fixture(params=["seed_001", "seed_002", "step", "builder", "recorded", "in_bodies", "wide_fork",
                        "chain", "skipping"])
def any_graph(request: pytest.FixtureRequest, graphs: Graphs) -> eagle.Graph:
    """Every test graph in turn (the chain 30 long)."""
    return graphs.chain(30) if request.param == "chain" else getattr(graphs, request.param)()
