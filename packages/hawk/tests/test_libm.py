"""eagle's own sin cos tan exp log pow (hawk.libm): the same bits everywhere, within 1 ulp.

Bit identity: the C functions built at -O0, at -O3 without the vectoriser, vectorised for the
machine (AVX-512 here), for AVX2 and for SSE2 alone give the NumPy reference's bits, and so do
hawk kernels over several blocks and thread counts.  Accuracy: against mpmath's correctly
rounded values (skipped where mpmath is not installed), at most 1 ulp per function and range.
"""

from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import eagle.native
import hawk
from hawk import Float32, Scalar, libm
from hawk import math as hm

CC = shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
#: the bound of the medium reduction, and what lies around it
EDGES = [libm.HUGE, np.nextafter(libm.HUGE, 0), np.nextafter(libm.HUGE, np.inf)]
SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan, 5e-324,
            -5e-324, 2.2250738585072014e-308, 1e-310, 1.7976931348623157e308, -1.7976931348623157e308,
            709.782712893383973096, 709.79, -745.13321910194110842, -745.2, -708.4, 1e-300, 1e300,
            np.pi, -np.pi, np.pi / 2, np.pi / 4, 2.0 ** 52, 2.0 ** 53 + 2, -(2.0 ** 52 + 1), 0.3, *EDGES]


def inputs(seed: int, n: int = 6000) -> np.ndarray:
    """The awkward values, then every range: uniform, log-spread magnitudes and raw bit patterns."""
    rng = np.random.default_rng(seed)
    spread = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
    raw = rng.integers(0, 2 ** 64, n, dtype=np.uint64).view(np.float64)
    return np.concatenate([SPECIALS, rng.uniform(-10, 10, n), spread, raw, -np.abs(spread) * 1e10])


def pairs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """pow's arguments: every special against every special, then random ones of both signs."""
    rng = np.random.default_rng(seed)
    sx, sy = np.meshgrid(np.array(SPECIALS[:36]), np.array(SPECIALS[:36]))
    x = np.concatenate([sx.ravel(), rng.uniform(0, 10, 4000), -np.round(rng.uniform(0, 10, 2000)),
                        np.exp(rng.uniform(-700, 700, 2000)), rng.uniform(0.9, 1.1, 2000)])
    y = np.concatenate([sy.ravel(), rng.uniform(-10, 10, 4000), np.round(rng.uniform(-30, 30, 2000)),
                        rng.uniform(-1, 1, 2000), rng.uniform(-5000, 5000, 2000)])
    return x, y


def identical(got: np.ndarray, want: np.ndarray) -> None:
    """The same bits (the sign of zero too), NaN for NaN (a NaN's sign and payload are the
    hardware's)."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint64 if got.dtype == np.float64 else np.uint32),
                          want[~nan].view(np.uint64 if want.dtype == np.float64 else np.uint32))


# ------------------------------------------------------------ C at every flag
TYPES = {"f64": ("double", np.float64), "f32": ("float", np.float32)}
FLAGS = {"O0": ["-O0"], "O3-scalar": ["-O3", "-fno-tree-vectorize"], "native": ["-O3", "-march=native"],
         "avx2": ["-O3", "-march=x86-64-v3"], "sse2": ["-O3", "-march=x86-64"],
         "native-no-avx": ["-O3", "-march=native", "-mno-avx"]}
COMMON = ["-std=c11", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno", "-Wall", "-Werror"]


def loops_source() -> str:
    """The prelude's functions and one ``run_{name}_{type}`` loop over samples each."""
    lines = ["#include <stdint.h>", "#define HK_FN static inline", "#define HK_TABLE static const",
             "#if defined(__GNUC__) && !defined(__clang__)",
             '#define HK_MATH __attribute__((simd("notinbranch"), noinline)) static',
             "#else", "#define HK_MATH static inline", "#endif", libm.c_functions()]
    for name, arity in libm.FUNCTIONS.items():
        for t, (c, _) in TYPES.items():
            params = ", ".join(f"const {c} *restrict a{k}" for k in range(arity))
            args = ", ".join(f"a{k}[i]" for k in range(arity))
            lines.append(f"void run_{name}_{t}({params}, {c} *restrict out, int64_t n)\n{{\n"
                         "#pragma GCC ivdep\n"
                         f"    for (int64_t i = 0; i < n; ++i) out[i] = hk_{name}_{t}({args});\n}}")
    return "\n".join(lines) + "\n"


