"""Fused graphs give the unfused graphs' bits, for every kernel form, at 1 to 4 threads.

Each case is a chain of launches over fresh arrays; the graph is built with
fusion on (its runs written as one function each) and off (each launch its
own items), and every array a user can read after the run is compared byte
for byte.  The temporaries a case declares (as a builder does) are the
planes a fused run need not store: they are not compared, and checked to
be left unwritten where the run does not store them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import eagle
import hawk
from eagle import extend, native
from eagle.graph import opaque
from hawk import Float32, Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm

N = 2500  # three blocks: the team and the block cuts are part of what is checked


@hawk.kernel
def arith(a: Scalar, b: Scalar, p: Param):
    return a * p + b, a / b - a // b, a % b, -abs(a), hm.minimum(a, b), hm.floor(b) * 0.5


@hawk.kernel
def combine(a: Scalar, b: Scalar, c: Scalar) -> Scalar:
    return (a - b) * c + hm.sqrt(abs(c))


@hawk.kernel
def to_ints(x: Scalar):
    return hm.int32(x * 1000.0), hm.uint32(x * 7.0), hm.float32(x)


@hawk.kernel
def int_math(a: Int32, b: UInt32, f: Float32):
    return a * 3 - a // 7 + a % 5, b * b + b // 3, hm.float64(f) * 0.1 + hm.float64(a)


@hawk.kernel
def logic(a: Scalar, b: Scalar):
    return (a < b) and (b > 0.0), not (a > 1.0), hm.float64((a < b) or (b < -1.0))


@hawk.kernel
def pick(m: Scalar, n: Scalar, a: Scalar) -> Scalar:
    if m > 0.5:
        y = a * 2.0
        if y > 3.0:
            y = 3.0
    else:
        y = -a
    return y if n > 0.5 else y + 1.0


@hawk.kernel
def rotate(v: Scalar, out: Mutable[Scalar]):
    out[0] = v[0] * v[1] - v[2]
    out[1] = v[2] + v[0]


@hawk.kernel
def bump(x: Mutable[Scalar], p: Param):
    x = x * p + 0.25


@hawk.kernel
def scaled_by(x: Scalar, c: Scalar) -> Scalar:
    return x * c  # c: a one-value plane, read as the same for every sample


@hawk.kernel
def every_reduction(x: Scalar, k: Int32):
    return hawk.sum(x), hawk.max(x), hawk.min(k), hawk.any(x > 1.0), hawk.all(k > -100), hawk.sum(k)


@hawk.kernel
def centre(x: Scalar) -> Scalar:
    return x - hawk.sum(x) / 2500.0


@hawk.kernel
def guard(x: Scalar, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(x > 0.0))


@hawk.kernel
def waves(x: Scalar, f: Float32):
    return (hm.sin(x) * hm.cos(x * 0.5) + hm.exp(x * 0.01), hm.log(abs(x) + 1.0), hm.pow(abs(x), 0.3),
            hm.sin(f))


def floats(rng: np.random.Generator, n: int = N, dtype: Any = np.float64) -> np.ndarray:
    x = rng.standard_normal(n) * 3.0
    x[:6] = [0.0, -0.0, 1.0, np.inf, np.nan, 1e-310]
    return rng.permutation(x).astype(dtype)


#: A case: fresh arrays -> (the launches in order, the temporaries, the arrays a user reads).
Case = Callable[[np.random.Generator], tuple[list[Any], list[Any], list[Any]]]


def arithmetic(rng):
    a, b = floats(rng), floats(rng)
    first = arith.plan(a, b, 1.5)
    last = combine.plan(first.outputs[0], first.outputs[1], first.outputs[5])
    extra = combine.plan(first.outputs[2], first.outputs[3], first.outputs[4])
    temps = first.outputs
    return [first, last, extra], temps, [*last.outputs, *extra.outputs]


def integers(rng):
    x = floats(rng)
    casts = to_ints.plan(x)
    ints = int_math.plan(*casts.outputs)
    return [casts, ints], casts.outputs[:2], [casts.outputs[2], *ints.outputs]


def booleans_and_ifs(rng):
    a, b = floats(rng), floats(rng)
    flags = logic.plan(a, b)
    chosen = pick.plan(flags.outputs[2], b, a)
    both = logic.plan(chosen.outputs[0], a)
    return [flags, chosen, both], [chosen.outputs[0], flags.outputs[2]], [*flags.outputs[:2], *both.outputs]


def components_and_mutables(rng):
    v, out = np.stack([floats(rng) for _ in range(3)]), np.zeros((2, N))
    x = floats(rng)
    launches = [rotate.plan(v, out), bump.plan(x, 1.0001), bump.plan(out[0], 0.5), bump.plan(x, 0.75)]
    return launches, [], [out, x]


def cells_read_and_written(rng):
    x, c, flag = floats(rng), np.array([2.5]), np.zeros(1, np.uint32)
    first = scaled_by.plan(x, c)
    return [first, guard.plan(first.outputs[0], flag), bump.plan(x, 3.0)], [], [first.outputs[0], flag, x]


def reductions(rng):
    x, k = floats(rng), rng.integers(-50, 50, N).astype(np.int32)
    start = bump.plan(x, 0.5)
    total = every_reduction.plan(x, k)
    centred = centre.plan(x)
    after = bump.plan(centred.outputs[0], 2.0)
    return [start, total, centred, after], [], [x, *total.outputs, centred.outputs[0]]


def math_functions(rng):
    x, f = floats(rng), floats(rng, dtype=np.float32)
    first = waves.plan(x, f)
    last = combine.plan(first.outputs[0], first.outputs[1], first.outputs[2])
    return [first, last], first.outputs[:3], [first.outputs[3], last.outputs[0]]


CASES = [arithmetic, integers, booleans_and_ifs, components_and_mutables, cells_read_and_written,
         reductions, math_functions]


def replay(case: Case, fuse: bool) -> tuple[list[np.ndarray], eagle.Graph]:
    launches, temporaries, seen = case(np.random.default_rng(7))
    g = eagle.Graph()
    for k, bound in enumerate(launches):
        g.add(bound, name=f"k{k}")
    extend.declare_temporaries(g, temporaries)
    g.build(fuse=fuse).launch(2)
    return [a.copy() for a in seen], g


def same_bytes(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.fixture(params=[False, True], ids=["plain", "interleaved"])
def interleaved(request, monkeypatch) -> bool:
    """Fused runs compiled as they come (these cases are short: a plain sample loop), or every
    sample loop interleaved (hawk.emit.Emitter.interleaved), whatever its length."""
    if request.param:
        monkeypatch.setattr(hawk.emit, "INTERLEAVED_FROM", 0)
    return request.param


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_fused_graphs_give_the_unfused_bits(case, threads, interleaved):
    want, unfused = replay(case, False)
    got, g = replay(case, True)
    assert unfused.fused == [] and g.fused, "the case must fuse something"
    same_bytes(got, want)


@hawk.kernel
def step(x: Scalar, p: Param) -> Scalar:
    return (x * p + 0.25) / (1.0 + abs(x))


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 71, 1023, 1024, 1025, 2500, 4103])
def test_a_long_run_interleaves_its_samples_and_gives_the_unfused_bits_at_any_length(n, threads,
                                                                                     monkeypatch):
    """A functional chain long enough to interleave, in place (a Mutable) and reduced: every range
    a block or a team cuts, with its tail of fewer samples than streams, gives the unfused bits."""
    monkeypatch.setattr(hawk.runs, "_RUNS", type(hawk.runs._RUNS)())  # this test's runs only
    outs, runs = [], []
    for fuse in (True, False):
        x, y = np.linspace(-2.0, 3.0, n), np.linspace(1.0, 0.0, n)
        g = eagle.Graph()
        value = x
        for k in range(12):
            launch = step.plan(value, 1.0 + k / 64)
            g.add(launch, name=f"step{k}")
            value = launch.outputs[0]
        sums = every_reduction.plan(y, np.arange(n, dtype=np.int32))
        g.add(bump.plan(y, 0.5), name="bump").add(copy_to.plan(value, y), name="copy")
        g.add(bump.plan(y, 0.25), name="again").add(sums, name="sums")
        g.build(fuse=fuse).launch(2)
        outs.append([y.copy(), *(a.copy() for a in sums.outputs)])
        runs.append(g.fused)
    assert [len(run) for run in runs[0]] == [16] and runs[1] == []
    [source] = [c for shaped in hawk.runs._RUNS.values() for c, _ in shaped.sources.values()
                if "const int64_t part =" in c]  # it interleaved
    same_bytes(*outs)
    if n == 1024:  # the optimize pragma that keeps the streams apart keeps FMAs out too
        command = [shutil.which("cc") or "cc", *native.CFLAGS, "-S", "-I", str(native.include_dir()),
                   "-x", "c", "-", "-o", "-"]
        assembly = subprocess.run(command, input=source, capture_output=True, text=True, check=True).stdout
        assert not any(op in assembly for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))


def test_the_fused_chain_stores_only_what_is_read_after_it():
    x = np.linspace(-1.0, 1.0, N)
    g = eagle.Graph().add(arith.plan(x, x, 2.0), name="first")
    outputs = g._nodes[0].payload.outputs
    g.add(combine.plan(outputs[0], outputs[1], outputs[5]), name="last")
    extend.declare_temporaries(g, outputs[:2])
    del outputs  # the build keeps as temporaries only what the nodes alone hold
    g.build().launch()
    assert g.fused == [("first", "last")] and len(g._temporaries) == 2
    outputs = g._nodes[0].payload.outputs  # the temporaries' planned storage among them
    for out in outputs:
        out.fill(7.0)
    g.launch()
    assert (outputs[0] == 7.0).all() and (outputs[1] == 7.0).all()  # dead: never stored
    np.testing.assert_array_equal(outputs[5], np.floor(x) * 0.5)  # not a temporary: stored


def test_a_fused_temporary_read_later_is_stored():
    x = np.linspace(-1.0, 1.0, N)
    first = arith.plan(x, x, 2.0)
    second = combine.plan(first.outputs[0], x, x)
    later = opaque(lambda: None, reads={"t": first.outputs[1]})
    g = eagle.Graph().add(first, name="first").add(second, name="second").add_node(later, name="reader")
    extend.declare_temporaries(g, first.outputs)
    g.build().launch()
    assert g.fused == [("first", "second")]
    np.testing.assert_array_equal(first.outputs[1], x / x - x // x)  # the opaque node reads it


@pytest.mark.parametrize("offset, fused", [(0, True), (N, True), (1, False)])
def test_views_the_very_same_or_disjoint_fuse_and_shifted_ones_do_not(offset, fused):
    base = np.zeros(2 * N + 1)
    x, y = base[:N], base[offset:offset + N]
    g = eagle.Graph().add(bump.plan(x, 2.0), name="a").add(bump.plan(y, 3.0), name="b").build()
    assert g.fused == ([("a", "b")] if fused else [])


def test_param_gradient_sums_share_one_reduction_phase():
    x, y = np.linspace(0.0, 1.0, N), np.linspace(1.0, 2.0, N)
    launches = [every_reduction.plan(x, np.zeros(N, np.int32)), guard.plan(y, np.zeros(1, np.uint32))]
    g = eagle.Graph().add(launches[0], name="sums").add(launches[1], name="guard").build()
    assert g.fused == [("sums", "guard")]
    g.launch()
    assert launches[0].outputs[0][0] == hawk.sum(x) and launches[0].outputs[1][0] == 1.0


@hawk.kernel
def copy_to(x: Scalar, y: Mutable[Scalar]):
    y = x + 0.0


def _pair(case: str) -> list[Any]:
    """Two launches whose planes meet as ``case`` says."""
    base = np.zeros((3, N + 1))
    a, b = base[0, :N], base[1, :N]
    if case == "same":
        return [bump.plan(a, 2.0), bump.plan(a, 3.0)]
    if case == "disjoint rows":
        return [bump.plan(a, 2.0), bump.plan(b, 3.0)]
    if case == "shifted write":
        return [bump.plan(a, 2.0), bump.plan(base[0, 1:], 3.0)]
    if case == "shifted reads":
        return [copy_to.plan(a, b), copy_to.plan(base[0, 1:], base[2, :N])]
    if case == "read then shifted write":
        return [copy_to.plan(base[0, 1:], b), bump.plan(a, 2.0)]
    return [bump.plan(a, 2.0), bump.plan(np.zeros(N), 3.0)]  # two allocations


@pytest.mark.parametrize("case, fuses", [("same", True), ("disjoint rows", True), ("shifted write", False),
                                         ("shifted reads", True), ("read then shifted write", False),
                                         ("two allocations", True)])
def test_the_fusion_rule_is_libeagles(case, fuses, threads):
    """A run fuses at build exactly where libeagle block-fuses the unfused launches (one barrier for
    both on a team, where the launches span several blocks)."""
    if threads < 2:
        pytest.skip("block fusion shows in the barriers of a team")
    plain = eagle.Graph()
    for k, bound in enumerate(_pair(case)):
        plain.add(bound, name=f"k{k}")
    fused = eagle.Graph()
    for k, bound in enumerate(_pair(case)):
        fused.add(bound, name=f"k{k}")
    plain.build(fuse=False).launch()
    fused.build(fuse=True)
    assert (plain._program.stats()["barriers"] == 1) == bool(fused.fused) == fuses


def test_a_run_past_the_size_cap_is_cut_into_several_functions():
    from eagle._fusion import MAX_STATEMENTS
    from hawk.fusion import size

    results = []
    for fuse in (True, False):
        x = np.linspace(0.0, 1.0, N)
        g = eagle.Graph()
        for k in range(2 * MAX_STATEMENTS // size(bump.ir(x, 1.0)) + 3):
            g.add(bump.plan(x, 1.0001), name=f"k{k}")
        g.build(fuse=fuse).launch()
        results.append((x.tobytes(), g.fused))
    (fused_bits, runs), (unfused_bits, _) = results
    assert fused_bits == unfused_bits and len(runs) == 3
    assert [label for run in runs for label in run] == [f"k{k}" for k in range(sum(map(len, runs)))]
    assert all(len(run) * size(bump.ir(np.zeros(2), 1.0)) <= MAX_STATEMENTS for run in runs)


def test_a_fused_run_names_only_its_reducing_nodes():
    x = np.linspace(0.0, 1.0, N)
    g = eagle.Graph().add(bump.plan(x, 2.0), name="bump").add(centre.plan(x), name="centre").build()
    assert g.fused == [("bump", "centre")] and g.reductions == ["centre"]
