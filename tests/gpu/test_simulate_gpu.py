"""eagle.simulate on the device: the photon walk of hawk's simulate tests (draws keyed by an id plane)
compacted by eagle's device kernels and shrunk with set_logical_size in the one captured loop, giving
the CPU's bits, in the user's order, compacted or not, capped or not, an error included.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import eagle

pytest.importorskip("hawk")

HAWK_TESTS = Path(__file__).parents[2] / "packages" / "hawk" / "tests"
walk = SimpleNamespace(**runpy.run_path(str(HAWK_TESTS / "test_simulate.py")))

N = 3000


def on_device(gpu, s):
    return {name: gpu.asarray(a) for name, a in s.items()}


def got(gpu, d):
    return {name: gpu.get(a) for name, a in d.items()}


@pytest.fixture(scope="module")
def reference():
    want = walk.photons(N)
    return want, walk.python_loop(want)


@pytest.mark.parametrize("compact", [True, False, "auto"])
def test_the_walk_on_the_device_gives_the_cpus_bits_compacted_or_not(gpu, reference, compact):
    want, steps = reference
    d = on_device(gpu, walk.photons(N))
    result = eagle.simulate(walk.walk(d), terminated=d["done"], max_steps=100_000, compact=compact)
    assert (result.steps, result.live) == (steps, 0)
    walk.same(got(gpu, d), want)
    compactions = result.report.compactions
    if compact != "auto":  # "auto" decides by the times measured (a device copy calibrates the gather)
        assert bool(compactions) == compact
    assert all(c.after < c.before for c in compactions)
    assert result.state["z"] is d["z"]


def test_a_capped_device_run_is_put_back_in_the_users_order(gpu):
    want = walk.photons(N)
    walk.python_loop(want, 40)
    d = on_device(gpu, walk.photons(N))
    result = eagle.simulate(walk.walk(d), terminated=d["done"], max_steps=40, compact=True)
    assert result.steps == 40 and result.live == int((want["done"] == 0).sum()) > 0
    host = got(gpu, d)
    np.testing.assert_array_equal(host["pid"], np.arange(N, dtype=np.uint32))
    walk.same(host, want)


def test_a_device_step_that_raises_leaves_the_planes_in_the_users_order(gpu):
    d = on_device(gpu, walk.photons(N))
    ran: list[int] = []  # the steps of each call that ran
    runner_run = eagle.UntilDone.run

    def failing(self, max_steps=None):  # a host step would be refused in the loop: fail a call
        if len(ran) == 2:
            raise RuntimeError("stop")
        steps = runner_run(self, max_steps)
        ran.append(steps.steps)
        return steps

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eagle.UntilDone, "run", failing)
        with pytest.raises(RuntimeError, match="stop"):
            eagle.simulate(walk.walk(d), terminated=d["done"], max_steps=100_000, compact=True)
    want = walk.photons(N)
    walk.python_loop(want, sum(ran))  # two calls ran
    walk.same(got(gpu, d), want)


@pytest.mark.parametrize("dispatch", [None, "segmented"])
def test_dispatch_groups_on_the_device_give_the_cpus_bits_compacted(gpu, dispatch):
    """The four-material walk: the split form's partition and arms on the device, over the loop's
    mark as skip plane, in the compacted loop."""
    want = walk.media(N)
    eagle.simulate(walk.mixed(want), terminated=want["done"], max_steps=100_000, dispatch="switch",
                   compact=False)
    d = on_device(gpu, walk.media(N))
    result = eagle.simulate(walk.mixed(d), terminated=d["done"], max_steps=100_000, dispatch=dispatch,
                            compact=True)
    assert result.done and result.report.compactions
    walk.same(got(gpu, d), want)
    assert any(decision.policy == "segmented" for decision in result.report.dispatch)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_the_device_gather_is_the_hosts_stable_partition(gpu, dtype):
    """Blocks of slots partitioned a thread each (counts, a scan, places): the host's order."""
    from eagle._compaction import Compactor

    n = 3 * eagle.BLOCK + 17
    rng = np.random.default_rng(9)
    host = [rng.normal(size=(2, n)), rng.integers(0, 2**15, n).astype(np.int16),
            (rng.random(n) < 0.6).astype(dtype)]
    planes = [gpu.asarray(a) for a in host]
    moved = Compactor(planes, planes[-1])
    head = host[-1][:n - 100]
    assert moved.compact(n - 100) == int((head == 0).sum())
    order = np.concatenate([np.flatnonzero(head == 0), np.flatnonzero(head), np.arange(n - 100, n)])
    np.testing.assert_array_equal(gpu.get(moved.origin), order)
    for plane, was in zip(planes, host, strict=True):
        assert gpu.get(plane).tobytes() == was[..., order].tobytes()
    moved.restore()
    for plane, was in zip(planes, host, strict=True):
        assert gpu.get(plane).tobytes() == was.tobytes()


def test_the_device_copy_calibration_measures_a_rate(gpu):
    from eagle import _cuda
    from eagle._compaction import copy_seconds_per_byte

    _cuda.open_device(0)
    assert 0.0 < copy_seconds_per_byte(0) < 1e-6  # more than a megabyte a second