def cpu_runs(flags: list[str]) -> bool:
    """Whether this CPU runs code built for ``flags`` (the x86 ones need x86-64, and x86-64-v3
    AVX2)."""
    if not any("x86-64" in f or "avx" in f for f in flags):
        return True
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    if "-march=x86-64-v3" not in flags:
        return True
    return "avx2" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else False


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("libm") / "loops.c"
    path.write_text(loops_source())
    return path


def build(source: Path, flags: list[str], name: str) -> ctypes.CDLL:
    out = source.with_name(f"loops-{name}.so")
    subprocess.run([CC, *COMMON, *flags, str(source), "-o", str(out)], check=True, capture_output=True)
    return ctypes.CDLL(str(out))


def run(lib: ctypes.CDLL, name: str, t: str, *args: np.ndarray) -> np.ndarray:
    dtype = TYPES[t][1]
    args = tuple(np.ascontiguousarray(a, dtype) for a in args)
    out = np.empty_like(args[0])
    getattr(lib, f"run_{name}_{t}")(*(a.ctypes.data_as(ctypes.c_void_p) for a in (*args, out)),
                                     ctypes.c_int64(out.size))
    return out


@needs_cc
@pytest.mark.parametrize("flags", list(FLAGS), ids=list(FLAGS))
def test_every_build_gives_the_references_bits(source, flags):
    if not cpu_runs(FLAGS[flags]):
        pytest.skip("this CPU does not run that build (x86-64 flags; AVX2)")
    lib = build(source, FLAGS[flags], flags)
    x = inputs(1)
    px, py = pairs(2)
    with np.errstate(all="ignore"):
        for t, (_, dtype) in TYPES.items():
            for name, arity in libm.FUNCTIONS.items():
                args = (px, py) if arity == 2 else (x,)
                args = tuple(a.astype(dtype) for a in args)
                identical(run(lib, name, t, *args), libm.evaluate(name, *args))


@needs_cc
def test_the_vectorised_build_has_no_fma_and_vectorises_every_loop(source):
    """-ffp-contract=off keeps FMAs out; the math functions' vector clones keep the loops SIMD, in
    the build eagle compiles kernels with (on an AVX-512 machine GCC tuned for 256-bit vectors
    calls no clone, hence eagle's -mprefer-vector-width=512)."""
    result = subprocess.run([CC, *COMMON, *eagle.native.CFLAGS, "-S", "-fopt-info-vec-optimized",
                             str(source), "-o", "-"], check=True, capture_output=True, text=True)
    assert not any(op in result.stdout for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))
    version = subprocess.run([CC, "--version"], capture_output=True, text=True).stdout
    if "clang" in version or "Free Software Foundation" not in version:
        pytest.skip("the vectoriser's report is GCC's")
    lines = source.read_text().splitlines()
    loops = {k + 1 for k, line in enumerate(lines) if "out[i] = hk_" in line}
    vectorised = {int(r.split(":")[1]) for r in result.stderr.splitlines() if "loop vectorized" in r}
    assert loops <= vectorised, sorted(loops - vectorised)


# ------------------------------------------------------------ the math library's vector clones
#: -march for each x86-64 vector clone a kernel's loop calls: SSE2 (b), AVX (c), AVX2 (d), AVX-512 (e)
CLONE_FLAGS = {"b": ["-march=x86-64"], "c": ["-march=x86-64", "-mavx"], "d": ["-march=x86-64-v3"],
               "e": ["-march=x86-64-v4", "-mprefer-vector-width=512"]}
TRIG = ("sin", "cos", "tan")


