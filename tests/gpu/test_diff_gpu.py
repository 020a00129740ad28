"""record=True graphs on the GPU: the forward runs on the device, what the reverse needs (values
overwritten in place, each loop turn's state, the cells) is kept there and copied home, and the
reverse runs on the host.  Every gradient has the bits of the same graph built over NumPy arrays.

The builders are eagle-diff's own (packages/eagle-diff/tests/test_builder_graphs.py, checked there
against central differences), called on NumPy arrays and on device arrays of the same values.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("eagle.builder")
pytest.importorskip("eagle.diff")
hawk = pytest.importorskip("hawk")

import eagle  # noqa: E402
import eagle.diff  # noqa: E402
from eagle.graph import opaque  # noqa: E402
from eagle.testing import run_ranks  # noqa: E402

DIFF_TESTS = Path(__file__).resolve().parents[2] / "packages" / "eagle-diff" / "tests"


def diff_tests(name: str) -> Any:
    """A module of eagle-diff's tests (its graphs and kernels), loaded by path."""
    spec = importlib.util.spec_from_file_location(f"diff_{name}", DIFF_TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built() -> Any:
    """eagle-diff's builder graphs."""
    return diff_tests("test_builder_graphs")


#: eagle-diff's kernels of its hand-built graphs (affine, wave, dbl, grow)
hand = diff_tests("test_hand_built")


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [x for k in tree for x in leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [x for v in tree for x in leaves(v)]
    return [tree]


def on_both(gpu: Any, build: Any, arrays: dict[str, np.ndarray], seeds: dict[str, Any], wrt: tuple[str, ...],
            **options: Any) -> tuple[dict[str, Any], dict[str, Any], eagle.Graph]:
    """The gradients of the graph over NumPy arrays, those of the graph over device arrays (copied
    home), and the device graph."""
    host = build(**{k: v.copy() for k, v in arrays.items()}, record=True, **options)
    host()
    want = eagle.diff.reverse(host.record, seeds, wrt=wrt)
    device = build(**{k: gpu.asarray(v) for k, v in arrays.items()}, record=True, **options)
    assert device.backend == "gpu" and device.schedule and set(device.schedule) == {"capture"}
    device()
    got = eagle.diff.reverse(device.record, seeds, wrt=wrt)
    return want, {name: home(gpu, value) for name, value in got.items()}, device


def home(gpu: Any, tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: home(gpu, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(home(gpu, v) for v in tree)
    return tree if isinstance(tree, np.ndarray) else gpu.get(tree)


def same_bits(want: dict[str, Any], got: dict[str, Any]) -> None:
    assert want.keys() == got.keys()
    for name in want:
        for a, b in zip(leaves(want[name]), leaves(got[name]), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert a.tobytes() == b.tobytes(), f"{name}: {a} != {b}"


def cell(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint32)


def ramp(lo: float, hi: float, n: int = 6) -> np.ndarray:
    return np.linspace(lo, hi, n)


def test_forks_waits_and_a_loop_of_many_turns(gpu, built):
    arrays = {"x": ramp(1.2, 1.95), "flag": cell(1), "y": ramp(-0.5, 0.5)}
    seeds = {"result": {"s": ramp(1.0, 2.0), "v": ramp(0.5, -0.5)}, "y": ramp(0.3, 0.9)}
    want, got, device = on_both(gpu, built.forked, arrays, seeds, ("x", "y"))
    same_bits(want, got)
    assert 5 < device.record._forward.tapes[0].turns < 50  # the device's turn count, read home


def test_a_loop_that_runs_no_turn(gpu, built):
    arrays = {"x": ramp(0.1, 0.9), "flag": cell(0), "y": ramp(-0.5, 0.5)}
    same_bits(*on_both(gpu, built.forked, arrays, {"result": {"s": np.ones(6), "v": np.ones(6)}}, ("x",))[:2])


LOOPS = [
    ("capped", {"x": ramp(0.5, 1.5, 5), "flag": cell(1)}),
    ("early_exit", {"x": ramp(0.1, 0.4, 5), "flag": cell(1), "done": cell(0)}),
    ("skipping", {"x": ramp(0.1, 0.3, 5), "flag": cell(1), "skip": cell(0)}),
    ("loop_in_an_arm", {"x": ramp(0.5, 1.5, 5), "c": cell(1), "flag": cell(1)}),
    ("loop_in_an_arm", {"x": ramp(0.5, 1.5, 5), "c": cell(0), "flag": cell(1)}),
]


@pytest.mark.parametrize(("name", "arrays"), LOOPS, ids=["capped", "mid-body-break", "continue",
                                                         "loop-in-an-arm", "other-arm"])
def test_device_loops(gpu, built, name, arrays):
    same_bits(*on_both(gpu, getattr(built, name), arrays, {"result": ramp(1.0, 2.0, 5)}, ("x",))[:2])


@pytest.mark.parametrize(("flag", "which"), [(1, 0), (0, 1), (0, 0)])
def test_if_elif_else_reverses_the_arm_that_ran(gpu, built, flag, which):
    arrays = {"x": ramp(0.3, 1.7), "flag": cell(flag), "which": cell(which)}
    same_bits(*on_both(gpu, built.choose, arrays, {"result": np.ones(6)}, ("x",))[:2])


def test_an_arm_that_rewrites_its_cell_is_reversed_as_it_ran(gpu, built):
    arrays = {"x": ramp(0.3, 1.7), "flag": cell(1)}
    same_bits(*on_both(gpu, built.self_guarded, arrays, {"result": np.ones(6)}, ("x",))[:2])


@pytest.mark.parametrize("sel", [0, 2, 3, 5])
def test_match_reverses_the_case_that_ran(gpu, built, sel):
    arrays = {"x": ramp(0.1, 0.3, 5), "sel": cell(sel)}
    same_bits(*on_both(gpu, built.chooser, arrays, {"result": np.ones(5)}, ("x",))[:2])


def test_arguments_written_in_place_params_and_buffers(gpu, built):
    arrays = {"x": ramp(0.1, 0.9), "y": ramp(-1.0, 1.0)}
    seeds = {"y": ramp(0.5, 1.5), "result": np.ones(6)}
    want, got, _ = on_both(gpu, built.written, arrays, seeds, ("x", "y", "s"), a=1.5)
    same_bits(want, got)
    want, got, _ = on_both(gpu, built.written, arrays, {"s": np.ones(6)}, ("x", "s", "s.a"), a=1.5)
    same_bits(want, got)
    assert isinstance(got["s.a"], np.ndarray) and got["s.a"].shape == (1,)  # a Param: no array


def test_result_trees_and_planes_of_several_values_per_sample(gpu, built):
    seeds = {"result": {"v": np.ones(6), "sq": (ramp(0.0, 1.0), [ramp(1.0, -1.0)])}}
    same_bits(*on_both(gpu, built.tree, {"x": ramp(0.1, 0.9)}, seeds, ("x", "result"))[:2])
    arrays = {"p": np.arange(1.0, 7.0).reshape(2, 3) / 7, "q": np.arange(6.0).reshape(2, 3) / 5 + 1}
    seeds = {"result": (np.ones(3), ramp(0.0, 1.0, 3)), "q": np.ones((2, 3))}
    same_bits(*on_both(gpu, built.planes, arrays, seeds, ("p", "q"))[:2])


def test_float32_planes(gpu, built):
    arrays = {"x": ramp(0.5, 1.5, 5).astype(np.float32), "flag": cell(1)}
    want, got, _ = on_both(gpu, built.capped, arrays, {"result": np.ones(5, np.float32)}, ("x",))
    same_bits(want, got)
    assert got["x"].dtype == np.float32


def test_seeds_on_the_device_and_gradients_where_the_arrays_live(gpu, built):
    x = ramp(0.5, 1.5, 5)
    g = built.capped(gpu.asarray(x), gpu.asarray(cell(1)), record=True)
    g()
    on_host = eagle.diff.reverse(g.record, {"result": ramp(1.0, 2.0, 5)}, wrt=("x",))["x"]
    on_device = eagle.diff.reverse(g.record, {"result": gpu.asarray(ramp(1.0, 2.0, 5))}, wrt=("x",))["x"]
    assert not isinstance(on_host, np.ndarray)  # like x: a device array
    assert gpu.get(on_host).tobytes() == gpu.get(on_device).tobytes()


def test_the_record_describes_the_last_launch_and_a_bind_makes_a_new_one(gpu, built):
    x = gpu.asarray(ramp(0.5, 1.5, 5))
    flag = gpu.asarray(cell(1))
    g = built.capped(x, flag, record=True)
    g()
    first = gpu.get(eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"])
    assert gpu.get(x).tobytes() == ramp(0.5, 1.5, 5).tobytes()  # the argument is not written
    gpu.put(x, ramp(0.2, 0.6, 5))  # new values, more turns
    gpu.put(flag, cell(1))  # the loop cleared its guard
    g()
    second = gpu.get(eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"])
    host = built.capped(ramp(0.2, 0.6, 5), cell(1), record=True)
    host()
    on_host = eagle.diff.reverse(host.record, {"result": np.ones(5)}, wrt=("x",))["x"]
    assert second.tobytes() == on_host.tobytes()
    assert first.tobytes() != second.tobytes()
    before = g.record
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g.bind(x=gpu.asarray(ramp(0.5, 1.5, 5)))
    assert [str(w.message) for w in caught] == [
        "eagle.Graph.bind: a record=True graph keeps host copies laid out over its arrays; the CUDA graph "
        "is built again (this warning is given once per graph)"]
    assert g.record is not before
    gpu.put(flag, cell(1))
    g()
    third = gpu.get(eagle.diff.reverse(g.record, {"result": np.ones(5)}, wrt=("x",))["x"])
    assert third.tobytes() == first.tobytes()


def test_a_reverse_writes_nothing_on_the_device(gpu, built):
    x, y = gpu.asarray(ramp(1.2, 1.95)), gpu.asarray(ramp(-0.5, 0.5))
    g = built.forked(x, gpu.asarray(cell(1)), y, record=True)
    g()
    before = [gpu.get(a).tobytes() for a in (x, y, g.result["s"], g.result["v"])]
    for _ in range(2):
        eagle.diff.reverse(g.record, {"result": {"s": np.ones(6), "v": np.ones(6)}}, wrt=("x", "y"))
    assert [gpu.get(a).tobytes() for a in (x, y, g.result["s"], g.result["v"])] == before


# ------------------------------------------------------------------ hand-built graphs


def hand_built(put: Any, x0: np.ndarray) -> tuple[eagle.Graph, Any]:
    """affine -> a fork (wave | dbl) -> a sum and a copy, then a capped loop of a Mutable in place."""
    x = put(x0)
    g = eagle.Graph(record=True)
    first = hand.affine.plan(x, 2.0, 0.5)
    g.add(first, name="aff")
    y = first.outputs[0]
    w, d = hand.wave.plan(y), hand.dbl.plan(y)
    g.add_group([w, d], names=["w", "d"])
    total, kept = put(np.zeros(1)), put(np.zeros(x0.size))
    g.add_node(eagle.reduce(w.outputs[0], total), name="total")
    g.add_node(eagle.copy(d.outputs[0], into=kept), name="keep")
    flag = put(cell(1))
    step = hand.grow.plan(kept, 1.3, flag).launch
    g.add_node(eagle.repeat_while(step, eagle.SkipGuard.nonzero(flag), 40), name="grow")
    return g.build(), kept


def test_a_hand_built_graph_with_plane_names_params_a_fork_and_repeat_while(gpu):
    x0 = ramp(0.1, 0.9)
    seeds = {"total.out": np.array([1.5]), "grow.x": ramp(1.0, -1.0)}
    grads = []
    for put in (np.copy, gpu.asarray):
        g, _ = hand_built(put, x0)
        g()
        assert g.record.names == hand_built(np.copy, x0)[0].record.names
        found = eagle.diff.reverse(g.record, seeds, wrt=("aff.x", "aff.a", "grow.a"))
        grads.append({k: home(gpu, v) for k, v in found.items()})
    same_bits(*grads)


def test_an_eager_node_keeps_its_inputs_and_its_vjp_is_given_host_copies(gpu):
    """Your own code on the GPU (eager=True) whose input is overwritten after it: the input is kept
    aside at every launch, and the reverse, on the host, gives its vjps= function NumPy arrays."""
    seen = []

    def vjp(primals: dict[str, Any], cotangents: dict[str, Any]) -> dict[str, Any]:
        seen.append(type(primals["y"]))
        return {"y": 2.0 * primals["y"] * cotangents["z"]}

    def run(device: bool) -> tuple[dict[str, Any], list[str]]:
        put = gpu.asarray if device else np.copy
        x = put(ramp(0.1, 0.9))
        g = eagle.Graph(record=True)
        first = hand.affine.plan(x, 2.0, 0.5)
        g.add(first, name="aff")
        y, z = first.outputs[0], put(np.zeros(6))
        if device:
            square = opaque(lambda: gpu.put(z, gpu.get(y) ** 2), reads={"y": y}, writes={"z": z}, eager=True)
            clear = opaque(lambda: gpu.put(y, np.zeros(6)), writes={"y": y}, eager=True)
        else:
            square = opaque(lambda: np.multiply(y, y, out=z), reads={"y": y}, writes={"z": z})
            clear = opaque(lambda: y.fill(0.0), writes={"y": y})
        g.add_node(square, name="sq").add_node(clear, name="clear").build()()
        found = eagle.diff.reverse(g.record, {"z": ramp(1.0, 2.0)}, wrt=("aff.x",), vjps={"sq": vjp})
        return {k: home(gpu, v) for k, v in found.items()}, g.schedule

    want, _ = run(False)
    got, schedule = run(True)
    same_bits(want, got)
    assert seen == [np.ndarray, np.ndarray]
    assert schedule == ["capture", "eager_host", "eager_host"]
    np.testing.assert_allclose(want["aff.x"], 2.0 * 2.0 * (2.0 * ramp(0.1, 0.9) + 0.5) * ramp(1.0, 2.0))


# ------------------------------------------------------------------ over a communicator


#: eagle-diff's kernel of its sharded gradients: w * x * x
ENERGY = diff_tests("test_sharded").energy


def sharded(gpu: Any, x0: np.ndarray, device: bool, comm: Any = None) -> dict[str, np.ndarray]:
    """A sum of w * x * x over a sharded batch and its gradients, all copied home."""
    put = gpu.asarray if device else np.copy
    x, total = put(x0), put(np.zeros(1))
    g = eagle.Graph(record=True, comm=comm)
    plan = ENERGY.plan(x, 0.7)
    g.add(plan, name="energy").add_node(eagle.reduce(plan.outputs[0], total), name="total").build()
    g()
    found = eagle.diff.reverse(g.record, {"total.out": np.ones(1)})
    return {k: home(gpu, v) for k, v in {"total": total, **found}.items()}


def test_gradients_over_a_sharded_batch_on_the_gpu(gpu):
    n = 5 * eagle.BLOCK + 300
    x0 = np.random.default_rng(5).uniform(-3.0, 3.0, n)
    whole = sharded(gpu, x0, False)
    alone = sharded(gpu, x0, True)  # compiled before the ranks' threads ask for it
    assert all(alone[k].tobytes() == whole[k].tobytes() for k in whole)
    ranks = run_ranks(2, lambda comm: sharded(gpu, x0[eagle.shard(n, comm.rank, 2)], True, comm))
    for mine in ranks:  # the sum, and a Param's gradient, over every rank's samples
        assert mine["total"].tobytes() == whole["total"].tobytes()
        assert mine["w"].tobytes() == whole["w"].tobytes()
    assert np.concatenate([mine["energy.x"] for mine in ranks]).tobytes() == whole["energy.x"].tobytes()


# ------------------------------------------------------------------ refusals


def test_a_loop_without_a_cap_is_refused_by_name(gpu, built):
    refusal = (r"^eagle\.Graph\.build: the device loop 'loop' has no cap; on the GPU a record=True graph "
               r"keeps every turn's state in device memory")
    with pytest.raises(ValueError, match=refusal):
        built.counted(gpu.asarray(ramp(0.1, 0.3, 5)), gpu.asarray(cell(4)), record=True)
    g = built.counted(ramp(0.1, 0.3, 5), cell(4), record=True)  # the CPU grows its tape as it goes
    assert g.backend == "cpu"


class View:
    """A view of a device array through ``__cuda_array_interface__`` (eagle's own DeviceArray has
    no slicing): ``shape``, strides and offset in elements."""

    def __init__(self, whole: Any, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> None:
        iface = whole.__cuda_array_interface__
        self.whole, self.shape, self.dtype = whole, shape, np.dtype(iface["typestr"])
        size = self.dtype.itemsize
        self.__cuda_array_interface__ = {**iface, "shape": shape, "strides": tuple(n * size for n in strides),
                                         "data": (iface["data"][0] + offset * size, False)}


def test_twins_share_bytes_exactly_where_their_device_arrays_do(gpu):
    from eagle.diff.device import Twins

    values = np.arange(12.0).reshape(3, 4)
    whole, other = gpu.asarray(values), gpu.asarray(np.arange(3.0))
    rows, tail = View(whole, (2, 4), (8, 1)), View(whole, (4,), (1,), 8)
    twins = Twins([rows, tail, other], 0)
    twins.read_back()
    np.testing.assert_array_equal(twins.twin(rows), values[::2])
    np.testing.assert_array_equal(twins.twin(tail), values[2])
    assert np.shares_memory(twins.twin(rows), twins.twin(tail))  # row 2 is both's
    assert not np.shares_memory(twins.twin(rows), twins.twin(other))
    assert twins.device_of(twins.twin(tail)) is tail
    assert not twins.twin(gpu.asarray(np.ones(5))).any()  # none of theirs: a host array of its own
    assert twins.twin(gpu.zeros(0)).shape == (0,)
    head = View(whole, (4,), (1,))
    alone = Twins([head], 0)
    with pytest.raises(ValueError, match=r"eagle\.diff\.reverse: 'x' shares device memory with the graph's "
                                         r"planes but reaches past the memory they lie in"):
        alone.twin(whole, "'x'")


def test_a_strided_plane_kept_aside_is_refused_by_name(gpu):
    def build(device: bool) -> eagle.Graph:
        whole = gpu.asarray(np.arange(12.0).reshape(3, 4)) if device else np.arange(12.0).reshape(3, 4)
        view = View(whole, (2, 4), (8, 1)) if device else whole[::2]  # read, then overwritten: kept aside
        out = gpu.zeros((2, 4)) if device else np.zeros((2, 4))
        g = eagle.Graph(record=True)
        g.add_node(opaque(lambda: None, reads={"v": view}, writes={"out": out}), name="read")
        g.add_node(opaque(lambda: None, writes={"v": view}), name="overwrite")
        return g.build()

    assert build(False).backend == "cpu"
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: a record=True graph on the GPU keeps a copy "
                                         r"of a plane \(float64 \(2, 4\) at strides \(64, 8\)\) that is a "
                                         r"strided view"):
        build(True)
