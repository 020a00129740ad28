"""
How eagle records and replays a graph
=====================================

Build the step once, run it as many times as you like.  This page follows
one small graph through the four stages: record, instantiate, replay,
retune.  It runs on the CPU, on NumPy arrays; you need eagle and NumPy.

Replaying a recorded list of work costs one call instead of one call per
piece of work, which is why eagle records a step once and replays it.  On
the CPU a replay is one call into libeagle, which runs every node in order
(or side by side where the graph allows) with the interpreter lock released
except where a node is your own Python.
"""

import numpy as np

import eagle
from eagle.graph import opaque

# %%
# 1. Record
# ---------
#
# A node is a callable plus the arrays it reads and writes.  Two nodes that
# only read the same array, ``l`` and ``r`` below, can run side by side;
# ``join`` waits for both.  Nothing runs yet, and ``print`` shows what eagle
# recorded.

x, left, right, out = np.arange(4.0), np.zeros(4), np.zeros(4), np.zeros(4)
calls = {"l": 0, "r": 0, "join": 0}


def run_l():
    calls["l"] += 1
    left[:] = 2 * x


def run_r():
    calls["r"] += 1
    right[:] = x + 1


def run_join():
    calls["join"] += 1
    out[:] = left + right


g = eagle.Graph()
g.add_group([opaque(run_l, reads={"x": x}, writes={"a": left}),
             opaque(run_r, reads={"x": x}, writes={"b": right})], names=["l", "r"])
g.add_node(opaque(run_join, reads={"a": left, "b": right}, writes={"out": out}), name="join")
print(g)

# %%
# You never wrote an edge: eagle found them from the planes each node
# declared.  ``g.edges()`` lists them, as indices into ``g.node_labels()``.

for edge in g.edges():
    print(edge, "-", g.node_labels()[edge.src], "before", g.node_labels()[edge.dst])

# %%
# 2. Instantiate
# --------------
#
# ``build()`` turns the recording into something launchable: it checks that
# no two branches of a fork could race, fixes the order, picks the backend
# from where the planes live (NumPy arrays: the CPU) and lowers the graph to
# one libeagle program.  The picture now names the backend and, for each
# stage, how the work is shared.

g.build()
print(g)

# %%
# 3. Replay
# ---------
#
# ``launch(n)`` runs the built graph ``n`` times and waits.  The nodes ran
# once per replay, and the arrays hold the result.

g.launch(3)
print(calls)
print(out)

# %%
# 4. Retune
# ---------
#
# A built graph is not frozen.  ``set_logical_size(n)`` changes how many
# samples the next replays process, with no rebuild: a kernel node then
# covers only the first ``n`` samples of its planes (your own Python code in
# an ``opaque`` node sees whole arrays, as before).  A hawk kernel's plan is
# a kernel node:

import hawk
from hawk import Param, Scalar


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


x, y = np.arange(8.0), np.zeros(8)
k = eagle.Graph().add(affine.plan(x, 2.0, 1.0, buffer=y), name="affine").build()
k.set_logical_size(3).launch()
print(y)
k.set_logical_size(8).launch()
print(y)

# %%
# Where next: :doc:`graph_model` for every kind of node, edge and refusal;
# :doc:`getting_started` for writing the same graphs from plain Python with
# ``@eagle.Graph.builder``.
