"""Photons in a slab, run until every one is absorbed or escapes: eagle's stepping loops beside
NumPy, JAX and Numba (issue 21, "Measure"; the design is ``stepping-compaction.md`` §6).

Run: ``python benchmarks/bench_simulate.py`` (4,096 and 262,144 photons, medians of 5 runs in
turns, warm-ups excluded and shown apart), ``--smoke`` for a half-minute run (one run each on 4,096
photons, the fewest whose tail reaches 50x the median) that checks that every variant gives the
same tallies; ``--sizes``, ``--repeat``, ``--budget`` (seconds of timed runs after which a slow
variant, JAX at 262,144, stops), ``--peers`` and ``--alone`` (the peers only) to choose.

The workload.  A plane-parallel slab of optical depth ``TAU`` and single-scattering albedo
``ALBEDO``; photons enter at the top, straight down.  One step draws the photon's scatterer
species, flies a free path, and the photon escapes through a face, is absorbed, or scatters off
its species: isotropic; Henyey-Greenstein (closed form); a tabulated phase function inverted by
32 bisections over its CDF table; Rayleigh, inverted by a fixed 48-step Newton solve.  The mix
of species depends on the photon's collision count (mostly the cheap ones early, the expensive
ones late), so a dispatch policy has a phase change to follow.  Isotropic-like walks back to the
face they started from have a universal power-law tail, cut off by absorption, so a few photons
live far longer than the median: the run prints the quantiles and asserts the tail.

Same bits everywhere.  Float64, only ``+ - * /``, ``sqrt`` and comparisons (``-ln u`` and the
azimuth's cosine are polynomials of those, below); every random number is Philox keyed by the
photon's id and its own collision count, never its slot, so compaction, dispatch and thread
count cannot change a bit.  The arithmetic is written once, as ``@hawk.func`` helpers that use
``hawk.math``: eagle's kernels inline them, NumPy calls them on arrays, and JAX and Numba run
the same functions with ``hm`` bound to their own ``sqrt``/``where``/casts (:func:`shared_math`);
each writes the step's control flow in its own idiom (a kernel's ``if``, masks, ``lax.switch``).
Tallies: reflected, transmitted, absorbed, truncated, the histogram of collision counts (all
integers) and the total path length, a correctly rounded sum over photons in photon order
(``math.fsum``), so its bits do not depend on the order of the lanes either.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from peers import load_jax, load_numba

import eagle
import hawk
from hawk import Int32, Mutable, Param, Scalar, Table, UInt32
from hawk import math as hm

TAU, ALBEDO = 20.0, 0.99  # the slab's optical depth (mean free paths) and single-scattering albedo
G = 0.85  # Henyey-Greenstein asymmetry
PI = math.pi
SEED = 2026
DRAWS = 8  # counters per collision: draw j of collision k is counter DRAWS * k + j
PHASE = 8  # collisions after which the species mix turns to the expensive arms
EARLY0, EARLY1, EARLY2 = 0.70, 0.90, 0.98  # cumulative probabilities of species 0, 1, 2 before PHASE
LATE0, LATE1, LATE2 = 0.10, 0.30, 0.60  # collisions, and after
NEWTON = 48  # fixed Newton iterations of the Rayleigh arm
BISECTIONS = 32
CELLS = 64  # intervals of the tabulated CDF over cos(theta) in [-1, 1]
MAX_STEPS = 20_000
TAIL = 50  # the longest photon lives at least TAIL x the median (the heavy tail)


# ----------------------------------------------------------------------------- the arithmetic


@hawk.func
def free_path(u: Scalar) -> Scalar:
    """-ln(1 - u) for u in [0, 1): eight square roots bring x = 1 - u within 0.87 of 1, where
    -ln x = 2 atanh((1 - x) / (1 + x)) is a short odd series; times 2^8 for the roots."""
    x = 1.0 - u
    for _ in range(8):
        x = hm.sqrt(x)
    t = (1.0 - x) / (1.0 + x)
    t2 = t * t
    return 512.0 * t * (1.0 + t2 * (1.0 / 3.0 + t2 * (0.2 + t2 * (1.0 / 7.0 + t2 * (1.0 / 9.0 + t2 / 11.0)))))


@hawk.func
def turn(mu: Scalar, ct: Scalar, v: Scalar) -> Scalar:
    """The direction cosine after scattering through an angle of cosine ct at azimuth 2 pi v.
    cos(2 pi v) has the law of cos(pi v) = -sin(pi (v - 1/2)), a Taylor polynomial on
    [-pi/2, pi/2) good to 5e-14."""
    x = PI * (v - 0.5)
    x2 = x * x
    sine = 1.0 - x2 / 210.0 * (1.0 - x2 / 272.0)
    sine = 1.0 - x2 / 110.0 * (1.0 - x2 / 156.0 * sine)
    sine = x * (1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0 * sine))))
    across = (1.0 - mu * mu) * (1.0 - ct * ct)
    return mu * ct - hm.sqrt(hm.maximum(across, 0.0)) * sine


@hawk.func
def henyey_greenstein(u: Scalar) -> Scalar:
    """cos(theta) of a Henyey-Greenstein scattering, its CDF inverted in closed form."""
    q = (1.0 - G * G) / (1.0 - G + 2.0 * G * u)
    return (1.0 + G * G - q * q) / (2.0 * G)


@hawk.func
def rayleigh(u: Scalar) -> Scalar:
    """cos(theta) of a Rayleigh scattering: the root of x^3 + 3x + 4 = 8u (its CDF), by a fixed
    number of Newton steps from 0 (the cubic is increasing, so every step is defined)."""
    x = 0.0 * u  # u's shape, on arrays
    for _ in range(NEWTON):
        x = x - (x * x * x + 3.0 * x + 4.0 - 8.0 * u) / (3.0 * x * x + 3.0)
    return x


@hawk.func
def species_of(u: Scalar, k: UInt32) -> Int32:
    """The scatterer hit at collision k: mostly isotropic and Henyey-Greenstein early, mostly
    tabulated and Rayleigh after PHASE collisions."""
    early = k < PHASE
    return hm.where(u < hm.where(early, EARLY0, LATE0), 0,
                    hm.where(u < hm.where(early, EARLY1, LATE1), 1,
                             hm.where(u < hm.where(early, EARLY2, LATE2), 2, 3)))


@hawk.func
def bisect_cell(lo: Scalar, hi: Scalar) -> tuple[Scalar, Int32, Scalar]:
    """The midpoint of [lo, hi], the CDF table's cell that holds it and where in that cell."""
    mid = 0.5 * (lo + hi)
    t = (mid + 1.0) * (0.5 * CELLS)  # below CELLS: mid < 1
    i = hm.int32(t)
    return mid, i, t - hm.float64(i)


