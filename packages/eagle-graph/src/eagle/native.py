"""Native code: compile C into a cached shared library and take kernels from one.

This is how the tests bring their C kernels, how hawk brings its generated
ones, and how a plugin's own shared library is read: a kernel is any symbol
of the type ``eagle_kernel_fn`` declared in ``eagle.h``.

Environment:

``EAGLE_CACHE_DIR``
    Where compiled libraries are kept (default ``$XDG_CACHE_HOME/eagle``, and
    ``~/.cache/eagle`` where ``XDG_CACHE_HOME`` is unset or empty).  A folder
    that cannot be written (or a path that is a file) gives one
    :class:`CacheWarning` and a private temporary cache for this process.
``CC``
    The C compiler (default ``cc``).
``EAGLE_SANITIZE``
    Set to anything but empty or ``0``: every library is compiled with
    AddressSanitizer and UBSan (:data:`SANITIZE_FLAGS`; they are part of the
    cache key).  The process must then preload the sanitizer runtime, as the
    ``sanitize`` nox session does.

Every cache entry has a checksum file beside it (the SHA-256 of the file and
of the key it was built for); an entry whose checksum or key does not match is
rebuilt, never loaded.  A library's key names the compiler; when ``CC`` cannot
be run, a verified entry built from the same source, flags, ABI (version and
``eagle.h``) and machine by any compiler is used instead.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eagle._core import ABI_VERSION, ffi, include_dir
from eagle._errors import EagleAttributeError, EagleRuntimeError, EagleWarning
from eagle._log import compile_log

#: Flags for every native kernel: the same floating-point rules as libeagle
#: (no contraction into FMAs, no fast-math), so results do not depend on who
#: compiled what.  -O3 because gcc's -O2 leaves loops of unknown trip count
#: unvectorized, and -march=native for the machine's vector width (kernels
#: are compiled where they run; the cache key holds the resolved target), its
#: widest: GCC tuned for 256-bit vectors on an AVX-512 machine calls no vector
#: clone of hawk's math, so every loop calling one would run a sample at a time.
#: Vectorizing an elementwise loop never changes its bits.  -fno-math-errno
#: lets sqrt and friends vectorize; it changes no result, only errno.
CFLAGS: tuple[str, ...] = ("-std=c11", "-O3", "-march=native", "-mprefer-vector-width=512", "-fPIC",
                           "-shared", "-ffp-contract=off", "-fno-math-errno", "-Wall")

#: Added to :data:`CFLAGS` when ``EAGLE_SANITIZE`` is set: AddressSanitizer and
#: UBSan, an undefined behaviour stopping the process, at -O1 (as libeagle's
#: sanitized build: exact reports, and hundreds of kernels compile in half the time).
SANITIZE_FLAGS: tuple[str, ...] = ("-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                                   "-fno-sanitize-recover=undefined")

#: How to get a C compiler, for the messages of a missing or broken one.
INSTALL_HINT = ("install one (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
                "macOS: xcode-select --install; conda: conda install c-compiler) or point CC at yours")


#: The function a plugin's shared library exports to say which ABI it was built for.
PLUGIN_ABI_SYMBOL: str = "eagle_plugin_abi_version"


class CompileError(EagleRuntimeError):
    """The C compiler rejected a source; the message holds its output.

    >>> from eagle.native import CompileError, compile_library
    >>> try:
    ...     compile_library("this is not C", name="doc_broken")
    ... except CompileError as err:
    ...     print("error" in str(err))
    True
    """


class CacheWarning(EagleWarning):
    """The cache folder (``EAGLE_CACHE_DIR``) cannot be written: this process keeps its
    compiled libraries in a private temporary folder instead, compiling them again.

    >>> import warnings
    >>> from eagle.native import CacheWarning
    >>> issubclass(CacheWarning, eagle.EagleWarning)
    True
    """


def cache_dir() -> Path:
    """The folder compiled libraries are cached in: ``EAGLE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/eagle`` (the XDG base directory specification; a relative
    ``XDG_CACHE_HOME`` is invalid there and ignored), else ``~/.cache/eagle``.  Read at each use.

    >>> import os
    >>> from pathlib import Path
    >>> from eagle.native import cache_dir
    >>> cache_dir() == (Path(os.environ["EAGLE_CACHE_DIR"]) if os.environ.get("EAGLE_CACHE_DIR")
    ...                 else Path(os.environ["XDG_CACHE_HOME"]) / "eagle" if os.environ.get("XDG_CACHE_HOME")
    ...                 else Path.home() / ".cache" / "eagle")
    True
    """
    own = os.environ.get("EAGLE_CACHE_DIR")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "eagle"


def compiler() -> list[str]:
    """The C compiler's command (``CC``, default ``cc``), split as a shell would."""
    return shlex.split(os.environ.get("CC") or "cc")


