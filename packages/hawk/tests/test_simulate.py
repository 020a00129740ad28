"""eagle.simulate over hawk plans: a photon walk whose draws are keyed by an id plane, so compaction
(which moves samples) keeps every bit; held to a Python loop, byte for byte, compacted or not, on any
thread count, fused or not.  A kernel keyed by the sample's position is refused compaction by name."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import eagle
import eagle.extend
import hawk
from eagle import _simulate
from eagle._compaction import Compactor
from hawk import Int32, Mutable, Param, Scalar, Table, UInt32
from hawk import math as hm


@hawk.kernel
def move(z: Mutable[Scalar], mu: Scalar, k: Mutable[UInt32], pid: UInt32, seed: Param[Int32]):
    """A free path of length in [0, 2) along mu: the draw is the photon's (pid), wherever it sits."""
    z = z + mu * (2.0 * hawk.random.uniform(seed, k * hm.uint32(3), sample=pid))
    k = k + hm.uint32(1)


@hawk.kernel
def collide(z: Scalar, mu: Mutable[Scalar], k: UInt32, done: Mutable[UInt32], pid: UInt32, seed: Param[Int32],
            tau: Param, albedo: Param):
    c = (k - hm.uint32(1)) * hm.uint32(3)
    if z < 0.0 or z > tau:
        done = hm.uint32(1)
    elif hawk.random.uniform(seed, c + hm.uint32(1), sample=pid) > albedo:
        done = hm.uint32(1)
    else:
        mu = 2.0 * hawk.random.uniform(seed, c + hm.uint32(2), sample=pid) - 1.0


@hawk.kernel
def absorb_by_layer(z: Scalar, k: UInt32, done: Mutable[UInt32], pid: UInt32, albedo: Table.clamp,
                    seed: Param[Int32]):
    """Absorption looked up per layer of the slab: a Table, read whole, which compaction leaves."""
    c = (k - hm.uint32(1)) * hm.uint32(3)
    if done == hm.uint32(0) and hawk.random.uniform(seed, c + hm.uint32(1), sample=pid) > albedo[hm.int32(z)]:
        done = hm.uint32(1)


@hawk.kernel
def jitter(z: Mutable[Scalar], seed: Param[Int32]):
    """A draw keyed by the sample's position (the default sample=): compaction would change it."""
    z = z + 1e-3 * hawk.random.uniform(seed, 0)


SEED, TAU, ALBEDO = 11, 8.0, 0.97
LAYERS = np.linspace(0.995, 0.9, 8)
N = 20_000


def photons(n: int = N) -> dict[str, np.ndarray]:
    return {"z": np.zeros(n), "mu": np.ones(n), "k": np.zeros(n, np.uint32), "done": np.zeros(n, np.uint32),
            "pid": np.arange(n, dtype=np.uint32)}


def walk(s: dict[str, np.ndarray]) -> list:
    return [move.plan(s["z"], s["mu"], s["k"], s["pid"], SEED),
            collide.plan(s["z"], s["mu"], s["k"], s["done"], s["pid"], SEED, TAU, ALBEDO)]


def layered(s: dict[str, np.ndarray], layers: np.ndarray = LAYERS) -> list:
    return [move.plan(s["z"], s["mu"], s["k"], s["pid"], SEED),
            absorb_by_layer.plan(s["z"], s["k"], s["done"], s["pid"], layers, SEED),
            collide.plan(s["z"], s["mu"], s["k"], s["done"], s["pid"], SEED, TAU, 1.0)]


def python_loop(s: dict[str, np.ndarray], max_steps: int = 100_000) -> int:
    """The kernels called in a Python loop, each step's finished photons put back by hand."""
    steps = 0
    while steps < max_steps and (s["done"] == 0).any():
        was = s["done"] != 0
        kept = {name: a[was].copy() for name, a in s.items()}
        move(s["z"], s["mu"], s["k"], s["pid"], SEED)
        collide(s["z"], s["mu"], s["k"], s["done"], s["pid"], SEED, TAU, ALBEDO)
        for name, a in s.items():
            a[was] = kept[name]
        steps += 1
    return steps


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


