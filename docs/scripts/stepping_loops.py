"""
Stepping loops and finished samples
===================================

Some batches do not end together.  Photons in a slab scatter until they are
absorbed or escape; a path tracer's paths bounce until they leave the scene;
a batch of ODE solves stops each one at its own event.  You write one *step*,
and the batch runs it again and again until every sample is done, with
samples finishing at very different steps.

``eagle.until_done(items, terminated=..., max_steps=...)`` is that loop.  It
runs ``items`` (plans, captured ``opaque`` nodes, ``child`` graphs) in list
order once per step, over the whole batch, until every sample's
``terminated`` is set or ``max_steps`` steps have run.  It is one device loop:
libeagle's native loop on the CPU, one CUDA WHILE node on the GPU, and the
test that stops it is a fixed-order ``all`` over ``terminated`` on the
device, so no step waits for the host.

Everything on this page runs on the CPU, on NumPy arrays; with CuPy arrays
the same calls build the loop into a CUDA graph.
"""

# %%
# One step of a random walk
# -------------------------
#
# Each photon has a depth ``z``, a direction cosine ``mu``, a count ``k`` of
# the steps it took, and ``done``, its ``terminated`` flag.  One step moves
# it a random distance, then it escapes through either face of the slab, is
# absorbed, or scatters into a new direction; a second kernel keeps the
# deepest point each photon reached.  The random numbers are keyed by the
# photon and its own step count, so a photon's walk does not depend on when
# the others end.

import numpy as np
from matplotlib.figure import Figure

import eagle
import hawk
from hawk import Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def walk(z: Mutable[Scalar], mu: Mutable[Scalar], k: Mutable[UInt32], done: Mutable[UInt32],
         seed: Param[Int32], tau: Param, albedo: Param):
    draw = k * hm.uint32(3)
    z = z + mu * (2.0 * hawk.random.uniform(seed, draw))
    k = k + hm.uint32(1)
    if z < 0.0 or z > tau:
        done = hm.uint32(1)  # escaped
    elif hawk.random.uniform(seed, draw + hm.uint32(1)) > albedo:
        done = hm.uint32(1)  # absorbed
    else:
        mu = 2.0 * hawk.random.uniform(seed, draw + hm.uint32(2)) - 1.0


@hawk.kernel
def deepest(z: Scalar, depth: Mutable[Scalar]):
    depth = hm.maximum(depth, z)


n = 20_000
z, mu, k, done, depth = np.zeros(n), np.ones(n), np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.zeros(n)
step = [walk.plan(z, mu, k, done, 7, 8.0, 0.95), deepest.plan(z, depth)]

# %%
# Run it until every photon is done
# ---------------------------------
#
# ``runner.run()`` runs the loop and returns how many steps ran and how many
# samples are still live: ``live=0`` says every photon finished.

runner = eagle.until_done(step, terminated=done, max_steps=10_000)
runner.run()

# %%
# The photons finished at very different steps: most within a few, a few
# after many.

print(f"steps per photon: median {np.median(k):.0f}, 99th percentile {np.percentile(k, 99):.0f}, "
      f"longest {k.max()}")

# %%
# A finished sample is never written
# ----------------------------------
#
# ``walk`` moves every photon it is given; inside the loop eagle masks a
# plan, so a photon that was finished before a step keeps its bytes exactly,
# whatever the plans compute.  (eagle frames a run of plans with a save and a
# restore of the planes it writes, for the finished samples only: it works
# for every plan, native C or hawk, and the run still fuses into one
# function.)  An ``opaque`` or ``child`` node is your own code: eagle cannot
# mask it, so it must declare ``terminated`` among its planes and leave the
# finished samples alone itself; one that writes without declaring it is
# refused.
#
# The loop means what a Python loop over the same kernels means, with the
# finished samples put back by hand, stopping at the same step:

state = [np.zeros(n), np.ones(n), np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.zeros(n)]
steps = 0
while (state[3] == 0).any():
    was = state[3] != 0
    kept = [a[was].copy() for a in state]
    walk(*state[:4], 7, 8.0, 0.95)
    deepest(state[0], state[4])
    for a, old in zip(state, kept, strict=True):
        a[was] = old
    steps += 1
print(steps, all(a.tobytes() == b.tobytes() for a, b in zip((z, mu, k, done, depth), state, strict=True)))

# %%
# A few steps at a time: your code between the runs
# -------------------------------------------------
#
# ``runner.run(max_steps=k)`` runs at most ``k`` steps and returns; the next
# call goes on where it stopped.  Between the calls, run anything: a tally,
# a checkpoint, a stream or host node, which cannot run inside the loop's one
# device graph (``until_done`` refuses ``opaque(fn, stream=S)`` and
# ``opaque(fn, eager=True)`` items and says so).  A run that stops at its cap
# says how many samples are still live: it never pretends they all finished.

z[:], mu[:], k[:], done[:], depth[:] = 0.0, 1.0, 0, 0, 0.0
ran, live = [0], [n]
while live[-1]:
    result = runner.run(max_steps=4)
    ran.append(ran[-1] + result.steps)
    live.append(result.live)
print(result, "after", ran[-1], "steps")

fig = Figure(figsize=(6.0, 3.0))
ax = fig.add_subplot()
ax.step(ran, live, where="post")
ax.set_yscale("log")
ax.set_xlabel("steps")
ax.set_ylabel("live photons")
ax.set_title("live samples between runner.run(max_steps=4) calls")
fig.tight_layout()

# %%
# The loop as a node of a graph
# -----------------------------
#
# ``until_done`` returns a node: add it to a graph beside the rest of the step,
# and every launch runs the loop (at most ``max_steps`` steps).  It composes
# with the builder too: call ``eagle.until_done`` inside an
# ``@eagle.Graph.builder`` function.  The picture frames the loop's body; the
# two kernels run as one fused function.

start = eagle.opaque(lambda: (z.fill(0.0), mu.fill(1.0), k.fill(0), done.fill(0), depth.fill(0.0)),
                     writes={"z": z, "mu": mu, "k": k, "done": done, "depth": depth})
g = eagle.Graph().add_node(start, name="inject").add_node(runner, name="walk").build()
g.launch()
print(g)

# %%
# What is refused
# ---------------
#
# Each with a message starting ``eagle.until_done:`` that says what to write
# instead: a ``terminated`` plane that is not 1-D, contiguous and of a bool,
# uint8, int32 or uint32 dtype; ``max_steps`` missing or under 1; an item that
# is not a plan, a captured ``opaque`` or a ``child``; a stream or host node;
# a plan eagle cannot mask per sample (one that reduces across samples or
# writes a plane that is not one value per sample: a plan that reads a Table
# is masked like any, unless the loop writes that Table); and a loop in which no
# item writes ``terminated``, which only ``max_steps`` could end (for a fixed
# number of steps, ``Graph.launch(n)`` is the loop).
#
# Not built yet: ``eagle.simulate``, dispatch groups with ``dispatch=``, and
# the compaction of finished samples, which come on top of this loop.
