"""eagle.until_done over hawk plans: a random walk with absorption, samples finishing at different steps.

The loop is held to a Python loop over the same kernels that masks the finished samples by hand
and stops at the same step, byte for byte, on any thread count and with fusion on or off; a
finished sample keeps its bits exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.extend
import eagle.testing
import hawk
from hawk import Int32, Mutable, Param, Scalar, Table, UInt32
from hawk import math as hm


@hawk.kernel
def move(z: Mutable[Scalar], mu: Scalar, k: Mutable[UInt32], seed: Param[Int32]):
    """A free path of length in [0, 2), along the direction cosine mu."""
    z = z + mu * (2.0 * hawk.random.uniform(seed, k * hm.uint32(3)))
    k = k + hm.uint32(1)


@hawk.kernel
def collide(z: Scalar, mu: Mutable[Scalar], k: UInt32, done: Mutable[UInt32], seed: Param[Int32],
            tau: Param, albedo: Param):
    """Escaped through either face, absorbed, or scattered into a new direction."""
    c = (k - hm.uint32(1)) * hm.uint32(3)
    if z < 0.0 or z > tau:
        done = hm.uint32(1)
    elif hawk.random.uniform(seed, c + hm.uint32(1)) > albedo:
        done = hm.uint32(1)
    else:
        mu = 2.0 * hawk.random.uniform(seed, c + hm.uint32(2)) - 1.0


SEED, TAU, ALBEDO = 5, 6.0, 0.93


def photons(n: int) -> dict[str, np.ndarray]:
    return {"z": np.zeros(n), "mu": np.ones(n), "k": np.zeros(n, np.uint32), "done": np.zeros(n, np.uint32)}


def step_plans(s: dict[str, np.ndarray]) -> list:
    return [move.plan(s["z"], s["mu"], s["k"], SEED), collide.plan(s["z"], s["mu"], s["k"], s["done"], SEED,
                                                                   TAU, ALBEDO)]


def python_loop(s: dict[str, np.ndarray], max_steps: int) -> int:
    """The items called in order in a Python loop, each step's finished samples put back by hand."""
    steps = 0
    while steps < max_steps and (s["done"] == 0).any():
        was = s["done"] != 0
        kept = {name: a[was].copy() for name, a in s.items()}
        move(s["z"], s["mu"], s["k"], SEED)
        collide(s["z"], s["mu"], s["k"], s["done"], SEED, TAU, ALBEDO)
        for name, a in s.items():
            a[was] = kept[name]
        steps += 1
    return steps


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


N = 3000


def test_the_walk_finishes_unevenly_and_matches_a_python_loop_that_stops_at_the_same_step():
    want = photons(N)
    steps = python_loop(want, 10_000)
    s = photons(N)
    result = eagle.until_done(step_plans(s), terminated=s["done"], max_steps=10_000).run()
    assert result == eagle.Steps(steps, 0) and result.done
    same(s, want)
    lifetimes = s["k"]
    assert lifetimes.max() >= 5 * np.median(lifetimes)  # samples finish at very different steps


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fuse", ["0", "1"])
def test_same_bits_on_any_thread_count_fused_or_not(monkeypatch, threads, fuse):
    want = photons(N)
    python_loop(want, 10_000)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    before = eagle.extend.num_threads()
    eagle.extend.set_num_threads(threads)
    try:
        s = photons(N)
        runner = eagle.until_done(step_plans(s), terminated=s["done"], max_steps=10_000)
        assert runner.run().done
        assert bool(runner._runner.fused) == (fuse == "1")
    finally:
        eagle.extend.set_num_threads(before)
    same(s, want)


def test_run_steps_on_from_where_it_stopped_and_a_finished_sample_keeps_its_bits():
    want = photons(N)
    total = python_loop(want, 10_000)
    s = photons(N)
    runner = eagle.until_done(step_plans(s), terminated=s["done"], max_steps=10_000)
    first = runner.run(max_steps=3)
    assert first.steps == 3 and 0 < first.live < N and not first.done
    assert first.live == int((s["done"] == 0).sum())
    finished = s["done"] != 0
    frozen = {name: a[finished].copy() for name, a in s.items()}
    tallies, ran = [], 3
    while True:  # the user's own loop: Python between the runs
        got = runner.run(max_steps=4)
        ran += got.steps
        tallies.append(got.live)
        for name, a in s.items():
            assert a[finished].tobytes() == frozen[name].tobytes(), name
        if got.done:
            break
    assert ran == total and tallies == sorted(tallies, reverse=True)
    same(s, want)
    assert runner.run() == eagle.Steps(0, 0)  # nothing left to run


def test_a_capped_run_says_samples_are_live():
    s = photons(N)
    got = eagle.until_done(step_plans(s), terminated=s["done"], max_steps=2).run()
    assert got.steps == 2 and got.live > 0 and not got.done


