"""
Your own code and copies in a graph
===================================

Some steps have a part that is plain host code: a check that reads a few
values, a loader that fills the next batch, your own library call.  Others
want a result copied somewhere while the rest of the step carries on.  This
page shows how to put that in the same :class:`eagle.Graph` as your kernels,
so the whole step is one object, built once and replayed.

Two words first.  A *plane* is any array you pass to a node.  An *opaque
node* is a node made of your own Python function,
``eagle.opaque(fn, reads=..., writes=...)``, where you name the planes it
reads and writes so eagle can order it.

Everything here runs on the CPU, on NumPy arrays.  eagle is designed so
that the same graph with CuPy arrays becomes a captured CUDA graph, with
host nodes and copies between host and device memory; that GPU backend is
not built yet.
"""

# %%
# A host node between kernels
# ---------------------------
#
# A kernel writes a few values per sample, your function reads them and
# writes flags, the next kernel reads the flags.  The edges come from the
# planes: nothing else orders the three nodes.

import numpy as np

import eagle
import hawk
from eagle.graph import opaque
from hawk import Mutable, Scalar, UInt32


@hawk.kernel
def propagate(state: Mutable[Scalar], flags: UInt32):
    if flags:  # a flagged sample halves, the others grow
        state = state * 0.5
    else:
        state = state + 1.0


@hawk.kernel
def probe(state: Scalar) -> Scalar:
    return state * state


n = 6
state, flags, energy = np.arange(float(n)), np.zeros(n, np.uint32), np.zeros(n)
seen = []


def check_events():  # your own Python: runs at every replay, in graph order
    flags[:] = energy > 20.0
    seen.append(int(flags.sum()))


g = eagle.Graph()
g.add(probe.plan(state, buffer=energy), name="probe")
g.add_node(opaque(check_events, reads={"energy": energy}, writes={"flags": flags}), name="check_events")
g.add(propagate.plan(state, flags), name="propagate")
g.build().launch(4)
print(state, seen)
print(g)

# %%
# A host node runs with the interpreter lock held, between the node before
# it and the node after it in replay order; every other node of the replay
# runs in libeagle without the lock.  An exception inside your function
# stops the replay, and the call that started it raises it:


def broken():
    raise RuntimeError("the loader failed")


g = eagle.Graph().add_node(opaque(broken), name="loader").build()
try:
    g.launch()
except RuntimeError as err:
    print("raised by launch():", err)

# %%
# Copies
# ------
#
# Moving data is a node of its own, ``eagle.copy(src, into=dst)``.  Its
# direction follows from where ``src`` and ``dst`` live (on the CPU: host to
# host, a plain memory copy); you never write the direction.  It reads
# ``src`` and writes ``dst``, so it is ordered like any other node.
#
# ``into=`` always names an array you made: eagle never allocates a host
# array behind your back, and it is the same array at every replay, which is
# what makes the graph replayable.  ``eagle.pinned(shape, dtype)`` makes one
# that a GPU could copy to by DMA; without a GPU it is an ordinary zeroed
# NumPy array, which does the same job.

snapshot = eagle.pinned(n)
g = eagle.Graph()
g.add(probe.plan(state, buffer=energy), name="probe")
g.add_node(eagle.copy(energy, into=snapshot), name="save")
g.build().launch()
print(snapshot, type(snapshot).__name__)

# %%
# ``eagle.copy(x, into=x)`` is a node that does nothing.
#
# The next copy while this one computes
# -------------------------------------
#
# The branches of a fork may run at the same time, so a copy in one branch
# overlaps the kernels in the other.  A common shape is the double buffer:
# the copy reads ``a`` while the steps that only read it run beside it, and
# the step that overwrites ``a`` comes after the join.


@hawk.kernel
def step(v: Scalar) -> Scalar:
    return v + 1.0


a, b, c, frame = np.zeros(1024), np.zeros(1024), np.zeros(1024), eagle.pinned(1024)
g = eagle.Graph()
g.add_group([eagle.copy(a, into=frame),  # the frame leaves ...
             [step.plan(a, buffer=b), step.plan(b, buffer=c)]],  # ... while the next steps run
            names=["save", ["b", "c"]])
g.add(step.plan(c, buffer=a), name="a")  # overwrites `a`: after the copy read it
g.build().launch(3)
print(frame[:3], a[:3], g.schedule)

# %%
# With the builder, write the same fork with ``with g.parallel() as p:`` and
# let the branch that overwrites ``a`` wait for the copy with ``w.wait(frame)``
# (:doc:`builder_forms`).
#
# What is refused
# ---------------
#
# Each message names the fix.  A copy between arrays of different shapes or
# dtypes:

try:
    eagle.copy(np.zeros(4), into=np.zeros(5))
except ValueError as err:
    print(err)

# %%
# A graph that mixes host and device planes, or a ``backend=`` that disagrees
# with where the planes live, is refused at ``build``:

try:
    eagle.Graph().add(step.plan(a, buffer=b)).build(backend="gpu")
except ValueError as err:
    print(err)
