"""
Every face of one builder graph
===============================

One step recorded by ``@eagle.Graph.builder``, drawn five ways from the one layout
libeagle computes: the text of ``print(g)``, the matplotlib figure of ``g.plot()``, the
SVG of ``g.to_svg()`` (what a notebook shows), Mermaid and Graphviz DOT.  The step has
what a picture has to say: kernels named by what they are and by what their results
became, a branch that waits for another, a plane that skips a stage, and a fused run of
per-sample kernels.  This page runs at the docs build; every picture below is its output.
You need eagle, hawk, eagle-builder and eagle-viz (with matplotlib for the figure).
"""

import numpy as np

import eagle
import hawk
from hawk import Scalar


@hawk.kernel
def scale_velocity(v: Scalar) -> Scalar:
    return 0.5 * v


@hawk.kernel
def drift(x: Scalar, v: Scalar) -> Scalar:
    return x + v


@hawk.kernel
def damp(v: Scalar) -> Scalar:
    return 0.9 * v


@hawk.kernel
def energy(x: Scalar, v: Scalar) -> Scalar:
    return x * x + v * v


@eagle.Graph.builder
def step(x, v):
    g = eagle.Graph()
    v = scale_velocity(v)
    with g.parallel() as p:
        with p.branch():
            x2 = drift(x, v)
        with p.branch() as b:
            b.wait(x2)  # this branch starts after drift
            v2 = damp(v)
            v2 = damp(v2)
    g.result = energy(x2, v)  # v skips the fork: a long link
    return g


g = step(np.linspace(0.0, 1.0, 8), np.ones(8))

# %%
# The text picture
# ----------------
#
# A kernel's box says its kernel, then the name its result was assigned to
# (``scale_velocity → v``); the planes under a box carry those names.  The wait
# is the dotted arrow from ``drift`` to the branch that waits for it; the
# plane ``v`` that skips the fork runs down the gutter on the right into
# ``energy``; the two ``damp`` launches, per-sample kernels the build fused
# into one generated function, are one ``fused 2`` frame.

print(g)

# %%
# The figure
# ----------
#
# ``g.plot()`` draws the same cells; the long links follow the routes the
# layout engine found around the boxes, never through one.

fig = g.plot()

# %%
# SVG, Mermaid and DOT
# --------------------
#
# ``g.to_svg()`` needs no matplotlib (a Jupyter notebook shows a graph through
# it by itself).  The Mermaid and DOT texts list the same boxes, arrows and
# frames; DOT pins each row of boxes to one rank, in the layout's order, so
# Graphviz draws the branches in the order every other face does.

svg = g.to_svg()
print(svg.splitlines()[0])
print(g.to_mermaid())
print(g.to_dot())

# %%
# Folding
# -------
#
# A long chain of alike kernels folds into one box, ``fold=False`` on any face
# draws every node.


@eagle.Graph.builder
def chain(v):
    g = eagle.Graph()
    for _ in range(500):
        v = damp(scale_velocity(v))
    g.result = v
    return g


long = chain(np.ones(8))
print(long)
print(len(long.to_svg(fold=False).splitlines()), "lines of SVG unfolded")
