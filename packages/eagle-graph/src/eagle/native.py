"""Native code: compile C into a cached shared library and take kernels from one.

This is how the tests bring their C kernels, how hawk brings its generated
ones, and how a plugin's own shared library is read: a kernel is any symbol
of the type ``eagle_kernel_fn`` declared in ``eagle.h``.

Environment:

``EAGLE_CACHE_DIR``
    Where compiled libraries are kept (default ``~/.cache/eagle``).
``CC``
    The C compiler (default ``cc``).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eagle._core import ABI_VERSION, ffi, include_dir

#: Flags for every native kernel: the same floating-point rules as libeagle
#: (no contraction into FMAs, no fast-math), so results do not depend on who
#: compiled what.  -O3 because gcc's -O2 leaves loops of unknown trip count
#: unvectorized, and -march=native for the machine's vector width (kernels
#: are compiled where they run; the cache key holds the resolved target).
#: Vectorizing an elementwise loop never changes its bits.  -fno-math-errno
#: lets sqrt and friends vectorize; it changes no result, only errno.
CFLAGS: tuple[str, ...] = ("-std=c11", "-O3", "-march=native", "-fPIC", "-shared",
                           "-ffp-contract=off", "-fno-math-errno", "-Wall")


#: The function a plugin's shared library exports to say which ABI it was built for.
PLUGIN_ABI_SYMBOL: str = "eagle_plugin_abi_version"


class CompileError(RuntimeError):
    """The C compiler rejected a source; the message holds its output.

    >>> from eagle.native import CompileError, compile_library
    >>> try:
    ...     compile_library("this is not C", name="doc_broken")
    ... except CompileError as err:
    ...     print("error" in str(err))
    True
    """


def cache_dir() -> Path:
    """The folder compiled libraries are cached in (``EAGLE_CACHE_DIR``).

    >>> import os
    >>> from pathlib import Path
    >>> from eagle.native import cache_dir
    >>> cache_dir() == (Path(os.environ["EAGLE_CACHE_DIR"]) if os.environ.get("EAGLE_CACHE_DIR")
    ...                 else Path.home() / ".cache" / "eagle")
    True
    """
    return Path(os.environ.get("EAGLE_CACHE_DIR") or Path.home() / ".cache" / "eagle")


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


@functools.cache
def _compiler_identity(cc: tuple[str, ...]) -> str:
    # The version, and what -march=native means on this machine (the driver
    # prints the target it resolved), so a shared cache never hands one
    # machine's code to another.
    try:
        version = subprocess.run([*cc, "--version"], capture_output=True, text=True, check=True)
        target = subprocess.run([*cc, "-march=native", "-###", "-E", "-"], capture_output=True,
                                text=True, input="")
    except (OSError, subprocess.CalledProcessError) as err:
        raise CompileError(f"eagle.native: the C compiler {' '.join(cc)!r} does not run ({err}); "
                           "install one (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
                           "macOS: xcode-select --install; conda: conda install c-compiler) or point "
                           "CC at yours") from None
    return version.stdout + target.stderr


def compile_library(source: str, name: str = "kernels", extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile C ``source`` into a shared library and return its path.

    The library is cached under :func:`cache_dir`, keyed by a hash of the
    source, the compiler's identity and version, the flags and the ABI
    version, so an unchanged source compiles once.

    >>> from eagle.native import compile_library
    >>> path = compile_library("double twice(double x) { return 2 * x; }", name="doc_twice")
    >>> path.suffix, path == compile_library("double twice(double x) { return 2 * x; }", name="doc_twice")
    ('.so', True)
    """
    cc = _compiler()
    flags = (*CFLAGS, *extra_flags)

    def build(out: Path) -> None:
        src = out.with_suffix(".c")
        src.write_text(source)
        proc = subprocess.run([*cc, *flags, "-I", str(include_dir()), "-o", str(out), str(src), "-lm"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"eagle.native.compile_library: {name} did not compile:\n{proc.stderr}")

    return cached(f"{name}.so", [source, " ".join(cc), _compiler_identity(tuple(cc)), " ".join(flags),
                                 str(ABI_VERSION)], build)


def cached(filename: str, key: list[str], build: Callable[[Path], None]) -> Path:
    """The cache file for ``key``, made by ``build(path)`` the first time.

    The name is ``filename`` with a hash of the key before its suffix.  The
    file is built in a temporary folder beside it and renamed into place, so
    another process building the same key never sees half of it.

    >>> from eagle.native import cached
    >>> path = cached("doc_note.txt", ["hello", "v1"], lambda p: p.write_text("hello"))
    >>> path.read_text(), path.name.startswith("doc_note") and path.suffix == ".txt"
    ('hello', True)
    """
    stem, dot, suffix = filename.partition(".")
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:24]
    target = cache_dir() / f"{stem}-{digest}{dot}{suffix}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        build(out)
        os.replace(out, target)
    return target


class Library:
    """A shared library of native kernels, kept loaded while this object lives.

    >>> from eagle.native import Library, compile_library
    >>> lib = Library(compile_library('''
    ... #include "eagle/eagle.h"
    ... void noop(int64_t b, int64_t e, const eagle_arg *a) { (void)b; (void)e; (void)a; }
    ... ''', name="doc_noop"))
    >>> lib.kernel("noop") is not None, lib.path.exists()
    (True, True)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._dll = ctypes.CDLL(str(self.path))

    def kernel(self, symbol: str) -> Any:
        """The symbol ``symbol`` as an ``eagle_kernel_fn`` function pointer."""
        return ffi.cast("eagle_kernel_fn", self.address(symbol))

    def abi_version(self) -> int | None:
        """What the library's ``eagle_plugin_abi_version()`` returns: the ``EAGLE_ABI_VERSION`` it
        was compiled against (None when it exports no such function).

        A plugin's library defines it from the header it includes, so that eagle
        can refuse a library built for another ABI before calling any kernel::

            int eagle_plugin_abi_version(void) { return EAGLE_ABI_VERSION; }
        """
        fn = getattr(self._dll, PLUGIN_ABI_SYMBOL, None)
        if fn is None:
            return None
        fn.restype, fn.argtypes = ctypes.c_int, []
        return int(fn())

    def address(self, symbol: str) -> int:
        """The address of ``symbol``; AttributeError naming the library if it is absent."""
        try:
            fn = getattr(self._dll, symbol)
        except AttributeError:
            raise AttributeError(f"eagle.native.Library: {self.path.name} has no symbol {symbol!r}") from None
        return ctypes.cast(fn, ctypes.c_void_p).value

    def __repr__(self) -> str:
        return f"<eagle.native.Library {self.path}>"
