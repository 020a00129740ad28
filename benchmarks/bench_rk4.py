"""An RK4 step of damped, driven pendulums in a capped device loop, beside NumPy, Numba, JAX and Warp.

Each pendulum obeys theta'' = -GAMMA theta' - sin(theta) + a cos(DRIVE t), with its own drive
amplitude ``a`` and its own clock ``t`` (a plane).  A turn of the loop is one classical RK4 step,
written the natural way (``x = k(x)``): the derivative (four times), three stage combinations, the
update, and an "all at rest" guard, a ``hawk.sum`` that counts the pendulums still moving.  The
drive keeps them moving, so every peer runs the loop to its cap of ``TURNS`` turns and evaluates
the guard at each (the benchmark checks both).

Peers, each in its strongest form: NumPy eager with a Python loop (the reference of the ratios);
Numba's fastest of array expressions, one fused per-sample loop and that loop under ``prange``;
JAX ``jit`` of a ``lax.while_loop``; Warp's CPU graph of a ``capture_while`` around one fused step
kernel.  The peers share one Python step function, each given its own sin and cos.  ``run.py``
puts these rows in its table; this script prints them on their own (JAX in this process).

Run: python benchmarks/bench_rk4.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import Entry, fmt, table, time_entries
from peers import Peers, load_jax, load_numba, load_warp, warp_loop

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

GAMMA, DRIVE, DT, REST, TURNS = 0.5, 2.0 / 3.0, 0.01, 1e-3, 50
SIZES = (64, 4096, 262_144)


@hawk.kernel
def slope(th: Scalar, om: Scalar, t: Scalar, a: Scalar, h: Param) -> tuple[Scalar, Scalar]:
    """(theta', omega') at time t + h."""
    return om, -GAMMA * om - hm.sin(th) + a * hm.cos(DRIVE * (t + h))


@hawk.kernel
def stage(th: Scalar, om: Scalar, dth: Scalar, dom: Scalar, h: Param) -> tuple[Scalar, Scalar]:
    return th + h * dth, om + h * dom


@hawk.kernel
def update(th: Scalar, om: Scalar, t: Scalar, dth1: Scalar, dom1: Scalar, dth2: Scalar, dom2: Scalar,
           dth3: Scalar, dom3: Scalar, dth4: Scalar, dom4: Scalar) -> tuple[Scalar, Scalar, Scalar]:
    return (th + DT / 6.0 * (dth1 + 2.0 * dth2 + 2.0 * dth3 + dth4),
            om + DT / 6.0 * (dom1 + 2.0 * dom2 + 2.0 * dom3 + dom4), t + DT)


@hawk.kernel
def moving(th: Scalar, om: Scalar, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(abs(om) > REST or abs(th) > REST))


@eagle.Graph.builder
def pendulums(th, om, t, a, flag):
    g = eagle.Graph()
    for _ in range(TURNS):  # a capped device loop ...
        if not flag:  # ... that leaves when every pendulum is at rest
            break
        dth1, dom1 = slope(th, om, t, a, 0.0)
        s, w = stage(th, om, dth1, dom1, DT / 2.0)
        dth2, dom2 = slope(s, w, t, a, DT / 2.0)
        s, w = stage(th, om, dth2, dom2, DT / 2.0)
        dth3, dom3 = slope(s, w, t, a, DT / 2.0)
        s, w = stage(th, om, dth3, dom3, DT)
        dth4, dom4 = slope(s, w, t, a, DT)
        th, om, t = update(th, om, t, dth1, dom1, dth2, dom2, dth3, dom3, dth4, dom4)
        moving(th, om, flag)
    g.result = (th, om)
    return g


def start(n: int) -> dict[str, np.ndarray]:
    """Angles, speeds, clocks and drive amplitudes of n pendulums."""
    rng = np.random.default_rng(4)
    return {"th": rng.uniform(-1.0, 1.0, n), "om": rng.uniform(-0.5, 0.5, n), "t": np.zeros(n),
            "a": rng.uniform(0.5, 1.5, n)}


def make_step(sin, cos, num=float):
    """One RK4 step of (th, om, t) in the kernels' order of operations, on arrays (NumPy, JAX) or on
    one sample's numbers (Numba's and Warp's per-sample loops), with that library's sin and cos and
    its float64 for the constants (``wp.float64``: a bare number is float32 to Warp)."""
    constants = (GAMMA, DRIVE, DT, DT / 2.0, DT / 6.0, 2.0, 0.0)
    gamma, drive, dt, half, sixth, two, zero = (num(v) for v in constants)

    def step(th, om, t, a):
        dth1, dom1 = om, -gamma * om - sin(th) + a * cos(drive * (t + zero))
        s, w = th + half * dth1, om + half * dom1
        dth2, dom2 = w, -gamma * w - sin(s) + a * cos(drive * (t + half))
        s, w = th + half * dth2, om + half * dom2
        dth3, dom3 = w, -gamma * w - sin(s) + a * cos(drive * (t + half))
        s, w = th + dt * dth3, om + dt * dom3
        dth4, dom4 = w, -gamma * w - sin(s) + a * cos(drive * (t + dt))
        return (th + sixth * (dth1 + two * dth2 + two * dth3 + dth4),
                om + sixth * (dom1 + two * dom2 + two * dom3 + dom4), t + dt)

    step.__annotations__ = dict.fromkeys(("th", "om", "t", "a"), num)  # Warp's wp.func reads these
    return step


def make_loop(step):
    """The capped loop of whole-array steps: NumPy eager's, or Numba's of array expressions."""

    def loop(th, om, t, a):
        for _ in range(TURNS):
            th, om, t = step(th, om, t, a)
            if not np.sum((np.abs(om) > REST) | (np.abs(th) > REST)):
                break
        return th, om

    return loop


numpy_step = make_step(np.sin, np.cos)
numpy_rk4 = make_loop(numpy_step)  # NumPy eager: one call per operation, a Python loop over the turns


def eagle_entries(state):
    flag = np.ones(1, np.uint32)
    g = pendulums(state["th"], state["om"], state["t"], state["a"], flag)

    def replay():
        flag[0] = 1
        g.launch()
        return g.result

    return [Entry("eagle", "", replay)]


def numba_entries(numba, state):
    step = numba.njit(inline="always")(numpy_step)

    def per_sample(parallel):
        loop = numba.prange if parallel else range

        @numba.njit(parallel=parallel)
        def run(th0, om0, t0, a):
            th, om, t = th0.copy(), om0.copy(), t0.copy()
            for _ in range(TURNS):
                still = 0
                for i in loop(th.size):
                    th[i], om[i], t[i] = step(th[i], om[i], t[i], a[i])
                    still += abs(om[i]) > REST or abs(th[i]) > REST
                if still == 0:
                    break
            return th, om

        return lambda: run(*args)

    arrays = numba.njit(make_loop(step))
    args = (state["th"], state["om"], state["t"], state["a"])
    return [Entry("Numba", "array expressions", lambda: arrays(*args)),
            Entry("Numba", "fused loop", per_sample(False)), Entry("Numba", "prange", per_sample(True))]


def jax_entries(jax_, state):
    jax, jnp = jax_
    step = make_step(jnp.sin, jnp.cos)

    @jax.jit
    def run(th, om, t, a):
        def body(carry):
            th, om, t, _, turns = carry
            th, om, t = step(th, om, t, a)
            return th, om, t, jnp.sum((jnp.abs(om) > REST) | (jnp.abs(th) > REST)), turns + 1

        carry = jax.lax.while_loop(lambda c: (c[3] > 0) & (c[4] < TURNS), body, (th, om, t, jnp.int64(1), 0))
        return carry[0], carry[1]

    args = [jnp.asarray(state[k]) for k in ("th", "om", "t", "a")]
    return [Entry("JAX", "jit(lax.while_loop)", lambda: jax.block_until_ready(run(*args)))]


def warp_entries(wp, state):
    """One fused step kernel per turn that counts the pendulums still moving, in Warp's CPU graph of a
    ``capture_while`` (the state reset from the start by the graph's first kernel)."""
    step, rest = wp.func(make_step(wp.sin, wp.cos, wp.float64)), wp.float64(REST)

    @wp.kernel
    def begin(th0: wp.array(dtype=wp.float64), om0: wp.array(dtype=wp.float64),
              t0: wp.array(dtype=wp.float64), th: wp.array(dtype=wp.float64), om: wp.array(dtype=wp.float64),
              t: wp.array(dtype=wp.float64)):
        i = wp.tid()
        th[i] = th0[i]
        om[i] = om0[i]
        t[i] = t0[i]

    @wp.kernel
    def advance(th: wp.array(dtype=wp.float64), om: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64),
                a: wp.array(dtype=wp.float64), still: wp.array(dtype=wp.int32)):
        i = wp.tid()
        th_i, om_i, t_i = step(th[i], om[i], t[i], a[i])
        th[i] = th_i
        om[i] = om_i
        t[i] = t_i
        if wp.abs(om_i) > rest or wp.abs(th_i) > rest:
            wp.atomic_add(still, 0, 1)

    n = state["th"].size
    initial = [wp.array(state[k], dtype=wp.float64, device="cpu") for k in ("th", "om", "t")]
    th, om, t = (wp.empty(n, dtype=wp.float64, device="cpu") for _ in range(3))
    a = wp.array(state["a"], dtype=wp.float64, device="cpu")
    replay, _ = warp_loop(wp, lambda: wp.launch(begin, dim=n, inputs=[*initial, th, om, t], device="cpu"),
                          lambda still: wp.launch(advance, dim=n, inputs=[th, om, t, a, still], device="cpu"),
                          TURNS)

    def run():
        replay()
        return th.numpy(), om.numpy()

    return [Entry("Warp", "capture_while", run)]


