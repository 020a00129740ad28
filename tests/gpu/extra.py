"""The requirements of one of eagle-graph's GPU extras, one a line: those this interpreter lacks
(what tests/gpu/run.sh installs), or all of them with ``--all`` (what fetch_wheels.sh fetches).

Usage: python tests/gpu/extra.py cuda12|cuda13|driver [--all | --name]; ``driver`` is the extra of
the CUDA major of this machine's driver (libcuda.so.1), which ``--name`` prints instead.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import re
import sys
from pathlib import Path

import tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "packages" / "eagle-graph" / "pyproject.toml"


def driver_extra() -> str:
    """``cuda<major>`` of the driver this machine loads."""
    version = ctypes.c_int()
    if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)):
        sys.exit("tests/gpu/extra.py: cuDriverGetVersion failed")
    return f"cuda{version.value // 1000}"


def main(argv: list[str]) -> int:
    extra = driver_extra() if argv[0] == "driver" else argv[0]
    if "--name" in argv:
        print(extra)
        return 0
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    if extra not in extras:
        sys.exit(f"tests/gpu/extra.py: eagle-graph has no [{extra}] extra; it has "
                 f"{', '.join(e for e in extras if e.startswith('cuda'))}")
    for requirement in extras[extra]:
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            print(requirement)
            continue
        if "--all" in argv:
            print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
