"""
The graph model: ``eagle.Graph``
================================

A real step is rarely one kernel.  It is a propagation, then a diagnostic,
then maybe a branch that only some runs take, and two pieces of work that
have nothing to do with each other and could happen at the same time.
:class:`eagle.Graph` is where you write that down once and let eagle run it.

You add *nodes*.  You never draw the *edges* between them: eagle reads which
arrays each node touches and works the ordering out for itself.  That is the
one idea to carry through the page.  (:doc:`getting_started` writes the same
graphs from plain Python with ``@eagle.Graph.builder``, which records into
an ``eagle.Graph`` like the ones made by hand here.)

Built today: the CPU backend, on NumPy arrays.  The GPU backend (a captured
CUDA graph when the planes are CuPy arrays) is not built yet.
"""

# %%
# Your first graph
# ----------------
#
# ``add_node`` takes a node; ``build()`` looks at where the planes live,
# derives the edges, refuses anything unsafe and lowers the graph;
# ``launch()`` runs it, ``launch(n)`` runs it ``n`` times.  Every method
# returns the graph, so a build reads as one chain.

import numpy as np

import eagle
from eagle.graph import opaque

x, y, z = np.arange(8.0), np.zeros(8), np.zeros(8)
g = eagle.Graph()
g.add_node(opaque(lambda: np.multiply(x, 2.0, out=y), reads={"x": x}, writes={"y": y}), name="double")
g.add_node(opaque(lambda: np.add(y, 1.0, out=z), reads={"y": y}, writes={"z": z}), name="shift")
g.build().launch()
print(z)

# %%
# Nodes
# -----
#
# Plan launches
# ^^^^^^^^^^^^^
#
# ``Graph.add(bound_plan, name=...)`` appends one kernel launch: a
# :class:`~eagle.plan.BoundPlan`, which a hawk kernel gives with
# ``kernel.plan(*args)`` (its outputs in ``bound.outputs``), and
# ``eagle.plan.Plan(...).bind(...)`` gives for any native kernel.  Its planes
# are the arrays you bound, each with its role in the kernel (read, write or
# both).

import hawk
from hawk import Mutable, Param, Scalar


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def scale(v: Mutable[Scalar], c: Param):
    v = c * v


x = np.arange(8.0)
bound = affine.plan(x, 2.0, 1.0)
g = eagle.Graph().add(bound, name="affine").build().launch()
print(bound.outputs)

# %%
# A plane that a kernel could only use after a copy (a non-contiguous or
# sample-major array) is refused when it is added: a graph must see the very
# array you hold.

try:
    eagle.Graph().add(affine.plan(np.zeros((8, 2))[:, 0], 2.0, 1.0))
except (TypeError, ValueError) as err:
    print(f"{type(err).__name__}: {err}")

# %%
# Fork and join
# ^^^^^^^^^^^^^
#
# ``Graph.add_group([branch, branch, ...])`` is a stage whose branches may
# run at the same time; the next node waits for all of them.  A branch is a
# plan, a node, or a list of them (run in order inside the branch).

u, v = np.ones(1024), np.ones(1024)
g = eagle.Graph()
g.add_group([[scale.plan(u, 2.0), scale.plan(u, 3.0)], scale.plan(v, 0.5)], names=[["u2", "u3"], "v"])
g.build().launch()
print(u[:3], v[:3], g.schedule)

# %%
# Conditionals
# ^^^^^^^^^^^^
#
# ``eagle.skippable(step, guard)`` runs ``step`` unless the guard says skip;
# ``eagle.repeat_while(step, guard, max_iters)`` repeats it while a one-cell
# ``uint32`` plane is non-zero, at most ``max_iters`` turns.  The guard is
# read at every replay.  The step is a node (an ``opaque`` op or a plan
# launch's node), with its planes declared.

count = np.zeros(1)
skip = np.zeros(1, np.uint32)
turns = np.array([3], np.uint32)


def tick():
    count[0] += 1


def countdown():
    turns[0] -= 1


g = eagle.Graph()
g.add_node(eagle.skippable(opaque(tick, writes={"count": count}), eagle.SkipGuard.nonzero(skip)),
           name="tick")
g.add_node(eagle.repeat_while(opaque(countdown, reads={"turns": turns}, writes={"turns": turns}), turns, 10),
           name="countdown")
g.build().launch()
skip[0] = 1
g.launch()
print(count, turns)