def entries(n: int, peers: Peers) -> list[Entry]:
    """Every competitor's runs of n pendulums for TURNS turns, each checked against NumPy's."""
    state = start(n)
    want = numpy_rk4(*(state[k] for k in ("th", "om", "t", "a")))
    # Still moving at the end, so never all at rest before: NumPy ran every turn, and a peer that
    # ran fewer or more would not reach its state.
    assert np.sum((np.abs(want[1]) > REST) | (np.abs(want[0]) > REST))
    found = [Entry("NumPy", "", lambda: numpy_rk4(*(state[k] for k in ("th", "om", "t", "a"))))]
    if peers.eagle:
        found += eagle_entries(state)
    for make, peer in ((numba_entries, peers.numba), (jax_entries, peers.jax),
                        (warp_entries, peers.warp)):
        if peer is not None:
            found += make(peer, state)
    for entry in found:  # sin and cos differ by an ulp between libraries: the same state, not the same bits
        got = entry.run()
        for have, expected in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(have), expected, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{entry.who} {entry.how}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, the two smaller sizes")
    args = parser.parse_args()
    peers = Peers(jax=load_jax(), numba=load_numba(), warp=load_warp())  # JAX in this process: run alone
    rows = []
    for n in SIZES[:2] if args.quick else SIZES:
        best = time_entries(entries(n, peers), repeat=9 if args.quick else 31 if n <= 4096 else 11)
        numpy = best["", "NumPy"][0]
        for (_, who), (t, how) in best.items():
            rows.append((f"{n:,} pendulums, {who}", fmt(t), f"{t / numpy:.3f}x NumPy {how}".rstrip()))
    table(f"RK4 of damped, driven pendulums, {TURNS} turns of a capped loop (medians)", rows)


if __name__ == "__main__":
    main()