def test_in_a_graph_it_is_held_to_the_reference_interpreter():
    s = photons(N)
    g = eagle.Graph().add_node(eagle.until_done(step_plans(s), terminated=s["done"], max_steps=7),
                               name="walk").build()
    eagle.testing.check(g, 2)  # two launches, seven steps each at most


def test_a_reduction_in_the_loop_is_refused_by_name():
    @hawk.kernel
    def tally(z: Scalar, total: Mutable[UInt32]):
        total = hm.uint32(hawk.sum(z > 1.0))

    s = photons(8)
    with pytest.raises(ValueError, match=r"eagle.until_done: item 1 \('tally'\): plan 'tally' is not "
                                         "per-sample"):
        eagle.until_done([step_plans(s)[1], tally.plan(s["z"], np.zeros(1, np.uint32))], terminated=s["done"],
                         max_steps=3)


def test_a_logical_size_walks_the_first_samples_only():
    """set_logical_size: the next runs process the first m samples, as a batch of m would."""
    m = 1000
    want = photons(m)
    steps = python_loop(want, 10_000)
    s = photons(N)
    runner = eagle.until_done(step_plans(s), terminated=s["done"], max_steps=10_000).set_logical_size(m)
    assert runner.run() == eagle.Steps(steps, 0)  # the samples past m are not counted live
    same({name: a[:m] for name, a in s.items()}, want)
    same({name: a[m:] for name, a in s.items()}, {name: a[m:] for name, a in photons(N).items()})


def test_it_composes_with_the_builder():
    """A stepping loop written inside an @eagle.Graph.builder function: one node of its graph."""
    pytest.importorskip("eagle.builder")

    @eagle.Graph.builder
    def walkers(z, mu, k, done):
        g = eagle.Graph()
        plans = step_plans({"z": z, "mu": mu, "k": k, "done": done})
        eagle.until_done(plans, terminated=done, max_steps=10_000)
        g.result = (z, k)
        return g

    want = photons(N)
    python_loop(want, 10_000)
    s = photons(N)
    g = walkers(s["z"], s["mu"], s["k"], s["done"])
    assert [node.kind for node in eagle.extend.view(g).nodes] == ["until_done"]
    z, k = g()
    assert z.tobytes() == want["z"].tobytes() and k.tobytes() == want["k"].tobytes()


@hawk.kernel
def absorb_by_layer(z: Scalar, k: UInt32, done: Mutable[UInt32], albedo: Table.clamp, seed: Param[Int32]):
    """Absorption whose albedo is looked up per layer of the slab: a Table read in the step."""
    c = (k - hm.uint32(1)) * hm.uint32(3)
    if done == hm.uint32(0) and hawk.random.uniform(seed, c + hm.uint32(1)) > albedo[hm.int32(z)]:
        done = hm.uint32(1)


LAYERS = np.linspace(0.99, 0.8, 6)


def layered_plans(s: dict[str, np.ndarray], layers: np.ndarray = LAYERS) -> list:
    return [move.plan(s["z"], s["mu"], s["k"], SEED),
            absorb_by_layer.plan(s["z"], s["k"], s["done"], layers, SEED),
            collide.plan(s["z"], s["mu"], s["k"], s["done"], SEED, TAU, 1.0)]


def layered_loop(n: int) -> tuple[dict[str, np.ndarray], int]:
    """The layered walk in a Python loop, the finished samples put back by hand."""
    layers = LAYERS
    want, steps = photons(n), 0
    while (want["done"] == 0).any():
        was = want["done"] != 0
        kept = {name: a[was].copy() for name, a in want.items()}
        move(want["z"], want["mu"], want["k"], SEED)
        absorb_by_layer(want["z"], want["k"], want["done"], layers, SEED)
        collide(want["z"], want["mu"], want["k"], want["done"], SEED, TAU, 1.0)
        for name, a in want.items():
            a[was] = kept[name]
        steps += 1
    return want, steps


def test_a_plan_that_reads_a_table_is_masked_like_any():
    want, steps = layered_loop(N)
    s = photons(N)
    runner = eagle.until_done(layered_plans(s), terminated=s["done"], max_steps=10_000)
    assert runner.run() == eagle.Steps(steps, 0)
    same(s, want)


def test_a_table_the_loop_writes_is_refused():
    s = photons(16)
    with pytest.raises(ValueError, match=r"item 1 \('absorb_by_layer'\): plan 'absorb_by_layer' reads plane "
                                         r"'albedo' whole \(a Table\), which item 0 \('move'\) writes"):
        eagle.until_done([move.plan(s["z"], s["mu"], s["k"], SEED),
                          absorb_by_layer.plan(s["z"], s["k"], s["done"], s["z"], SEED)],
                         terminated=s["done"], max_steps=3)
