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

# %%
# ``eagle.simulate``: the loop, run for you
# -----------------------------------------
#
# ``eagle.simulate(step, terminated=..., max_steps=..., dispatch=None,
# compact="auto")`` runs the same loop in chunks of 16 steps.  A chunk is one
# native call (or one CUDA graph launch) where steps are cheap, and a call per
# step where a step is dear, so that a call's fixed cost stays small.  After
# each call it looks at the live count to decide whether to gather the live
# samples to the front (*compaction*), and after each chunk which policy each
# dispatch group runs by.  It returns
# ``steps``, ``live`` (more than 0: ``max_steps`` stopped it), ``state`` (the
# step's written per-sample planes, your own arrays, in your sample order) and
# ``report``.
#
# Our ``walk`` keys its draws by the default ``sample=``, which is the
# photon's *position* in the plane.  Compaction moves photons, so it would
# change those draws: ``"auto"`` leaves this walk uncompacted and says why,
# and ``compact=True`` refuses it by name.

z[:], mu[:], k[:], done[:], depth[:] = 0.0, 1.0, 0, 0, 0.0
result = eagle.simulate(step, terminated=done, max_steps=10_000)
print(result.steps, result.live, result.report.notes)

# %%
# Keyed by an id plane, a photon's walk is its own wherever it sits
# ------------------------------------------------------------------
#
# Give every photon an id (its index in your arrays) and key its draws by it:
# ``hawk.random.uniform(seed, counter, sample=pid)``.  Now moving photons
# changes no bit, eagle can tell from the kernel (it reads no sample index),
# and ``simulate`` compacts: when the finished slots have cost as much as a
# gather would, it gathers the live photons to the front of every plane the step
# touches (stably: live ones in slot order, then the finished), keeps the
# permutation, and shrinks the loop with ``set_logical_size``, with no new
# lowering.  When the run ends (or raises) every plane is put back in your
# order.  Compacted or not, the bits are the same:


@hawk.kernel
def walk_by_id(z: Mutable[Scalar], mu: Mutable[Scalar], k: Mutable[UInt32], done: Mutable[UInt32],
               pid: UInt32, seed: Param[Int32], tau: Param, albedo: Param):
    draw = k * hm.uint32(3)
    z = z + mu * (2.0 * hawk.random.uniform(seed, draw, sample=pid))
    k = k + hm.uint32(1)
    if z < 0.0 or z > tau:
        done = hm.uint32(1)
    elif hawk.random.uniform(seed, draw + hm.uint32(1), sample=pid) > albedo:
        done = hm.uint32(1)
    else:
        mu = 2.0 * hawk.random.uniform(seed, draw + hm.uint32(2), sample=pid) - 1.0


def photons(n):
    return {"z": np.zeros(n), "mu": np.ones(n), "k": np.zeros(n, np.uint32), "done": np.zeros(n, np.uint32),
            "pid": np.arange(n, dtype=np.uint32)}


def by_id(s):
    return [walk_by_id.plan(s["z"], s["mu"], s["k"], s["done"], s["pid"], 7, 8.0, 0.98)]


runs = {}
for compact in (False, True):
    s = photons(n)
    runs[compact] = (s, eagle.simulate(by_id(s), terminated=s["done"], max_steps=10_000, compact=compact))
print("same bits:", all(a.tobytes() == b.tobytes() for a, b in zip(runs[False][0].values(),
                                                                    runs[True][0].values(), strict=True)))
compacted = runs[True][1]
for c in compacted.report.compactions[:4]:
    print(f"step {c.step}: {c.before} slots -> {c.after} live, {c.seconds * 1e3:.2f} ms")
print({phase: f"{t * 1e3:.1f} ms" for phase, t in compacted.report.seconds.items()})

