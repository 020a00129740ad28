"""Compile libeagle into a shared library with the system C compiler.

Used by eagle-graph's hatchling build hook (``packages/eagle-graph/hatch_build.py``)
and by the nox ``sanitize`` session.  Standard library only: it runs inside an
isolated build environment.

Environment: ``CC`` names the C compiler (default ``cc``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# -ffp-contract=off: gcc fuses a*b+c into an FMA by default on targets that
# have one, which changes results bit for bit (DESIGN.md section 4).  -O3 so
# that gcc vectorises the reductions' loops (vectorising never changes the
# bits of an integer reduction, and the float tree is written pair by pair).
FLAGS = ["-std=c11", "-O3", "-fPIC", "-pthread", "-ffp-contract=off", "-Wall", "-Wextra",
         "-fvisibility=hidden", "-D_GNU_SOURCE"]
SANITIZE_FLAGS = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                  "-fno-sanitize-recover=undefined"]


def library_name() -> str:
    """The platform's file name for the library."""
    if sys.platform == "darwin":
        return "libeagle.dylib"
    if sys.platform == "win32":
        return "eagle.dll"
    return "libeagle.so"


def compile_libeagle(out: Path, source_dir: Path = HERE, sanitize: bool = False) -> Path:
    """Compile every ``src/*.c`` of ``source_dir`` into the shared library ``out``."""
    sources = sorted(str(p) for p in (source_dir / "src").glob("*.c"))
    if not sources:
        raise FileNotFoundError(f"libeagle: no C sources under {source_dir / 'src'}")
    cc = shlex.split(os.environ.get("CC", "cc"))
    flags = FLAGS + (SANITIZE_FLAGS if sanitize else [])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    cmd = [*cc, *flags, "-I", str(source_dir / "include"), "-shared", "-o", str(tmp),
           *sources, "-lm"]
    if sys.platform.startswith("linux"):
        cmd.append("-ldl")
    subprocess.run(cmd, check=True)
    # Renamed into place so a process that has the old library loaded keeps it.
    os.replace(tmp, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--sanitize", action="store_true",
                        help="build with AddressSanitizer and UndefinedBehaviorSanitizer")
    args = parser.parse_args()
    print(compile_libeagle(args.output, sanitize=args.sanitize))


if __name__ == "__main__":
    main()