@hawk.func
def bisect_halve(lo: Scalar, hi: Scalar, mid: Scalar, left: Scalar, right: Scalar, f: Scalar,
                 u: Scalar) -> tuple[Scalar, Scalar]:
    """The half of [lo, hi] where the CDF (``left`` to ``right`` over the cell) reaches u."""
    below = left + f * (right - left) < u
    return hm.where(below, mid, lo), hm.where(below, hi, mid)


def tabulated(cdf, u):
    """cos(theta) where the tabulated phase function's piecewise-linear CDF reaches u, by BISECTIONS
    halvings of [-1, 1] (the kernel's ``species == 2`` arm, whose Table a helper cannot take)."""
    lo, hi = -1.0 + 0.0 * u, 1.0 + 0.0 * u
    for _ in range(BISECTIONS):
        mid, i, f = bisect_cell(lo, hi)
        lo, hi = bisect_halve(lo, hi, mid, cdf[i], cdf[i + 1], f, u)
    return 0.5 * (lo + hi)


def phase_table() -> np.ndarray:
    """The tabulated phase function's CDF at CELLS + 1 even points of cos(theta) in [-1, 1]: a
    forward lobe and a backward glory, p(x) = 1 + 2 x^8 + 0.5 (1 - x)^4 (any table would do)."""
    x = np.linspace(-1.0, 1.0, CELLS + 1)
    cdf = (x + 1.0) + 2.0 / 9.0 * (x ** 9 + 1.0) + 0.5 / 5.0 * (32.0 - (1.0 - x) ** 5)
    return cdf / cdf[-1]


# Philox4x32-10 in uint64 arithmetic, hawk's counter layout (hawk/philox.py): for JAX and Numba,
# which have no hawk.random; checked against it at start-up (check_philox).
M0, M1, W0, W1 = (np.uint64(c) for c in (0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85))
LOW, S11, S32 = np.uint64(0xFFFFFFFF), np.uint64(11), np.uint64(32)


def philox_uniform(seed, sample, counter):
    """hawk.random.uniform(seed, counter, sample=sample), all three uint64."""
    c0, c1, c2, c3 = sample & LOW, sample >> S32, counter & LOW, counter >> S32
    k0, k1 = seed & LOW, seed >> S32
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & LOW, (k1 + W1) & LOW
        p0, p1 = c0 * M0, c2 * M1
        c0, c1, c2, c3 = (p1 >> S32) ^ c1 ^ k0, p1 & LOW, (p0 >> S32) ^ c3 ^ k1, p0 & LOW
    return (hm.float64(c0 >> S11) * 4294967296.0 + hm.float64(c1)) * 2.0 ** -53


#: the arithmetic the peers share, in the order each may call the ones before it
SHARED = (free_path, turn, henyey_greenstein, rayleigh, species_of, bisect_cell, bisect_halve,
          tabulated, philox_uniform)


