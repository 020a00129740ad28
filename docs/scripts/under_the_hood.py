"""
How eagle runs a graph
======================

This page follows a graph builder from the decorator to a replay, so you can
see where each piece of eagle lives.  None of it is needed to use the
builder; it is here for the curious and for anyone who wants to predict what
a function will cost.

.. code-block:: text

    decorate          call the builder             build                     run
    rewrite once  ->  record kernel calls     ->   derive edges, refuse  ->  g(): replay
                      as nodes (nothing runs)      races, lower once:        bind: swap arrays
                                                   a host program

Decorating: one rewrite
-----------------------

``@eagle.Graph.builder`` reads the function's source and rewrites it once
(the result is kept, so a second call does not parse again).  The rewrite
turns ``if``, ``while``, ``for`` and ``match`` (and ``break`` and
``continue``) into calls on a recorder; everything else is left alone.  The
function is still ordinary Python: you can print inside it, and a ``for``
over a Python list works.

Calling the builder: recording
------------------------------

Calling the builder runs the rewritten function once, with the recorder
active.  A kernel call does not launch; it binds the arguments, appends a
node to the graph, and allocates one array for each output the kernel
returns (``buffer=`` supplies or keeps that array).  The value you get back
is that array, so the next call reads it, and that is how eagle finds the
edges: a node that reads an array comes after the node that wrote it, and
two nodes that could race are refused.

A condition decides what is recorded:

* A Python value (``if debug:``, ``for k in kernels:``) is decided once,
  here, and only the chosen path is recorded.
* A one-cell ``uint32`` array is a device condition.  Both arms are
  recorded, under a conditional node, and which one runs is decided at every
  replay.  ``while`` and the capped ``for _ in range(N): if not cell: break``
  become a loop node; a ``break`` or ``continue`` in the body guards the rest
  of it; ``match`` is a switch.
"""

# %%
# Python runs while recording, and only then: the ``print`` below runs once,
# when the builder is called, and never at a replay.

import numpy as np

import eagle
import hawk
from hawk import Scalar


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@eagle.Graph.builder
def step(x, debug):
    g = eagle.Graph()
    print("recording, debug =", debug)
    if debug:  # a Python value: decided now
        x = inc(x)
    g.result = inc(x)
    return g


g = step(np.zeros(4), True)
print(g(3), g.node_labels())

# %%
# Buffers
# -------
#
# What a graph allocates is what the hand-built version would: one array per
# kernel output that is not written in place.  A name that is rebound inside
# a device construct and read after it is merged in place into the array it
# held before, when the kernel is per-sample (it reads and writes only its
# own sample) and reduces nothing across samples.  If that array is one of
# your arguments, the graph keeps its own copy and copies your array into it
# at the start of every launch, so your array is never changed.  A temporary
# made inside a loop body is one array, reused each turn.
#
# Forks and waits
# ---------------
#
# ``g.parallel()`` records a fork with one child body per branch; leaving the
# ``with`` is the join, and what follows is ordered after all of them.
# ``b.wait(x)`` is one ordering edge, from the node that wrote ``x`` to the
# rest of the waiting branch.  On the CPU the branches of a fork of kernels
# run as tasks, one thread each, and a wait is an event the waiting branch
# spins on.
#
# Build
# -----
#
# The recorded nodes go into an ordinary :class:`eagle.Graph` and ``build``
# runs, as it does for a hand-made one (:doc:`graph_model`): the edges are
# derived with libeagle's overlap test, races are refused, and each node is
# lowered once into one libeagle *program*, stages of items (native kernel
# calls, Python callbacks, reductions, copies, conditionals and loops holding
# sub-programs, and the events of waits).  Which backend is chosen by where
# the arrays live; ``g.backend`` and ``g.schedule`` say what was chosen.

print(g.backend, g.schedule)

# %%
# The design lowers the same graph to a captured CUDA graph when the arrays
# are CuPy arrays (a conditional becoming a CUDA conditional node); that
# backend is not built yet.
#
# Running, bind and what they cost
# --------------------------------
#
# ``g()`` is ``launch(1)`` plus returning ``result``; ``g(n)`` is ``n``
# replays.  Nothing is parsed, recorded or compiled again.  On the CPU a
# replay is one call into libeagle that runs the whole program with the
# interpreter lock released, device conditionals and loops included.  A run
# of per-sample kernels that share only identical views runs block by block:
# each thread carries a block of samples through the whole run while it is in
# cache, instead of one pass over memory per kernel.  Work that fits in one
# block runs on the calling thread, waking nobody.
#
# ``g.bind(x=new)`` swaps the arrays by the builder's parameter names: the
# same nodes and schedule, new pointers, no recording.  The shape and dtype
# must be the same.

g.bind(x=np.full(4, 10.0))
print(g())

# %%
# Gradients
# ---------
#
# ``record=True`` makes the graph keep what a reverse pass needs, and keeps a
# map from names to arrays: each builder argument to the array bound to it,
# ``result`` to the arrays of the result tree, and each ``buffer=`` array to
# its label.  ``eagle.diff.reverse()`` reads the map to turn the names in
# seeds and ``wrt`` into arrays, then walks the nodes last to first running
# each kernel's derivative (a fork's branches reversed together, a loop's
# turns last to first).  A name that is not in the map, a plain temporary,
# has no array that survives the run, so it is refused with the way out: give
# it a ``buffer=``.  :doc:`gradients` shows it run.