# %%
# When compaction pays, and when not to
# -------------------------------------
#
# ``compact="auto"`` measures instead of guessing.  After each call it knows
# the time per slot and step (the last call's time over steps x slots), the
# gather's fixed cost (the calls and barriers: measured once, by a gather of
# no slots) and its time per slot (measured at each compaction; before the
# first, predicted from the bytes per sample and a one-off copy calibration,
# on the GPU a device copy).  The rule is rent or buy:
#
# * each call adds what its finished slots cost, finished slots x steps x
#   time per slot-step, to what the loop has wasted since it last shrank
#   (a finished slot is charged a live one's time: in a block of lanes that
#   holds one live photon, the finished ones run the arms too);
# * the loop compacts when that waste reaches a gather's cost, its fixed
#   cost + slots x time per slot, and before the first compaction also the
#   restore it commits the run to (every sample moved back, and its program).
#
# Waiting longer keeps paying for the finished slots; compacting sooner pays
# for a gather that has not yet earned its keep.  The rule balances the two
# (the ski-rental rule, at most twice the best for one purchase), looking
# after each call: a call is kept short (about 2 ms) so that it looks often.
#
# On the 2-vCPU VM these docs were measured on (shared by other jobs, so treat
# the numbers as orders of magnitude), the walk above (slab depth 8, albedo
# 0.98) cost 5 to 90 ns per slot and step and a gather 12 to 92 ns per slot
# (36 bytes per photon and the permutation): a compaction costs about one
# step, and a heavy-tailed batch repays it many times over (medians of 5 to
# 31 runs):
#
# ============  ======  =============  ================  ===============
# photons       steps   no compaction  ``compact=True``  ``"auto"``
# ============  ======  =============  ================  ===============
# 256           89      0.96 ms        1.5 ms (5)        1.5 ms (2)
# 1,024         105     2.3 ms         1.9 ms (6)        2.0 ms (5)
# 4,096         148     5.9 ms         3.2 ms (8)        3.1 ms (7)
# 65,536        205     143 ms         28 ms (12)        24 ms (10)
# 262,144       257     764 ms         121 ms (16)       91 ms (11)
# ============  ======  =============  ================  ===============
#
# (in brackets: the compactions done).  A small batch loses by it: there a
# step's time is mostly its fixed cost, which the rule charges the finished
# slots too, and building the gathers' programs (a fifth of a millisecond
# each run, more in a process's first) is more than the shorter steps save.

# So, when not to compact: a small batch (the calls' fixed cost dominates);
# a step in which few samples have finished (their waste repays a gather
# slowly); a step cheaper than moving its state (many planes per sample, little
# work per step: the rule sees it in the measured times); and whenever eagle cannot
# be sure moving samples keeps the bits.  ``"auto"`` then does not compact and
# ``result.report.notes`` says why: a kernel that reads its sample's position
# (``hawk.sample()``, a grid index, a draw keyed by the default ``sample=``,
# or any native C kernel, which is given the indices); a plan whose Tables
# eagle cannot list; planes passed as overlapping views, or read-only; and an
# ``opaque`` or ``child`` node, which eagle cannot see inside.
# ``compact=True`` compacts at every chunk in which samples finished,
# ``opaque`` and ``child`` nodes included (their declared per-sample planes
# are moved: such a node must not depend on where a sample sits), and refuses
# the rest by name; ``compact=False`` never compacts.

# %%
# Dispatch groups: fused or split, chosen by measurement
# ------------------------------------------------------
#
# A step whose samples take different branches (four materials of very
# different cost, drawn per collision) declares the branch as a dispatch
# group: ``match hawk.dispatch(m, "material")``.  ``"switch"`` runs one
# kernel with a per-sample branch (fused); ``"segmented"`` partitions the
# live samples by ``m`` and runs one kernel per arm over its segment (split);
# ``"predicated"`` computes every arm (tiny arms only: hawk refuses it for an
# arm with a loop).  Every policy gives the same bits.
#
# ``dispatch=None`` keeps an author's explicit policy and decides the
# ``"auto"`` groups: start fused, measure the split form in a probe, and
# every 16 steps split when that is predicted at least 15 % faster, fuse
# again when the gain falls under 5 %.  The estimates are times per slot and
# step (the fused form computes every slot of the loop, finished or not); a
# stale one (8 chunks old, measured over a loop compaction has since shrunk
# more than eightfold, or under an arm mix that moved on beyond the counts'
# noise) is measured again, one group at a time.  A probe is one call of the
# other form, as many steps as the call before it and over the same slots,
# and the decision follows it at once: where a step is dear enough to run
# one per call, the first step runs fused, the second split, and the third
# already runs the faster form; where steps are cheap, a call is a chunk.  A policy name or ``{group:
# policy}`` forces the ``"auto"`` groups instead.