def shared_math(math_module: object,
                wrap: Callable[[Callable], Callable] = lambda fn: fn) -> types.SimpleNamespace:
    """Every function of SHARED with ``hm`` meaning ``math_module`` (JAX's functions, or Numba's
    scalar ones) and each wrapped (``numba.njit``): the same arithmetic on another library."""
    names: dict[str, object] = {"hm": math_module}
    for helper in SHARED:
        fn = getattr(helper, "fn", helper)
        names[fn.__name__] = wrap(types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__))
    return types.SimpleNamespace(**names)


# ----------------------------------------------------------------------------- eagle's step


@hawk.kernel
def choose(k: UInt32, fate: UInt32, pid: UInt32, species: Mutable[Int32], seed: Param[Int32]):
    """The species this collision scatters off: a plane of its own, the dispatch's selector."""
    if fate == 0:
        species = species_of(hawk.random.uniform(seed, k * hm.uint32(DRAWS), sample=pid), k)


@hawk.kernel
def walk(z: Mutable[Scalar], mu: Mutable[Scalar], path: Mutable[Scalar], k: Mutable[UInt32],
         fate: Mutable[UInt32], pid: UInt32, species: Int32, cdf: Table.clamp, seed: Param[Int32]):
    """One free flight, then escape (fate 1 up, 2 down), absorption (3) or a scattering."""
    if fate == 0:
        c = k * hm.uint32(DRAWS)
        s = free_path(hawk.random.uniform(seed, c + hm.uint32(1), sample=pid))
        zn = z + mu * s
        if zn < 0.0:
            path = path + z / (0.0 - mu)
            fate = hm.uint32(1)
        elif zn > TAU:
            path = path + (TAU - z) / mu
            fate = hm.uint32(2)
        else:
            z = zn
            path = path + s
            k = k + hm.uint32(1)
            if hawk.random.uniform(seed, c + hm.uint32(2), sample=pid) > ALBEDO:
                fate = hm.uint32(3)
            else:
                u = hawk.random.uniform(seed, c + hm.uint32(3), sample=pid)
                v = hawk.random.uniform(seed, c + hm.uint32(4), sample=pid)
                match hawk.dispatch(species, "material", policy="auto"):
                    case 0:
                        mu = 2.0 * u - 1.0
                    case 1:
                        mu = turn(mu, henyey_greenstein(u), v)
                    case 2:
                        lo = -1.0
                        hi = 1.0
                        for _ in range(BISECTIONS):
                            mid, i, f = bisect_cell(lo, hi)
                            lo, hi = bisect_halve(lo, hi, mid, cdf[i], cdf[i + 1], f, u)
                        mu = turn(mu, 0.5 * (lo + hi), v)
                    case 3:
                        mu = turn(mu, rayleigh(u), v)


# ----------------------------------------------------------------------------- photons and tallies


@dataclass
class Photons:
    """The state planes of n photons, entering at the top, straight down; ``fate`` is the loop's
    ``terminated`` (0 live, 1 reflected, 2 transmitted, 3 absorbed)."""

    z: np.ndarray
    mu: np.ndarray
    path: np.ndarray
    k: np.ndarray
    fate: np.ndarray
    species: np.ndarray
    pid: np.ndarray

    @classmethod
    def fresh(cls, n: int) -> Photons:
        return cls(np.zeros(n), np.ones(n), np.zeros(n), np.zeros(n, np.uint32), np.zeros(n, np.uint32),
                   np.zeros(n, np.int32), np.arange(n, dtype=np.uint32))

    def inject(self) -> None:
        """Back to the start, in place (the planes a runner holds stay the same arrays)."""
        for plane, value in ((self.z, 0.0), (self.mu, 1.0), (self.path, 0.0), (self.k, 0), (self.fate, 0),
                             (self.species, 0)):
            plane.fill(value)


@dataclass(frozen=True)
class Tallies:
    reflected: int
    transmitted: int
    absorbed: int
    truncated: int
    histogram: bytes  # the collision counts' np.bincount, int64
    path: float  # total path length, math.fsum over photons in photon order

    @classmethod
    def of(cls, fate: np.ndarray, k: np.ndarray, path: np.ndarray) -> Tallies:
        counts = np.bincount(np.asarray(fate, np.int64), minlength=4)
        return cls(int(counts[1]), int(counts[2]), int(counts[3]), int(counts[0]),
                   np.bincount(np.asarray(k, np.int64)).astype(np.int64).tobytes(), math.fsum(path.tolist()))

    def brief(self) -> str:
        return f"R {self.reflected} T {self.transmitted} A {self.absorbed} path {self.path!r}"


