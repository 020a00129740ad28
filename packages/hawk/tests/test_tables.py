"""Table parameters, gathers at computed indices and the sample index: eager, reference, graph."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle.testing import interpret
from hawk import Int32, Mutable, Param, Scalar, Scatter, Table
from hawk import math as hm

N = 2500  # three blocks


@hawk.kernel
def stencil(u: Scalar, t: Table.clamp) -> Scalar:
    s = hawk.sample()
    return t[s - 1] - 2.0 * u + t[s + 1]


@hawk.kernel
def ring(u: Scalar, t: Table.wrap, k: Param[Int32]) -> Scalar:
    return u * t[hawk.sample() + k]


@hawk.kernel
def lookup(x: Scalar, w: Table, k: Int32) -> Scalar:
    if x > 0.5:
        y = x * w[k]
    else:
        y = x
    return y


@hawk.kernel
def grid(x: Scalar, t: Table.clamp) -> Scalar:
    i, j = hawk.sample2(50)
    return t[i - 1, j] + t[i + 1, j] + t[i, j - 1] + t[i, j + 1] - 4.0 * x


@hawk.kernel
def counts(k: Int32, t: Table[Int32]) -> Int32:
    return t[hm.int32(k / 2)] + hm.int32(hawk.sample())


def test_clamped_and_wrapped_neighbours():
    u = np.random.default_rng(0).random(N)
    left, right = np.r_[u[:1], u[:-1]], np.r_[u[1:], u[-1:]]
    np.testing.assert_array_equal(stencil(u, u), left - 2.0 * u + right)
    np.testing.assert_array_equal(stencil.reference(u, u), stencil(u, u))
    np.testing.assert_array_equal(ring(u, u, -3), u * np.roll(u, 3))
    np.testing.assert_array_equal(ring.reference(u, u[:7], 10), u * u[:7][(np.arange(N) + 10) % 7])


def test_a_grid_flattened_into_samples():
    x = np.random.default_rng(1).random((40, 50))
    p = np.pad(x, 1, mode="edge")
    want = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * x
    np.testing.assert_array_equal(grid(x.reshape(-1), x), want.reshape(-1))
    np.testing.assert_array_equal(grid.reference(x.reshape(-1), x), want.reshape(-1))


def test_integer_tables_and_float32():
    k = np.arange(N, dtype=np.int32) % 9
    t = (np.arange(5, dtype=np.int32) * 10)
    np.testing.assert_array_equal(counts(k, t), t[k // 2] + np.arange(N, dtype=np.int32))
    u = np.arange(N, dtype=np.float32)
    out = stencil(u, u)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, stencil.reference(u, u))


def test_a_checked_read_out_of_range_raises_naming_the_first_sample():
    x = np.linspace(0.0, 1.0, N)
    k = np.zeros(N, np.int32)
    k[[700, 2100]] = [-1, 9]
    w = np.arange(4.0)
    for call in (lookup, lookup.reference):
        with pytest.raises(IndexError, match=r"lookup: sample 2100 read Table 'w' \(shape \(4,\)\) at index "
                                             r"9 on axis 0, out of range, at line \d+; .*Table.clamp"):
            call(x, w, k)  # sample 700 takes the arm without the read
    k[2100] = 3
    np.testing.assert_array_equal(lookup(x, w, k), lookup.reference(x, w, k))
    np.testing.assert_array_equal(lookup(x, w, k), np.where(x > 0.5, x * w[k], x))


def test_a_checked_read_names_the_axis_out_of_range():
    @hawk.kernel
    def corner(x: Scalar, t: Table) -> Scalar:
        i, j = hawk.sample2(4)
        return x * t[i, j + 1]

    x = np.ones(N)
    for call in (corner, corner.reference):
        with pytest.raises(IndexError, match=r"sample 3 read Table 't' \(shape \(625, 4\)\) at index 4 on "
                                             r"axis 1"):
            call(x, np.ones((625, 4)))


def test_checked_reads_in_a_graph_raise_at_each_launch():
    x, k, w = np.ones(N), np.zeros(N, np.int32), np.arange(4.0)
    g = eagle.Graph()
    g.add(lookup.plan(x, w, k), name="look")
    g.build().launch()
    k[5] = 4
    with pytest.raises(IndexError, match=r"sample 5 read Table 'w' .* at index 4 on axis 0"):
        g.launch()
    k[5] = 0
    g.launch()  # the cell was cleared


def test_a_table_read_is_not_per_sample_and_never_written():
    assert not stencil.per_sample
    u = np.ones(8)

    @hawk.kernel
    def smooth_in_place(u: Mutable[Scalar], t: Table.clamp):
        u = 0.5 * (t[hawk.sample() - 1] + t[hawk.sample() + 1])

    with pytest.raises(ValueError, match="writes plane 'u', which it also reads whole as Table 't'"):
        smooth_in_place(u, u)
    with pytest.raises(ValueError, match="writes plane 'out', which it also reads whole as Table 't'"):
        stencil.plan(u, u, buffer=u)


def test_refusals_name_the_fix():
    with pytest.raises(hawk.KernelSyntaxError, match=r"'t' is a Table, which a kernel only reads"):
        @hawk.kernel
        def write(x: Scalar, t: Table):
            t[0] = x
    with pytest.raises(hawk.KernelSyntaxError, match=r"index 'x' of Table 't' is f64; .*int32"):
        @hawk.kernel
        def floaty(x: Scalar, t: Table) -> Scalar:
            return t[x]
    with pytest.raises(hawk.KernelSyntaxError, match=r"'t' is a Table or a Scatter .*a cell of it at"):
        @hawk.kernel
        def whole(x: Scalar, t: Table) -> Scalar:
            return x + t
    with pytest.raises(hawk.KernelSyntaxError, match=r"i, j = hawk.sample2\(width\)"):
        @hawk.kernel
        def pair(x: Scalar) -> Scalar:
            return x + hawk.sample2(4)
    with pytest.raises(hawk.KernelSyntaxError, match=r"slices are not in hawk"):
        @hawk.kernel
        def sliced(x: Scalar, t: Table) -> Scalar:
            return t[0:2]
    with pytest.raises(hawk.KernelSyntaxError, match=r"Table of shape \(2, 3\) in this call: read it with 2"):
        stencil.ir(np.ones(4), np.ones((2, 3)))
    with pytest.raises(TypeError, match="Table 't' is a float Table"):
        stencil(np.ones(4), np.ones(4, np.int32))
    with pytest.raises(ValueError, match=r"Table 't' has shape \(0,\)"):
        stencil(np.ones(4), np.ones(0))
    with pytest.raises(TypeError, match=r"hawk\.sample: only inside a hawk kernel"):
        hawk.sample()
    assert repr(Table.clamp[Int32]) == "Table.clamp[Int32]" and repr(Table) == "Table"


@hawk.kernel
def wave(u: Scalar, prev: Scalar, t: Table.clamp, c: Param) -> Scalar:
    i, j = hawk.sample2(50)
    lap = t[i - 1, j] + t[i + 1, j] + t[i, j - 1] + t[i, j + 1] - 4.0 * u
    return 2.0 * u - prev + c * lap


@hawk.kernel
def damped(x: Scalar) -> Scalar:
    return 0.999 * x


@eagle.Graph.builder
def waves(u, prev):
    g = eagle.Graph()
    for _ in range(3):
        u, prev = damped(wave(u, prev, u.reshape(40, 50), 0.1)), u
    g.result = u
    return g


def _waves_eagerly(u, prev, count=3):
    for _ in range(count):
        u, prev = damped(wave(u, prev, u.reshape(40, 50), 0.1)), u
    return u


def test_a_table_read_orders_and_fuses_in_a_builder_graph(monkeypatch):
    rng = np.random.default_rng(2)
    u, prev = rng.random(2000), rng.random(2000)
    want = _waves_eagerly(u, prev)
    for fuse in ("1", "0"):
        monkeypatch.setenv("EAGLE_FUSE", fuse)
        g = waves(u.copy(), prev.copy())
        assert g().tobytes() == want.tobytes()
        runs = [len(run) for run in g.fused]
        # a wave reads the plane the damping before it wrote as a Table: the run is cut there
        assert (fuse == "1") == bool(runs) and all(n <= 2 for n in runs)
    assert interpret(waves(u.copy(), prev.copy())).tobytes() == want.tobytes()


def test_a_table_written_later_in_a_run_is_not_fused_across():
    x = np.random.default_rng(3).random(N)
    w = np.random.default_rng(4).random(N)
    g = eagle.Graph()
    reading = stencil.plan(x, w)
    g.add(reading, name="read")  # reads w whole
    g.add(damped.plan(x, buffer=w), name="write")  # then writes w
    read = reading.outputs[0]
    want = stencil(x, w)
    g.build()
    assert not g.fused
    assert (0, 1, "WAR") in [(e.src, e.dst, e.kind) for e in g.edges()]  # on the whole plane
    g.launch()
    assert read.tobytes() == want.tobytes()
    np.testing.assert_array_equal(w, 0.999 * x)


# ------------------------------------------------------------------ derivatives


def _fd(f, args, k, direction, h=1e-6):
    plus = list(args)
    minus = list(args)
    plus[k] = args[k] + h * direction
    minus[k] = args[k] - h * direction
    return (f(*plus) - f(*minus)) / (2 * h)


@hawk.kernel
def weights(x: Scalar, w: Table.wrap, k: Int32) -> Scalar:
    if x > 0.3:
        y = hm.sin(x * w[k, 0]) + w[k + 1, 1] * w[k, 0]
    else:
        y = x * w[hawk.sample() % 3, 2]
    return y


def test_the_gradient_of_a_table_in_the_fixed_order():
    rng = np.random.default_rng(5)
    x, w = rng.random(N), rng.random((5, 3))
    k = rng.integers(-7, 9, N).astype(np.int32)
    ct = rng.standard_normal(N)
    grads = weights.vjp(x, w, k, ct)
    assert grads["w"].shape == (5, 3)
    reference = weights.vjp.reference(x, w, k, ct)
    assert grads["w"].tobytes() == reference["w"].tobytes()
    assert grads["x"].tobytes() == reference["x"].tobytes()
    direction = rng.standard_normal((5, 3))
    fd = float(ct @ _fd(weights, (x, w, k), 1, direction))
    assert abs(fd - float(np.sum(grads["w"] * direction))) < 1e-6 * max(1.0, abs(fd))
    _, tangents = weights.jvp(x, w, k, np.zeros(N), direction)
    assert abs(float(ct @ tangents["result"]) - float(np.sum(grads["w"] * direction))) < 1e-9 * N
    assert grads["w"][4, 2] == 0.0 and not np.signbit(grads["w"][4, 2])  # no sample read it: +0.0


def test_the_table_gradient_is_eagles_tree_over_samples():
    # every sample reads cell 0 and its own cell: cell 0's gradient is eagle's fixed-order sum
    @hawk.kernel
    def both(x: Scalar, t: Table.clamp) -> Scalar:
        return t[0] * x + t[hawk.sample()]

    rng = np.random.default_rng(6)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-6, 6, N)
    grads = both.vjp(x, np.ones(N), np.ones(N))
    assert grads["t"][0] == np.float64(0.0) + hawk.sum(np.r_[x[0] + 1.0, x[1:]])
    np.testing.assert_array_equal(grads["t"][1:], np.ones(N - 1))
    x32 = x.astype(np.float32)
    ones = np.ones(N, np.float32)
    g32 = both.vjp(x32, ones, ones)["t"]
    assert g32.dtype == np.float32 and g32.tobytes() == both.vjp.reference(x32, ones, ones)["t"].tobytes()


# ------------------------------------------------------------------ scatters


@hawk.kernel
def histogram(x: Scalar, k: Int32, h: Scatter):
    if x > 0.2:
        h[k] += x * x
    h[k + 1] += 0.5 * x


@hawk.kernel
def placed(x: Scalar, k: Int32, y: Scatter.wrap):
    y[k] = 2.0 * x


def test_a_sum_into_a_scatter_in_the_fixed_order():
    rng = np.random.default_rng(8)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-5, 5, N)
    k = rng.integers(0, 9, N).astype(np.int32)
    h, want = np.full(10, np.nan), np.full(10, np.nan)
    histogram(x, k, h)
    histogram.reference(x, k, want)
    assert h.tobytes() == want.tobytes()
    # cell 0: each sample's one contribution, the dense plane summed in eagle's order (hawk.sum)
    assert h[0] == 0.0 + hawk.sum(np.where((k == 0) & (x > 0.2), x * x, -0.0))
    counts = np.zeros(10)
    histogram(np.zeros(N), np.full(N, 3, np.int32), counts)
    np.testing.assert_array_equal(counts, np.zeros(10))
    assert not np.signbit(counts).any()  # cells nothing reached, and sums of zeros: +0.0


def test_a_sum_into_a_scatter_out_of_range_raises():
    x, k = np.ones(N), np.zeros(N, np.int32)
    k[1999] = 9  # its second write, k + 1, is out of range
    for call in (histogram, histogram.reference):
        with pytest.raises(IndexError, match=r"sample 1999 wrote Scatter 'h' \(shape \(10,\)\) at index 10 "
                                             r"on axis 0, out of range"):
            call(x, k, np.zeros(10))


def test_a_placing_scatter_is_a_checked_permutation():
    rng = np.random.default_rng(9)
    x = rng.random(N)
    p = rng.permutation(N).astype(np.int32)
    y = np.zeros(N)
    placed(x, p - N, y)  # wrapped: -N is cell 0
    np.testing.assert_array_equal(y[p], 2.0 * x)
    p[[10, 20]] = p[30]
    for call in (placed, placed.reference):
        with pytest.raises(ValueError, match=r"Scatter 'y' cell \(\d+,\) was written by (no sample|3 "
                                             r"samples \(10, 20, \.\.\.\)); y\[k\] = v writes every cell "
                                             r"exactly once"):
            call(x, p, y)


def test_the_derivatives_of_a_scatter_are_gathers():
    rng = np.random.default_rng(10)
    x = rng.random(N)
    k = rng.integers(0, 9, N).astype(np.int32)
    ct = rng.standard_normal(10)
    grads = histogram.vjp(x, k, np.zeros(10), ct)
    assert set(grads) == {"x"}  # a Scatter's old values are overwritten: they carry no gradient
    assert grads["x"].tobytes() == histogram.vjp.reference(x, k, np.zeros(10), ct)["x"].tobytes()
    np.testing.assert_allclose(grads["x"], np.where(x > 0.2, ct[k] * (2.0 * x), 0.0) + ct[k + 1] * 0.5,
                               rtol=1e-15, atol=1e-15)
    direction = rng.standard_normal(N)

    def f(x):
        h = np.zeros(10)
        histogram(x, k, h)
        return float(ct @ h)

    h = 1e-6
    fd = (f(x + h * direction) - f(x - h * direction)) / (2 * h)
    assert abs(fd - float(grads["x"] @ direction)) < 1e-6 * max(1.0, abs(fd))
    _, tangents = histogram.jvp(x, k, np.zeros(10), direction)
    assert abs(float(ct @ tangents["h"]) - float(grads["x"] @ direction)) < 1e-9 * N
    p = rng.permutation(N).astype(np.int32)
    cy = rng.standard_normal(N)
    np.testing.assert_array_equal(placed.vjp(x, p, np.zeros(N), cy)["x"], 2.0 * cy[p])


def test_a_scatter_in_a_graph_orders_after_and_refuses_overlap():
    x = np.random.default_rng(11).random(N)
    k = (np.arange(N) % 9).astype(np.int32)
    h = np.zeros(10)
    g = eagle.Graph()
    doubled = damped.plan(x)
    g.add(doubled, name="first")
    g.add(histogram.plan(doubled.outputs[0], k, h), name="sum")
    g.build().launch()
    want = np.zeros(10)
    histogram(0.999 * x, k, want)
    assert h.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="Scatter 'h' shares memory with plane 'x'"):
        histogram(x, k, x[:10])


def test_the_same_bits_for_one_two_and_four_threads():
    from eagle import _core

    rng = np.random.default_rng(12)
    n = 6000  # several blocks: the team shares the samples
    x, w = rng.standard_normal(n), rng.standard_normal((5, 3))
    k = rng.integers(-7, 9, n).astype(np.int32)
    ct = rng.standard_normal(n)
    u, prev = rng.random(2000), rng.random(2000)

    def run() -> list[bytes]:
        h = np.zeros(10)
        histogram(x, np.abs(k) % 9, h)
        grads = weights.vjp(x, w, k, ct)
        stepped = waves(u.copy(), prev.copy())()
        return [h.tobytes(), grads["w"].tobytes(), grads["x"].tobytes(), stepped.tobytes()]

    before = _core.num_threads()
    try:
        found = []
        for threads in (1, 2, 4):
            _core.set_num_threads(threads)
            found.append(run())
    finally:
        _core.set_num_threads(before)
    assert found[0] == found[1] == found[2]


@pytest.mark.parametrize("count", [1, 3])
def test_gradients_flow_through_tables_across_kernels_of_a_graph(count):
    rng = np.random.default_rng(13)
    u, prev = rng.random(2000), rng.random(2000)

    @eagle.Graph.builder
    def steps(u, prev, record=False):
        g = eagle.Graph(record=record)
        for _ in range(count):
            u, prev = damped(wave(u, prev, u.reshape(40, 50), 0.1)), u
        g.result = u
        return g

    g = steps(u.copy(), prev.copy(), record=True)
    g()
    ct = rng.standard_normal(2000)
    grads = eagle.diff.reverse(g.record, {"result": ct}, wrt=("u", "prev"))
    unfused = eagle.diff.reverse(g.record, {"result": ct}, wrt=("u", "prev"), fuse=False)
    assert grads["u"].tobytes() == unfused["u"].tobytes()
    if count == 1:
        np.testing.assert_array_equal(grads["prev"], -0.999 * ct)
    direction = rng.standard_normal(2000)

    h = 1e-6
    fd = float(ct @ (_waves_eagerly(u + h * direction, prev, count)
                     - _waves_eagerly(u - h * direction, prev, count))) / (2 * h)
    assert abs(fd - float(grads["u"] @ direction)) < 1e-6 * max(1.0, abs(fd))


def test_a_table_bound_to_a_buffer_orders_between_its_writers():
    rng = np.random.default_rng(14)
    x, b = rng.random(N), np.zeros(N)
    g = eagle.Graph()
    g.add(damped.plan(x, buffer=b), name="fill")  # b = 0.999 x
    reading = stencil.plan(x, b)  # reads b whole
    g.add(reading, name="read")
    g.add(damped.plan(reading.outputs[0], buffer=b), name="refill")  # b written again after the read
    g.build().launch()
    want = stencil(x, 0.999 * x)
    assert reading.outputs[0].tobytes() == want.tobytes()
    assert b.tobytes() == (0.999 * want).tobytes()


def test_the_gradient_through_a_scatter_in_a_recorded_graph():
    rng = np.random.default_rng(15)
    x = rng.random(N)
    k = (np.arange(N) % 9).astype(np.int32)

    @eagle.Graph.builder
    def model(x, k, h, record=False):
        g = eagle.Graph(record=record)
        histogram(damped(x), k, h)
        g.result = h
        return g

    g = model(x, k, np.zeros(10), record=True)
    g()
    ct = rng.standard_normal(10)
    grads = eagle.diff.reverse(g.record, {"result": ct}, wrt=("x",))
    d = 0.999 * x
    want = (np.where(d > 0.2, ct[k] * (2.0 * d), 0.0) + ct[k + 1] * 0.5) * 0.999
    np.testing.assert_allclose(grads["x"], want, rtol=1e-14, atol=1e-14)
    assert np.any(grads["x"] != 0.0)


@hawk.kernel
def centred_neighbours(x: Scalar, t: Table.wrap) -> Scalar:
    return x - hawk.sum(t[hawk.sample() + 1]) + t[hawk.sample() + 1]


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_a_table_read_before_a_reduction_waits_for_its_writer(fuse, monkeypatch):
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    x = np.random.default_rng(16).random(N)
    w = np.zeros(N)
    g = eagle.Graph()
    g.add(damped.plan(x, buffer=w), name="write")
    reading = centred_neighbours.plan(x, w)
    g.add(reading, name="read")
    g.build().launch()
    assert reading.outputs[0].tobytes() == centred_neighbours(x, 0.999 * x).tobytes()


def test_a_table_is_read_whole_at_a_smaller_logical_size():
    u = np.random.default_rng(17).random(N)
    reading = stencil.plan(u, u)
    g = eagle.Graph()
    g.add(reading, name="read")
    g.build().set_logical_size(1000).launch()
    want = stencil(u, u)[:1000]  # sample 999 reads cell 1000, beyond the logical size
    assert reading.outputs[0][:1000].tobytes() == want.tobytes()
    reading.outputs[0][...] = 0.0
    interpret(g)
    assert reading.outputs[0][:1000].tobytes() == want.tobytes()


def test_a_scatter_sums_only_the_samples_a_smaller_logical_size_runs():
    x = np.random.default_rng(18).random(N)
    k = (np.arange(N) % 9).astype(np.int32)
    h = np.zeros(10)
    g = eagle.Graph()
    g.add(histogram.plan(x, k, h), name="sum")
    g.build().launch()  # every sample's cells recorded
    for size in (1000, 0, N):
        g.set_logical_size(size).launch()
        want = np.zeros(10)
        histogram(x[:size], k[:size], want)
        assert h.tobytes() == want.tobytes()
