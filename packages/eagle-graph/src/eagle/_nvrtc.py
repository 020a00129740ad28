"""CUDA C compiled to PTX with NVRTC: eagle's own GPU kernels and hawk's.

NVRTC comes with the GPU extras, ``pip install "eagle-graph[cuda12]"`` or ``[cuda13]`` (the
NVRTC wheel of that CUDA); it needs no GPU, so CUDA C can be compiled and checked on any
machine.  eagle loads the library itself: the wheels' (``nvidia/cu13/lib/libnvrtc.so.13``,
``nvidia/cuda_nvrtc/lib/libnvrtc.so.12`` under a folder of ``sys.path``), else a toolkit's
(``lib64`` of ``CUDA_HOME``, ``CUDA_PATH`` or ``/usr/local/cuda``, then whatever the system's
loader finds as ``libnvrtc.so.13`` or ``libnvrtc.so.12``).  Where both majors are there, the CUDA
driver's own major is taken (its PTX loads without a CUBIN), then an older one (its PTX loads
too), then a newer (a CUBIN for the device then); without a driver, the newest.  Messages name
the NVRTC that was loaded.

Compilation keeps the CPU's floating-point rules: ``--fmad=false`` (no contraction into FMAs),
IEEE division and square root, no fast math.  PTX is cached under ``EAGLE_CACHE_DIR`` like the C
libraries.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eagle._core import ffi, lib
from eagle._errors import EagleRuntimeError
from eagle._log import compile_log
from eagle.native import cached

#: The virtual architecture PTX is written for unless one is asked for:
#: Volta, the oldest GPU that CUDA 12's conditional graph nodes run on;
#: NVRTC 13 starts at Turing (``default_arch``).
DEFAULT_ARCH = "compute_70"
OPTIONS = ("--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-default-device")

#: Where each major's library lies in its wheel, under a folder of ``sys.path``.
WHEELS = {13: Path("nvidia", "cu13", "lib", "libnvrtc.so.13"),
          12: Path("nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.12")}


class NvrtcError(EagleRuntimeError):
    """NVRTC is missing, or it rejected a kernel's CUDA (the message holds its log)."""


@dataclass(frozen=True)
class Nvrtc:
    """The NVRTC library loaded: its functions, version and where it came from."""

    dll: ctypes.CDLL
    major: int
    minor: int
    path: str

    def __str__(self) -> str:
        return f"NVRTC {self.major}.{self.minor} ({self.path})"


def candidates() -> list[tuple[int, str]]:
    """(major, library) to try, in this order for each major: the wheel's library in a folder of
    ``sys.path``, a toolkit's ``lib64``, the soname for the system's loader."""
    # only absolute folders: "" (the working directory) would load whatever library lies there
    wheels = [(major, Path(folder) / wheel) for major, wheel in WHEELS.items()
              for folder in dict.fromkeys(sys.path) if os.path.isabs(folder)]
    homes = dict.fromkeys(h for h in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                                      "/usr/local/cuda") if h)
    toolkits = [(major, Path(home, "lib64", f"libnvrtc.so.{major}")) for major in WHEELS for home in homes]
    found = [(major, str(path)) for major, path in wheels + toolkits if path.is_file()]
    return found + [(major, f"libnvrtc.so.{major}") for major in WHEELS]


def driver_major() -> int | None:
    """The CUDA major of this machine's driver (None without one)."""
    version = ffi.new("int *")
    return int(version[0]) // 1000 if lib.eagle_cuda_driver_version(version) == lib.EAGLE_OK else None


def preferred(found: list[tuple[int, str]], driver: int | None) -> list[tuple[int, str]]:
    """``found`` in the order to load: the driver's major first, then older ones (their PTX loads
    too), then newer (a CUBIN then); without a driver, newest first.  Stable within a major."""
    def rank(entry: tuple[int, str]) -> tuple[int, int]:
        major = entry[0]
        if driver is None:
            return (0, -major)
        return (0, 0) if major == driver else (1, -major) if major < driver else (2, major)

    return sorted(found, key=rank)


@functools.cache
def _loaded() -> Nvrtc | None:
    for _, path in preferred(candidates(), driver_major()):
        try:
            dll = ctypes.CDLL(path)
            got_major, got_minor = ctypes.c_int(), ctypes.c_int()
            if dll.nvrtcVersion(ctypes.byref(got_major), ctypes.byref(got_minor)):
                continue
        except OSError:  # not there, or it does not load here: the next one
            continue
        dll.nvrtcGetErrorString.restype = ctypes.c_char_p
        return Nvrtc(dll, got_major.value, got_minor.value, path)
    return None