def tail(k: np.ndarray) -> dict[str, float]:
    """Collision-count quantiles of a run: the heavy tail the workload promises."""
    q = np.percentile(k, [50, 90, 99, 99.9])
    return {"median": q[0], "p90": q[1], "p99": q[2], "p99.9": q[3], "max": float(k.max())}


# ----------------------------------------------------------------------------- NumPy with masks


def numpy_step(p: Photons, lanes: np.ndarray | None, cdf: np.ndarray) -> None:
    """One step of the photons at ``lanes`` (their indices, the live subset: ``x[alive]``), or of
    every photon (``None``: full-width updates under masks, every arm computed for every lane and
    the finished lanes' values kept by ``np.where``); the kernels' arithmetic, operation for
    operation."""
    take = (lambda a: a) if lanes is None else (lambda a: a[lanes])
    z, mu, path, k, fate, pid = (take(a) for a in (p.z, p.mu, p.path, p.k, p.fate, p.pid))
    live = fate == 0

    def draw(j: int) -> np.ndarray:
        return hawk.random.uniform(SEED, k.astype(np.uint64) * DRAWS + j, sample=pid)

    species = species_of(draw(0), k)
    s = free_path(draw(1))
    zn = z + mu * s
    up, down = zn < 0.0, zn > TAU
    inside = ~(up | down)
    with np.errstate(divide="ignore", invalid="ignore"):  # the flights that did not end so
        path_new = np.where(up, path + z / (0.0 - mu), np.where(down, path + (TAU - z) / mu, path + s))
    absorbed = inside & (draw(2) > ALBEDO)
    scattered = inside & ~absorbed
    u, v = draw(3), draw(4)
    if lanes is None:
        arms = (2.0 * u - 1.0, turn(mu, henyey_greenstein(u), v), turn(mu, tabulated(cdf, u), v),
                turn(mu, rayleigh(u), v))
        mu_new = np.choose(species, arms)
    else:
        mu_new = mu.copy()
        for arm, arm_mu in enumerate((lambda m, a, b: 2.0 * a - 1.0,
                                      lambda m, a, b: turn(m, henyey_greenstein(a), b),
                                      lambda m, a, b: turn(m, tabulated(cdf, a), b),
                                      lambda m, a, b: turn(m, rayleigh(a), b))):
            hit = species == arm
            mu_new[hit] = arm_mu(mu[hit], u[hit], v[hit])
    out = {"z": np.where(inside, zn, z), "mu": np.where(scattered, mu_new, mu), "path": path_new,
           "k": k + inside.astype(np.uint32),
           "fate": np.where(up, 1, np.where(down, 2, np.where(absorbed, 3, 0))).astype(np.uint32),
           "species": species.astype(np.int32)}
    for name, value in out.items():
        plane = getattr(p, name)
        if lanes is None:
            plane[live] = value[live]
        else:
            plane[lanes] = value


def numpy_run(p: Photons, cdf: np.ndarray, full_width: bool, max_steps: int) -> int:
    """Steps until every photon is done (or the cap): the number of steps."""
    steps = 0
    while steps < max_steps:
        lanes = np.flatnonzero(p.fate == 0)
        if not lanes.size:
            break
        numpy_step(p, None if full_width else lanes, cdf)
        steps += 1
    return steps


# ----------------------------------------------------------------------------- JAX and Numba


def check_philox(uniform: Callable, who: str) -> None:
    """A peer's Philox gives hawk.random's bits on a few thousand draws, high counter and sample
    words included."""
    rng = np.random.default_rng(0)
    seed = rng.integers(0, 2 ** 63, 2048, dtype=np.uint64)
    sample = rng.integers(0, 2 ** 40, 2048, dtype=np.uint64)
    counter = rng.integers(0, 2 ** 40, 2048, dtype=np.uint64)
    want = hawk.random.uniform(seed, counter, sample=sample)
    got = np.asarray(uniform(seed, sample, counter), np.float64)
    assert got.tobytes() == want.tobytes(), f"{who}'s Philox differs from hawk.random.uniform"


