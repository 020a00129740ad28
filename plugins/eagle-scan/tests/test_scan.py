"""eagle-scan through its entry point: the ``scan`` kind is reached as ``eagle.node("scan", ...)``.

No test imports eagle_scan: eagle must find the kind itself.  The oracle is
the scan's documented order in NumPy: each block's serial scan
(``np.add.accumulate`` is serial), the serial scan of the block totals, each
block offset by the total before it.
"""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

import eagle
from eagle import _core
from eagle.graph import node_kind

try:
    import hawk
    from hawk import Param, Scalar
except ImportError:  # the plugin works without hawk; only the mixed-graph test needs it
    hawk = None

BLOCK = 1024
UFUNC = {"sum": np.add, "max": np.maximum}


def blocked_scan(x: np.ndarray, op: str) -> np.ndarray:
    """The scan in eagle-scan's fixed order, in NumPy."""
    ufunc = UFUNC[op]
    if op == "sum" and x.dtype.kind == "i":  # integer sums wrap, as the C kernels' unsigned adds do
        unsigned = x.view(np.uint64 if x.itemsize == 8 else np.uint32)
        return ufunc.accumulate(unsigned, dtype=unsigned.dtype).view(x.dtype)
    y = np.empty_like(x)
    blocks = [slice(k, min(k + BLOCK, x.size)) for k in range(0, x.size, BLOCK)]
    for s in blocks:
        y[s] = ufunc.accumulate(x[s])
    carry = ufunc.accumulate(np.array([y[s][-1] for s in blocks], dtype=x.dtype))
    for k, s in enumerate(blocks[1:], start=1):
        y[s] = ufunc(carry[k - 1], y[s])
    return y


def sample(n: int, dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-(2**30), 2**30, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


if hawk is not None:
    @hawk.kernel
    def affine(x: Scalar, a: Param, b: Param) -> Scalar:
        return a * x + b
else:
    affine = None


def test_found_through_its_entry_point():
    """eagle.plugins() lists eagle-scan with its installed version and its kind."""
    (info,) = [p for p in eagle.plugins() if p.name == "eagle-scan"]
    assert info.distribution == "eagle-scan" and info.kinds == ("scan",)
    assert info.version == importlib.metadata.version("eagle-scan")
    assert node_kind("scan").plugin == "eagle-scan" and node_kind("scan").native is not None


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("n", [1, 7, BLOCK, BLOCK + 1, 5 * BLOCK + 3])
def test_scan_matches_its_order(threads, dtype, op, n):
    """Every dtype, op and size (one block, a block and one, several) gives the blocked order's bits."""
    x = sample(n, dtype)
    y = np.full_like(x, 99)
    g = eagle.Graph().add_node(eagle.node("scan", x, out=y, op=op), name="scan").build()
    g.launch()
    np.testing.assert_array_equal(y, blocked_scan(x, op))
    if op == "max" or x.dtype.kind == "i" or n <= BLOCK:  # these equal the serial scan exactly
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(y, UFUNC[op].accumulate(x, dtype=x.dtype))
    else:
        np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3)


def test_bits_do_not_depend_on_the_thread_count():
    """A large float sum gives the same bits under teams of 1, 2, 3 and 4 threads."""
    x = sample(200_003, np.float64, seed=3)
    results = []
    before = _core.num_threads()
    try:
        for t in (1, 2, 3, 4):
            _core.set_num_threads(t)
            y = np.empty_like(x)
            eagle.Graph().add_node(eagle.node("scan", x, out=y)).build().launch()
            results.append(y)
    finally:
        _core.set_num_threads(before)
    for y in results[1:]:
        np.testing.assert_array_equal(y, results[0])


def test_in_place_scan_and_replays():
    """out=x scans in place (a readwrite plane); each replay scans the last result again."""
    x = np.ones(3000)
    g = eagle.Graph().add_node(eagle.node("scan", x, out=x), name="cumsum")
    assert [t[2] for t in g._nodes[0].planes()] == ["readwrite"]
    g.build().launch(2)
    np.testing.assert_array_equal(x, blocked_scan(blocked_scan(np.ones(3000), "sum"), "sum"))


def test_edges_come_from_the_planes(threads):
    """scan -> scan of its output: a RAW edge on the plane, and the replay follows it."""
    x = sample(4000, np.float64)
    y, z = np.empty_like(x), np.empty_like(x)
    g = eagle.Graph().add_node(eagle.node("scan", x, out=y), name="first")
    g.add_node(eagle.node("scan", y, out=z, op="max"), name="second")
    assert [(e.src, e.dst, e.plane, e.kind) for e in g.edges()] == [(0, 1, "out", "RAW")]
    g.build().launch()
    np.testing.assert_array_equal(z, np.maximum.accumulate(blocked_scan(x, "sum")))


@pytest.mark.parametrize("n", [100, 3000])
def test_runs_in_work_share_and_in_branch_tasks(threads, n):
    """A fork of scan branches over <= 4096 samples runs as branch tasks (>= 2 threads), else work-shares."""
    xs = [sample(n, np.float64, seed=s) for s in range(3)]
    ys = [np.empty_like(x) for x in xs]
    chain = [eagle.node("scan", xs[1], out=ys[1]), eagle.node("scan", ys[1], out=xs[2])]
    g = eagle.Graph().add_group([eagle.node("scan", xs[0], out=ys[0]), chain], names=["a", ["b", "c"]])
    g.add_node(eagle.node("scan", xs[2], out=ys[2], op="max"), name="d")
    g.build()
    assert g.schedule == ["branch_tasks" if threads >= 2 else "work_share", "work_share"]
    g.launch()
    np.testing.assert_array_equal(ys[0], blocked_scan(xs[0], "sum"))
    np.testing.assert_array_equal(xs[2], blocked_scan(blocked_scan(xs[1], "sum"), "sum"))
    np.testing.assert_array_equal(ys[2], np.maximum.accumulate(xs[2]))


