"""eagle's CUDA C in the thread blocks it launches: the fixed-order reduction tree, 256 threads per
block sharing each level through shared memory and barriers, gives the CPU's bits for every dtype
and op; per-sample kernels whose grid is smaller than their samples stride over several blocks.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda), whose
blocks are real: a fiber per thread, switched at ``__syncthreads``.
"""

from __future__ import annotations

import runpy
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import eagle
from eagle import _compaction, _gpu_kernels, _gpu_program
from eagle.graph import Node, register_node_kind

hawk = pytest.importorskip("hawk")
from hawk import Param, Scalar  # noqa: E402

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint32, np.uint8, np.bool_]
#: Both sides of a block's thread count and of EAGLE_BLOCK, and a second pass of blocks.
SIZES = [1, 2, 255, 256, 257, 1023, 1025, 65537]
#: 2**20 + 3: three passes (1025 block partials, then 2, then 1).
LARGE = eagle.BLOCK * eagle.BLOCK + 3


def values(n: int, dtype: type, seed: int = 0) -> np.ndarray:
    """Floats of mixed magnitudes (so the order of the sum shows in the bits), integers over their
    whole range (so sums wrap), zeros among them (so all and any are not decided by the first)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n)).astype(dtype)
    elif dtype.kind == "b":
        x = rng.random(n) < 0.9
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x[rng.random(n) < 0.05] = 0
    return x


def with_specials(x: np.ndarray) -> np.ndarray:
    """NaNs of both signs and infinities at spread positions: which NaN max and min carry up is
    the tree's order."""
    x = x.copy()
    k = max(len(x) // 7, 1)
    x[::k] = np.inf
    x[k // 2 :: k] = -np.inf
    x[len(x) // 3 :: 3 * k] = np.nan
    x[len(x) // 2 :: 5 * k] = -np.nan
    return x


@dataclass(frozen=True)
class Reduce:
    x: Any
    out: Any
    op: str


# The lowering target's reduce, which eagle.reduce (sum, max, all) and hawk's reductions (min and
# any too) lower to: every op, through one kind, on the host and on the device.
register_node_kind(
    "test_blocks_gpu_reduce",
    reads=lambda p: [("x", p.x, "read")],
    writes=lambda p: [("out", p.out, "write")],
    lower=lambda p, target: target.reduce(p.x, p.out, p.op),
    both_sides=True,
)


def cpu(x: np.ndarray, op: str) -> np.ndarray:
    out = np.zeros(1, x.dtype)
    eagle.Graph().add_node(Node("test_blocks_gpu_reduce", Reduce(x, out, op))).build().launch()
    return out


def device(gpu, x: np.ndarray, op: str) -> np.ndarray:
    out = gpu.zeros(1, x.dtype)
    g = eagle.Graph().add_node(Node("test_blocks_gpu_reduce", Reduce(gpu.asarray(x), out, op))).build()
    assert g.backend == "gpu"
    g.launch()
    return gpu.get(out)


def test_the_reduction_runs_in_blocks_of_many_threads():
    assert _gpu_kernels.REDUCE_THREADS == 256


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_reduction_gives_the_cpus_bits(gpu, dtype, n):
    x = values(n, dtype, seed=n)
    for op in _gpu_kernels.OPS:
        assert device(gpu, x, op).tobytes() == cpu(x, op).tobytes(), op


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_nans_and_infinities_reduce_as_on_the_cpu(gpu, dtype):
    x = with_specials(values(5000, dtype))
    for op in _gpu_kernels.OPS:
        assert device(gpu, x, op).tobytes() == cpu(x, op).tobytes(), op


#: At three passes, every op of each float dtype (where the tree's order shows in the bits) and
#: every op of the other dtypes once among them (integer sums wrap, and wrapping addition, max,
#: min, all and any do not depend on the order: what the size adds there is the third pass).
THREE_PASSES = [*((dtype, op) for dtype in (np.float64, np.float32) for op in _gpu_kernels.OPS),
                *zip(DTYPES[2:], (*_gpu_kernels.OPS, "sum"), strict=True), (np.bool_, "all"),
                (np.bool_, "any")]


def test_three_passes_cover_every_dtype_and_op():
    assert {np.dtype(d) for d, _ in THREE_PASSES} == {np.dtype(d) for d in DTYPES}
    assert {op for _, op in THREE_PASSES} == set(_gpu_kernels.OPS)


@pytest.mark.parametrize("dtype, op", THREE_PASSES,
                         ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_a_reduction_over_three_passes_gives_the_cpus_bits(gpu, dtype, op):
    x = values(LARGE, dtype, seed=3)
    assert device(gpu, x, op).tobytes() == cpu(x, op).tobytes()


@hawk.kernel
def below_top(x: Scalar, a: Param) -> Scalar:
    return a * (hawk.max(x) - x)


@hawk.kernel
def above_floor(x: Scalar) -> Scalar:
    return x - hawk.min(x) + hawk.sum(x) * 1e-3


@pytest.fixture
def two_blocks(monkeypatch):
    """Per-sample kernels (and eagle.simulate's compaction) launched with at most two blocks: every
    thread strides over several samples."""
    monkeypatch.setattr(_gpu_program, "MAX_BLOCKS", 2)
    monkeypatch.setattr(_compaction, "_MOST_BLOCKS", 2)
    assert _gpu_program.grid_for(3000) == (2, 1, 1)


def test_grid_stride_kernels_over_several_blocks_give_the_cpus_bits(gpu, two_blocks):
    x = values(3000, np.float64, seed=1)
    g = eagle.Graph()
    g.add(below_top.plan(gpu.asarray(x), 0.5), name="below_top")
    g.add(above_floor.plan(g._nodes[0].payload.outputs[0]), name="above_floor")
    z = g._nodes[1].payload.outputs[0]
    g.build().launch(2)
    np.testing.assert_array_equal(gpu.get(z), above_floor(below_top(x, 0.5)))


HAWK_TESTS = Path(__file__).parents[2] / "packages" / "hawk" / "tests"


def test_a_compacted_walk_over_several_blocks_gives_the_cpus_bits(gpu, two_blocks):
    walk = SimpleNamespace(**runpy.run_path(str(HAWK_TESTS / "test_simulate.py")))
    want = walk.photons(3000)
    steps = walk.python_loop(want)
    d = {name: gpu.asarray(a) for name, a in walk.photons(3000).items()}
    result = eagle.simulate(walk.walk(d), terminated=d["done"], max_steps=100_000, compact=True)
    assert (result.steps, result.live) == (steps, 0) and result.report.compactions
    walk.same({name: gpu.get(a) for name, a in d.items()}, want)