def mixed_lanes() -> np.ndarray:
    """Blocks of 16 medium arguments, block k with a huge one at position k (so at every lane of
    every vector width), then blocks all huge and all special (inf, NaN: the whole function too),
    then the usual inputs: a clone picks the whole function for its vector or the medium one."""
    rng = np.random.default_rng(11)
    blocks = []
    for k in range(16):
        block = rng.uniform(-10, 10, 16) * 10.0 ** rng.integers(0, 6, 16)
        block[k] = np.exp(rng.uniform(np.log(libm.HUGE), 700)) * rng.choice([-1.0, 1.0])
        blocks.append(block)
    blocks.append(np.exp(rng.uniform(np.log(libm.HUGE), 700, 16)))
    blocks.append(np.resize([np.inf, -np.inf, np.nan, 1.0, *EDGES], 16))
    return np.concatenate([*blocks, inputs(12, 1000)])


@needs_cc
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64's clones")
@pytest.mark.parametrize("isa", list(CLONE_FLAGS))
def test_every_clone_of_the_math_library_gives_the_references_bits(isa, tmp_path):
    """sin, cos and tan's clones run the medium range's function unless a lane needs the whole one:
    the reference's bits with a huge argument at any lane, through each x86-64 clone."""
    flags = CLONE_FLAGS[isa]
    cpu = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if any(f in flags for f in ("-march=x86-64-v3", "-march=x86-64-v4", "-mavx")) and \
            not all(need in cpu for need in {"c": ["avx"], "d": ["avx2"], "e": ["avx512f"]}.get(isa, [])):
        pytest.skip("this CPU does not run that clone")
    libm.load()  # exports the clones the loops call
    source = tmp_path / "calls.c"
    source.write_text("#include <stdint.h>\n" + "".join(
        f'__attribute__((simd("notinbranch"))) double hk_{name}_f64(double);\n'
        f"void run_{name}(const double *restrict x, double *restrict out, int64_t n)\n"
        f"{{\n#pragma GCC ivdep\n    for (int64_t i = 0; i < n; ++i) out[i] = hk_{name}_f64(x[i]);\n}}\n"
        for name in TRIG))
    out = tmp_path / "calls.so"
    subprocess.run([CC, *COMMON, "-O3", *flags, str(source), "-o", str(out)], check=True, capture_output=True)
    called = subprocess.run(["nm", "-u", str(out)], capture_output=True, text=True).stdout
    if "_ZGV" not in called:
        pytest.skip("this compiler calls no vector clone")
    lanes = {"b": 2, "c": 4, "d": 4, "e": 8}[isa]
    assert all(f"_ZGV{isa}N{lanes}v_hk_{name}_f64" in called for name in TRIG), called
    lib = ctypes.CDLL(str(out))
    x = mixed_lanes()
    with np.errstate(all="ignore"):
        for name in TRIG:
            got = np.empty_like(x)
            pointers = (a.ctypes.data_as(ctypes.c_void_p) for a in (x, got))
            getattr(lib, f"run_{name}")(*pointers, ctypes.c_int64(x.size))
            identical(got, libm.evaluate(name, x))


def test_the_reference_skips_the_huge_reduction_where_no_sample_needs_it():
    """hawk.libm.Numpy.only runs nothing over no samples, and gives the dtypes it would."""
    calls = []

    def parts(B, x):
        calls.append(x.size)
        return x * 2.0, B.bits(x)

    x = np.array([1.0, 2.0, 3.0])
    for _ in range(2):  # its dtypes learnt once, on no samples
        none = libm.Numpy.only(x > 5.0, parts, x)
        assert calls == [0] and [p.dtype for p in none] == [np.float64, np.uint64]
        assert all((p == 0).all() and p.shape == x.shape for p in none)
    some = libm.Numpy.only(x > 2.0, parts, x)
    assert calls == [0, 1] and some[0].tolist() == [0.0, 0.0, 6.0]


# ------------------------------------------------------------ hawk kernels
@hawk.kernel
def every_function(x: Scalar, y: Scalar):
    return hm.sin(x), hm.cos(x), hm.tan(x), hm.exp(x), hm.log(x), hm.pow(x, y), hm.pow(y, 0.5)


@hawk.kernel
def every_function32(x: Float32, y: Float32):
    return hm.sin(x), hm.cos(x), hm.tan(x), hm.exp(x), hm.log(x), hm.pow(x, y)


