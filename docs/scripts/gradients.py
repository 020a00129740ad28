"""
Gradients through a graph
=========================

``eagle.Graph(record=True)`` makes a graph that keeps what a reverse pass
needs; ``eagle.diff.reverse(g.record, seeds, wrt=...)`` then walks its nodes
last to first with each kernel's derivative (hawk writes them: see
:doc:`/hawk`) and returns the gradients.  The keys are the names that enter
and leave the graph: the builder's arguments, ``result``, and the labels of
``buffer=`` outputs.

.. only:: no_eagle_diff

   .. note::

      This build of the documentation has no ``eagle.diff.reverse`` (the
      eagle-diff package does not provide it yet), so the code on this page
      was not run and shows no output.
"""

# %%
# A recorded graph
# ----------------
#
# ``record=True`` is a fact of the build: the builder passes it on to
# ``eagle.Graph``.  A recorded graph runs with ``g()`` or ``launch()``, which
# wait for the run its record describes (never ``enqueue``).

import numpy as np

import eagle
import hawk
from hawk import Mutable, Param, Scalar


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def accumulate(s: Scalar, y: Mutable[Scalar]):  # writes the caller's array y in place
    y = s + 1.0


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


@eagle.Graph.builder
def model(x, y, record=False):
    g = eagle.Graph(record=record)  # record=True keeps what the reverse needs
    a = affine(x, 2.0, 1.0, buffer=True)  # a top-level buffer: a name a gradient can use
    accumulate(a, y)  # y: an argument a kernel writes in place
    g.result = square(a)
    return g


x, y = np.arange(4.0), np.zeros(4)
gr = model(x, y, record=True)
gr()
print(gr.result, y)

# %%
# Seeds and ``wrt``
# -----------------
#
# ``seeds`` maps names to cotangents (the gradient of your loss with respect
# to that array); ``wrt`` names what you want gradients of.  A seed may be
# the result, an argument a kernel writes, or a buffer.

ones = np.ones(4)
r = eagle.diff.reverse(gr.record, {"result": ones}, wrt=("x", "a"))  # d sum(result) / dx, / da
print(r["x"], r["a"])
r = eagle.diff.reverse(gr.record, {"y": ones}, wrt=("x",))  # seed an argument a kernel writes
print(r["x"])
r = eagle.diff.reverse(gr.record, {"a": ones}, wrt=("x",))  # seed a buffer
print(r["x"])

# %%
# Through a fork and a device loop
# --------------------------------
#
# The graph at the end of :doc:`builder_forms` (and of ``python -m
# eagle.demo``, which defines it as ``eagle.demo.whole``): a fork with a wait,
# blocks, and a capped device loop.  The reverse pass runs a fork's branches
# together and a loop's turns last to first, from what the recorded run
# kept, never from arrays that changed since.

from eagle.demo import numpy_whole, whole

x, y = np.arange(8.0), np.zeros(8)
flag = np.ones(1, np.uint32)  # the loop's guard: it runs until remaining() clears it
gr = whole(x, flag, y, record=True)
gr()
grads = eagle.diff.reverse(gr.record, {"result": np.ones(8), "y": np.ones(8)}, wrt=("x",))
print(grads["x"])

# %%
# Check it the way eagle's tests do: central differences of the same
# function, computed by NumPy (``eagle.demo.numpy_whole`` runs the same
# arithmetic eagerly).


def loss(x):
    y = np.zeros(x.size)
    s = numpy_whole(x, np.ones(1, np.uint32), y)
    return np.sum(s) + np.sum(y)


h, e = 1e-6, np.eye(8)
central = np.array([(loss(x + h * e[i]) - loss(x - h * e[i])) / (2 * h) for i in range(8)])
print(np.max(np.abs(central - grads["x"]) / np.abs(central)))

# %%
# What it refuses
# ---------------
#
# A builder graph has no default ``wrt``, and a name that is not an argument,
# ``result`` or a ``buffer=`` label (a plain temporary) has no array that
# outlives the run.  Each message says what to write instead.

for label, call in (
    ("reverse without wrt", lambda: eagle.diff.reverse(gr.record, {"result": np.ones(8)})),
    ("wrt a temporary", lambda: eagle.diff.reverse(gr.record, {"result": np.ones(8)}, wrt=("x", "l"))),
):
    try:
        call()
    except (ValueError, KeyError) as err:
        print(f"{label}:\n  {type(err).__name__}: {err}\n")