def jax_walk(jax, jnp, cdf: np.ndarray, max_steps: int) -> tuple[Callable, Callable]:
    """JAX's fastest form of the run: ``jit(vmap(photon))``, each photon a ``lax.while_loop`` and
    its scattering a ``lax.switch`` (under vmap every lane runs every step, and every arm, until
    the last photon is done).  Returns (the jitted function of the photon ids, its Philox)."""
    lax = jax.lax
    ops = types.ModuleType("jax_math")
    ops.sqrt, ops.maximum, ops.where = jnp.sqrt, jnp.maximum, jnp.where
    ops.int32, ops.float64 = (lambda x: x.astype(jnp.int32)), (lambda x: jnp.asarray(x).astype(jnp.float64))
    m = shared_math(ops)
    table, seed, u32 = jnp.asarray(cdf), jnp.uint64(SEED), jnp.uint32

    def photon(pid):
        def draw(k, j):
            return m.philox_uniform(seed, pid.astype(jnp.uint64), k.astype(jnp.uint64) * DRAWS + j)

        def going(state):
            return (state[4] == 0) & (state[5] < max_steps)

        def step(state):
            z, mu, path, k, _, steps = state
            species = m.species_of(draw(k, 0), k).astype(jnp.int32)
            s = m.free_path(draw(k, 1))
            zn = z + mu * s
            up, down = zn < 0.0, zn > TAU
            inside = ~(up | down)
            path = jnp.where(up, path + z / (0.0 - mu), jnp.where(down, path + (TAU - z) / mu, path + s))
            absorbed = inside & (draw(k, 2) > ALBEDO)
            u, v = draw(k, 3), draw(k, 4)
            turned = lax.switch(species, (lambda: 2.0 * u - 1.0,
                                          lambda: m.turn(mu, m.henyey_greenstein(u), v),
                                          lambda: m.turn(mu, m.tabulated(table, u), v),
                                          lambda: m.turn(mu, m.rayleigh(u), v)))
            fate = jnp.where(up, u32(1), jnp.where(down, u32(2), jnp.where(absorbed, u32(3), u32(0))))
            return (jnp.where(inside, zn, z), jnp.where(inside & ~absorbed, turned, mu), path,
                    k + inside.astype(jnp.uint32), fate, steps + 1)

        start = (jnp.float64(0.0), jnp.float64(1.0), jnp.float64(0.0), u32(0), u32(0), jnp.int32(0))
        return lax.while_loop(going, step, start)[2:5]

    return jax.jit(jax.vmap(photon)), jax.jit(m.philox_uniform)


def numba_walk(numba, max_steps: int) -> tuple[Callable, Callable]:
    """Numba's fastest form: ``@njit(parallel=True)``, ``prange`` over photons, each photon run to
    completion (history-based), in chunks of 16 photons where Numba can set them (a static split
    of a heavy tail leaves threads idle).  Returns (the run, its Philox)."""
    nj = numba.njit
    ops = types.ModuleType("numba_math")
    ops.sqrt, ops.maximum = nj(lambda x: math.sqrt(x)), nj(lambda a, b: a if a >= b else b)
    ops.where, ops.int32, ops.float64 = nj(lambda c, a, b: a if c else b), np.int32, np.float64
    m = shared_math(ops, nj)
    draw, species_of_, free_path_, turn_ = m.philox_uniform, m.species_of, m.free_path, m.turn
    hg, tab, ray = m.henyey_greenstein, m.tabulated, m.rayleigh
    seed, draws = np.uint64(SEED), np.uint64(DRAWS)
    one, two, three, four = (np.uint64(j) for j in range(1, 5))

    @numba.njit(parallel=True)
    def run(pid, cdf, fate, k, path):
        for i in numba.prange(pid.size):
            z, mu, p, kk, f, steps, sample = 0.0, 1.0, 0.0, 0, 0, 0, np.uint64(pid[i])
            while f == 0 and steps < max_steps:
                c = np.uint64(kk) * draws
                species = species_of_(draw(seed, sample, c), kk)
                s = free_path_(draw(seed, sample, c + one))
                zn = z + mu * s
                if zn < 0.0:
                    p = p + z / (0.0 - mu)
                    f = 1
                elif zn > TAU:
                    p = p + (TAU - z) / mu
                    f = 2
                else:
                    z = zn
                    p = p + s
                    kk += 1
                    if draw(seed, sample, c + two) > ALBEDO:
                        f = 3
                    else:
                        u, v = draw(seed, sample, c + three), draw(seed, sample, c + four)
                        if species == 0:
                            mu = 2.0 * u - 1.0
                        elif species == 1:
                            mu = turn_(mu, hg(u), v)
                        elif species == 2:
                            mu = turn_(mu, tab(cdf, u), v)
                        else:
                            mu = turn_(mu, ray(u), v)
                steps += 1
            fate[i], k[i], path[i] = f, kk, p

    @numba.njit
    def uniforms(seed, sample, counter):
        out = np.empty(seed.size)
        for i in range(seed.size):
            out[i] = draw(seed[i], sample[i], counter[i])
        return out

    return run, uniforms


# ----------------------------------------------------------------------------- the variants


@dataclass
class Variant:
    """One way to run the batch: ``run()`` takes it from injection to the end; ``state()`` gives
    (fate, k, path, mu, z) of the last run, per photon in photon order (mu and z where it keeps
    them); ``who`` is eagle, NumPy, JAX or Numba; ``refused`` the message when it cannot run."""

    name: str
    who: str
    run: Callable[[], object]
    state: Callable[[], tuple]
    refused: str = ""
    first: float = 0.0  # seconds of the first call (compile or cache load, and one run)
    compile: float = 0.0  # seconds of an explicit compile, where the peer has one
    report: object = None  # the last simulate report