# %%
# Reductions
# ^^^^^^^^^^
#
# ``eagle.reduce(x, out, op="sum")`` adds up (or takes the ``"max"`` or the
# ``"all"`` of) a 1-D plane into a one-element plane.  It reads ``x`` and
# writes ``out``, so the node that produced ``x`` comes before it and a node
# that reads ``out`` after it.  A floating-point sum always adds in the same
# fixed order, so the answer does not change with the number of threads
# (:doc:`determinism`).

x = np.linspace(0.0, 1.0, 100_001)
total = np.zeros(1)
energy = affine.plan(x, 0.5, 0.0)
g = eagle.Graph().add(energy, name="energy")
g.add_node(eagle.reduce(energy.outputs[0], total), name="total").build().launch()
print(total, g.edges())

# %%
# Your own code in the graph
# ^^^^^^^^^^^^^^^^^^^^^^^^^^
#
# ``eagle.graph.opaque(fn, reads=..., writes=...)`` wraps any zero-argument
# callable.  *You declare which arrays it touches*; eagle still works out the
# edges, and the conflict check covers what you declared.  Name the planes
# with a dict and they show up by name in every message and picture.  An
# array the function touches but you did not declare is invisible to the
# conflict check, so declare them all.
#
# On the CPU every opaque node is a plain call, in graph order, with the
# interpreter lock held while it runs.  ``opaque(fn, stream=S)`` and
# ``opaque(fn, eager=True)`` name how a node should run on the GPU; on the
# CPU they run the same way and the picture tags them.

a, b = np.zeros(4), np.zeros(4)
g = eagle.Graph()
g.add_node(opaque(lambda: a.fill(1.0), writes={"a": a}), name="fill")
g.add_node(opaque(lambda: np.add(a, 1.0, out=b), reads={"a": a}, writes={"b": b}, eager=True), name="host")
print(g.build())

# %%
# How the edges are found
# -----------------------
#
# For every pair of nodes eagle asks, on your own arrays, whether they share a
# byte:
#
# =====  =================================================================
# Edge   Meaning
# =====  =================================================================
# RAW    *data flows*: read after write.  The only kind a reverse pass
#        follows.
# WAR    *must wait to overwrite*: write after read.
# WAW    *same output*: write after write.
# =====  =================================================================
#
# The test is stride-aware: two column views of one ``(n, 2)`` matrix do not
# overlap; a view of the tail of an array overlaps the array.  It is exact up
# to a work cap and says *overlap* past it, which can only add an edge or
# refuse a graph, never miss a conflict.  ``g.edges()`` returns
# ``Edge(src, dst, plane, kind)``, indices into ``g.node_labels()``, before or
# after ``build()``.

m = np.zeros((8, 2))
col0, col1, tail = m[:, 0], m[:, 1], m[4:]
g = eagle.Graph()
g.add_node(opaque(lambda: col0.fill(1.0), writes={"col0": col0}), name="w0")
g.add_node(opaque(lambda: col1.fill(2.0), writes={"col1": col1}), name="w1")
g.add_node(opaque(lambda: None, reads={"tail": tail}), name="r_tail")
g.add_node(opaque(lambda: col0.fill(3.0), writes={"col0": col0}), name="w0_again")
labels = g.node_labels()
for e in g.edges():
    print(f"{labels[e.src]:>6} -> {labels[e.dst]:<8} {e.kind} on {e.plane!r}: {e.meaning}")

# %%
# What is refused
# ---------------
#
# Each refusal is an exception whose message starts with the API it came from
# and says what to change:
#
# * two branches of one group where one writes what the other touches
#   (:class:`eagle.SiblingRace`, a ``ValueError``);
# * a plane that would need a copy, at ``add`` (above);
# * a derivative (vjp/jvp) kernel added directly: it enters a graph only
#   through ``eagle.diff``;
# * a graph that mixes host and device planes;
# * an empty graph, a second build, adding to a built graph.

w = np.zeros(16)


def attempt(label, f):
    try:
        f()
    except Exception as err:
        print(f"{label}:\n  {type(err).__name__}: {err}\n")


attempt("siblings that race", lambda: eagle.Graph().add_group(
    [scale.plan(w, 2.0), scale.plan(w, 3.0)], names=["left", "right"]).build())
attempt("an empty graph", lambda: eagle.Graph().build())
built = eagle.Graph().add(scale.plan(w, 2.0)).build()
attempt("a second build", built.build)
attempt("adding to a built graph", lambda: built.add(scale.plan(w, 2.0)))

