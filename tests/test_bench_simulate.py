"""benchmarks/bench_simulate.py: the photon-slab workload computes what it says, and every variant
gives the same tallies (``--smoke``: one run each on 4,096 photons; timings never asserted).

The peers (JAX, Numba) run where they are installed and are skipped otherwise.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hawk")  # the minimal session has eagle-graph alone

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_simulate as bs  # noqa: E402 - found through the path above


def test_free_path_is_minus_log_to_rounding():
    u = np.concatenate([np.linspace(0.0, 0.999, 2001), 1.0 - np.logspace(-3, -15, 100)])
    want = -np.log1p(-u)
    # the roots bring 1 - u near 1, where 1 - x cancels: an absolute error, 1e-14 of a mean free path
    assert np.allclose(bs.free_path(u), want, rtol=1e-12, atol=1e-13)


def test_turn_keeps_a_direction_cosine_and_its_azimuth_is_a_cosine():
    v = np.linspace(0.0, 1.0, 1001, endpoint=False)
    # straight down (mu = 1) an angle of cosine 0 leaves mu = 0; sideways (mu = 0) mu is sin(theta) cos(phi)
    assert np.array_equal(bs.turn(np.ones_like(v), np.zeros_like(v), v), np.zeros_like(v))
    cos_phi = bs.turn(np.zeros_like(v), np.zeros_like(v), v)
    assert np.allclose(cos_phi, -np.sin(np.pi * (v - 0.5)), rtol=0, atol=1e-13)
    mu = bs.turn(np.full_like(v, 0.3), np.full_like(v, -0.8), v)
    assert np.all(np.abs(mu) <= 1.0)


def test_the_arms_invert_their_cdfs():
    u = np.linspace(0.001, 0.999, 999)
    cdf = bs.phase_table()
    grid = np.linspace(-1.0, 1.0, bs.CELLS + 1)
    assert np.allclose(np.interp(bs.tabulated(cdf, u), grid, cdf), u, atol=1e-9)
    x = bs.rayleigh(u)
    assert np.allclose((x ** 3 + 3 * x + 4) / 8, u, atol=1e-12)
    g = bs.henyey_greenstein(u)
    assert np.all(np.diff(g) > 0) and g[0] > -1.0 and g[-1] <= 1.0


def test_the_species_mix_turns_at_the_phase_change():
    u = np.random.default_rng(1).random(100_000)
    early = np.bincount(bs.species_of(u, np.zeros(u.size, np.uint32)), minlength=4) / u.size
    late = np.bincount(bs.species_of(u, np.full(u.size, bs.PHASE, np.uint32)), minlength=4) / u.size
    assert np.allclose(early, [0.70, 0.20, 0.08, 0.02], atol=0.01)
    assert np.allclose(late, [0.10, 0.20, 0.30, 0.40], atol=0.01)


@pytest.mark.parametrize("peer", ["jax", "numba"])
def test_a_peer_philox_gives_hawk_random_bits(peer):
    pytest.importorskip(peer)
    if peer == "jax":
        jax_pair = bs.load_jax()
        _, uniform = bs.jax_walk(*jax_pair, bs.phase_table(), bs.MAX_STEPS)
    else:
        _, uniform = bs.numba_walk(bs.load_numba(), bs.MAX_STEPS)
    bs.check_philox(uniform, peer)  # raises where one bit differs


def test_the_smoke_run_gives_the_same_tallies_everywhere():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_simulate.py"), "--smoke"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = {line.split("  ")[1]: line for line in done.stdout.splitlines() if line.startswith("  ")
            and len(line.split("  ")) > 2}
    for name in ("simulate compact=auto dispatch=None", "simulate compact=False", "simulate compact=True",
                 "simulate dispatch='switch'", "simulate dispatch='segmented'", "until_done runner",
                 "NumPy, live subset x[alive]", "NumPy, full-width masks"):
        assert name in rows, (name, done.stdout)
        assert "bit-identical" in rows[name], rows[name]
    assert "collisions per photon: median" in done.stdout
    assert "compaction >= 3x faster than none" in done.stdout
