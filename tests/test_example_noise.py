"""Warp's example_graph_capture ported to eagle (examples/noise_graph.py), held to its NumPy twin bit
for bit: on the CPU at 1, 2 and 4 threads, fused and unfused, and on the GPU driver emulation
(device arrays); its 16 launches fused; the script; and the benchmark of both ported
examples beside Warp (benchmarks/bench_warp_examples.py)."""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))  # the examples are scripts of a folder, not a package
noise = importlib.import_module("noise_graph")


@pytest.mark.parametrize("fuse", ["1", "0"], ids=["fused", "unfused"])
def test_the_noise_gives_the_numpy_twins_bits(threads, fuse, monkeypatch):
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    pix, twin = noise.Pixels(48), noise.Pixels(48, build=False)
    for _ in range(3):
        pix.step()
        twin.numpy_step()
    assert np.array_equal(pix.x, twin.x)
    assert np.array_equal(pix.z, twin.z)
    assert 0.2 < pix.z.std() and np.abs(pix.z).max() < 1.5  # noise, not zeros or a blow-up


def test_the_noise_gradients_are_hawk_random_streams():
    gx, gy = noise.numpy_gradients()
    pix = noise.Pixels(8, build=False)
    assert np.array_equal(pix.gx, gx) and np.array_equal(pix.gy, gy)
    assert np.allclose(gx * gx + gy * gy, 1.0, atol=1e-6)  # unit vectors


def test_the_octaves_fuse():
    """The 16 launches read only the tables and write their own pixel: they fuse, in runs of a few
    octaves (a run is cut past a few hundred statements, for its compile time)."""
    runs = noise.Pixels(16).graph.fused
    assert all(set(run) == {"fbm"} and len(run) > 1 for run in runs)
    assert sum(map(len, runs)) >= noise.OCTAVES - 1  # at most one octave left over, alone


def test_the_noise_on_the_gpu_emulation(gpu):
    pix = noise.Pixels(24, device=gpu.asarray)
    twin = noise.Pixels(24, build=False)
    assert pix.graph.backend == "gpu"
    for _ in range(2):
        pix.step()
        twin.numpy_step()
    assert np.array_equal(gpu.get(pix.x), twin.x)
    assert np.array_equal(gpu.get(pix.z), twin.z)


def test_the_noise_runs_as_a_script():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "noise_graph.py"), "--size", "32",
                           "--frames", "3"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "the same bits as NumPy: True" in done.stdout


def test_the_benchmark_runs():
    """benchmarks/bench_warp_examples.py --smoke: every row reaches its table (Warp's where installed)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_warp_examples.py"), "--smoke"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    for row in ("wave 16x16", "noise 16x16", "eagle, 1 thread", "NumPy, twin"):
        assert row in done.stdout, (row, done.stdout)