# %%
# Build, launch, and what you get
# -------------------------------
#
# ``build(backend=None)`` infers the backend from the planes
# (``backend="cpu"`` states it).  ``g.backend`` is ``"cpu"``, or ``None``
# before the build.  ``launch(n)`` replays and waits; ``enqueue(n)`` replays
# without waiting and ``synchronize()`` waits (on the CPU ``enqueue`` returns
# when the replay is done).  ``g.schedule`` says how each stage runs.
#
# CPU schedules
# ^^^^^^^^^^^^^
#
# On the CPU a stage runs one of two ways, and ``build`` picks per stage:
#
# * ``"work_share"``: the stage's nodes run one after another, each node's
#   samples cut into fixed blocks across the whole thread team.  Every plain
#   (non-fork) stage runs this way.
# * ``"branch_tasks"``: the branches of a fork run at the same time, each
#   branch's nodes in order on one thread, in one native call.  This is the
#   right shape for small batches, where a team barrier per node costs more
#   than the node.
#
# The choice is a fixed rule, evaluated at ``build`` with the team size of
# that moment: ``branch_tasks`` when the stage is a fork with at least two
# branches, the host team has at least two threads, there are at most
# ``eagle._core.BRANCH_TASKS_MAX_SAMPLES`` samples, and every node is a
# native kernel launch; otherwise ``work_share``.  A branch holding a
# conditional or your own Python always work-shares.  Both schedules, and any
# number of threads, give bit-identical results.

from eagle import _core

print("threads:", eagle.get_num_threads(), "- branch_tasks up to", _core.BRANCH_TASKS_MAX_SAMPLES, "samples")
for n in (1024, 1 << 16):
    p, q = np.ones(n), np.ones(n)
    g = eagle.Graph().add_group([scale.plan(p, 2.0), scale.plan(q, 2.0)]).build()
    print(n, "samples:", g.schedule)

# %%
# Using one graph from several threads
# ------------------------------------
#
# Distinct graphs run at the same time without any care.  One graph shared
# by several threads is for one caller at a time: ``build``, ``launch`` and
# ``enqueue`` hold a non-blocking guard, and a second thread entering while
# one is in flight gets :class:`eagle.Busy`.  It is never queued behind the
# first and never handed a half-built state.  Looking at a graph (printing,
# drawing, ``edges()``) takes no guard.
#
# Seeing your graph
# -----------------
#
# ``print(g)`` (or ``g.show()``) draws the graph as text: each node a box on
# its stage, the planes under the node that writes them, a conditional as a
# frame with its label, a dashed border for an opaque node, and after
# ``build()`` how each stage runs.  :doc:`/viz` explains every mark.

seed_x = np.zeros(64)
out_l, out_r, guard = np.zeros(64), np.zeros(64), np.zeros(1, np.uint32)
g = eagle.Graph()
g.add_node(opaque(lambda: seed_x.fill(1.0), writes={"x": seed_x}), name="seed")
g.add_group([opaque(lambda: None, reads={"x": seed_x}, writes={"left_out": out_l}),
             opaque(lambda: None, reads={"x": seed_x}, writes={"right_out": out_r})], names=["left", "right"])
g.add_node(eagle.skippable(opaque(lambda: None, reads={"a": out_l, "b": out_r}), eagle.SkipGuard.nonzero(guard)),
           name="combine")
g.build()
print(g)

# %%
# ``g.plot()`` draws the same layout with matplotlib (``pip install
# "eagle-viz[plot]"``).  It returns a plain ``matplotlib.figure.Figure``, made
# without pyplot, so it is safe on a machine with no display;
# ``fig.savefig("graph.png")`` writes it, and ``g.plot(ax=ax)`` draws into
# your own axes.

fig = g.plot()

# %%
# For your own docs and tools there are two text formats, Mermaid and
# Graphviz DOT.  All four pictures come from one layout engine, so they
# always agree.

print(g.to_mermaid())

# %%
# Adding a kind of node
# ---------------------
#
# Plan launches, groups, conditionals, reductions, copies and opaque ops
# cover most steps.  A new kind of node is registered, not patched in:
# ``reads`` and ``writes`` give ``(plane name, array, role)`` tuples (that is
# all the edge derivation sees), ``lower_cpu`` what the host runs.
# Registering the same kind twice is fine; a *different* kind under a taken
# name is refused.  Plugins register kinds the same way, from their own
# package.

from eagle.graph import Node, register_node_kind


def _clip_planes(p):
    return [("x", p["x"], "readwrite")]


def _clip_host(p):
    return lambda: np.clip(p["x"], p["lo"], p["hi"], out=p["x"])


register_node_kind("clip", reads=_clip_planes, writes=_clip_planes, lower_cpu=_clip_host)
x = np.linspace(-2.0, 2.0, 5)
g = eagle.Graph().add_node(Node("clip", {"x": x, "lo": -1.0, "hi": 1.0}), name="clip").build().launch()
print(x)
