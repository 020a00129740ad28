"""``eagle.show_config()``: what this eagle is made of and runs with, for a bug report.

Reads metadata, the environment and libeagle only: no plugin and no framework is imported
(the plugins are the entry points of the group ``eagle``, listed by name).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from typing import IO

from eagle import _core, _nvrtc, native
from eagle._plugins import GROUP, disabled
from eagle._threads import ENV as THREADS_ENV
from eagle._threads import get_num_threads

#: The distributions that make up eagle: eagle's own and hawk, by the start of their names.
_OURS = re.compile(r"^(eagle|raptor)([-_.].*)?$|^hawk$", re.I)


def show_config(file: IO[str] | None = None) -> None:
    """Print eagle's configuration: the version of each installed eagle distribution (hawk
    among them), libeagle's ABI, the host threads, the compile cache folder, the C compiler,
    the CUDA driver, NVRTC and the plugins; to ``file`` (default ``sys.stdout``).

    >>> eagle.show_config()  # doctest: +ELLIPSIS
    eagle configuration
      python:        3...
      distributions: ...eagle-graph ...
      libeagle:      ABI 3 (...)
      threads:       ...
      cache folder:  ...
      C compiler:    ...
      CUDA driver:   ...
      NVRTC:         ...
      plugins:       ...
    """
    rows = [("python", sys.version.split()[0]), ("distributions", _distributions()),
            ("libeagle", f"ABI {_core.ABI_VERSION} ({_core.library_path()})"), ("threads", _threads()),
            ("cache folder", _cache()), ("C compiler", _compiler()), ("CUDA driver", _driver()),
            ("NVRTC", _nvrtc_found()), ("plugins", _plugins())]
    width = max(len(name) for name, _ in rows) + 1
    lines = ["eagle configuration", *(f"  {name + ':':<{width}} {value}" for name, value in rows)]
    print("\n".join(lines), file=file or sys.stdout)


def _distributions() -> str:
    found = {dist.metadata["Name"]: dist.version for dist in importlib.metadata.distributions()
             if dist.metadata["Name"] and _OURS.match(dist.metadata["Name"])}
    return ", ".join(f"{name} {version}" for name, version in sorted(found.items())) or "none found"


def _threads() -> str:
    raw = os.environ.get(THREADS_ENV)
    source = f"{THREADS_ENV}={raw!r}" if raw is not None else f"{THREADS_ENV} unset"
    return f"{get_num_threads()} ({source}; eagle.set_num_threads changes it)"


def _cache() -> str:
    source = ("EAGLE_CACHE_DIR" if os.environ.get("EAGLE_CACHE_DIR")
              else "XDG_CACHE_HOME" if os.path.isabs(os.environ.get("XDG_CACHE_HOME", "")) else "default")
    return f"{native.cache_dir()} ({source})"


def _compiler() -> str:
    cc = native.compiler()
    where = shutil.which(cc[0]) if cc else None
    if where is None:
        return f"not found: CC={' '.join(cc)!r}; {native.INSTALL_HINT}"
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as err:
        return f"{' '.join(cc)} ({where}) does not run: {err}"
    first = out.splitlines()[0] if out.strip() else "version unknown"
    return f"{' '.join(cc)}: {first} ({where})"


def _driver() -> str:
    version = _core.ffi.new("int *")
    if _core.lib.eagle_cuda_driver_version(version) != _core.lib.EAGLE_OK:
        return "none (no CUDA driver opened here)"
    return f"CUDA {version[0] // 1000}.{version[0] % 1000 // 10} ({version[0]})"


def _nvrtc_found() -> str:
    found = _nvrtc.loaded()
    return str(found) if found is not None else "not found (the [cuda12] or [cuda13] extra brings it)"


def _plugins() -> str:
    points = importlib.metadata.entry_points(group=GROUP)
    named = [f"{ep.name} {ep.dist.version}" if getattr(ep, "dist", None) is not None else ep.name
             for ep in points]
    listing = ", ".join(sorted(named)) or "none installed"
    return f"{listing} (EAGLE_NO_PLUGINS set: none is loaded)" if disabled() and named else listing