def available() -> bool:
    """Whether NVRTC can be loaded here (no GPU is needed to compile)."""
    return _loaded() is not None


def loaded() -> Nvrtc | None:
    """The NVRTC library compiling here (its version and file), or None."""
    return _loaded()


def version() -> tuple[int, int]:
    nvrtc = _require()
    return nvrtc.major, nvrtc.minor


def _require() -> Nvrtc:
    nvrtc = _loaded()
    if nvrtc is None:
        driver = driver_major()
        extra = (f'"eagle-graph[cuda{driver}]" (this machine\'s driver is CUDA {driver})'
                 if driver in WHEELS else '"eagle-graph[cuda12]" or "eagle-graph[cuda13]" (the CUDA of '
                 "your driver)")
        tried = ", ".join(path for _, path in candidates())
        raise NvrtcError(f"eagle: NVRTC is not installed (tried {tried}); install the GPU extra: "
                         f"pip install {extra}")
    return nvrtc


def _check(nvrtc: Nvrtc, status: int, what: str, program: ctypes.c_void_p | None = None) -> None:
    if status == 0:
        return
    log = ""
    if program is not None:
        size = ctypes.c_size_t()
        nvrtc.dll.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(size.value)
        nvrtc.dll.nvrtcGetProgramLog(program, buffer)
        log = buffer.value.decode(errors="replace").rstrip()
    name = nvrtc.dll.nvrtcGetErrorString(status).decode()
    raise NvrtcError(f"eagle: {nvrtc}: {what} failed ({name}):\n{log}")


def default_arch() -> str:
    """The oldest architecture this NVRTC compiles for: PTX for it runs on every newer GPU."""
    return DEFAULT_ARCH if version()[0] < 13 else "compute_75"


def compile_ptx(source: str, name: str, arch: str | None = None) -> str:
    """PTX for CUDA C ``source`` (cached by source, options and NVRTC version)."""
    return _compile(source, name, arch or default_arch(), "PTX", ".ptx").decode()


def compile_cubin(source: str, name: str, arch: str) -> bytes:
    """Machine code for one GPU architecture (``sm_90``), cached like PTX."""
    return _compile(source, name, arch, "CUBIN", ".cubin")


def image_for(source: str, name: str, driver_version: int, sm: Callable[[], str]) -> bytes:
    """What a driver of ``driver_version`` loads: PTX when it reads this NVRTC's PTX (a driver at
    least as new), else a CUBIN for the device's architecture ``sm()`` (no PTX JIT needed)."""
    major, minor = version()
    if driver_version >= 1000 * major + 10 * minor:
        return compile_ptx(source, name).encode() + b"\0"
    return compile_cubin(source, name, sm())


def _compile(source: str, name: str, arch: str, kind: str, suffix: str) -> bytes:
    nvrtc = _require()
    options = (f"--gpu-architecture={arch}", *OPTIONS)
    get_size, get = getattr(nvrtc.dll, f"nvrtcGet{kind}Size"), getattr(nvrtc.dll, f"nvrtcGet{kind}")

    def build(out: Path) -> None:
        start = time.perf_counter()
        program = ctypes.c_void_p()
        created = nvrtc.dll.nvrtcCreateProgram(ctypes.byref(program), source.encode(), f"{name}.cu".encode(),
                                               0, None, None)
        _check(nvrtc, created, "nvrtcCreateProgram")
        try:
            encoded = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            _check(nvrtc, nvrtc.dll.nvrtcCompileProgram(program, len(options), encoded), f"compiling {name}",
                   program)
            size = ctypes.c_size_t()
            _check(nvrtc, get_size(program, ctypes.byref(size)), f"nvrtcGet{kind}Size")
            buffer = ctypes.create_string_buffer(size.value)
            _check(nvrtc, get(program, buffer), f"nvrtcGet{kind}")
        finally:
            nvrtc.dll.nvrtcDestroyProgram(ctypes.byref(program))
        out.write_bytes(buffer.raw.rstrip(b"\x00") if kind == "PTX" else buffer.raw)
        compile_log.info("eagle: NVRTC %d.%d compiled %s to %s for %s in %.0f ms", *version(), name, kind,
                         arch, 1e3 * (time.perf_counter() - start))

    path = cached(f"{name}{suffix}", [source, " ".join(options), "nvrtc {}.{}".format(*version())], build)
    return path.read_bytes()