@hawk.kernel
def travel(z: Mutable[Scalar], mu: Scalar, k: Mutable[UInt32], m: Mutable[Int32], pid: UInt32,
           seed: Param[Int32]):
    c = k * hm.uint32(4)
    z = z + mu * (2.0 * hawk.random.uniform(seed, c, sample=pid))
    u = hawk.random.uniform(seed, c + hm.uint32(3), sample=pid)
    m = hm.int32(u > 0.6) + hm.int32(u > 0.85) + hm.int32(u > 0.97)  # the next material
    k = k + hm.uint32(1)


@hawk.kernel
def fate(z: Scalar, k: UInt32, done: Mutable[UInt32], pid: UInt32, seed: Param[Int32]):
    if z < 0.0 or z > 8.0:
        done = hm.uint32(1)
    elif hawk.random.uniform(seed, (k - hm.uint32(1)) * hm.uint32(4) + hm.uint32(1), sample=pid) > 0.97:
        done = hm.uint32(1)


@hawk.kernel
def turn(mu: Mutable[Scalar], k: UInt32, m: Int32, pid: UInt32, seed: Param[Int32]):
    u = hawk.random.uniform(seed, (k - hm.uint32(1)) * hm.uint32(4) + hm.uint32(2), sample=pid)
    match hawk.dispatch(m, "material"):
        case 0:
            mu = 2.0 * u - 1.0
        case 1:
            s = 0.75 / (0.5 + u)
            mu = 1.25 - s * s
        case 2:
            x = 0.0
            for _ in range(16):
                x = 0.5 * (x + u / (1.0 + x))
            mu = 2.0 * x - 1.0
        case _:
            y = 0.5 + 0.5 * u
            for _ in range(48):
                y = y - (y * y * y - u) / (3.0 * y * y + 1.0)
            mu = 2.0 * y - 1.0


def media(n):
    return {**photons(n), "m": np.zeros(n, np.int32)}


def mixed(s):
    return [travel.plan(s["z"], s["mu"], s["k"], s["m"], s["pid"], 7),
            fate.plan(s["z"], s["k"], s["done"], s["pid"], 7),
            turn.plan(s["mu"], s["k"], s["m"], s["pid"], 7)]


bits = {}
for dispatch in ("switch", "segmented", None):
    s = media(n)
    result = eagle.simulate(mixed(s), terminated=s["done"], max_steps=10_000, dispatch=dispatch)
    bits[dispatch] = b"".join(a.tobytes() for a in s.values())
    print(f"dispatch={dispatch!r}: {result.report.seconds['steps'] * 1e3:.0f} ms of steps")
print("every policy, the same bits:", len(set(bits.values())) == 1)
for decision in result.report.dispatch[:6]:
    print(decision)

# %%
# Measured on the same VM at 65,536 photons (170 steps): without compaction
# ``"switch"`` took 2.6 s, ``"segmented"`` 1.0 s and ``dispatch=None`` 1.4 s
# (it split at step 32 and stayed, probing the fused form again at step 144);
# compacted, 0.44 s, 0.27 s and 0.32 s (``None`` split at step 32 too; its
# probes of the fused form, each a chunk run the slower way, are most of the
# difference).  The shared machine's noise is some tens of percent between
# runs.
#
# The report and its picture
# --------------------------
#
# ``result.report`` holds the live samples at each chunk boundary, the
# dispatch decisions over steps, the compactions (step, slots before, live
# after, seconds) and the time per phase (``steps``, ``compaction``,
# ``decisions``, ``restore``).  ``result.report.plot()`` draws the live
# samples and each group's policy against steps: a plain matplotlib Figure,
# made without pyplot (from eagle-viz, as ``g.plot()``; pass ``ax=`` to draw
# into your own axes).

s = media(n)
result = eagle.simulate(mixed(s), terminated=s["done"], max_steps=10_000, compact=True)
fig = result.report.plot()
