"""Warp's example_wave ported to eagle (examples/wave_equation.py), held to its NumPy twin bit for bit:
on the CPU at 1, 2 and 4 threads, fused and unfused, and on the GPU driver emulation (device
arrays); the gradient of a final energy through the graph under eagle.diff.reverse against central
differences; and the script."""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))  # the examples are scripts of a folder, not a package
wave = importlib.import_module("wave_equation")


def wave_twin(size, frames, dtype=np.float32, **kw):
    z = np.zeros((size, size), dtype)
    return wave.numpy_frames(z, z, np.zeros(1), frames=frames, **kw)


@pytest.mark.parametrize("fuse", ["1", "0"], ids=["fused", "unfused"])
def test_the_wave_gives_the_numpy_twins_bits(threads, fuse, monkeypatch):
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    pond = wave.Pond(40)
    for _ in range(3):
        pond.step()
    prev, cur, t = wave_twin(40, 3)
    assert np.array_equal(pond.cur, cur)
    assert np.array_equal(pond.prev, prev)
    assert np.array_equal(pond.t, t)
    assert np.array_equal(pond.vertices[1], pond.cur.reshape(-1))  # the mesh follows the heights
    rows, cols = np.divmod(np.arange(40 * 40), 40)
    assert np.array_equal(pond.vertices[0], (cols * wave.GRID_SIZE).astype(np.float32))  # and keeps x, z
    assert np.array_equal(pond.vertices[2], (rows * wave.GRID_SIZE).astype(np.float32))
    assert cur.min() == -0.5  # the sphere pushed the cells under it
    assert np.count_nonzero((cur != 0.0) & (cur != -0.5)) > 100  # and the wave spread


def test_the_wave_on_the_gpu_emulation(gpu):
    pond = wave.Pond(24, device=gpu.asarray)
    assert pond.graph.backend == "gpu"
    pond.step()
    pond.step()
    prev, cur, t = wave_twin(24, 2)
    assert np.array_equal(gpu.get(pond.cur), cur)
    assert np.array_equal(gpu.get(pond.prev), prev)
    assert np.array_equal(gpu.get(pond.t), t)


def test_the_waves_energy_gradient_matches_central_differences():
    """d(energy after 4 substeps)/d(initial heights) on a 10 x 10 float64 grid whose sphere (radius
    2) covers a few cells, which have no gradient (the sphere sets them).  The substeps are unrolled
    here (``turns`` a Python number); test_the_waves_gradient_through_its_device_loop takes the
    example's counted device loop."""
    eagle_diff = pytest.importorskip("eagle.diff")
    size, turns, radius = 10, 2, 2.0
    rng = np.random.default_rng(20)
    cur0 = rng.uniform(-0.1, 0.1, (size, size))
    prev0 = cur0 + rng.uniform(-0.01, 0.01, (size, size))
    prev, cur, t = prev0.copy(), cur0.copy(), np.zeros(1)
    centre = np.zeros(1, np.float32), np.zeros(1, np.float32)

    recorded = wave.energy_after(prev, cur, t, *centre, turns, radius=radius, record=True)
    e = recorded()[0]
    grad = eagle_diff.reverse(recorded.record, {"result": np.ones(1)}, wrt=("cur",))["cur"]
    twin = wave.numpy_frames(prev0, cur0, np.zeros(1), substeps=2 * turns, radius=radius)[1]
    assert e == hawk.sum((twin * twin).reshape(-1))  # the same bits: eagle's fixed-order sum

    plain = wave.energy_after(prev, cur, t, *centre, turns, radius=radius)

    def energy(heights):
        prev[...], cur[...], t[...] = prev0, heights, 0.0
        return plain()[0]

    h = 1e-6
    for k in np.ndindex(size, size):
        up, down = cur0.copy(), cur0.copy()
        up[k] += h
        down[k] -= h
        assert grad[k] == pytest.approx((energy(up) - energy(down)) / (2 * h), rel=1e-6, abs=1e-9), k
    assert 0 < np.count_nonzero(grad == 0.0) < size * size // 4  # only the cells under the sphere


def test_the_waves_gradient_through_its_device_loop():
    """The substeps as the example writes them, a counted device loop (``turns`` a one-cell
    uint32) whose body writes each grid as a flat plane and reads it as a 2-D Table of the same
    memory: eagle.diff.reverse gives the unrolled substeps' bits, and central differences of the
    device loop's own graph."""
    eagle_diff = pytest.importorskip("eagle.diff")
    size, turns, radius = 10, 3, 2.0
    rng = np.random.default_rng(21)
    cur0 = rng.uniform(-0.1, 0.1, (size, size))
    prev0 = cur0 + rng.uniform(-0.01, 0.01, (size, size))
    prev, cur, t = prev0.copy(), cur0.copy(), np.zeros(1)
    centre = np.zeros(1, np.float32), np.zeros(1, np.float32)

    def gradients(count):
        prev[...], cur[...], t[...] = prev0, cur0, 0.0
        recorded = wave.energy_after(prev, cur, t, *centre, count, radius=radius, record=True)
        e = recorded()[0]
        return e, eagle_diff.reverse(recorded.record, {"result": np.ones(1)}, wrt=("cur", "prev"))

    e, grads = gradients(np.array([turns], np.uint32))
    e_unrolled, unrolled = gradients(turns)
    assert e == e_unrolled
    for name in ("cur", "prev"):
        assert grads[name].tobytes() == unrolled[name].tobytes(), name

    plain = wave.energy_after(prev, cur, t, *centre, np.array([turns], np.uint32), radius=radius)

    def energy(heights, before):
        prev[...], cur[...], t[...] = before, heights, 0.0
        return plain()[0]

    h = 1e-6
    for name in ("cur", "prev"):
        direction = rng.standard_normal((size, size))
        shifted = [(cur0 + s * h * direction, prev0) if name == "cur" else (cur0, prev0 + s * h * direction)
                   for s in (1, -1)]
        fd = (energy(*shifted[0]) - energy(*shifted[1])) / (2 * h)
        assert float(np.sum(grads[name] * direction)) == pytest.approx(fd, rel=1e-6, abs=1e-9), name


def test_the_wave_runs_as_a_script():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "wave_equation.py"), "--size", "32",
                           "--frames", "3"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "the same bits as NumPy: True" in done.stdout
