"""Seed 000: "an elif chain decides its conditions once at the head, into a cell" on the GPU (the
driver emulation where there is no GPU): one key kernel and one SWITCH node, whatever arm runs,
and the bits of the reference interpreter for every combination of the cells (issue 22 item 8).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import eagle
from eagle.graph import Node
from eagle.testing import interpret

HERE = Path(__file__).resolve().parent

ARMS = 4  # if a / elif b / elif c / else


def chain(arrays: dict[str, Any]) -> eagle.Graph:
    """``if a: out = v0; b = 1  elif b: (nothing)  elif c: out = v2  else: out = v3``, the way the
    builder records it (each elif an if alone in the else arm before it); the first arm writes
    the next arm's cell, which the chain, decided at its head, must not read again."""
    def put(k: int) -> eagle.Body:
        return eagle.Body([eagle.copy(arrays[f"v{k}"], into=arrays["out"])])

    last = Node("device_if", eagle.DeviceIf(arrays["c"], put(2), put(3)))
    middle = Node("device_if", eagle.DeviceIf(arrays["b"], eagle.Body(), eagle.Body([last])))
    first = eagle.Body([eagle.copy(arrays["v0"], into=arrays["out"]),
                        eagle.copy(arrays["one"], into=arrays["b"])])
    return eagle.Graph().add_node(Node("device_if", eagle.DeviceIf(arrays["a"], first, eagle.Body([middle]))),
                                  name="choose")


def host_arrays(cells: tuple[int, int, int]) -> dict[str, np.ndarray]:
    arrays = {name: np.array([value], np.uint32) for name, value in zip("abc", cells, strict=True)}
    arrays.update({f"v{k}": np.full(3, 10.0 * k + 1.0) for k in range(ARMS)})
    arrays.update(out=np.full(3, -1.0), one=np.ones(1, np.uint32))
    return arrays


@pytest.mark.parametrize("cells", list(itertools.product((0, 1), repeat=3)))
def test_an_elif_chain_matches_the_reference_for_every_cell(gpu, cells):
    want = host_arrays(cells)
    interpret(chain(want), 2)
    on_device = {name: gpu.asarray(a) for name, a in host_arrays(cells).items()}
    chain(on_device).build().launch(2)
    for name in ("out", "b"):
        got = gpu.get(on_device[name])
        assert got.tobytes() == want[name].tobytes(), (name, got, want[name])


def test_an_elif_chain_is_one_switch_decided_at_the_head(gpu, cuda_driver):
    if cuda_driver is None:
        pytest.skip("counts the emulation's conditional nodes")
    on_device = {name: gpu.asarray(a) for name, a in host_arrays((0, 0, 1)).items()}
    g = chain(on_device).build()
    before = cuda_driver.conditional_runs()
    g.launch(3)
    after = cuda_driver.conditional_runs()
    assert {k: after[k] - before[k] for k in after} == {"if": 0, "while": 0, "switch": 3}
    np.testing.assert_array_equal(gpu.get(on_device["out"]), np.full(3, 21.0))


def test_a_plain_if_else_stays_one_if_node(gpu, cuda_driver):
    if cuda_driver is None:
        pytest.skip("counts the emulation's conditional nodes")
    arrays = {name: gpu.asarray(a) for name, a in host_arrays((1, 0, 0)).items()}
    node = eagle.DeviceIf(arrays["a"], eagle.Body([eagle.copy(arrays["v1"], into=arrays["out"])]),
                          eagle.Body([eagle.copy(arrays["v2"], into=arrays["out"])]))
    g = eagle.Graph().add_node(Node("device_if", node)).build()
    before = cuda_driver.conditional_runs()
    g.launch()
    after = cuda_driver.conditional_runs()
    assert (after["if"] - before["if"], after["switch"] - before["switch"]) == (1, 0)
    np.testing.assert_array_equal(gpu.get(arrays["out"]), np.full(3, 11.0))


# The chain on a driver of another version, in a process of its own (libeagle reads the version
# once per process), with eagle's kernels built for the emulation as the ``gpu`` fixture does.
OTHER_DRIVER_SCRIPT = r"""
import importlib.util, itertools, json, sys

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

harness = load("fakecuda_harness", sys.argv[1])
fake = harness.activate()
from eagle import _cuda, _nvrtc
from eagle.testing import interpret
_nvrtc.compile_ptx = harness.compile_ptx_on_fake
_nvrtc.image_for = lambda source, name, *_: harness.compile_ptx_on_fake(source, name).encode() + b"\0"
_nvrtc.available = lambda: True
tests = load("seed_elif_tests", sys.argv[2])
same, runs = True, []
for cells in itertools.product((0, 1), repeat=3):
    want = tests.host_arrays(cells)
    interpret(tests.chain(want))
    on_device = {name: _cuda.DeviceArray.from_host(a) for name, a in tests.host_arrays(cells).items()}
    g = tests.chain(on_device).build()
    before = fake.conditional_runs()
    g.launch()
    runs.append({k: v - before[k] for k, v in fake.conditional_runs().items()})
    same = same and all(on_device[n].get().tobytes() == want[n].tobytes() for n in ("out", "b"))
print(json.dumps({"same": same, "runs": runs}))
"""


@pytest.mark.parametrize("version, per_launch", [
    (12050, {"if": ARMS - 1, "while": 0, "switch": 0}),  # no SWITCH: a plain IF per arm that does something
    (12080, {"if": 0, "while": 0, "switch": 1}),
])
def test_an_elif_chain_on_a_driver_with_and_without_switch_nodes(cuda_driver, tmp_path, version, per_launch):
    if cuda_driver is None:
        pytest.skip("driver versions are emulated by fakecuda only")
    script = tmp_path / "other_driver.py"
    script.write_text(OTHER_DRIVER_SCRIPT)
    result = subprocess.run([sys.executable, str(script), str(HERE / "fakecuda" / "harness.py"), __file__],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, FAKECUDA_DRIVER_VERSION=str(version)))
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["same"]
    assert found["runs"] == [per_launch] * 8