def eagle_variants(n: int, cdf: np.ndarray) -> list[Variant]:
    """eagle.simulate with each compaction and dispatch setting, and the plain until_done runner;
    each on photons of its own (simulate moves them)."""
    out = []
    settings = [("simulate compact=auto dispatch=None", {}), ("simulate compact=False", {"compact": False}),
                ("simulate compact=True", {"compact": True})]
    settings += [(f"simulate dispatch={policy!r}", {"dispatch": policy})
                 for policy in ("switch", "predicated", "segmented")]
    for name, options in settings:
        out.append(_simulate_variant(name, Photons.fresh(n), cdf, options))
    p = Photons.fresh(n)
    runner = eagle.until_done(step_plans(p, cdf), terminated=p.fate, max_steps=MAX_STEPS)

    def plain() -> None:
        p.inject()
        runner.run()

    out.append(Variant("until_done runner", "eagle", plain, lambda: (p.fate, p.k, p.path, p.mu, p.z)))
    return out


def step_plans(p: Photons, cdf: np.ndarray) -> list:
    return [choose.plan(p.k, p.fate, p.pid, p.species, SEED),
            walk.plan(p.z, p.mu, p.path, p.k, p.fate, p.pid, p.species, cdf, SEED)]


def _simulate_variant(name: str, p: Photons, cdf: np.ndarray, options: dict) -> Variant:
    plans = step_plans(p, cdf)
    variant = Variant(name, "eagle", lambda: None, lambda: (p.fate, p.k, p.path, p.mu, p.z))

    def run() -> None:
        p.inject()
        variant.report = eagle.simulate(plans, terminated=p.fate, max_steps=MAX_STEPS, **options).report

    variant.run = run
    return variant


def numpy_variants(n: int, cdf: np.ndarray, full_width: bool) -> list[Variant]:
    out = []
    for wide in (False, True)[:1 + full_width]:
        p = Photons.fresh(n)
        out.append(Variant(f"NumPy, {'full-width masks' if wide else 'live subset x[alive]'}", "NumPy",
                           lambda p=p, wide=wide: (p.inject(), numpy_run(p, cdf, wide, MAX_STEPS)),
                           lambda p=p: (p.fate, p.k, p.path, p.mu, p.z)))
    return out


def jax_variant(jax, jnp, n: int, cdf: np.ndarray) -> Variant:
    fn, uniform = jax_walk(jax, jnp, cdf, MAX_STEPS)
    check_philox(uniform, "JAX")
    pid = jnp.asarray(np.arange(n, dtype=np.uint32))
    start = time.perf_counter()
    compiled = fn.lower(pid).compile()
    took = time.perf_counter() - start
    last: list = []

    def run() -> None:
        last[:] = [np.asarray(a) for a in jax.block_until_ready(compiled(pid))]

    return Variant("JAX jit(vmap(while_loop)), lax.switch", "JAX", run,
                   lambda: (last[2], last[1], last[0]), compile=took)


def numba_variant(numba, n: int, cdf: np.ndarray) -> Variant:
    run, uniform = numba_walk(numba, MAX_STEPS)
    check_philox(uniform, "Numba")
    if hasattr(numba, "set_parallel_chunksize"):
        numba.set_parallel_chunksize(16)
    pid = np.arange(n, dtype=np.uint32)
    fate, k, path = np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.zeros(n)
    chunks = "chunks of 16" if hasattr(numba, "set_parallel_chunksize") else "static chunks"
    return Variant(f"Numba prange over photons ({chunks})", "Numba", lambda: run(pid, cdf, fate, k, path),
                   lambda: (fate, k, path))


def first_calls(variants: list[Variant]) -> list[Variant]:
    """Each variant's first call, timed (its compile or cache load); those eagle or hawk refuse are
    kept with the refusal, which the table shows."""
    for v in variants:
        if v.compile:  # compiled ahead of time (JAX), so a first run would only repeat a timed one
            v.first = v.compile
            continue
        start = time.perf_counter()
        try:
            v.run()
        except (TypeError, ValueError, SyntaxError) as err:  # hawk refuses a policy by a KernelSyntaxError
            if not str(err).startswith(("hawk.", "eagle.")):
                raise
            v.refused = str(err)
        v.first = time.perf_counter() - start
    return [v for v in variants if not v.refused]