@hawk.kernel
def chained(x: Scalar):
    """Each function's result fed to the next, with a branch per sample."""
    y = hm.sin(x) + hm.cos(x * 3.0)
    if y > 0.0:
        y = hm.exp(y) * hm.log(abs(x) + 1.0)
    else:
        y = hm.tan(y) - hm.pow(abs(x), y)
    return y


def test_kernels_give_the_references_bits(threads):
    x = inputs(3, 2000)
    y = np.resize(pairs(4)[1], x.size)
    for out, ref in zip(every_function(x, y), every_function.reference(x, y), strict=True):
        identical(out, ref)
    with np.errstate(over="ignore", invalid="ignore"):
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
    for out, ref in zip(every_function32(x32, y32), every_function32.reference(x32, y32), strict=True):
        assert out.dtype == np.float32
        identical(out, ref)
    identical(chained(x), chained.reference(x))


@hawk.kernel
def sine(x: Scalar):
    return hm.sin(x)


def test_the_derivative_of_sin_is_eagles_cos():
    """The functions stay single operations through hawk.derive: sin's partial is eagle's cos."""
    x = inputs(5, 2000)
    identical(sine.vjp(x, np.ones_like(x))["x"], libm.evaluate("cos", x))


# ------------------------------------------------------------ the special values
def test_special_values_are_libms():
    """±0, ±inf, NaN, subnormal results, huge arguments and C99's pow cases, as glibc gives them
    (compared where glibc is exact: every special value but the rounded ones)."""
    with np.errstate(all="ignore"):
        for name in ("sin", "cos", "tan", "exp", "log"):
            x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 5e-324, -5e-324, 1000.0, -1000.0])
            got, want = libm.evaluate(name, x), getattr(np, name)(x)
            if name in ("sin", "cos", "tan"):
                got, want, x = got[:8], want[:8], x[:8]
            exact = np.isnan(want) | np.isinf(want) | (want == 0) | (np.abs(x) < 1e-300) | \
                ((name == "exp") & np.isin(x, [1000.0, -1000.0]))
            identical(got[exact], want[exact])
        x, y = pairs(6)
        special = np.isin(x, SPECIALS[:16]) & np.isin(y, SPECIALS[:16])
        got, want = libm.evaluate("pow", x[special], y[special]), np.power(x[special], y[special])
        exact = np.isnan(want) | np.isinf(want) | (want == 0) | (want == 1) | (np.abs(y[special]) <= 1)
        identical(got[exact], want[exact])
    # a subnormal result of exp is rounded once, by the second of two scalings
    assert libm.evaluate("exp", np.array([-740.0]))[0] == np.exp(-740.0)


# ------------------------------------------------------------ accuracy

#: (function, range): a range is (low, high) uniform, or ("log", low, high) for log-spread magnitudes
RANGES = {
    "sin": [(-10.0, 10.0), (-1e5, 1e5), ("log", 1e6, 1e300)],
    "cos": [(-10.0, 10.0), (-1e5, 1e5), ("log", 1e6, 1e300)],
    "tan": [(-10.0, 10.0), (-1e5, 1e5), ("log", 1e6, 1e300)],
    "exp": [(-1.0, 1.0), (-708.0, 709.0), (-745.0, -708.5), (-103.9, -87.4)],
    "log": [(0.5, 2.0), ("log", 1e-300, 1e300), ("log", 5e-324, 2e-308), ("log", 1.5e-45, 1.1e-38)],
    "pow": [((0.0, 10.0), (-10.0, 10.0)), ((0.5, 2.0), (-500.0, 500.0)),
            (("log", 1e-300, 1e300), (-1.0, 1.0))],
}


def sample(rng: np.random.Generator, spec: tuple, n: int) -> np.ndarray:
    if spec[0] == "log":
        return np.exp(rng.uniform(np.log(spec[1]), np.log(spec[2]), n)) * rng.choice([-1.0, 1.0], n)
    return rng.uniform(spec[0], spec[1], n)


