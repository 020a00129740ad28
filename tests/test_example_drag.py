"""examples/learned_drag.py: a drag force learned inside the simulation step, with torch and with JAX.

For each framework: the flight graph held to the reference interpreter; the gradient of the
trajectory error with respect to a few of the model's weights (eagle.diff.reverse through the
capped device loop, the model's vjp in place of its node) against central differences; then
training until the error fell 100-fold within a fixed number of steps.  Each framework's test
skips where it is not installed (the nox ``torch`` and ``jax`` sessions install them)."""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eagle.testing import check

pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")
pytest.importorskip("eagle.diff")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))  # the examples are scripts of a folder, not a package
drag = importlib.import_module("learned_drag")

#: where each framework's loss reaches a hundredth of its first (measured: torch in 15 steps, JAX in 29)
STEPS = {"torch": 40, "jax": 60}


@pytest.fixture
def framework(request):
    """The framework of the test, installed or skipped; JAX's 64-bit mode put back after."""
    name = request.param
    module = pytest.importorskip(name)
    pytest.importorskip(f"eagle.frameworks.{name}")
    if name == "jax":
        before = module.config.jax_enable_x64
        yield name
        module.config.update("jax_enable_x64", before)
    else:
        yield name


@pytest.mark.parametrize("framework", ["torch", "jax"], indirect=True)
def test_the_learned_drag_trains(framework):
    state = drag.launch_state()
    training = drag.TRAININGS[framework](state, drag.reference(*state))
    check(training.graph, 2)  # the replay (fused kernels, the model called each turn) == the reference
    first = training.loss()
    training.gradients()
    picks = [(0, 3), (1, 5), (2, 7), (3, 1)]  # a weight and a bias of each layer
    found = np.array([training.weight_grads()[k].reshape(-1)[i] for k, i in picks])
    assert found == pytest.approx(drag.central_difference(training, picks), rel=1e-6)
    assert training.flag[0] == 0  # every projectile landed: the loop left before its cap
    losses = [training.step() for _ in range(STEPS[framework])]
    assert losses[0] == first and min(losses) <= first / 100


def test_the_script_runs():
    """The script's own run, cut short: a gradient check and a few steps."""
    pytest.importorskip("torch")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "learned_drag.py"), "--steps", "3"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert out.startswith("gradient check: ") and float(out.split()[2]) < 1e-6 and "loss fell" in out
