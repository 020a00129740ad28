"""eagle.native.compile_libraries: sources not cached compile together, each stays findable alone.

A build compiles its new fused runs as one translation unit (one compiler
process); a later build that needs one of them takes it from the cache, and an
entry that does not verify is compiled again (issue 17's rules, as for
compile_library).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import eagle.native
from eagle.native import CompileError, Library, compile_libraries, compile_library

PRELUDE = "#include <stdint.h>\n"
SOURCE = PRELUDE + "double times_{factor}(double x) {{ return {factor} * x; }}\n"


def source(factor: int) -> str:
    return SOURCE.format(factor=factor)


def join(sources: Sequence[str]) -> str:
    return PRELUDE + "".join(s[len(PRELUDE):] for s in sources)


def call(path: Path, factor: int, x: float) -> float:
    return ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(Library(path).address(f"times_{factor}"))(x)


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(tmp_path / "joint-cache"))
    return tmp_path / "joint-cache"


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """The sources the compiler is run on, one per compiler process."""
    runs: list[str] = []
    compile_one = eagle.native._compile

    def counted(source: str, *args: object) -> None:
        runs.append(source)
        compile_one(source, *args)

    monkeypatch.setattr(eagle.native, "_compile", counted)
    return runs


def test_sources_not_cached_compile_in_one_process_and_each_is_found_later(cache, compiles):
    paths = compile_libraries([source(2), source(3), source(5)], "joint_times", join)
    assert len(set(paths)) == 1 and len(compiles) == 1
    assert [call(p, f, 1.5) for p, f in zip(paths, (2, 3, 5), strict=True)] == [3.0, 4.5, 7.5]
    again = compile_libraries([source(3), source(7), source(2), source(11)], "joint_times", join)
    assert again[0] == again[2] == paths[0] and len(compiles) == 2  # 7 and 11 only, together
    assert compiles[-1] == join([source(7), source(11)])
    assert call(again[1], 7, 1.0) == 7.0 and call(again[3], 11, 1.0) == 11.0


def test_one_source_alone_is_compile_librarys_entry(cache, compiles):
    alone = compile_library(source(2), name="joint_times")
    assert compile_libraries([source(2), source(3)], "joint_times", join)[0] == alone
    three = compile_library(source(3), name="joint_times")
    assert compile_libraries([source(3)], "joint_times", join) == [three]
    assert len(compiles) == 2


def test_a_damaged_joint_library_is_compiled_again(cache, compiles):
    path = compile_libraries([source(2), source(3)], "joint_times", join)[0]
    damaged = path.read_bytes()[: path.stat().st_size // 2]
    path.unlink()  # a new file: this process has the old one mapped
    path.write_bytes(damaged)
    here = str(Path(__file__).parent)
    code = (f"import sys; sys.path.insert(0, {here!r}); from test_joint_libraries import *; "
            "p = compile_libraries([source(3)], 'joint_times', join); print(call(p[0], 3, 2.0))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "EAGLE_CACHE_DIR": str(cache)})
    assert proc.returncode == 0 and float(proc.stdout) == 6.0, proc.stderr[-2000:]


def test_sources_that_do_not_join_compile_each_alone(cache, compiles):
    paths = compile_libraries([source(2), source(3)], "joint_times", lambda sources: None)
    assert len(set(paths)) == 2 and len(compiles) == 2


def test_a_joint_unit_that_does_not_compile_falls_back_to_each_alone(cache, compiles):
    paths = compile_libraries([source(2), source(3)], "joint_times", lambda sources: "not C")
    assert [call(p, f, 1.0) for p, f in zip(paths, (2, 3), strict=True)] == [2.0, 3.0]
    with pytest.raises(CompileError, match="joint_broken did not compile"):  # the broken one says why
        compile_libraries([source(5), PRELUDE + "not C either\n"], "joint_broken", join)


def test_a_warm_joint_cache_serves_a_machine_without_a_compiler(cache, monkeypatch, tmp_path):
    warm = compile_libraries([source(2), source(3)], "joint_times", join)
    monkeypatch.setenv("CC", str(tmp_path / "nonexistent"))
    assert compile_libraries([source(3), source(2)], "joint_times", join) == warm[::-1]
    with pytest.raises(CompileError, match="does not run"):  # a new source needs the compiler
        compile_libraries([source(2), source(13)], "joint_times", join)
