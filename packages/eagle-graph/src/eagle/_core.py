"""libeagle, loaded through cffi (ABI mode).

The cdef is the region of the installed ``eagle.h`` between the EAGLE_CDEF
markers, so the header stays the one description of the C ABI.

Environment: ``EAGLE_LIBEAGLE`` names a libeagle build to load instead of the
bundled one (a sanitizer or debug build).
"""

from __future__ import annotations

import atexit
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

import cffi

from eagle._errors import EagleImportError, EagleRuntimeError, EagleValueError

#: The C ABI this Python code speaks; equal to EAGLE_ABI_VERSION in eagle.h.
ABI_VERSION: Final = 3

_LIB_DIR = Path(__file__).resolve().parent / "_lib"
_REBUILD = "rebuild it with `pip install -e packages/eagle-graph` (or reinstall eagle-graph)"


def include_dir() -> Path:
    """The folder holding ``eagle/eagle.h``, for compiling native kernels against it.

    >>> from eagle.native import include_dir
    >>> (include_dir() / "eagle" / "eagle.h").is_file()
    True
    """
    return _LIB_DIR / "include"


def library_path() -> Path:
    """The libeagle this process loads (``EAGLE_LIBEAGLE``, else the bundled one)."""
    override = os.environ.get("EAGLE_LIBEAGLE")
    if override:
        return Path(override)
    name = {"darwin": "libeagle.dylib", "win32": "eagle.dll"}.get(sys.platform, "libeagle.so")
    return _LIB_DIR / name


def _cdef(header: str) -> str:
    match = re.search(r"/\* EAGLE_CDEF_BEGIN \*/(.*)/\* EAGLE_CDEF_END \*/", header, re.S)
    if match is None:
        raise EagleImportError(f"eagle._core: eagle.h has no EAGLE_CDEF region; {_REBUILD}")
    return match.group(1).replace("EAGLE_API ", "")


def _load() -> tuple[cffi.FFI, Any]:
    header_path = include_dir() / "eagle" / "eagle.h"
    path = library_path()
    if not path.is_file() or not header_path.is_file():
        raise EagleImportError(f"eagle._core: libeagle is missing ({path}); {_REBUILD}")
    ffi = cffi.FFI()
    ffi.cdef(_cdef(header_path.read_text()))
    # RTLD_NODELETE: the team's threads run libeagle code until the process
    # ends, so the library must stay mapped even after cffi closes it at exit.
    # RTLD_GLOBAL: generated kernels (hawk's) call eagle_reduce_block, found in this library.
    lib = ffi.dlopen(str(path), ffi.RTLD_NOW | ffi.RTLD_GLOBAL | getattr(ffi, "RTLD_NODELETE", 0))
    found = lib.eagle_abi_version()
    if found != ABI_VERSION or lib.EAGLE_ABI_VERSION != ABI_VERSION:
        raise EagleImportError(
            f"eagle._core: {path} has ABI version {found}, this eagle needs {ABI_VERSION}; {_REBUILD}"
        )
    return ffi, lib


ffi, lib = _load()


def _stop_team() -> None:
    # Join the team's threads before the interpreter tears down: a worker
    # must not be mid-spin when the process unmaps what it runs.
    lib.eagle_set_num_threads(lib.eagle_num_threads())


atexit.register(_stop_team)

BLOCK: Final = int(lib.EAGLE_BLOCK)

#: A fork/join stage runs its branches as tasks only up to this many samples
#: (seed 001, "CPU schedules"; the rule itself is libeagle's eagle_stage_schedule).
BRANCH_TASKS_MAX_SAMPLES: Final = int(lib.EAGLE_BRANCH_TASKS_MAX_SAMPLES)


class CoreError(EagleRuntimeError):
    """A libeagle call failed; the message carries libeagle's own words."""


def check(status: int, api: str) -> int:
    """Raise CoreError for a negative libeagle status, else return it."""
    if status < 0:
        detail = ffi.string(lib.eagle_last_error()).decode() or f"status {status}"
        raise CoreError(f"{api}: {detail}")
    return status


def num_threads() -> int:
    """The size of the host thread team (``EAGLE_NUM_THREADS``, else the CPU count)."""
    return int(lib.eagle_num_threads())


def set_num_threads(n: int) -> None:
    """Resize the host thread team; 0 re-reads ``EAGLE_NUM_THREADS`` and the CPU count."""
    if n < 0:
        raise EagleValueError(f"eagle._core.set_num_threads: n must be >= 0, got {n}")
    check(lib.eagle_set_num_threads(n), "eagle._core.set_num_threads")
