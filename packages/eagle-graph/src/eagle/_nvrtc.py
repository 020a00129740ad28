"""CUDA C compiled to PTX with NVRTC: eagle's own GPU kernels and hawk's.

NVRTC comes with the GPU extra (``pip install "eagle-graph[gpu]"`` or
``"hawk[cuda]"``: cuda-bindings and the NVRTC wheel); it needs no GPU, so
CUDA C can be compiled and checked on any machine.  Compilation keeps the
CPU's floating-point rules: ``--fmad=false`` (no contraction into FMAs),
IEEE division and square root, no fast math.  PTX is cached under
``EAGLE_CACHE_DIR`` like the C libraries.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from eagle.native import cached

#: The virtual architecture PTX is written for unless one is asked for:
#: Volta, the oldest GPU that CUDA 12's conditional graph nodes run on;
#: NVRTC 13 starts at Turing (``default_arch``).
DEFAULT_ARCH = "compute_70"
OPTIONS = ("--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-default-device")


class NvrtcError(RuntimeError):
    """NVRTC is missing, or it rejected a kernel's CUDA (the message holds its log)."""


@functools.cache
def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        try:
            from cuda import nvrtc  # cuda-python before the cuda.bindings layout
        except ImportError:
            return None
    try:
        nvrtc.nvrtcVersion()
    except Exception:  # noqa: BLE001 - the bindings import but the library does not load
        return None
    return nvrtc


def available() -> bool:
    """Whether NVRTC can be loaded here (no GPU is needed to compile)."""
    return _nvrtc() is not None


def version() -> tuple[int, int]:
    nvrtc = _require()
    _, major, minor = nvrtc.nvrtcVersion()
    return major, minor


def _require() -> Any:
    nvrtc = _nvrtc()
    if nvrtc is None:
        raise NvrtcError("eagle: NVRTC is not installed; install the GPU extra: "
                         "pip install \"eagle-graph[gpu]\" (cuda-bindings and nvidia-cuda-nvrtc-cu12)")
    return nvrtc


def _check(nvrtc: Any, result: tuple[Any, ...], what: str, program: Any = None) -> tuple[Any, ...]:
    if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = ""
        if program is not None:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            buffer = b" " * size
            nvrtc.nvrtcGetProgramLog(program, buffer)
            log = buffer.decode(errors="replace").rstrip("\x00 ")
        raise NvrtcError(f"eagle: NVRTC {what} failed ({result[0]}):\n{log}")
    return result[1:]


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
    get_size, get = getattr(nvrtc, f"nvrtcGet{kind}Size"), getattr(nvrtc, f"nvrtcGet{kind}")

    def build(out: Any) -> None:
        created = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
        (program,) = _check(nvrtc, created, "nvrtcCreateProgram")
        try:
            encoded = [o.encode() for o in options]
            _check(nvrtc, nvrtc.nvrtcCompileProgram(program, len(encoded), encoded),
                   f"compiling {name}", program)
            (size,) = _check(nvrtc, get_size(program), f"nvrtcGet{kind}Size")
            buffer = b" " * size
            _check(nvrtc, get(program, buffer), f"nvrtcGet{kind}")
        finally:
            nvrtc.nvrtcDestroyProgram(program)
        out.write_bytes(buffer.rstrip(b"\x00") if kind == "PTX" else buffer)

    path = cached(f"{name}{suffix}", [source, " ".join(options), "nvrtc {}.{}".format(*version())], build)
    return path.read_bytes()