def _sanitizing() -> bool:
    return os.environ.get("EAGLE_SANITIZE", "") not in ("", "0")


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
        raise CompileError(f"eagle.native.compile_library: the C compiler CC={' '.join(cc)!r} does not "
                           f"run ({err}); {INSTALL_HINT}") from None
    return version.stdout + target.stderr


@functools.cache
def _machine_identity() -> str:
    # What -march=native resolves from, read without a compiler: the
    # architecture and, on Linux, the CPU's feature flags.
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line for line in info if line.startswith(("flags", "Features"))), "")
    except OSError:
        flags = platform.processor()
    return f"{platform.system()} {platform.machine()} {flags.strip()}"


def compile_library(source: str, name: str = "kernels", extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile C ``source`` into a shared library and return its path.

    The library is cached under :func:`cache_dir`, keyed by a hash of the
    source, the compiler's identity and version, the flags, the ABI version
    and ``eagle.h``, so an unchanged source compiles once.  When the compiler
    cannot be run, a verified library of the same source, flags, ABI and
    machine built by any compiler is returned, else :class:`CompileError`.

    >>> from eagle.native import compile_library
    >>> path = compile_library("double twice(double x) { return 2 * x; }", name="doc_twice")
    >>> path.suffix, path == compile_library("double twice(double x) { return 2 * x; }", name="doc_twice")
    ('.so', True)
    """
    cc, flags, recipe = _toolchain(extra_flags)
    try:
        identity = _compiler_identity(tuple(cc))
    except CompileError:
        warm = lookup(f"{name}.so", recipe(source))
        if warm is None:
            raise
        return warm

    build = functools.partial(_compile, source, name, cc, flags, 1)
    return cached(f"{name}.so", [*recipe(source), " ".join(cc), identity], build, index=recipe(source))


def _toolchain(extra_flags: tuple[str, ...]) -> tuple[list[str], tuple[str, ...], Callable[[str], list[str]]]:
    """The compiler, the flags, and a source's recipe: what fixes a library's meaning on this
    machine, whoever compiles it (the header too, which a change during development may leave
    at the same ABI version)."""
    flags = (*CFLAGS, *(SANITIZE_FLAGS if _sanitizing() else ()), *extra_flags)
    header = hashlib.sha256((include_dir() / "eagle" / "eagle.h").read_bytes()).hexdigest()
    return compiler(), flags, lambda source: [source, " ".join(flags), str(ABI_VERSION), header,
                                               _machine_identity()]


def compile_libraries(sources: Sequence[str], name: str,
                      join: Callable[[Sequence[str]], str | None]) -> list[Path]:
    """A shared library holding each of ``sources`` (whole translation units whose symbols are
    each their own), in order: one compiled before (alone, or with others) is taken from the
    cache as :func:`compile_library` takes it; the others compile together, as the one
    translation unit ``join(those sources)`` (None: each alone), in one compiler process.  The
    joint library's checksum file names each source's key, so that a later call finds it by
    any one of them; a damaged entry is compiled again."""
    cc, flags, recipe = _toolchain(())
    recipes = [recipe(source) for source in sources]
    try:
        identity = _compiler_identity(tuple(cc))
    except CompileError:
        return [_member(name, r, "index") or compile_library(source, name)
                for source, r in zip(sources, recipes, strict=True)]
    keys = [[*r, " ".join(cc), identity] for r in recipes]
    paths = [_member(name, key, "key") for key in keys]
    missing = [i for i, path in enumerate(paths) if path is None]
    joined = join([sources[i] for i in missing]) if len(missing) > 1 else None
    if joined is None:
        return [path or compile_library(source, name) for path, source in zip(paths, sources, strict=True)]
    build = functools.partial(_compile, joined, name, cc, flags, len(missing))
    try:
        target = cached(f"{name}.so", [*recipe(joined), " ".join(cc), identity], build, index=recipe(joined),
                        members={"members": [_digest(keys[i]) for i in missing],
                                 "member_indexes": [_digest(recipes[i]) for i in missing]})
    except CompileError:  # each alone: the one that does not compile says why
        return [path or compile_library(source, name) for path, source in zip(paths, sources, strict=True)]
    for i in missing:
        _point_index(target, f"{name}.so", keys[i], ".member")
        _point_index(target, f"{name}.so", recipes[i], ".member-index")
        paths[i] = target
    return paths  # type: ignore[return-value]


def _member(name: str, key: list[str], field: str) -> Path | None:
    """The verified library made for ``key`` (``field`` "key": with the compiler, "index":
    without): its own entry, or a joint library that names it."""
    if field == "key":
        digest = _digest(key)
        for folder in _folders():
            target = _entry(folder, f"{name}.so", key)
            if _verified(target, "key", digest):
                return target
        return lookup(f"{name}.so", key, "members", ".member")
    return lookup(f"{name}.so", key) or lookup(f"{name}.so", key, "member_indexes", ".member-index")


def _compile(source: str, name: str, cc: list[str], flags: tuple[str, ...], count: int, out: Path) -> None:
    src = out.with_suffix(".c")
    src.write_text(source)
    command = [*cc, *flags, "-I", str(include_dir()), "-o", str(out), str(src), "-lm"]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
    except OSError as err:  # the compiler went missing since it told its version
        proc = subprocess.CompletedProcess(command, -1, "", str(err))
    problem = (f"did not compile (exit status {proc.returncode})" if proc.returncode != 0
               else "gave no library" if not out.is_file() or out.stat().st_size == 0 else None)
    if problem is not None:
        raise CompileError(f"eagle.native.compile_library: {name} {problem} with CC={' '.join(cc)!r}; "
                           f"if CC is not a working C compiler, {INSTALL_HINT}.\n"
                           f"command: {shlex.join(command)}\n{proc.stderr}")
    compile_log.info("eagle.native: compiled %s (%d source%s) with %s in %.0f ms", name, count,
                     "" if count == 1 else "s", " ".join(cc), 1e3 * (time.perf_counter() - start))


def _digest(key: list[str]) -> str:
    return hashlib.sha256("\0".join(key).encode()).hexdigest()


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _checksum_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _verified(target: Path, field: str, digest: str) -> bool:
    """Whether ``target``'s checksum file matches its bytes and names ``digest`` as its
    ``field`` ("key" or "index"): read before anything loads the file, which may be
    truncated, damaged, or another key's."""
    try:
        record = json.loads(_checksum_path(target).read_text())
        named = record.get(field) if isinstance(record, dict) else None
        return ((named == digest or (isinstance(named, list) and digest in named))
                and record.get("sha256") == _file_digest(target))
    except (OSError, ValueError):
        return False


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


#: The private folder of this process when the cache folder cannot be written,
#: by the folder it stands in for (each warned about once, removed at exit).
_fallbacks: dict[Path, Path] = {}


def _fallback(folder: Path, err: OSError) -> Path:
    if folder not in _fallbacks:
        _fallbacks[folder] = private = Path(tempfile.mkdtemp(prefix="eagle-cache-"))
        atexit.register(shutil.rmtree, private, ignore_errors=True)
        warnings.warn(f"eagle.native: the cache folder {str(folder)!r} (EAGLE_CACHE_DIR) cannot be "
                      f"written ({err.strerror or err}); this process compiles into {private} "
                      "instead: set EAGLE_CACHE_DIR to a writable folder", CacheWarning, stacklevel=4)
    return _fallbacks[folder]


def _folders() -> list[Path]:
    # Where entries are looked for: the cache folder, then this process's stand-in.
    folder = cache_dir()
    return [folder, *([_fallbacks[folder]] if folder in _fallbacks else [])]


def _entry(folder: Path, filename: str, key: list[str]) -> Path:
    stem, dot, suffix = filename.partition(".")
    return folder / f"{stem}-{_digest(key)[:24]}{dot}{suffix}"


def cached(filename: str, key: list[str], build: Callable[[Path], None],
           index: list[str] | None = None, members: dict[str, list[str]] | None = None) -> Path:
    """The cache file for ``key``, made by ``build(path)`` the first time.

    The name is ``filename`` with a hash of the key before its suffix.  The
    file is built in a temporary folder beside it and renamed into place, so
    another process building the same key never sees half of it; then its
    checksum file (its SHA-256 and the key's) is written the same way.  A file
    whose checksum file does not match is built again.  With ``index`` (a part
    of ``key``), :func:`lookup` finds the file by that part alone; ``members``
    (field -> digests) is written into the checksum file of a file it builds.

    >>> from eagle.native import cached
    >>> path = cached("doc_note.txt", ["hello", "v1"], lambda p: p.write_text("hello"))
    >>> path.read_text(), path.name.startswith("doc_note") and path.suffix == ".txt"
    ('hello', True)
    """
    digest = _digest(key)
    found = [t for t in (_entry(f, filename, key) for f in _folders()) if _verified(t, "key", digest)]
    if found:
        compile_log.debug("eagle.native: cache hit %s", found[0])
    target = found[0] if found else _build(filename, key, build, index, members or {})
    if index is not None:
        _point_index(target, filename, index)
    return target


def _build(filename: str, key: list[str], build: Callable[[Path], None], index: list[str] | None,
           members: dict[str, list[str]]) -> Path:
    folder = cache_dir()
    try:
        staging = _staging(folder)
    except OSError as err:
        folder = _fallback(folder, err)
        staging = _staging(folder)
    target = _entry(folder, filename, key)
    with staging as tmp:
        out = Path(tmp) / target.name
        build(out)
        record = {"key": _digest(key), "sha256": _file_digest(out)}
        if index is not None:
            record["index"] = _digest(index)
        record.update(members)
        os.replace(out, target)
    _write_atomically(_checksum_path(target), json.dumps(record))
    return target


def _staging(folder: Path) -> tempfile.TemporaryDirectory[str]:
    folder.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(dir=folder)


def _point_index(target: Path, filename: str, index: list[str], tag: str = ".index") -> None:
    # Only a pointer: lookup trusts it when the file's own checksum file names
    # the same index.  A read-only warm cache may lack it; it is then not written.
    pointer = _entry(target.parent, filename + tag, index)
    with contextlib.suppress(OSError):
        if not pointer.is_file() or pointer.read_text() != target.name:
            _write_atomically(pointer, target.name)


def lookup(filename: str, index: list[str], field: str = "index", tag: str = ".index") -> Path | None:
    """The verified cache file last made by :func:`cached` with this ``index``, or None.

    >>> from eagle.native import cached, lookup
    >>> path = cached("doc_seen.txt", ["hi", "by-me"], lambda p: p.write_text("hi"), index=["hi"])
    >>> lookup("doc_seen.txt", ["hi"]) == path, lookup("doc_seen.txt", ["never made"])
    (True, None)
    """
    digest = _digest(index)
    for folder in _folders():
        with contextlib.suppress(OSError):
            target = folder / _entry(folder, filename + tag, index).read_text()
            if _verified(target, field, digest):
                return target
    return None


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
            raise EagleAttributeError(f"eagle.native.Library: {self.path.name} has no symbol "
                                      f"{symbol!r}") from None
        return ctypes.cast(fn, ctypes.c_void_p).value

    def __repr__(self) -> str:
        return f"<eagle.native.Library {self.path}>"
