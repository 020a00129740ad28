"""The kernel cache verifies what it finds (issue 17, defect 13).

A damaged or foreign cache entry is rebuilt, never loaded; a cache folder that
cannot be written gives a warning and a private one; a broken or missing
compiler gives a message that names CC; a warm cache works with no compiler.
Loading a damaged library can kill the process, so those cases run in a child.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from eagle.native import CacheWarning, CompileError, Library, compile_library

TIMES = "double times(double x) {{ return {factor} * x; }}\n"


def times(factor: int, name: str = "trust_times") -> Path:
    return compile_library(TIMES.format(factor=factor), name=name)


def call_times(path: Path, x: float) -> float:
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(Library(path).address("times"))
    return fn(x)


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(folder))
    return folder


def in_child(cache: Path, factor: int) -> float:
    """times(factor)(1.5) compiled and called by a fresh process on this cache."""
    code = (f"from test_trust_cache import times, call_times; print(call_times(times({factor}), 1.5))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parent, env={**os.environ, "EAGLE_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, f"the child died ({proc.returncode}):\n{proc.stderr[-2000:]}"
    return float(proc.stdout)


def test_a_truncated_library_is_rebuilt_not_loaded(cache):
    path = times(2)
    truncated = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(truncated)
    assert in_child(cache, 2) == 3.0
    assert path.stat().st_size > len(truncated)  # built again in its place


@pytest.mark.parametrize("start, stop", [(0x40, 0x200),  # the program headers: what dlopen maps
                                         (0x1000, 0x1400)])  # the code, at its first page
def test_a_library_with_flipped_bytes_is_rebuilt_not_loaded(cache, start, stop):
    path = times(2)
    damaged = bytearray(path.read_bytes())
    for i in range(start, min(stop, len(damaged))):
        damaged[i] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert in_child(cache, 2) == 3.0


def test_another_kernels_library_under_the_name_is_not_loaded(cache):
    mine, other = times(2), times(5)
    for suffix in ("", ".sha256"):  # its checksum file too: that one names the other key
        shutil.copy(f"{other}{suffix}", f"{mine}{suffix}")
    assert call_times(times(2), 1.5) == 3.0


def test_an_entry_without_its_checksum_file_is_rebuilt(cache):
    calls = []
    from eagle.native import cached

    def build(out: Path) -> None:
        calls.append(out)
        out.write_text("made")

    path = cached("trust_note.txt", ["note"], build)
    Path(f"{path}.sha256").unlink()
    assert cached("trust_note.txt", ["note"], build) == path and len(calls) == 2
    assert cached("trust_note.txt", ["note"], build) == path and len(calls) == 2


def compiles_privately(folder: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = [times(2, "trust_private"), times(3, "trust_private")]
    assert [call_times(p, 1.0) for p in paths] == [2.0, 3.0]
    assert all(folder not in p.parents for p in paths)
    assert [w.category for w in caught] == [CacheWarning], "one warning per process and folder"
    message = str(caught[0].message)
    assert message.startswith("eagle.native:") and "EAGLE_CACHE_DIR" in message and str(folder) in message


def test_a_cache_path_that_is_a_file_gives_a_private_cache_and_one_warning(monkeypatch, tmp_path):
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("")
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(not_a_folder))
    compiles_privately(not_a_folder)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into a 0o500 folder")
def test_an_unwritable_cache_folder_gives_a_private_cache_and_one_warning(cache):
    cache.mkdir()
    cache.chmod(0o500)
    try:
        compiles_privately(cache)
    finally:
        cache.chmod(0o700)


def test_a_compiler_that_writes_nothing_is_named(cache, monkeypatch):
    monkeypatch.setenv("CC", "true")
    with pytest.raises(CompileError, match=r"^eagle\.native\.compile_library: trust_times gave no library "
                                           r"with CC='true'; if CC is not a working C compiler, install one "
                                           r"\(Debian(.|\n)*\ncommand: true -std=c11"):
        times(2)


def test_a_compiler_that_fails_is_named(cache, monkeypatch):
    monkeypatch.setenv("CC", "false")  # fails even to tell its version
    with pytest.raises(CompileError, match=r"^eagle\.native\.compile_library: the C compiler CC='false' "
                                           r"does not run .*install one \(Debian"):
        times(2)


def test_a_source_that_does_not_compile_gives_the_command_and_the_compilers_output(cache):
    with pytest.raises(CompileError, match=r"^eagle\.native\.compile_library: trust_broken did not compile "
                                           r"\(exit status 1\) with CC=(.|\n)*\ncommand: (.|\n)*error"):
        compile_library("this is not C", name="trust_broken")


def test_a_missing_compiler_is_named(cache, monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "nonexistent"))
    with pytest.raises(CompileError, match=r"^eagle\.native\.compile_library: the C compiler "
                                           r"CC='.*nonexistent' does not run .*install one \(Debian"):
        times(2)


def test_a_warm_cache_serves_a_machine_without_a_compiler(cache, monkeypatch, tmp_path):
    warm = times(2)
    monkeypatch.setenv("CC", str(tmp_path / "nonexistent"))
    assert times(2) == warm and call_times(warm, 1.5) == 3.0
    with pytest.raises(CompileError, match="does not run"):  # another source needs the compiler
        times(7)
    with pytest.raises(CompileError, match="does not run"):  # and so do other flags
        compile_library(TIMES.format(factor=2), name="trust_times", extra_flags=("-O1",))
    damaged = warm.read_bytes()[:100]
    warm.unlink()  # a new file: this process has the old one mapped
    warm.write_bytes(damaged)
    with pytest.raises(CompileError, match="does not run"):  # a damaged entry is not served
        times(2)


def test_eagle_sanitize_adds_the_sanitizer_flags(cache, monkeypatch):
    monkeypatch.setenv("CC", "true")
    monkeypatch.setenv("EAGLE_SANITIZE", "1")
    with pytest.raises(CompileError, match=r"command: true .*-fsanitize=address,undefined"):
        times(2)
    monkeypatch.setenv("EAGLE_SANITIZE", "0")
    with pytest.raises(CompileError) as plain:
        times(2)
    assert "-fsanitize" not in str(plain.value)


def test_the_key_covers_the_header_kernels_include(cache, monkeypatch, tmp_path):
    import eagle.native

    before = times(2)
    header = tmp_path / "include" / "eagle" / "eagle.h"
    header.parent.mkdir(parents=True)
    header.write_text((eagle.native.include_dir() / "eagle" / "eagle.h").read_text() + "/* changed */\n")
    monkeypatch.setattr(eagle.native, "include_dir", lambda: tmp_path / "include")
    assert times(2) != before
