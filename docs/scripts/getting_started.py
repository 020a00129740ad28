"""
Getting started
===============

Install eagle, run the demo, then write a graph of your own: a kernel, a
graph that calls it, a device loop, a replay, and a picture.  Every cell on
this page ran when the documentation was built; what it prints is shown
under it.

Install
-------

On a machine with Python 3.10 or newer and a C compiler (``cc``), from a
clone of the repository:

.. code-block:: bash

    python3 -m pip install .                     # raptor-eagle and raptor-hawk, from the clone
    python3 -m eagle.demo                        # one graph with everything
    python3 -m pip install "raptor-eagle[plot]"  # matplotlib, for g.plot()

From wheels (``python -m nox -s wheels`` builds them into ``dist/``) the same
install is ``pip install --find-links dist/ raptor-eagle raptor-hawk``;
``[plot]``, ``[cuda12]`` and ``[cuda13]`` are their extras.

``python -m eagle.demo`` builds the graph at the end of
:doc:`builder_forms`, prints its picture, replays it, checks it against
NumPy running the same arithmetic, times both, and writes the graph's
picture to ``eagle-demo.png``.

Write your code in a file: hawk and the builder read the source of the
functions they decorate, which a plain ``python`` prompt does not keep.
"""

# %%
# A kernel
# --------
#
# A hawk kernel is a Python function over one *sample*: annotations give each
# parameter's role.  ``Scalar`` is one float per sample, ``Param`` one number
# for all of them.  Called on NumPy arrays, it compiles once (to C, with your
# ``cc``) and runs at once.

import numpy as np

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


print(affine(np.arange(4.0), 2.0, 1.0))

# %%
# A graph
# -------
#
# ``@eagle.Graph.builder`` turns a function that calls kernels into a graph.
# Calling the builder on arrays *records* the calls as nodes and builds the
# graph once; nothing runs.  Calling the graph replays it, in one native call,
# and returns ``g.result``.


@eagle.Graph.builder
def step(x):
    g = eagle.Graph()
    g.result = affine(affine(x, 2.0, 1.0), 0.5, 0.0)  # two kernel calls: two nodes
    return g


x = np.arange(8.0)
g = step(x)  # records and builds
print(g())  # one replay
print(g.backend, g.schedule)  # NumPy arrays: the CPU

# %%
# A device loop
# -------------
#
# A one-cell ``uint32`` array is a *device condition*: the graph reads it at
# every replay.  ``for _ in range(N): if not cell: break`` is a loop of at
# most ``N`` turns that stops as soon as the cell reads 0; here a kernel's
# reduction (``hawk.sum`` over every sample) rewrites the cell each turn.
# The whole loop is inside the replay: no Python runs per turn.


@hawk.kernel
def halve(v: Scalar) -> Scalar:
    return 0.5 * v


@hawk.kernel
def above(v: Scalar, limit: Param, flag: Mutable[UInt32]):
    flag = hawk.math.uint32(hawk.sum(v > limit))  # how many samples are still above


@eagle.Graph.builder
def shrink(x, flag):
    g = eagle.Graph()
    for _ in range(100):  # at most 100 turns ...
        if not flag:  # ... leaving when no sample is above 1
            break
        x = halve(x)
        above(x, 1.0, flag)
    g.result = x
    return g


flag = np.ones(1, np.uint32)
g = shrink(np.array([3.0, 40.0, 500.0]), flag)
print(g())  # 500 needs nine halvings
print(flag)  # the loop left the cell at 0

# %%
# The argument ``x`` is never changed: the graph keeps its own copy of the
# loop's state and refreshes it from ``x`` at the start of every replay.
# Print the graph to see what was recorded: the frame is the loop.

print(g)

# %%
# Replay and bind
# ---------------
#
# ``g(n)`` replays ``n`` times and returns the result of the last;
# ``g.bind(name=array)`` swaps an argument for another array of the same
# shape and dtype without recording again.

flag[0] = 1
g.bind(x=np.array([2.0, 4.0, 8.0]))
print(g())
flag[0] = 1
print(g(3))  # three replays; the cell was set once, so the last two run no turn

# %%
# A picture
# ---------
#
# ``g.plot()`` draws the same layout with matplotlib (``pip install
# "eagle-viz[plot]"``) and returns a Figure made without pyplot, so it works
# on a machine without a display; ``fig.savefig("graph.png")`` writes it.

fig = g.plot()

# %%
# Where next
# ----------
#
# * :doc:`gradients`: ``record=True`` and ``eagle.diff.reverse``, gradients
#   through a graph with a device loop.
# * :doc:`builder_forms`: every form the builder accepts (forks, waits,
#   ``if``/``match``, loops, buffers, results), each with what it prints.
# * :doc:`graph_model`: the graph model underneath, nodes and edges by hand.
# * :doc:`/hawk`: the kernel language.
