"""Checked Table reads, Scatters (sums and placing) and Table gradients in fused runs.

Each fused run is held to the unfused launches: the same bits on any thread count, and when a
launch goes wrong the same error, naming the launch (not the run) that the unfused launches
raise first.  A Scatter's plane is written after the run's samples, so a reader of it runs in
the next run.  eagle.diff's fused reverse takes kernels reading Tables: their Table gradients
are the fused vjp's Scatters.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle import extend
from hawk import Int32, Scalar, Scatter, Table
from hawk.fusion import fusible

N = 2500  # three blocks
hm = hawk.math


def sibling(name: str) -> ModuleType:
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"hawk_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fused_graphs = sibling("test_fused_graphs")


@hawk.kernel
def first(x: Scalar, k: Int32, t: Table) -> Scalar:
    return x + t[k]


@hawk.kernel
def second(y: Scalar, k: Int32, t: Table) -> Scalar:
    return y * t[k + 1] - t[k]


@hawk.kernel
def spread(y: Scalar, k: Int32, s: Scatter.clamp):
    s[k - 1] += 0.25 * y
    if y < 0.0:
        s[k] += hm.cos(y)


@hawk.kernel
def placed(y: Scalar, k: Int32, s: Scatter):
    s[k] = y


@hawk.kernel
def placed_again(y: Scalar, k: Int32, r: Scatter):
    r[k] = y


@hawk.kernel
def lookup(x: Scalar, k: Int32, w: Table) -> Scalar:
    return x * w[k] + w[k + 1]


@hawk.kernel
def smooth(y: Scalar, w: Table.clamp) -> Scalar:
    return hm.tanh(y) * w[hawk.sample() % 7]



def inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    x, t = rng.random(N), rng.standard_normal(40)
    k1 = rng.integers(0, 40, N).astype(np.int32)
    k2 = rng.integers(0, 39, N).astype(np.int32)
    return x, t, k1, k2


def checked_and_scattered(rng):
    """Two checked reads, a Scatter sum, a placing Scatter (checked)."""
    x, t, k1, k2 = inputs(rng)
    a = first.plan(x, k1, t)
    b = second.plan(a.outputs[0], k2, t)
    h, p = np.full(41, np.nan), np.full(N, np.nan)
    c = spread.plan(b.outputs[0], k2, h)
    d = placed.plan(b.outputs[0], rng.permutation(N).astype(np.int32), p)
    return [a, b, c, d], [a.outputs[0]], [b.outputs[0], h, p]


def test_checked_reads_and_scatters_fuse_with_the_unfused_bits(threads):
    want, unfused = fused_graphs.replay(checked_and_scattered, False)
    got, g = fused_graphs.replay(checked_and_scattered, True)
    assert unfused.fused == [] and g.fused == [("k0", "k1", "k2", "k3")]
    fused_graphs.same_bytes(got, want)


def test_checked_accesses_placing_scatters_and_table_gradients_may_join_runs():
    x, t, k1, _ = inputs(np.random.default_rng(1))
    irs = [first.ir(x, k1, t), spread.ir(x, k1, np.zeros(41)), placed.ir(x, k1, np.zeros(N)),
           lookup.vjp.ir(x, k1, t, x), smooth.vjp.ir(x, t, x)]
    for ir in irs:
        assert fusible(ir), ir.name


def _reads(x, t, k1, k2):
    g = eagle.Graph()
    a = first.plan(x, k1, t)
    g.add(a, name="first")
    g.add(second.plan(a.outputs[0], k2, t), name="second")
    return g


def _error(g: eagle.Graph, kind: type[Exception]) -> str:
    with pytest.raises(kind) as caught:
        g.launch(2)
    return str(caught.value)


@pytest.mark.parametrize("bad", [(None, 7), (900, None), (9, 4)], ids=["second", "first", "both"])
def test_a_fused_run_raises_the_error_of_the_first_launch_that_went_wrong(bad):
    x, t, k1, k2 = inputs(np.random.default_rng(2))
    fused, plain = _reads(x, t, k1, k2).build(fuse=True), _reads(x, t, k1, k2).build(fuse=False)
    assert fused.fused == [("first", "second")]
    if bad[0] is not None:
        k1[bad[0]] = 40
    if bad[1] is not None:
        k2[bad[1]] = -3
    message = _error(fused, IndexError)
    assert message == _error(plain, IndexError)
    # the first launch's error even where the second's sample (4) comes before the first's (9)
    name, sample = ("second", bad[1]) if bad[0] is None else ("first", bad[0])
    assert message.startswith(f"hawk.kernel {name}: sample {sample} read Table 't' (shape (40,))")
    k1[:], k2[:] = 0, 0  # put right: the check cells were cleared, the next replay passes
    fused.launch(2)


def _places(x, k1, k2, s1, s2):
    g = eagle.Graph()
    g.add(placed.plan(x, k1, s1), name="one")
    g.add(placed_again.plan(x, k2, s2), name="two")
    return g


@pytest.mark.parametrize("which", ["two", "both"])
def test_placing_scatters_in_a_fused_run_raise_as_their_own_launches(which):
    rng = np.random.default_rng(3)
    x = rng.random(N)
    k1, k2 = rng.permutation(N).astype(np.int32), rng.permutation(N).astype(np.int32)
    fused = _places(x, k1, k2, np.zeros(N), np.zeros(N)).build(fuse=True)
    plain = _places(x, k1, k2, np.zeros(N), np.zeros(N)).build(fuse=False)
    assert fused.fused == [("one", "two")]
    k2[5] = k2[6]
    if which == "both":
        k1[8] = k1[3]
    message = _error(fused, ValueError)
    assert message == _error(plain, ValueError)
    # the first launch's error: one names Scatter 's', two Scatter 'r'
    assert message.startswith("hawk.kernel placed: Scatter 's'" if which == "both"
                              else "hawk.kernel placed_again: Scatter 'r'")


@hawk.kernel
def wrong_then_placed(x: Scalar, k: Int32, t: Table, s: Scatter):
    s[k] = x + t[k]


def test_a_placing_error_of_an_earlier_launch_comes_before_a_later_bounds_error():
    rng = np.random.default_rng(4)
    x, t, k1, _ = inputs(rng)
    p = rng.permutation(N).astype(np.int32)
    graphs = []
    for fuse in (True, False):
        g = eagle.Graph()
        g.add(placed.plan(x, p, np.zeros(N)), name="place")
        g.add(first.plan(x, k1, t), name="read")
        graphs.append(g.build(fuse=fuse))
    assert graphs[0].fused == [("place", "read")]
    p[0], k1[0] = p[1], 99
    message = _error(graphs[0], ValueError)
    assert message == _error(graphs[1], ValueError) and message.startswith("hawk.kernel placed:")


def test_one_launchs_bounds_error_comes_before_its_placing_error():
    rng = np.random.default_rng(5)
    x, t, _, _ = inputs(rng)
    k = rng.permutation(40).astype(np.int32)
    g = eagle.Graph()
    g.add(first.plan(x[:40], k, t), name="before")
    g.add(wrong_then_placed.plan(x[:40], k, t, np.zeros(40)), name="both")
    g.build()
    assert g.fused == [("before", "both")]
    k[3] = 40  # out of range: also a cell written by no sample
    assert _error(g, IndexError).startswith("hawk.kernel first: sample 3")


@hawk.kernel
def reversed_into(y: Scalar, s: Scatter):
    s[hawk.sample() * -1 + N - 1] += y


@hawk.kernel
def scaled(x: Scalar) -> Scalar:
    return 2.0 * x - 1.0


def scatter_then_reader(rng):
    x = rng.random(N)
    a = scaled.plan(x)
    s = np.full(N, np.nan)
    b = reversed_into.plan(a.outputs[0], s)
    c = scaled.plan(s)  # reads the Scatter's plane per sample: after its sum
    d = scaled.plan(c.outputs[0])
    return [a, b, c, d], [a.outputs[0], c.outputs[0]], [s, d.outputs[0]]


def test_a_reader_of_a_scatters_plane_runs_in_the_next_run(threads):
    want, _ = fused_graphs.replay(scatter_then_reader, False)
    got, g = fused_graphs.replay(scatter_then_reader, True)
    assert g.fused == [("k0", "k1"), ("k2", "k3")]
    fused_graphs.same_bytes(got, want)
    x = np.random.default_rng(7).random(N)
    assert got[1].tobytes() == (2.0 * (2.0 * (2.0 * x - 1.0)[::-1] - 1.0) - 1.0).tobytes()


def test_two_scatters_into_one_plane_do_not_share_a_run():
    rng = np.random.default_rng(8)
    x, s = rng.random(N), np.zeros(N)
    g = eagle.Graph()
    g.add(reversed_into.plan(x, s), name="one")
    g.add(reversed_into.plan(2.0 * x, s), name="two")  # overwrites what one wrote
    g.build().launch()
    assert g.fused == [] and s.tobytes() == (2.0 * x)[::-1].tobytes()


@eagle.Graph.builder
def model(x, k, w, v, record=False):
    g = eagle.Graph(record=record)
    y = lookup(x, k, w)
    g.result = smooth(y, v)
    return g


def _vjp_launches(record, fused: bool) -> int:
    return next(sum(isinstance(kept, hawk.KernelBound) for kept in p.ctx.keep)
                for key, p in record._passes.items() if key[-1] is fused)


def test_a_reverse_through_table_reads_fuses_with_the_unfused_bits_and_central_differences(threads):
    rng = np.random.default_rng(9)
    x, w, v = rng.random(N), rng.standard_normal(20), rng.standard_normal(9)
    k = rng.integers(0, 19, N).astype(np.int32)
    g = model(x, k, w, v, record=True)
    g()
    ct = rng.standard_normal(N)
    grads = eagle.diff.reverse(g.record, {"result": ct}, wrt=("x", "w", "v"))
    alone = eagle.diff.reverse(g.record, {"result": ct}, wrt=("x", "w", "v"), fuse=False)
    assert _vjp_launches(g.record, True) == 1 < _vjp_launches(g.record, False)
    for name in ("x", "w", "v"):
        assert grads[name].tobytes() == alone[name].tobytes()

    def loss(x, w, v):
        return float(ct @ smooth(lookup(x, k, w), v))

    h = 1e-6
    for name, at in (("x", 0), ("w", 1), ("v", 2)):
        direction = rng.standard_normal(grads[name].shape)
        up, down = [x, w, v], [x, w, v]
        up[at], down[at] = up[at] + h * direction, down[at] - h * direction
        fd = (loss(*up) - loss(*down)) / (2 * h)
        assert abs(fd - float(grads[name] @ direction)) < 1e-6 * max(1.0, abs(fd)), name


@hawk.kernel
def neighbour(y: Scalar, t: Table.wrap) -> Scalar:
    return y * t[hawk.sample() + 1]


def test_a_reverse_run_is_cut_at_a_writer_of_a_plane_a_later_kernel_reads_as_a_table():
    @eagle.Graph.builder
    def chain(x, k, w, record=False):
        g = eagle.Graph(record=record)
        y = lookup(x, k, w)
        g.result = neighbour(smooth(y, w), y)  # y: written in the run, then read whole
        return g

    rng = np.random.default_rng(10)
    x, w = rng.random(N), rng.standard_normal(20)
    k = rng.integers(0, 19, N).astype(np.int32)
    g = chain(x, k, w, record=True)
    g()
    ct = rng.standard_normal(N)
    grads = eagle.diff.reverse(g.record, {"result": ct}, wrt=("w",))
    alone = eagle.diff.reverse(g.record, {"result": ct}, wrt=("w",), fuse=False)
    assert (_vjp_launches(g.record, True), _vjp_launches(g.record, False)) == (2, 3)
    assert grads["w"].tobytes() == alone["w"].tobytes()
    direction, h = rng.standard_normal(20), 1e-6
    fd = float(ct @ (chain(x, k, w + h * direction)() - chain(x, k, w - h * direction)())) / (2 * h)
    assert abs(fd - float(grads["w"] @ direction)) < 1e-6 * max(1.0, abs(fd))


@hawk.kernel
def dropped(x: Scalar, k: Int32, t: Table) -> Scalar:
    unused = t[k]  # a checked read whose value the kernel drops still checks
    return x


def test_a_checked_read_whose_value_no_one_needs_still_raises():
    x, t, k1, _ = inputs(np.random.default_rng(11))
    k1[17] = 41
    for call in (dropped, dropped.reference):
        with pytest.raises(IndexError, match=r"hawk\.kernel dropped: sample 17 read Table 't'"):
            call(x, k1, t)
    messages = []
    for fuse in (True, False):  # first's output is a temporary no one reads: the run stores none of it
        g = eagle.Graph()
        a = first.plan(x, k1, t)
        g.add(a, name="first")
        g.add(scaled.plan(x), name="scaled")
        extend.declare_temporaries(g, [a.outputs[0]])
        g.build(fuse=fuse)
        assert g.fused == ([("first", "scaled")] if fuse else [])
        messages.append(_error(g, IndexError))
    assert messages[0] == messages[1] and messages[0].startswith("hawk.kernel first: sample 17")


def test_fuse_refuses_a_scatters_plane_used_by_another_launch():
    from hawk.fusion import fuse

    x = np.zeros(N)
    scatter, reader = reversed_into.ir(x, np.zeros(N)), scaled.ir(x)
    for members in ([(scatter, [0, 1]), (reader, [1, 2])], [(reader, [1, 2]), (scatter, [0, 1])]):
        with pytest.raises(ValueError, match="is a Scatter's output in this run and is used by another"):
            fuse(members, lambda key: True, "run")
    assert fuse([(scatter, [0, 1]), (reader, [0, 2])], lambda key: True, "run").ir.slots


@eagle.Graph.builder
def turns(x, k, t, p, s, cnt):
    g = eagle.Graph()
    for _ in range(cnt):  # one device loop: its body's launches fuse on their own
        x = second(first(x, k, t), k, t)
        placed(x, p, s)
    g.result = x
    return g


@pytest.mark.parametrize("bad", [False, True], ids=["permutation", "a cell twice"])
def test_checked_reads_and_a_placing_scatter_fuse_in_a_device_loop_body(bad, monkeypatch):
    x, t, _, k = inputs(np.random.default_rng(12))
    p = np.random.default_rng(13).permutation(N).astype(np.int32)
    if bad:
        p[9] = p[4]
    found = []
    for fuse in ("1", "0"):
        monkeypatch.setenv("EAGLE_FUSE", fuse)
        s = np.zeros(N)
        g = turns(x.copy(), k, t, p, s, np.array([3], np.uint32))
        assert [run.nodes for run in g.fused_runs] == ([("first", "second", "placed")] if fuse == "1" else [])
        assert all(run.where.startswith("body of") for run in g.fused_runs)
        if bad:
            found.append(_error(g, ValueError))
        else:
            found.append((g().tobytes(), s.tobytes()))
    assert found[0] == found[1]
    if bad:
        assert found[0].startswith(f"hawk.kernel placed: Scatter 's' cell ({p[4]},) was written by 2 samples "
                                   "(4 and 9)")


@hawk.kernel
def picked(s: Scalar, t: Table) -> Scalar:
    return 0.5 * s + t[hawk.sample()] - 0.25 * t[hawk.sample() - hawk.sample() % 2]


@eagle.Graph.builder
def looped(x0, x1, cnt, record=False):
    g = eagle.Graph(record=record)
    for _ in range(cnt):
        x0 = picked(picked(x0, x0), x1)  # x1: a Table from outside the loop
    g.result = x0
    return g


def test_a_fused_reverse_moves_a_table_read_with_its_slot():
    """Found by the fuzzer: the fused reverse puts its outputs' slots last, and a Table read kept
    its old slot number, reading the first kernel's output instead of x1 (x1's gradient was 0)."""
    rng = np.random.default_rng(14)
    x0, x1, cnt = rng.random(5), rng.random(5), np.array([2], np.uint32)
    g = looped(x0.copy(), x1.copy(), cnt, record=True)
    g()
    seed = np.linspace(-1.0, 1.0, 5)
    grads = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x0", "x1"))
    alone = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x0", "x1"), fuse=False)
    h = 1e-6
    for name, at in (("x0", 0), ("x1", 1)):
        assert grads[name].tobytes() == alone[name].tobytes()
        for i in range(5):
            up, down = [x0.copy(), x1.copy()], [x0.copy(), x1.copy()]
            up[at][i] += h
            down[at][i] -= h
            fd = float(seed @ (looped(*up, cnt)() - looped(*down, cnt)())) / (2 * h)
            assert abs(fd - grads[name][i]) < 1e-7, (name, i)
