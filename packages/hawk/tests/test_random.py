"""hawk.random: Philox4x32-10 draws, a pure function of (seed, sample, counter), the same bits
in the reference, in C at every build, eagerly, planned, in a builder graph, fused, at any thread
count, and in the re-run of a vjp; random values carry no derivative."""

from __future__ import annotations

import ctypes
import itertools
import shutil
import subprocess

import numpy as np
import pytest

import eagle
import hawk
from eagle import extend
from hawk import Int32, Param, Scalar, UInt32, cuda, libm, philox
from hawk import math as hm
from hawk.ir import Op

CC = shutil.which("cc")
U64 = np.uint64

#: Random123's known answers for Philox4x32-10 (tests/kat_vectors): counter, key, block
KNOWN = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
         ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
         ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
          (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


def test_the_block_gives_random123s_known_answers():
    for counter, key, want in KNOWN:
        got = philox.block(libm.Numpy, tuple(U64(c) for c in counter), tuple(U64(k) for k in key))
        assert tuple(int(w) for w in got) == want


def test_the_counter_layout_is_version_1():
    """The layout's known answers at hawk's level: a change here is a new LAYOUT, documented."""
    assert hawk.random.LAYOUT == 1
    # key (seed low, seed high), counter (sample low, sample high, counter low, counter high)
    seed, sample, counter = 0x299F31D0A4093822, 0x85A308D3243F6A88, 0x0370734413198A2E
    got = [philox.evaluate("random_bits", seed, sample, counter, w) for w in range(4)]
    assert [int(w) for w in got] == list(KNOWN[2][2])
    assert hawk.random.bits(0, 0, 0) == 0x6627E8D5
    assert hawk.random.uniform(0, 0) == (0x6627E8D5 >> 11) * 2.0 ** -21 + 0xE169C58D * 2.0 ** -53
    assert hawk.random.uniform32(0, 0) == np.float32((0x6627E8D5 >> 8) * 2.0 ** -24)


# ------------------------------------------------------------ C at every build
FLAGS = {"O0": ["-O0"], "O3": ["-O3"], "native": ["-O3", "-march=native"], "sse2": ["-O3", "-march=x86-64"]}


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("flags", list(FLAGS))
def test_every_c_build_gives_the_references_bits(flags, tmp_path):
    """The draws' C over arbitrary 64-bit seeds, samples and counters (beyond any plane's length)."""
    loops = "".join(
        f"void run_{op}(const uint64_t *s, const uint64_t *i, const uint64_t *c, {ctype} *out, int64_t n)\n"
        f"{{ for (int64_t k = 0; k < n; ++k) out[k] = hk_{op}(s[k], i[k], c[k]"
        f"{', (uint64_t)(k & 3)' if op == 'random_bits' else ''}); }}\n"
        for op, (_, ctype, _) in philox.DRAWS.items())
    source = tmp_path / "draws.c"
    source.write_text("#include <stdint.h>\n#define HK_FN static inline\n#define HK_TABLE static const\n"
                      "#define HK_MATH static\n" + libm.c_functions() + philox.c_functions()
                      + loops)
    lib = tmp_path / "draws.so"
    subprocess.run([CC, "-std=c11", "-fPIC", "-shared", "-ffp-contract=off", "-Wall", "-Werror",
                    "-Wno-unused-function", *FLAGS[flags], str(source), "-o", str(lib)], check=True,
                   capture_output=True)
    dll = ctypes.CDLL(str(lib))
    rng = np.random.default_rng(5)
    n = 4000
    s, i, c = (rng.integers(0, 2 ** 64, n, dtype=np.uint64) for _ in range(3))
    i[:4], c[:4], s[:4] = 0, 0, 0
    for op, (_, _, dtype) in philox.DRAWS.items():
        out = np.empty(n, {"f64": np.float64, "f32": np.float32, "u32": np.uint32}[dtype])
        getattr(dll, f"run_{op}")(*(a.ctypes.data_as(ctypes.c_void_p) for a in (s, i, c, out)),
                                  ctypes.c_int64(n))
        extra = (np.arange(n) & 3,) if op == "random_bits" else ()
        want = philox.evaluate(op, s, i, c, *extra)
        assert out.tobytes() == want.tobytes(), op


# ------------------------------------------------------------ kernels
@hawk.kernel
def draws(x: Scalar, seed: Param[Int32]):
    return (x + hawk.random(seed, 0), hawk.random.uniform32(seed, 1), hawk.random.normal(seed, 2),
            hawk.random.bits(seed, 3, 2))


@hawk.kernel
def per_sample_seed(x: Scalar, seed: UInt32) -> Scalar:
    """A seed per sample, and the counter a loop index would be."""
    return x * hawk.random.uniform(seed, 7) + hawk.random.normal(seed + 1, -1)


def drawn(seed: int, n: int):
    """What draws() gives, from the functions outside a kernel."""
    s = np.arange(n)
    return (hawk.random(seed, 0, sample=s), hawk.random.uniform32(seed, 1, sample=s),
            hawk.random.normal(seed, 2, sample=s), hawk.random.bits(seed, 3, 2, sample=s))


def test_a_kernel_draws_what_the_functions_and_the_reference_give(threads):
    n = 5000  # several blocks: the team's cuts are part of what is checked
    x = np.zeros(n)
    for got, ref, want in zip(draws(x, 11), draws.reference(x, 11), drawn(11, n), strict=True):
        assert got.dtype == want.dtype and got.tobytes() == ref.tobytes() == want.tobytes()
    seeds = np.arange(n, dtype=np.uint32) * 3
    ones = np.ones(n)
    assert per_sample_seed(ones, seeds).tobytes() == per_sample_seed.reference(ones, seeds).tobytes()


def test_the_draws_are_in_range_and_look_random():
    n = 200_000
    u, u32, z, b = draws(np.zeros(n), 3)
    assert 0.0 <= u.min() and u.max() < 1.0 and 0.0 <= u32.min() and u32.max() < 1.0
    assert u32.dtype == np.float32 and b.dtype == np.uint32
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01 and np.abs(z).max() < 8.58
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01  # neighbouring samples
    assert len(np.unique(b)) > 0.99 * n
    other_seed, other_counter = hawk.random(4, 0, sample=np.arange(n)), hawk.random(3, 1, sample=np.arange(n))
    assert (other_seed != u).mean() > 0.999 and (other_counter != u).mean() > 0.999


def test_a_negative_seed_or_counter_is_its_twos_complement():
    assert hawk.random(-1, -2) == hawk.random(2 ** 64 - 1, 2 ** 64 - 2)


@hawk.kernel
def scaled(x: Scalar, seed: Param[Int32]) -> Scalar:
    return x * hawk.random.uniform(seed, 0) + hawk.random.normal(seed, 1)


@hawk.kernel
def shifted(x: Scalar, seed: Param[Int32]) -> Scalar:
    return hm.sin(x) + hawk.random.uniform(seed, 2)


def test_planned_graphs_fused_or_not_give_the_eager_bits(threads):
    n = 2500
    x = np.linspace(-2.0, 2.0, n)
    results = []
    for fuse in (False, True):
        g = eagle.Graph()
        first = scaled.plan(x, 5)
        second = shifted.plan(first.outputs[0], 6)
        g.add(first, name="scaled").add(second, name="shifted")
        extend.declare_temporaries(g, first.outputs)
        g.build(fuse=fuse).launch()
        assert bool(g.fused) == fuse
        results.append(second.outputs[0].copy())
    eager = shifted(scaled(x, 5), 6)
    assert results[0].tobytes() == results[1].tobytes() == eager.tobytes()


@eagle.Graph.builder
def noisy(x, seed):
    g = eagle.Graph()
    g.result = shifted(scaled(x, seed), seed + 1)
    return g


def test_a_builder_graph_gives_the_eager_bits():
    x = np.linspace(-2.0, 2.0, 3000)
    assert noisy(x, 5).launch().result.tobytes() == shifted(scaled(x, 5), 6).tobytes()


def test_a_draw_carries_no_derivative_and_the_vjp_redraws_it():
    n = 3000
    x, ct = np.linspace(-1.0, 1.0, n), np.ones(n)
    grads = scaled.vjp(x, 9, ct)
    u = hawk.random.uniform(9, 0, sample=np.arange(n))
    assert grads["x"].tobytes() == (0.0 + u).tobytes()  # d/dx (x u + z) = u, the forward's u
    assert set(grads) == {"x"}  # an integer seed has none
    out, tangents = scaled.jvp(x, 9, np.full(n, 2.0))
    assert out.tobytes() == scaled(x, 9).tobytes()
    assert tangents["result"].tobytes() == (2.0 * u).tobytes()


def test_the_derivative_through_the_vjp_matches_central_differences():
    n = 400
    x = np.linspace(-1.0, 1.0, n)
    h = 1e-6
    numeric = (scaled(x + h, 9) - scaled(x - h, 9)) / (2 * h)
    np.testing.assert_allclose(scaled.vjp(x, 9, np.ones(n))["x"], numeric, rtol=1e-7, atol=1e-9)


def test_what_a_draw_refuses():
    with pytest.raises(hawk.KernelSyntaxError, match=r"hawk.random.uniform: seed is a f64; seeds"):
        @hawk.kernel
        def float_seed(x: Scalar) -> Scalar:
            return hawk.random.uniform(x, 0)
    with pytest.raises(hawk.KernelSyntaxError, match=r"hawk.random.bits: the word is one of .*0, 1, 2, 3"):
        @hawk.kernel
        def some_word(x: Scalar, w: Param[Int32]) -> UInt32:
            return hawk.random.bits(1, 2, w)
    with pytest.raises(hawk.KernelSyntaxError, match=r"hawk.random.bits takes 3 arguments"):
        @hawk.kernel
        def two(x: Scalar) -> UInt32:
            return hawk.random.bits(1, 2)


@pytest.mark.skipif(not cuda.available(),
                    reason="NVRTC is not installed "
                           "(pip install \"raptor-hawk[cuda12]\" or \"raptor-hawk[cuda13]\")")
def test_the_draws_compile_to_ptx():
    x = np.zeros(8)
    assert ".entry" in draws.ptx(x, 1) and "fma" not in draws.ptx(x, 1)
    assert ".entry" in scaled.vjp.ptx(x, 1, x)


@eagle.Graph.builder
def recorded(x, seed, record=False):
    g = eagle.Graph(record=record)
    g.result = shifted(scaled(x, seed), seed + 1)
    return g


@pytest.mark.parametrize("fuse", [False, True])
def test_eagle_diff_reverse_redraws_and_matches_central_differences(fuse):
    pytest.importorskip("eagle.diff")
    import eagle.diff

    n = 300
    x = np.linspace(-1.5, 1.5, n)
    g = recorded(x, 5, record=True)
    g()
    grads = eagle.diff.reverse(g.record, {"result": np.ones(n)}, wrt=("x",), fuse=fuse)
    h = 1e-6
    numeric = (shifted(scaled(x + h, 5), 6) - shifted(scaled(x - h, 5), 6)) / (2 * h)
    np.testing.assert_allclose(grads["x"], numeric, rtol=1e-6, atol=1e-8)
    u = hawk.random.uniform(5, 0, sample=np.arange(n))
    want = hm.cos(scaled(x, 5)) * u  # d shifted/d y * d scaled/d x, the forward's draws
    np.testing.assert_allclose(grads["x"], want, rtol=1e-15, atol=0)


@hawk.kernel
def jitter(x: Scalar, seed: Param[Int32], step: Param[Int32]) -> Scalar:
    """docs/hawk.rst's example: a counter of its own for every draw of every step."""
    return x + 0.1 * hawk.random.normal(seed, 2 * step) + hawk.random.uniform(seed, 2 * step + 1)


def test_the_documented_example_draws_fresh_numbers_each_step():
    x = np.zeros(1000)
    steps = [jitter(x, 3, step) for step in range(3)]
    assert all((a != b).mean() > 0.999 for a, b in itertools.pairwise(steps))
    s = np.arange(1000)
    want = 0.1 * hawk.random.normal(3, 2, sample=s) + hawk.random.uniform(3, 3, sample=s)
    assert steps[1].tobytes() == (0.0 + want).tobytes()


@hawk.kernel
def lattice(x: Scalar, seed: Param[Int32], width: Param[Int32]) -> Scalar:
    """Each sample reads the draws of its lattice corners (sample=): the same numbers any other
    sample reads there, as noise over a grid needs."""
    k = hm.int32(hm.floor(x)) % width
    return hawk.random.uniform(seed, 0, sample=k) + hawk.random.normal(seed, 1, sample=k + 1)


@hawk.kernel
def at_param(x: Scalar, seed: Param[Int32], k: Param[Int32]) -> Scalar:
    return x + hawk.random.bits(seed, 0, 1, sample=k)


def test_sample_names_whose_draw_it_is():
    x = np.linspace(0.0, 9.99, 4000)
    k = np.floor(x).astype(np.int64) % 7
    want = hawk.random.uniform(2, 0, sample=k) + hawk.random.normal(2, 1, sample=k + 1)
    got = lattice(x, 2, 7)
    assert got.tobytes() == want.tobytes() == lattice.reference(x, 2, 7).tobytes()
    assert (at_param(np.zeros(5), 3, 11) == float(hawk.random.bits(3, 0, 1, sample=11))).all()
    assert not any(isinstance(s, Op) and s.op.startswith("random") and not s.dst.uniform
                   for s in at_param.ir(np.zeros(5), 3, 11).body)  # drawn once, for every sample
    with pytest.raises(hawk.KernelSyntaxError, match=r"takes one keyword, sample="):
        @hawk.kernel
        def other_keyword(x: Scalar) -> Scalar:
            return hawk.random.uniform(1, 2, index=3)
    with pytest.raises(hawk.KernelSyntaxError, match=r"hawk.random.normal: sample is a f64"):
        @hawk.kernel
        def float_sample(x: Scalar) -> Scalar:
            return hawk.random.normal(1, 2, sample=x)
