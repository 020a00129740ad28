"""Test support for fakecuda, the CPU emulation of the CUDA driver (fakecuda.c).

``activate()`` builds the emulation and points libeagle at it (``EAGLE_LIBCUDA``); ``HostKernels``
compiles CUDA C kernels for the host with the C++ compiler and registers them with the emulation
under their names, so that PTX text naming them loads and runs.  Production code never imports
this module.

Emulated kernels run in real thread blocks, one block at a time: a block's threads are fibers
switched at ``__syncthreads``, with the block's ``__shared__`` memory (shim.h; the model and what it
cannot show are in README.md).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LIBEAGLE_SRC = HERE.parent.parent / "libeagle" / "src"
SOURCE = HERE / "fakecuda.c"
# The headers fakecuda.c includes: a change to them rebuilds it.
HEADERS = ("cuda_driver.h", "cuda_driver_types.h")

# What CUDA C needs to compile as host C++, and the thread blocks its kernels run in.
SHIM = HERE / "shim.h"
# A source that names a barrier runs its blocks' threads as fibers (shim.h).
BARRIER = re.compile(r"\b__syncthreads\b")

KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)\s*'
                    r"\(([^)]*)\)")
PARAM_NAME = re.compile(r"^(.*?)\b(\w+)\s*$", re.S)

REGISTER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int,
                               ctypes.POINTER(ctypes.c_size_t))


def cache_dir() -> Path:
    """Where built libraries are kept between runs: ``FAKECUDA_CACHE`` or a per-user temp folder."""
    path = Path(os.environ.get("FAKECUDA_CACHE") or Path(tempfile.gettempdir()) / f"fakecuda-{os.getuid()}")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:16]


def _compile(cmd: list[str], out: Path) -> Path:
    """Run a compile command writing ``out`` atomically (parallel test processes, and threads of
    one, share the cache)."""
    tmp = out.with_name(f"{out.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    result = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
    if result.returncode:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"fakecuda: {shlex.join(cmd)} failed:\n{result.stderr}")
    os.replace(tmp, out)
    return out


def build(out_dir: Path | None = None) -> Path:
    """Compile fakecuda.c into ``out_dir`` (cached by the sources); returns the library's path."""
    out_dir = Path(out_dir) if out_dir else cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = [SOURCE.read_bytes()] + [(LIBEAGLE_SRC / h).read_bytes() for h in HEADERS]
    out = out_dir / f"libfakecuda-{_digest(*sources)}.so"
    if out.exists():
        return out
    cc = shlex.split(os.environ.get("CC", "cc"))
    # Never the sanitizer flags: the library is dlopen'ed into an uninstrumented Python.
    cmd = [*cc, "-std=c11", "-O1", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden", "-Wall",
           "-fno-sanitize=all", "-I", str(LIBEAGLE_SRC), str(SOURCE)]
    return _compile(cmd, out)


def real_driver_present() -> bool:
    """libcuda.so.1 loads, and EAGLE_TEST_FAKECUDA=1 does not ask for the emulation anyway."""
    if os.environ.get("EAGLE_TEST_FAKECUDA") == "1":
        return False
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def compilers_available() -> bool:
    """Whether the C and C++ compilers the emulation needs are here."""
    return bool(shutil.which(os.environ.get("CC", "cc")) and shutil.which(os.environ.get("CXX", "c++")))


@dataclass(frozen=True)
class Kernel:
    """One ``extern "C" __global__`` kernel: its name and parameter types."""

    name: str
    types: tuple[str, ...]


def parse_kernels(source: str) -> list[Kernel]:
    """Every ``extern "C" __global__ void NAME(PARAMS)`` of CUDA C ``source``."""
    kernels = []
    for match in KERNEL.finditer(re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.S)):
        params = [p.strip() for p in match.group(2).split(",") if p.strip() and p.strip() != "void"]
        types = []
        for p in params:
            m = PARAM_NAME.match(p.split("=")[0].strip())
            if not m or not m.group(1).strip():
                raise ValueError(f"fakecuda: cannot read parameter {p!r} of kernel {match.group(1)}")
            types.append(m.group(1).strip())
        kernels.append(Kernel(match.group(1), tuple(types)))
    return kernels


def _wrapper(k: Kernel, barriers: bool) -> str:
    """``fk_NAME(params, grid, block)``: every block of the grid, one after another (shim.h)."""
    args = ", ".join(f"*({t} *)p[{i}]" for i, t in enumerate(k.types))
    return f"""
static void fk_thread_{k.name}(void **p)
{{
    (void)p;
    {k.name}({args});
}}
static int fk_{k.name}(void **p, const unsigned *grid, const unsigned *block)
{{
    return fk::run_grid("{k.name}", grid, block, fk_thread_{k.name}, p, {str(barriers).lower()});
}}
"""


def _registration(kernels: list[Kernel], tag: str) -> str:
    """``fk_register_all(register, set_conditional)``: hands every kernel (as ``name@tag``) and its
    parameter sizes over."""
    lines = []
    for k in kernels:
        sizes = ", ".join(f"sizeof({t})" for t in k.types) or "0"
        lines.append(f"    {{ static const size_t s[] = {{{sizes}}};\n"
                     f"      rc |= reg(\"{k.name}@{tag}\", fk_{k.name}, {len(k.types)}, s); }}")
    body = "\n".join(lines)
    return f"""
typedef int (*fk_kernel)(void **, const unsigned *, const unsigned *);
extern "C" __attribute__((visibility("default"))) int fk_register_all(
    int (*reg)(const char *, fk_kernel, int, const size_t *),
    void (*set_conditional)(unsigned long long, unsigned))
{{
    int rc = 0;
    fk_set_conditional = set_conditional;
{body}
    return rc;
}}
"""


