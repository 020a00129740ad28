"""Fixtures of the cross-package tests: libeagle built from this checkout's sources."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import cffi
import numpy as np
import pytest

LIBEAGLE = Path(__file__).resolve().parent.parent / "libeagle"


def build_module() -> ModuleType:
    """libeagle/build_libeagle.py, loaded by path (it is not an installed module)."""
    spec = importlib.util.spec_from_file_location("build_libeagle", LIBEAGLE / "build_libeagle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def libeagle_builder() -> ModuleType:
    """libeagle/build_libeagle.py of this checkout."""
    return build_module()


@pytest.fixture(scope="session")
def libeagle_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's libeagle, compiled with its build flags (``EAGLE_LIBEAGLE`` names a build to use
    instead: the sanitizer session's)."""
    override = os.environ.get("EAGLE_LIBEAGLE")
    if override:
        return Path(override)
    builder = build_module()
    out = tmp_path_factory.mktemp("libeagle") / builder.library_name()
    return builder.compile_libeagle(out)


def libeagle_cdef() -> str:
    """The cdef of this checkout's eagle.h (its EAGLE_CDEF region)."""
    header = (LIBEAGLE / "include" / "eagle" / "eagle.h").read_text()
    cdef = re.search(r"/\* EAGLE_CDEF_BEGIN \*/(.*)/\* EAGLE_CDEF_END \*/", header, re.S).group(1)
    return cdef.replace("EAGLE_API ", "")


@pytest.fixture(scope="session")
def libeagle_cdef_text() -> str:
    """libeagle_cdef(), for tests that hand it to a subprocess."""
    return libeagle_cdef()


@pytest.fixture(scope="session")
def libeagle(libeagle_path: Path) -> tuple[cffi.FFI, Any]:
    """(ffi, lib): this checkout's libeagle (``libeagle_path``) and the cdef of its eagle.h.

    Independent of the eagle package installed in the environment, which may come from another
    checkout."""
    ffi = cffi.FFI()
    ffi.cdef(libeagle_cdef())
    return ffi, ffi.dlopen(str(libeagle_path))


# ------------------------------------------------------------------ the CUDA driver, real or emulated

FAKECUDA = Path(__file__).resolve().parent / "fakecuda"
NO_GPU_REASON = "no CUDA driver and no C++ compiler for the emulation"


def fakecuda_harness() -> ModuleType:
    """tests/fakecuda/harness.py (the root conftest.py loaded it, by path: tests/ is not a package)."""
    return sys.modules["fakecuda_harness"]


@pytest.fixture(scope="session")
def cuda_driver() -> Any:
    """None on a machine with a CUDA driver; else the active emulation (harness.Fake), which every
    libeagle of this process opens from then on.  Skips when neither is available."""
    harness = fakecuda_harness()
    if harness.real_driver_present():
        return None
    if not harness.compilers_available():
        pytest.skip(NO_GPU_REASON)
    return harness.activate()


class Gpu:
    """Device arrays for tests: CuPy's on a real GPU (when installed), else eagle's own DeviceArray
    (on the emulation, memory from the fake driver)."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake is not None
        self._cupy = None
        if not self.fake:
            try:
                import cupy
            except ImportError:
                cupy = None  # real memory through libeagle instead
            self._cupy = cupy

    def asarray(self, a: np.ndarray) -> Any:
        if self._cupy is not None:
            return self._cupy.asarray(a)
        from eagle._cuda import DeviceArray

        return DeviceArray.from_host(a)

    def zeros(self, shape: Any, dtype: Any = np.float64) -> Any:
        return self.asarray(np.zeros(shape, dtype))

    def put(self, d: Any, values: Any) -> None:
        """Write ``values`` into device array ``d`` (between launches)."""
        if self._cupy is not None and isinstance(d, self._cupy.ndarray):
            d[...] = self._cupy.asarray(values)
        else:
            d.set(values)

    def get(self, d: Any) -> np.ndarray:
        if self._cupy is not None and isinstance(d, self._cupy.ndarray):
            return self._cupy.asnumpy(d)
        return d.get()


@pytest.fixture(scope="session")
def gpu(cuda_driver: Any) -> Any:
    """A real GPU, or the CPU emulation of the driver with eagle's NVRTC compilation replaced by a host
    build of the same CUDA C (so eagle's own kernels run on the emulation)."""
    from eagle import _nvrtc

    with pytest.MonkeyPatch.context() as mp:
        if cuda_driver is not None:
            host_build = fakecuda_harness().compile_ptx_on_fake
            mp.setattr(_nvrtc, "compile_ptx", host_build)
            mp.setattr(_nvrtc, "image_for", lambda source, name, *_:
                       host_build(source, name).encode() + b"\0")
            mp.setattr(_nvrtc, "available", lambda: True)
        yield Gpu(cuda_driver)