@pytest.fixture(scope="module")
def reference() -> tuple[dict[str, np.ndarray], int]:
    want = photons()
    return want, python_loop(want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fuse", ["0", "1"])
@pytest.mark.parametrize("compact", [True, False, "auto"])
def test_the_walk_gives_the_python_loops_bits_compacted_or_not(monkeypatch, reference, threads, fuse,
                                                                compact):
    want, steps = reference
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    before = eagle.extend.num_threads()
    eagle.extend.set_num_threads(threads)
    try:
        s = photons()
        result = eagle.simulate(walk(s), terminated=s["done"], max_steps=100_000, compact=compact)
    finally:
        eagle.extend.set_num_threads(before)
    assert (result.steps, result.live) == (steps, 0)
    same(s, want)
    assert set(result.state) == {"z", "mu", "k", "done"} and result.state["z"] is s["z"]
    assert bool(result.report.compactions) == (compact is not False)  # the long tail: "auto" compacts too
    assert result.report.notes == []
    lifetimes = s["k"]
    assert lifetimes.max() >= 20 * np.median(lifetimes)


def test_auto_compacts_once_the_finished_slots_have_cost_a_gather(monkeypatch, reference):
    """Rent or buy: the waste grows call by call, a compaction comes on the call that takes it to
    the gather's price (the first one, the restore's too) and starts it again from nothing; the
    bits are the loop's either way.  The first gather is made free, so the run must compact."""
    want, steps = reference
    verdicts: list[tuple[float, bool]] = []
    rule, compact = _simulate.should_compact, _simulate._Run._compact

    def spy(slots: int, live: int, wasted: float, per_slot: float, fixed: float, restore: float) -> bool:
        verdict = rule(slots, live, wasted, per_slot, fixed, restore)
        assert (restore > 0.0) == (not any(v for _, v in verdicts))  # no restore owed once compacted
        verdicts.append((wasted, verdict))
        return verdict

    def compacted(run: _simulate._Run, step: int) -> None:
        compact(run, step)
        assert run.wasted == 0.0

    def free(compactor: Compactor) -> float:
        compactor.setup_seconds = 1e-12
        return 0.0

    monkeypatch.setattr(_simulate, "should_compact", spy)
    monkeypatch.setattr(_simulate._Run, "_compact", compacted)
    monkeypatch.setattr(Compactor, "fixed_seconds", free)
    monkeypatch.setattr(_simulate, "copy_seconds_per_byte", lambda device=None: 0.0)
    s = photons()
    result = eagle.simulate(walk(s), terminated=s["done"], max_steps=100_000)
    assert (result.steps, result.live) == (steps, 0)
    same(s, want)
    assert sum(v for _, v in verdicts) == len(result.report.compactions) > 0
    for (before, compacted_then), (after, _) in itertools.pairwise(verdicts):
        assert compacted_then or after >= before  # the waste only grows until the loop shrinks


def test_a_capped_run_matches_the_capped_python_loop():
    want = photons()
    python_loop(want, 70)
    s = photons()
    result = eagle.simulate(walk(s), terminated=s["done"], max_steps=70, compact=True)
    assert result.steps == 70 and result.live == int((want["done"] == 0).sum()) > 0
    same(s, want)


def test_a_table_is_read_whole_and_left_in_place():
    want, s = photons(), photons()
    layers = LAYERS.copy()
    eagle.simulate(layered(want), terminated=want["done"], max_steps=100_000, compact=False)
    result = eagle.simulate(layered(s, layers), terminated=s["done"], max_steps=100_000, compact=True)
    assert result.report.compactions
    same(s, want)
    assert layers.tobytes() == LAYERS.tobytes()


def test_a_table_that_is_also_a_per_sample_plane_is_refused_compaction():
    s = photons(64)
    s["albedo"] = np.full(64, 0.9)  # read whole by absorb_by_layer, and per sample (as mu) by move
    step = [move.plan(s["z"], s["albedo"], s["k"], s["pid"], SEED),
            absorb_by_layer.plan(s["z"], s["k"], s["done"], s["pid"], s["albedo"], SEED)]
    with pytest.raises(ValueError, match=r"eagle.simulate: compact=True, but item 1 \('absorb_by_layer'\) "
                                         r"reads plane 'albedo' whole \(a Table\), and compaction would "
                                         "move it"):
        eagle.simulate(step, terminated=s["done"], max_steps=10, compact=True)


def test_a_kernel_keyed_by_position_is_refused_compaction_and_auto_says_why():
    want, s = photons(), photons()
    eagle.simulate([*walk(want), jitter.plan(want["z"], SEED)], terminated=want["done"], max_steps=100_000,
                   compact=False)
    with pytest.raises(ValueError, match=r"eagle.simulate: compact=True, but item 2 \('jitter'\): kernel "
                                         r"'jitter' depends on its sample's position .* key draws by an id "
                                         r"plane, hawk.random.uniform\(seed, counter, sample=pid\)"):
        eagle.simulate([*walk(s), jitter.plan(s["z"], SEED)], terminated=s["done"], max_steps=10,
                       compact=True)
    s = photons()
    result = eagle.simulate([*walk(s), jitter.plan(s["z"], SEED)], terminated=s["done"], max_steps=100_000)
    assert result.report.compactions == []
    assert any(note.startswith("no compaction: item 2 ('jitter'): kernel 'jitter' depends on its sample's "
                               "position") for note in result.report.notes)
    same(s, want)


def test_position_dependence_is_read_from_the_kernels_ir():
    s = photons(8)
    assert [p.position_dependent() for p in walk(s)] == [False, False]
    assert jitter.plan(s["z"], SEED).position_dependent()


# ------------------------------------------------------------------ dispatch groups: materials per step


@hawk.kernel
def travel(z: Mutable[Scalar], mu: Scalar, k: Mutable[UInt32], m: Mutable[Int32], pid: UInt32,
           seed: Param[Int32]):
    """A free path, then the material of the next collision, drawn per step (a skewed mix)."""
    c = k * hm.uint32(4)
    z = z + mu * (2.0 * hawk.random.uniform(seed, c, sample=pid))
    u = hawk.random.uniform(seed, c + hm.uint32(3), sample=pid)
    m = hm.int32(u > 0.6) + hm.int32(u > 0.85) + hm.int32(u > 0.97)
    k = k + hm.uint32(1)


@hawk.kernel
def fate(z: Scalar, k: UInt32, done: Mutable[UInt32], pid: UInt32, seed: Param[Int32], tau: Param,
         albedo: Param):
    if z < 0.0 or z > tau:
        done = hm.uint32(1)
    elif hawk.random.uniform(seed, (k - hm.uint32(1)) * hm.uint32(4) + hm.uint32(1), sample=pid) > albedo:
        done = hm.uint32(1)


@hawk.kernel
def turn(mu: Mutable[Scalar], k: UInt32, m: Int32, pid: UInt32, seed: Param[Int32]):
    """The new direction by the material's phase function: four arms of very different cost."""
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


def media(n: int = N) -> dict[str, np.ndarray]:
    return {**photons(n), "m": np.zeros(n, np.int32)}


def mixed(s: dict[str, np.ndarray]) -> list:
    return [travel.plan(s["z"], s["mu"], s["k"], s["m"], s["pid"], SEED),
            fate.plan(s["z"], s["k"], s["done"], s["pid"], SEED, TAU, ALBEDO),
            turn.plan(s["mu"], s["k"], s["m"], s["pid"], SEED)]


@pytest.fixture(scope="module")
def switched() -> dict[str, np.ndarray]:
    want = media()
    eagle.simulate(mixed(want), terminated=want["done"], max_steps=100_000, dispatch="switch", compact=False)
    return want


@pytest.mark.parametrize("dispatch", [None, "switch", "segmented", {"material": "segmented"}])  # arms loop:
# "predicated" is refused by hawk for this group
@pytest.mark.parametrize("compact", [True, False])
def test_every_dispatch_compacted_or_not_gives_the_same_bits(switched, dispatch, compact):
    s = media()
    result = eagle.simulate(mixed(s), terminated=s["done"], max_steps=100_000, dispatch=dispatch,
                            compact=compact)
    assert result.done
    same(s, switched)
    decisions = result.report.dispatch
    assert decisions[0].step == 0 and decisions[0].group == "material"
    if dispatch is None:
        assert decisions[0].policy == "switch" and decisions[0].why == "start fused"
        assert any(d.why == "probe" and d.policy == "segmented" for d in decisions)  # split measured
        assert all(d.policy in ("switch", "segmented") for d in decisions)
    else:
        forced = dispatch if isinstance(dispatch, str) else dispatch["material"]
        assert [(d.policy, d.why) for d in decisions] == [(forced, "dispatch=")]


def test_the_selector_is_counted_over_the_live_samples():
    from eagle._simulate_dispatch import Dispatch

    s = media(1000)
    s["m"][:] = np.arange(1000) % 4
    s["done"][::2] = 1  # the finished samples (m 0 and 2) are not counted
    choices = Dispatch(mixed(s), None, s["done"])
    fractions, counted = choices._mix(choices.auto["material"].group, 1000)
    np.testing.assert_array_equal(fractions, [0.0, 0.5, 0.0, 0.5])
    assert counted == 500