def timed(variants: list[Variant], repeat: int, budget: float) -> dict[str, tuple[float, int]]:
    """Median seconds and number of runs of each variant, run in turns (one run of each per
    round, as harness.interleaved_medians), warm-ups excluded; a variant stops after ``budget``
    seconds of runs (at least one)."""
    times: dict[str, list[float]] = {v.name: [] for v in variants}
    for _ in range(repeat):
        for v in variants:
            if times[v.name] and sum(times[v.name]) > budget:
                continue
            start = time.perf_counter()
            v.run()
            times[v.name].append(time.perf_counter() - start)
    return {name: (statistics.median(t), len(t)) for name, t in times.items()}


# ----------------------------------------------------------------------------- what it costs


def step_costs(n: int, cdf: np.ndarray, repeat: int = 9) -> dict[str, float]:
    """§6.5's two figures on the plain loop: the fixed cost of a step (one live photon: a loop
    whose logical size is 1) and the cost of a finished lane beside a live one (c_dead, a step with
    one photon of n live) against a live one (c_live, the first step of n fresh photons)."""
    p = Photons.fresh(n)
    runner = eagle.until_done(step_plans(p, cdf), terminated=p.fate, max_steps=MAX_STEPS)

    def one_step(live: int) -> float:
        best = math.inf
        for _ in range(repeat):
            p.inject()
            p.fate[live:] = 3
            best = min(best, _time(lambda: runner.run(max_steps=1)))
        return best

    runner.set_logical_size(1)
    fixed = one_step(1)
    runner.set_logical_size(n)
    lonely, full = one_step(1), one_step(n)
    return {"fixed": fixed, "c_dead": (lonely - fixed) / (n - 1), "c_live": (full - fixed) / n}


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# ----------------------------------------------------------------------------- the table


FULL_WIDTH_MAX = 4096  # NumPy's full-width form runs every arm for every photon until the last ends


def bench(n: int, repeat: int, budget: float, jax_pair: tuple | None, numba: object | None,
          alone: bool = False) -> None:
    """The table at n photons; ``alone``: the peers only, their figures and tallies (JAX at 262,144
    runs for a quarter of an hour a run: a process of its own beside the table's)."""
    cdf = phase_table()
    variants = [] if alone else (eagle_variants(n, cdf)
                                 + numpy_variants(n, cdf, full_width=n <= FULL_WIDTH_MAX))
    if jax_pair is not None:
        variants.append(jax_variant(*jax_pair, n, cdf))
    if numba is not None:
        variants.append(numba_variant(numba, n, cdf))
    runnable = first_calls(variants)
    medians = timed(runnable, repeat, budget)
    if alone:
        for v in runnable:
            t, runs = medians[v.name]
            print(f"\n{n:,} photons, {v.name}: median {t:.4f} s of {runs} runs (compile {v.compile:.2f} s), "
                  f"{_steps(v.state())} steps, {Tallies.of(*v.state()[:3]).brief()}")
        return
    eagles = [v for v in runnable if v.who == "eagle"]
    reference = eagles[0].state()
    for v in runnable:
        if v.who in ("eagle", "NumPy"):  # the same arithmetic in the same order: the same bits
            _assert_same(reference, v.state(), f"{v.name} at {n} photons")
    fate, k, path = reference[:3]
    tallies = Tallies.of(fate, k, path)
    quantiles = tail(k)
    print(f"\n{n:,} photons (tau {TAU}, albedo {ALBEDO}): {tallies.brief()}")
    print("  collisions per photon: " + ", ".join(f"{q} {v:g}" for q, v in quantiles.items()))
    assert quantiles["max"] >= TAIL * quantiles["median"], f"no heavy tail at {n} photons: {quantiles}"
    best = min(medians[v.name][0] for v in eagles)
    rows = [("variant", "median", "/ best eagle", "runs", "steps", "truncated", "tallies equal",
             "first call")]
    for v in variants:
        if v.refused:
            rows.append((v.name, "refused", "", "", "", "", "", v.refused))
            continue
        t, runs = medians[v.name]
        state = v.state()
        mine = Tallies.of(*state[:3])
        planes = zip(reference[:len(state)], state, strict=True)  # JAX and Numba keep no mu or z
        same = "bit-identical" if all(a.tobytes() == b.tobytes() for a, b in planes) else (
            "tallies equal" if mine == tallies else "DIFFER")
        if same == "tallies equal":  # a peer whose compiler reorders or contracts float arithmetic
            differ = int(np.count_nonzero(state[2] != path))
            same += f" ({differ} photons' path lengths differ in the last bits)"
        first = f"compile {v.compile:.2f} s" if v.compile else f"{v.first:.2f} s"
        rows.append((v.name, f"{t:.4f} s", f"{t / best:.2f}x", str(runs), str(_steps(state)),
                     str(mine.truncated), same, first))
    _print_rows(rows)
    simulate = eagles[0].report
    print(f"  {eagles[0].name}: {len(simulate.compactions)} compactions "
          f"({', '.join(f'{c.before}->{c.after} at step {c.step}' for c in simulate.compactions[:6])}"
          f"{' ...' if len(simulate.compactions) > 6 else ''}); seconds per phase "
          + ", ".join(f"{k} {v:.4f}" for k, v in simulate.seconds.items())
          + f"; {len(simulate.dispatch)} dispatch decisions, policies over steps "
          + str(simulate.policies().get("material", [])[:8])
          + (f"; notes: {simulate.notes}" if simulate.notes else ""))
    goals(n, medians, cdf, _photon_steps(fate, k))