def test_a_graph_of_scans_and_hawk_kernels_replays_natively(threads):
    """hawk kernels and scans, in a chain and in a fork: every lowering is native, so the fork runs as
    branch tasks, and the replay equals the kernels and scans run one by one."""
    if affine is None:
        pytest.skip("hawk is not installed")
    x = sample(2500, np.float64)
    first = affine.plan(x, 0.5, 1.0)
    u = first.outputs[0]
    v, w = np.empty_like(x), np.empty_like(x)
    g = eagle.Graph().add(first, name="affine")
    g.add_node(eagle.node("scan", u, out=v), name="cumsum")
    second = affine.plan(v, 2.0, 0.0)
    g.add_group([second, eagle.node("scan", u, out=w, op="max")], names=["again", "cummax"])
    g.build()
    assert g.schedule[-1] == ("branch_tasks" if threads >= 2 else "work_share")
    g.launch(3)
    expected_u = 0.5 * x + 1.0
    np.testing.assert_array_equal(v, blocked_scan(expected_u, "sum"))
    np.testing.assert_array_equal(second.outputs[0], 2.0 * blocked_scan(expected_u, "sum"))
    np.testing.assert_array_equal(w, np.maximum.accumulate(expected_u))


def test_logical_size_scans_only_the_first_samples():
    """set_logical_size(m): the first m samples are scanned, the rest of out is untouched."""
    x = sample(5000, np.float64)
    y = np.zeros_like(x)
    g = eagle.Graph().add_node(eagle.node("scan", x, out=y)).build()
    g.set_logical_size(2100).launch()
    np.testing.assert_array_equal(y[:2100], blocked_scan(x[:2100], "sum"))
    assert not y[2100:].any()


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("in_place", [False, True])
def test_vjp_matches_finite_differences(op, in_place):
    """The kind's vjp, in a random direction, against central differences of the replayed scan."""
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal(2100)
    gy = rng.standard_normal(2100)
    direction = rng.standard_normal(2100)

    def f(x):
        x = x.copy()
        y = x if in_place else np.empty_like(x)
        eagle.Graph().add_node(eagle.node("scan", x, out=y, op=op)).build().launch()
        return float(gy @ y)

    x = x0.copy()
    node = eagle.node("scan", x, out=x if in_place else np.empty_like(x), op=op)
    cotangents = {"x" if in_place else "out": gy}
    grads = node_kind("scan").vjp(node.payload, {"x": x0}, cotangents)
    h = 1e-6
    numeric = (f(x0 + h * direction) - f(x0 - h * direction)) / (2 * h)
    assert grads["x"] @ direction == pytest.approx(numeric, rel=1e-6, abs=1e-8)
    if op == "sum":
        np.testing.assert_allclose(grads["x"], np.cumsum(gy[::-1])[::-1], rtol=1e-12)


def test_refusals():
    """Bad planes and ops are refused at eagle.node with the API's name."""
    x = np.ones(10)
    with pytest.raises(ValueError, match=r"^eagle\.node\('scan'\): op must be one of \('sum', 'max'\)"):
        eagle.node("scan", x, out=x, op="min")
    with pytest.raises(ValueError, match=r"^eagle\.node\('scan'\): x must be a contiguous 1-D plane"):
        eagle.node("scan", np.ones((2, 5)), out=np.ones((2, 5)))
    with pytest.raises(ValueError, match=r"x and out must have one shape and one of the dtypes"):
        eagle.node("scan", x, out=np.ones(10, np.float32))
    base = np.ones(20)
    with pytest.raises(ValueError, match="out overlaps x without being x"):
        eagle.node("scan", base[:10], out=base[5:15])
    with pytest.raises(TypeError, match=r"x must be a NumPy array, got list"):
        eagle.node("scan", [1.0], out=x)
    with pytest.raises(TypeError, match="a scan of int64 has no gradient"):
        node = eagle.node("scan", np.ones(4, np.int64), out=np.ones(4, np.int64))
        node_kind("scan").vjp(node.payload, {}, {"out": np.ones(4)})


@pytest.mark.parametrize("op", ["sum", "max"])
def test_eagle_diff_reverses_a_scan_with_the_kinds_vjp(op):
    """eagle.diff.reverse, where installed, takes the scan's gradient from the kind's vjp (no vjps=
    for it): checked against central differences in a random direction."""
    diff = pytest.importorskip("eagle.diff")
    if not hasattr(diff, "reverse"):
        pytest.skip("this eagle-diff has no reverse pass yet")
    rng = np.random.default_rng(11)
    x0, direction = rng.standard_normal(3000), rng.standard_normal(3000)

    def run(x0):
        x, y, total = x0.copy(), np.empty_like(x0), np.zeros(1)
        g = eagle.Graph(record=True).add_node(eagle.node("scan", x, out=y, op=op), name="scan")
        g.add_node(eagle.reduce(y, total), name="total").build().launch()
        return g, total[0]

    g, _ = run(x0)
    gx = diff.reverse(g.record, {"total.out": np.ones(1)}, wrt=("scan.x",))["scan.x"]
    h = 1e-6
    numeric = (run(x0 + h * direction)[1] - run(x0 - h * direction)[1]) / (2 * h)
    assert gx @ direction == pytest.approx(numeric, rel=1e-6)