def ulp_error(name: str, args: tuple[np.ndarray, ...], dtype: type) -> float:
    """Max |eagle - exact| / ulp(exact) over the arguments (exact by mpmath at 200 bits)."""
    import mpmath

    fn = {"sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "exp": mpmath.exp, "log": mpmath.log,
          "pow": mpmath.power}[name]
    args = tuple(a.astype(dtype) for a in args)
    with np.errstate(all="ignore"):
        got = libm.evaluate(name, *args)
    info = np.finfo(dtype)
    worst = 0.0
    with mpmath.workprec(200):  # mpmath reduces large trig arguments with the bits it needs
        for k in range(got.size):
            exact = fn(*(mpmath.mpf(float(a[k])) for a in args))
            if not mpmath.isfinite(exact) or exact == 0 or abs(exact) > info.max:
                continue
            exponent = max(mpmath.floor(mpmath.log(abs(exact), 2)), info.minexp)
            ulp = mpmath.mpf(2) ** (exponent - info.nmant)
            worst = max(worst, float(abs(mpmath.mpf(float(got[k])) - exact) / ulp))
    return worst


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(RANGES))
def test_within_one_ulp_of_the_correctly_rounded_value(name, dtype):
    pytest.importorskip("mpmath")
    rng = np.random.default_rng(7)
    for spec in RANGES[name]:
        if name == "pow":
            args = (np.abs(sample(rng, spec[0], 300)), sample(rng, spec[1], 300))
        else:
            args = (np.abs(sample(rng, spec, 300)) if name == "log" else sample(rng, spec, 300),)
        if dtype == np.float32:
            args = tuple(np.clip(a, -3e38, 3e38) for a in args)
        assert ulp_error(name, args, dtype) <= 1.0, (name, spec)


# ------------------------------------------------------------ CUDA
def test_the_cuda_source_compiles_without_fma_or_cudas_math():
    """NVRTC (--fmad=false) keeps the operation sequence: no FMA, none of CUDA's approximations."""
    from hawk import cuda

    if not cuda.available():
        pytest.skip("NVRTC is not installed (pip install \"hawk[cuda12]\" or \"hawk[cuda13]\")")
    x = np.ones(8)
    for kernel, args in ((every_function, (x, x)), (every_function32, (x.astype(np.float32),) * 2)):
        ptx = kernel.ptx(*args)
        assert "fma" not in ptx
        assert not any(f"{op}.approx" in ptx for op in ("sin", "cos", "ex2", "lg2", "rcp", "sqrt"))


def test_the_hardest_reductions_are_within_one_ulp():
    """Doubles closest to multiples of pi/2 (the reduced argument loses up to 61 leading bits), the
    largest double and both sides of HUGE."""
    mpmath = pytest.importorskip("mpmath")
    x = np.array([np.ldexp(6381956970095103.0, 797), np.ldexp(5261692873635770.0, 499),
                  1.7976931348623157e308, 1647099.3291652903, 3141592.653589793, 1e22, *EDGES])
    with mpmath.workprec(2500):  # far more than needed: these are the cases that need the most
        for name in ("sin", "cos", "tan"):
            got = libm.evaluate(name, x)
            for k in range(x.size):
                exact = getattr(mpmath, name)(mpmath.mpf(float(x[k])))
                ulp = mpmath.mpf(2) ** (mpmath.floor(mpmath.log(abs(exact), 2)) - 52)
                assert abs(mpmath.mpf(float(got[k])) - exact) <= ulp, (name, x[k])


def test_hawk_math_outside_a_kernel_is_the_reference():
    """Eager hawk.math: the reference's bits, and a scalar for a scalar (as a ufunc gives)."""
    x = inputs(8, 500)
    for name in ("sin", "cos", "tan", "exp", "log"):
        identical(getattr(hm, name)(x), sine.reference(x) if name == "sin" else libm.evaluate(name, x))
    assert isinstance(hm.sin(3.0), float) and hm.sin(np.float32(3.0)).dtype == np.float32
    assert hm.pow(2.0, 10.0) == 1024.0 and hm.pow(np.float32(2.0), np.float32(0.5)).dtype == np.float32
