"""Seed 004's builders on device arrays: every form gives the results it gives on NumPy arrays.

The builders are the page's own (packages/eagle-builder/tests/seed004.txt), defined once; each is
called on NumPy arrays and on device arrays of the same values, and the result trees compared.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("eagle.builder")
hawk = pytest.importorskip("hawk")

import eagle  # noqa: E402
from hawk import Mutable, Scalar, UInt32  # noqa: E402

SEED_TESTS = Path(__file__).resolve().parents[2] / "packages" / "eagle-builder" / "tests" / "test_seed004.py"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The namespace of the page's definitions (its builders and kernels), as its cells define them."""
    spec = importlib.util.spec_from_file_location("seed004_cells", SEED_TESTS)
    seed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seed)
    folder = tmp_path_factory.mktemp("seed004_gpu")
    namespace: dict[str, Any] = {"__name__": "seed004_gpu"}
    for k, cell in enumerate(seed.CELLS):
        seed.run_cell(seed.definitions_only(cell.code), folder / f"cell{k}.py", namespace)
    return namespace


def on_both(gpu: Any, builder: Any, *args: Any) -> tuple[Any, Any, Any]:
    """(the NumPy graph's result, the device graph's result copied home, the device graph)."""
    host_graph = builder(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    device_graph = builder(*[gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    assert device_graph.backend == "gpu"
    return host_graph(), home(gpu, device_graph()), device_graph


def home(gpu: Any, tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: home(gpu, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(home(gpu, v) for v in tree)
    return None if tree is None else gpu.get(tree)


def same(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            same(x, y)
    else:
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), (a, b)


def cell(v: int) -> np.ndarray:
    return np.array([v], np.uint32)


X = np.arange(4.0)


@pytest.mark.parametrize("name, args", [
    ("first", (X,)),
    ("choose", (X, cell(1), cell(1), True)),
    ("choose", (X, cell(0), cell(1), False)),
    ("choose", (X, cell(0), cell(0), True)),
    ("capped", (np.ones(4), cell(1))),
    ("counted", (np.zeros(4), cell(3))),
    ("skipping", (np.zeros(4), cell(1), cell(0))),
    ("chooser", (np.full(4, 3.0), cell(0))),
    ("chooser", (np.full(4, 3.0), cell(2))),
    ("chooser", (np.full(4, 3.0), cell(5))),
    ("chain", (np.arange(8.0),)),
    ("pair", (np.arange(8.0),)),
])
def test_a_form_gives_the_same_results(gpu, page, name, args):
    host, device, _ = on_both(gpu, page[name], *args)
    same(host, device)


def test_an_uncapped_loop_with_a_break(gpu, page):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uncapped-loop warning, the page's own subject
        host, device, _ = on_both(gpu, page["early_exit"], np.zeros(4), cell(1), cell(0))
    same(host, device)


def test_the_cell_is_read_at_every_replay(gpu, page):
    c = gpu.asarray(cell(1))
    g = page["choose"](gpu.asarray(X), c, gpu.asarray(cell(1)), True)
    first = gpu.get(g())
    gpu.put(c, 0)
    second = gpu.get(g())
    np.testing.assert_array_equal(first, [4.0, 8.0, 12.0, 16.0])
    np.testing.assert_array_equal(second, [6.0, 8.0, 10.0, 12.0])
    assert g.captures == 1


def test_a_mutable_argument_is_written_in_place(gpu, page):
    y_host, y_device = np.zeros(4), gpu.zeros(4)
    page["void"](X, y_host)()
    page["void"](gpu.asarray(X), y_device)()
    same(y_host, gpu.get(y_device))


def test_the_whole_step_forks_waits_loops_and_binds(gpu, page):
    """The page's `whole`: a fork with a wait, a block with a capped loop, an in-place output; then
    bind to new arrays, run ten times, enqueue and synchronize."""
    x, flag = np.arange(8.0), cell(1)
    y_host, y_device = np.zeros(8), gpu.zeros(8)
    dx, dflag = gpu.asarray(x), gpu.asarray(flag)
    gh, gd = page["whole"](x, flag.copy(), y_host), page["whole"](dx, dflag, y_device)
    same(gh(), gpu.get(gd()))
    same(y_host, gpu.get(y_device))
    gh.bind(x=x + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # patched in place: no rebuild, no warning
        gd.bind(x=gpu.asarray(x + 1.0))
    assert (gd.captures, gd.graph_builds) == (1, 1)
    same(gh(10), gpu.get(gd(10)))
    gd.launch(2).enqueue(3).synchronize()
    gh.launch(2).enqueue(3).synchronize()
    same(gh.result, gpu.get(gd.result))
    np.testing.assert_array_equal(gpu.get(dx), x)  # the caller's array is never written


def test_bind_of_a_guard_cell_rebuilds_once_with_a_warning(gpu, page):
    """A device condition reads its cell in the conditional node itself: not patched, built again."""
    g = page["choose"](gpu.asarray(X), gpu.asarray(cell(1)), gpu.asarray(cell(1)), True)
    np.testing.assert_array_equal(gpu.get(g()), [4.0, 8.0, 12.0, 16.0])
    with pytest.warns(eagle.RebuildWarning, match="cannot be patched; the CUDA graph is built again"):
        g.bind(flag=gpu.asarray(cell(0)))
    np.testing.assert_array_equal(gpu.get(g()), [6.0, 8.0, 10.0, 12.0])
    assert (g.captures, g.graph_builds) == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per graph
        g.bind(flag=gpu.asarray(cell(1)))
    assert g.captures == 3


@hawk.kernel
def propagate(s: Scalar) -> Scalar:
    return s + 1.0


@hawk.kernel
def sample(s: Scalar) -> Scalar:
    return s * 2.0


@hawk.kernel
def check_events(p: Scalar, flag: Mutable[UInt32]):
    flag = hawk.math.uint32(p > 10.0)


@hawk.kernel
def push(s: Scalar, flag: UInt32) -> Scalar:
    return s + 100.0 * hawk.math.float64(flag)


@eagle.Graph.builder
def propagate_with_events(state, h_probe, h_flags, flags):
    """Seed 003's first example: GPU nodes, a copy home, the same kind of hawk kernel on the
    host planes (a host node), and a copy back."""
    g = eagle.Graph()
    state = propagate(state)
    probe = sample(state)
    eagle.copy(probe, into=h_probe)
    check_events(h_probe, h_flags)
    eagle.copy(h_flags, into=flags)
    g.result = push(state, flags)
    return g


def test_seed_003_propagate_with_events(gpu):
    n = 8
    state, flags = gpu.asarray(np.arange(float(n))), gpu.zeros(n, np.uint32)
    h_probe, h_flags = eagle.pinned(n), eagle.pinned(n, np.uint32)
    g = propagate_with_events(state, h_probe, h_flags, flags)
    assert g.backend == "gpu"
    out = gpu.get(g())
    probe = (np.arange(float(n)) + 1.0) * 2.0
    np.testing.assert_array_equal(h_probe, probe)
    np.testing.assert_array_equal(out, np.arange(float(n)) + 1.0 + 100.0 * (probe > 10.0))
    host = propagate_with_events(np.arange(float(n)), np.zeros(n), np.zeros(n, np.uint32),
                                 np.zeros(n, np.uint32))
    np.testing.assert_array_equal(host(), out)  # the same builder on NumPy arrays: the same numbers


@eagle.Graph.builder
def upload(h, d):
    g = eagle.Graph()
    eagle.copy(h, into=d)
    return g


@pytest.mark.parametrize("first, second, patched", [
    ("pinned", "pinned", True),      # a copy node's end: patched in place
    ("pinned", "pageable", False),   # a copy node cannot change its kind of memory: built again
    ("pageable", "pageable", False),  # a staged copy's host node holds the array: built again
])
def test_bind_of_a_copy_end(gpu, first, second, patched):
    def make(kind: str, values: list[float]) -> np.ndarray:
        out = eagle.pinned(4) if kind == "pinned" else np.zeros(4)
        out[:] = values
        return out

    d = gpu.zeros(4)
    g = upload(make(first, [1, 2, 3, 4]), d)
    g()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g.bind(h=make(second, [5, 6, 7, 8]))
    g()
    np.testing.assert_array_equal(gpu.get(d), [5, 6, 7, 8])
    rebuilt = [w for w in caught if issubclass(w.category, eagle.RebuildWarning)]
    assert (g.captures == 1, len(rebuilt)) == (patched, 0 if patched else 1)
