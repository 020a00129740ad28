"""
Loops, early returns and helpers in a kernel
============================================

A hawk kernel may loop (``for i in range(n)``, ``while hawk.capped(cond, cap)``),
``break`` and ``continue`` per sample, ``return`` anywhere, and call
``@hawk.func`` helpers, which are inlined into it.  This page runs the examples
of :doc:`/hawk` (*Control flow and helpers*): eagerly, against the NumPy
reference, in a builder graph and through the derivatives.
"""

# %%
# A helper with early returns, a loop that breaks per sample
# ----------------------------------------------------------
#
# ``series`` sums the Taylor series of ``exp(x) - 1`` until a term is
# negligible: each sample stops at its own turn.  The count, ``k``, is the
# same for every sample.

import numpy as np

import eagle
import eagle.diff
import hawk
from hawk import Int32, Param, Scalar


@hawk.func
def smoothstep(e0: Param, e1: Param, x: Scalar) -> Scalar:
    if x <= e0:
        return 0.0
    if x >= e1:
        return 1.0
    t = (x - e0) / (e1 - e0)
    return t * t * (3.0 - 2.0 * t)


@hawk.kernel
def series(x: Scalar, k: Param[Int32]) -> Scalar:
    total = 0.0
    term = 1.0
    for i in range(1, k):
        if abs(term) < 1e-17:
            break
        term = term * x / i
        total = total + term
    return smoothstep(0.0, 10.0, total)


x = np.array([-1.0, 0.5, 1.0, 2.0, 3.0])
print(series(x, 60))
t = np.clip(np.expm1(x) / 10.0, 0.0, 1.0)
print(t * t * (3.0 - 2.0 * t))

# %%
# The NumPy reference evaluator runs the same IR, every turn for every sample
# under the masks of the samples still running, and gives the same bits:

print(series(x, 60).tobytes() == series.reference(x, 60).tobytes())

# %%
# A capped ``while``
# ------------------
#
# ``while hawk.capped(cond, cap):`` runs while ``cond`` holds, at most ``cap``
# turns.  Without the cap the loop is refused, with that fix.


@hawk.kernel
def halvings(x: Scalar) -> Scalar:
    n = 0.0
    while hawk.capped(x > 1.0, 100):
        x = x / 2.0
        n = n + 1.0
    return n


print(halvings(np.array([0.5, 3.0, 1000.0])))

try:
    @hawk.kernel
    def uncapped(x: Scalar) -> Scalar:
        while x > 1.0:
            x = x / 2.0
        return x
except hawk.KernelSyntaxError as err:
    print(str(err).split(" (")[0])

# %%
# In a builder graph, and its gradient
# ------------------------------------
#
# A kernel with loops is a kernel like any other: it records into a builder
# graph (and fuses with its neighbours there), and ``eagle.diff.reverse``
# reverses it turn by turn, each turn recomputed from the loop's start, so a
# sample that broke early gets the exact gradient of the turns it ran.


@eagle.Graph.builder
def model(x, record=False):
    g = eagle.Graph(record=record)
    g.result = series(x, 60)
    return g


g = model(x, record=True)
print(g())
grad = eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"]
eps = 1e-6
print(np.max(np.abs(grad - (series(x + eps, 60) - series(x - eps, 60)) / (2 * eps))) < 1e-7)