def _assert_same(reference: tuple, state: tuple, what: str) -> None:
    for name, a, b in zip(("fate", "k", "path", "mu", "z"), reference, state, strict=True):
        assert a.tobytes() == b.tobytes(), f"{what}: plane {name} differs from the first eagle variant's"


def _photon_steps(fate: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Each photon's steps: a collision each, and the flight it escaped by."""
    return k.astype(np.int64) + ((fate == 1) | (fate == 2))


def _steps(state: tuple) -> int:
    """The steps the batch took: its longest photon's."""
    return int(_photon_steps(state[0], state[1]).max())


def _print_rows(rows: list[tuple]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  " + "  ".join(f"{c:<{w}}" for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])


def goals(n: int, medians: dict[str, tuple[float, int]], cdf: np.ndarray, steps: np.ndarray) -> None:
    """The issue's goals, each with the figure measured here and whether it is met; then §6.5's
    figures, which say why one misses (``steps``: each photon's own steps)."""
    t = {name: m[0] for name, m in medians.items()}
    auto, off, on = (t[f"simulate compact={c}"] for c in ("auto dispatch=None", "False", "True"))
    fixed = {p: t[f"simulate dispatch={p!r}"] for p in ("switch", "predicated", "segmented")
             if f"simulate dispatch={p!r}" in t}
    best_policy = min(fixed, key=fixed.get)
    eagle_best = min(v for k, v in t.items() if k.startswith(("simulate", "until_done")))
    jax = next((v for k, v in t.items() if k.startswith("JAX")), None)

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print(f"  goals at {n:,} photons (the issue sets them at 262,144):")
    print(f"    compaction >= 3x faster than none: compact=False / compact=auto = {off / auto:.2f}x "
          f"{verdict(off / auto >= 3)} (compact=False / compact=True = {off / on:.2f}x)")
    print(f"    dispatch=None within 10 % of the best fixed policy ({best_policy}): "
          f"{100 * (auto / fixed[best_policy] - 1):+.1f} % {verdict(auto <= 1.1 * fixed[best_policy])}")
    if jax is not None:
        print(f"    eagle <= 0.5x JAX's time: best eagle / JAX = {eagle_best / jax:.3f}x "
              f"{verdict(eagle_best <= 0.5 * jax)}")
    costs = step_costs(n, cdf)
    ratio = costs["c_dead"] / costs["c_live"]
    longest, mean = int(steps.max()), float(steps.mean())
    print(f"    why (§6.5, on the plain loop): a step's fixed cost {costs['fixed'] * 1e6:.1f} us; "
          f"a photon-step costs c_live {costs['c_live'] * 1e9:.1f} ns live, "
          f"c_dead {costs['c_dead'] * 1e9:.1f} ns finished "
          f"(c_dead / c_live = {ratio:.3f}); S_max / mean steps = {longest} / {mean:.1f}, so no compaction "
          f"costs about 1 + {longest / mean:.0f} x {ratio:.3f} = {1 + longest / mean * ratio:.1f}x the live "
          f"work, plus {longest} x {costs['fixed'] * 1e6:.1f} us of fixed cost either way")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run each: checks, not figures")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 262_144])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each variant (medians)")
    parser.add_argument("--budget", type=float, default=math.inf,
                        help="seconds of timed runs after which a variant stops (at least one run)")
    parser.add_argument("--peers", nargs="*", choices=("jax", "numba"), default=["jax", "numba"],
                        help="the peers to run where installed (none: eagle and NumPy only)")
    parser.add_argument("--alone", action="store_true", help="the peers only: their times and tallies")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = [4096], 1  # the fewest photons whose longest lives 50x the median
    jax_pair = load_jax() if "jax" in args.peers else None  # before any JAX computation: sync dispatch
    numba = load_numba() if "numba" in args.peers else None
    print(f"bench_simulate: photons in a slab until absorbed or escaped; medians of {args.repeat} runs in "
          f"turns; eagle {eagle.__version__}, NumPy {np.__version__}"
          + (f", JAX {jax_pair[0].__version__}" if jax_pair else ", JAX not installed")
          + (f", Numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads)" if numba else
             ", Numba not installed"))
    for n in args.sizes:
        bench(n, args.repeat, args.budget, jax_pair, numba, args.alone)


if __name__ == "__main__":
    sys.exit(main())
