"""eagle.until_done on the device: the loop is one WHILE node, the stop test a device reduction; the
random walk of hawk's tests (test_until_done.py) gives the CPU's bits, run at once or step by step.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import eagle
import eagle.graph

pytest.importorskip("hawk")

#: the random walk of hawk's own tests, its kernels and its Python loop
HAWK_TESTS = Path(__file__).parents[2] / "packages" / "hawk" / "tests"
walk = SimpleNamespace(**runpy.run_path(str(HAWK_TESTS / "test_until_done.py")))

N = 700


def on_device(gpu, s):
    return {name: gpu.asarray(a) for name, a in s.items()}


def got(gpu, d):
    return {name: gpu.get(a) for name, a in d.items()}


@pytest.mark.parametrize("fuse", ["0", "1"])
def test_the_walk_on_the_device_gives_the_cpus_bits(gpu, monkeypatch, fuse):
    want = walk.photons(N)
    steps = walk.python_loop(want, 10_000)
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    d = on_device(gpu, walk.photons(N))
    runner = eagle.until_done(walk.step_plans(d), terminated=d["done"], max_steps=10_000)
    assert runner.run() == eagle.Steps(steps, 0)
    assert runner._runner.backend == "gpu" and bool(runner._runner.fused) == (fuse == "1")
    walk.same(got(gpu, d), want)


def test_a_step_that_reads_a_table_on_the_device_gives_the_cpus_bits(gpu):
    want, steps = walk.layered_loop(N)
    d = on_device(gpu, walk.photons(N))
    runner = eagle.until_done(walk.layered_plans(d, gpu.asarray(walk.LAYERS)), terminated=d["done"],
                              max_steps=10_000)
    assert runner.run() == eagle.Steps(steps, 0)
    walk.same(got(gpu, d), want)


def test_run_steps_on_the_device_from_where_it_stopped(gpu):
    want = walk.photons(N)
    total = walk.python_loop(want, 10_000)
    d = on_device(gpu, walk.photons(N))
    runner = eagle.until_done(walk.step_plans(d), terminated=d["done"], max_steps=10_000)
    first = runner.run(max_steps=2)
    assert first.steps == 2 and 0 < first.live < N
    ran, live = 2, [first.live]
    while not live[-1] == 0:
        result = runner.run(max_steps=5)
        ran += result.steps
        live.append(result.live)
    assert ran == total
    walk.same(got(gpu, d), want)
    assert runner._runner.captures == 1  # every run replays the one captured loop


def test_a_capped_device_run_says_samples_are_live(gpu):
    d = on_device(gpu, walk.photons(N))
    result = eagle.until_done(walk.step_plans(d), terminated=d["done"], max_steps=3).run()
    assert result.steps == 3 and result.live > 0 and not result.done


GROW = """
extern "C" __global__ void grow(double *x, const double *target, unsigned char *done, const long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !done[i]) {
        x[i] += 1.0;
        done[i] = x[i] >= target[i];
    }
}
"""


def grow_once(x, target, done, n, stream) -> None:
    from eagle import _cuda

    function = _cuda.module(GROW, "until_grow").function("grow")
    _cuda.launch(function, (-(-n // 64), 1, 1), (64, 1, 1), [x, target, done, np.int64(n)], stream=stream)


def test_a_child_graph_runs_once_per_step_inside_the_device_loop(gpu):
    """A CUDA graph made elsewhere (here by stream capture of one launch), as a step of the loop."""
    from eagle import _cuda

    opaque_tests = importlib.util.spec_from_file_location("until_opaque_tests", Path(__file__).with_name(
        "test_opaque_gpu.py"))
    module = importlib.util.module_from_spec(opaque_tests)
    opaque_tests.loader.exec_module(module)
    _cuda.open_device(0)
    driver = module.Driver()
    n = 200
    targets = (np.arange(n) * 5 % 17 + 1).astype(np.float64)
    x, target, done = gpu.zeros(n), gpu.asarray(targets), gpu.zeros(n, np.uint8)
    stream = driver.stream()
    graph = driver.capture(stream, lambda: grow_once(x, target, done, n, stream))
    node = eagle.graph.child(graph, reads={"target": target, "done": done},
                             writes={"x": x, "done": done})
    assert eagle.until_done([node], terminated=done, max_steps=100).run() == eagle.Steps(17, 0)
    np.testing.assert_array_equal(gpu.get(x), targets)


def test_a_captured_opaque_node_runs_once_per_step_inside_the_device_loop(gpu):
    """The node reads terminated and leaves finished samples alone; it is captured once, at build."""
    n = 300
    targets = (np.arange(n) * 7 % 23 + 1).astype(np.float64)
    x, target, done = gpu.zeros(n), gpu.asarray(targets), gpu.zeros(n, np.uint8)
    captured = []

    def step() -> None:
        captured.append(1)
        grow_once(x, target, done, n, eagle.graph.capture_stream())

    node = eagle.opaque(step, reads={"target": target, "done": done}, writes={"x": x, "done": done})
    runner = eagle.until_done([node], terminated=done, max_steps=100)
    assert runner.run(max_steps=10) == eagle.Steps(10, int((targets > 10).sum()))
    assert runner.run() == eagle.Steps(13, 0)
    assert len(captured) == 1
    np.testing.assert_array_equal(gpu.get(x), targets)


def test_a_logical_size_is_patched_into_the_captured_loop(gpu):
    m = 300
    want = walk.photons(m)
    steps = walk.python_loop(want, 10_000)
    d = on_device(gpu, walk.photons(N))
    runner = eagle.until_done(walk.step_plans(d), terminated=d["done"], max_steps=10_000)
    assert runner.run(max_steps=1).steps == 1  # built and captured at the full size
    for name, a in walk.photons(N).items():
        gpu.put(d[name], a)
    assert runner.set_logical_size(m).run() == eagle.Steps(steps, 0)
    assert runner._runner.captures == 1  # no re-capture
    host = got(gpu, d)
    walk.same({name: a[:m] for name, a in host.items()}, want)
    walk.same({name: a[m:] for name, a in host.items()}, {name: a[m:] for name, a in walk.photons(N).items()})