def entry_text(names: list[str]) -> str:
    """PTX-like text naming the kernels: what cuModuleLoadData of the emulation reads."""
    entries = "".join(f".visible .entry {n}(\n)\n{{\n    ret;\n}}\n" for n in names)
    return f"// fakecuda: host emulations of these kernels\n.version 8.0\n.target sm_52\n{entries}"


class Fake:
    """The emulation, loaded: the same library libeagle opens through ``EAGLE_LIBCUDA``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.fakecuda_launches.restype = ctypes.c_long
        self.lib.fakecuda_kernel_runs.restype = ctypes.c_long
        self.lib.fakecuda_live_allocations.restype = ctypes.c_long
        self.lib.fakecuda_host_waits.restype = ctypes.c_long
        self.lib.fakecuda_event_waits.restype = ctypes.c_long
        self.lib.fakecuda_conditional_runs.restype = ctypes.c_long
        self.lib.fakecuda_conditional_runs.argtypes = [ctypes.c_int]
        self._register = REGISTER_FN(("fakecuda_register", self.lib))
        self._kernels: dict[str, HostKernels] = {}

    def kernels(self, source: str) -> HostKernels:
        """CUDA C ``source`` compiled for the host and registered (once per source)."""
        if source not in self._kernels:
            self._kernels[source] = HostKernels(source, self)
        return self._kernels[source]

    def launches(self) -> int:
        return self.lib.fakecuda_launches()

    def kernel_runs(self) -> int:
        return self.lib.fakecuda_kernel_runs()

    def live_allocations(self) -> int:
        return self.lib.fakecuda_live_allocations()

    def host_waits(self) -> int:
        """cuStreamSynchronize and cuCtxSynchronize calls so far: the host waiting for the device."""
        return self.lib.fakecuda_host_waits()

    def conditional_runs(self) -> dict[str, int]:
        """Conditional nodes run so far, by type: ``{"if": ..., "while": ..., "switch": ...}``."""
        types = ("if", "while", "switch")  # CU_GRAPH_COND_TYPE_* order
        return {name: self.lib.fakecuda_conditional_runs(k) for k, name in enumerate(types)}

    def event_waits(self) -> int:
        """cuStreamWaitEvent calls on a recorded event so far: one stream ordered after another."""
        return self.lib.fakecuda_event_waits()


class HostKernels:
    """CUDA C kernels compiled for the host into a cached shared library and registered with the fake.

    ``ptx`` is the text to give cuModuleLoadData in place of the kernels' PTX; ``names`` the kernels."""

    def __init__(self, source: str, fake: Fake) -> None:
        self.kernels = parse_kernels(source)
        if not self.kernels:
            raise ValueError('fakecuda: no extern "C" __global__ kernel in the source')
        self.names = [k.name for k in self.kernels]
        # Registered as name@tag: each source's kernels are its module's own, as on a GPU, so a later
        # source with a kernel of the same name (another signature) does not replace this one.
        tag = _digest(source)
        self.ptx = entry_text([f"{n}@{tag}" for n in self.names])
        barriers = bool(BARRIER.search(source))
        cpp = (SHIM.read_text() + '#line 1 "kernel.cu"\n' + source
               + "".join(_wrapper(k, barriers) for k in self.kernels) + _registration(self.kernels, tag))
        cxx = shlex.split(os.environ.get("CXX", "c++"))
        out = cache_dir() / f"hostkernels-{_digest(cpp, *cxx)}.so"
        if not out.exists():
            src = out.with_suffix(".cpp")
            src.write_text(cpp)
            # no contraction into FMAs: eagle compiles with NVRTC's --fmad=false (_nvrtc.OPTIONS)
            _compile([*cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-fPIC", "-shared",
                      "-fvisibility=hidden", "-fno-sanitize=all", "-w", str(src)], out)
        self.lib = ctypes.CDLL(str(out))  # kept: the fake calls into it
        register_all = self.lib.fk_register_all
        register_all.argtypes = [REGISTER_FN, ctypes.c_void_p]
        set_conditional = ctypes.cast(fake.lib.fakecuda_set_conditional, ctypes.c_void_p)
        if register_all(fake._register, set_conditional):
            raise RuntimeError(f"fakecuda: registering {self.names} failed")


_active: Fake | None = None


def activate(out_dir: Path | None = None) -> Fake:
    """Build the emulation and make libeagle open it: call before libeagle's first CUDA call.

    Sets ``EAGLE_LIBCUDA`` in this process (children inherit it)."""
    global _active
    if _active is None:
        _active = Fake(build(out_dir))
    os.environ["EAGLE_LIBCUDA"] = str(_active.path)
    return _active


def use_fake(monkeypatch: Any) -> Fake:
    """``activate`` with the environment change undone by a pytest ``monkeypatch`` at teardown."""
    fake = activate()
    monkeypatch.setenv("EAGLE_LIBCUDA", str(fake.path))
    return fake


# ------------------------------------------------------------ eagle's CUDA C on the fake


def compile_ptx_on_fake(source: str, name: str, arch: str = "compute_70") -> str:
    """Stands in for ``eagle._nvrtc.compile_ptx`` on the fake: the kernels of ``source`` compiled for
    the host and registered; the entry text naming them instead of PTX."""
    del name, arch  # the host build needs neither
    if _active is None:
        raise RuntimeError("fakecuda: activate() first")
    return _active.kernels(source).ptx
