"""Fixtures of the cross-package tests: libeagle built from this checkout's sources."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import cffi
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
def libeagle(tmp_path_factory: pytest.TempPathFactory) -> tuple[cffi.FFI, Any]:
    """(ffi, lib): this checkout's libeagle, compiled with its build flags, and the cdef of its eagle.h.

    Independent of the eagle package installed in the environment, which may come from another
    checkout.  ``EAGLE_LIBEAGLE`` names a build to load instead (the sanitizer session's)."""
    override = os.environ.get("EAGLE_LIBEAGLE")
    if override:
        out = Path(override)
    else:
        builder = build_module()
        out = tmp_path_factory.mktemp("libeagle") / builder.library_name()
        builder.compile_libeagle(out)
    header = (LIBEAGLE / "include" / "eagle" / "eagle.h").read_text()
    cdef = re.search(r"/\* EAGLE_CDEF_BEGIN \*/(.*)/\* EAGLE_CDEF_END \*/", header, re.S).group(1)
    ffi = cffi.FFI()
    ffi.cdef(cdef.replace("EAGLE_API ", ""))
    return ffi, ffi.dlopen(str(out))
