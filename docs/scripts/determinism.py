"""
Determinism: the same bits every time
=====================================

The result of every node is independent of the number of threads and of the
schedule a stage runs under: run a graph on one thread or on all of them,
with its forks as tasks or not, and every array it writes has the same
bytes.  This page says how, and runs the checks.

Three rules make it so:

* **Work is cut on fixed boundaries.**  A node's samples are cut into blocks
  of ``eagle.BLOCK`` samples, whatever the number of threads; which
  thread takes a block changes nothing, because a per-sample kernel's sample
  ``i`` depends only on sample ``i``.  No per-thread accumulator outlives a
  node.
* **Floating-point sums add in one fixed order.**  ``eagle.reduce``,
  ``hawk.sum`` and the cross-sample part of a gradient all use one binary
  tree: ``T(x[0:n]) = T(x[0:h]) + T(x[h:n])``, with ``h`` the largest power
  of two below ``n``.  Each block is summed by this tree, and the block
  partials are combined by the same tree; because the block size is a power
  of two, the result is exactly ``T`` of the whole plane.
* **Arithmetic means what it says.**  C is compiled with
  ``-ffp-contract=off`` (compilers fuse ``a * b + c`` into one rounding by
  default) and never with fast-math, so ``+ - * /`` and ``sqrt`` in a hawk
  kernel round exactly as NumPy's ufuncs do.
"""

# %%
# Threads do not change the bits
# ------------------------------
#
# One graph, a fork of kernel chains then a sum of each branch, replayed
# under a team of 1 and of 2 threads: the bytes of every output are
# compared.

import numpy as np

import eagle
import hawk
from hawk import Mutable, Scalar


@hawk.kernel
def mix(v: Mutable[Scalar]):
    v = (v * 1.0000001 + 0.5) / (1.0 + v * v)


def run(threads):
    eagle.set_num_threads(threads)
    rng = np.random.default_rng(7)
    planes = [rng.standard_normal(10_000) for _ in range(3)]
    totals = [np.zeros(1) for _ in planes]
    g = eagle.Graph().add_group([[mix.plan(p) for _ in range(5)] for p in planes])
    for p, t in zip(planes, totals, strict=True):
        g.add_node(eagle.reduce(p, t))
    g.build().launch(4)
    return b"".join(a.tobytes() for a in (*planes, *totals)), totals


before = eagle.get_num_threads()
one, totals = run(1)
two, _ = run(2)
eagle.set_num_threads(before)
print("block:", eagle.BLOCK, "samples; same bytes on 1 and 2 threads:", one == two)

# %%
# The fixed order
# ---------------
#
# ``eagle.reduce`` gives exactly the tree ``T`` above.  NumPy's ``np.sum``
# adds pairwise in its own order (which depends on how the array is laid out
# in memory), so the two may differ in the last bits; both are accurate, only
# one of them is fixed.


def tree_sum(v):
    if len(v) == 1:
        return v[0]
    h = 1
    while h * 2 < len(v):
        h *= 2
    return tree_sum(v[:h]) + tree_sum(v[h:])


x = np.random.default_rng(1).standard_normal(100_003)
total = np.zeros(1)
eagle.Graph().add_node(eagle.reduce(x, total)).build().launch()
print("eagle.reduce == T:", total[0] == tree_sum(list(x)))
print("hawk.sum == eagle.reduce:", hawk.sum(x) == total[0])
print("eagle.reduce - np.sum:", total[0] - np.sum(x))

# %%
# Kernels round as NumPy does
# ---------------------------
#
# The same arithmetic as a hawk kernel and as NumPy ufuncs, on a million
# samples: the same bits.


@hawk.kernel
def poly(v: Scalar) -> Scalar:
    return (v * 3.0 + 1.0) * v / (v * v + 2.0) - 0.25


v = np.random.default_rng(2).standard_normal(1 << 20)
print(np.array_equal(poly(v), (v * 3.0 + 1.0) * v / (v * v + 2.0) - 0.25))

# %%
# Where bits can differ
# ---------------------
#
# * ``hawk.math.sin``, ``exp``, ``log`` and the other transcendental
#   functions are eagle's own (``hawk.libm``), within 1 ulp: the same bits on
#   every CPU, at every vector width, on the GPU and in ``hawk.math`` outside
#   a kernel, but not always NumPy's ``np.sin`` (which is libm's or SVML's,
#   by NumPy version and CPU).
# * Casts whose C behaviour is undefined (an out-of-range float to an
#   unsigned integer) go through one helper with one meaning (it truncates,
#   saturates at the type's limits, and sends NaN to 0); :doc:`/hawk` lists
#   hawk's other fixed meanings where C and NumPy differ.
# * A ``Param``'s gradient is one cell summed over the samples: it uses the
#   same fixed tree, so gradients too have the same bits on any number of
#   threads.
