"""A host build compiles its new fused runs together: one translation unit, one compiler process.

The runs are appended under stand-in addresses while the graph is lowered and
patched once the batch is compiled; the bits are the unfused graph's, and a run
compiled by an earlier build is not compiled again.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.native
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm

N = 300


@hawk.kernel
def wave(x: Scalar, a: Param) -> Scalar:
    return hm.sin(x) * a


@hawk.kernel
def tilt(x: Scalar, a: Param) -> Scalar:
    return x * a + 1.0


@eagle.Graph.builder
def runs(x, count):
    g = eagle.Graph()
    y = x
    for r in range(count):  # unrolled: run r has r + 2 launches, a shape of its own
        for j in range(r + 2):
            y = wave(y, 1.0 + j) if j % 2 else tilt(y, 0.5 - r)
        z = np.empty_like(x)
        eagle.copy(y, into=z)  # a copy ends a run
        y = z
    g.result = y
    return g


@hawk.kernel
def bounded(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(abs(s) < lim))


@eagle.Graph.builder
def looped(x, flag):
    g = eagle.Graph()
    for _ in range(6):  # a device loop: its body's run joins the build's batch too
        if not flag:
            break
        x = tilt(wave(tilt(x, 0.25), 2.0), 0.5)
        bounded(x, 1e9, flag)
    g.result = x
    return g


@pytest.fixture
def compiles(monkeypatch, tmp_path) -> list[str]:
    """The sources of fused runs the compiler is run on, one per compiler process, in a fresh cache."""
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(hawk.runs, "_LIBRARIES", {})
    monkeypatch.setattr(hawk.runs, "_RUNS", type(hawk.runs._RUNS)())
    wave(np.zeros(N), 1.0), tilt(np.zeros(N), 1.0)  # the kernels' own libraries, and hawk's math
    seen: list[str] = []
    compile_one = eagle.native._compile

    def counted(source: str, name: str, *args: object) -> None:
        if name == "hawk_run":
            seen.append(source)
        compile_one(source, name, *args)

    monkeypatch.setattr(eagle.native, "_compile", counted)
    return seen


def unfused(monkeypatch, builder, *args):
    """The result bytes of the builder's graph built without fusion."""
    with monkeypatch.context() as m:
        m.setenv("EAGLE_FUSE", "0")
        return builder(*args).launch().result.tobytes()


def test_the_new_runs_of_a_build_compile_in_one_process_and_give_the_unfused_bits(compiles, monkeypatch):
    x = np.linspace(-2.0, 2.0, N)
    fused = runs(x, 5).launch()
    assert len(fused.fused) == 5 and len(compiles) == 1
    assert fused.result.tobytes() == unfused(monkeypatch, runs, x, 5)
    assert runs(x, 5).launch().result.tobytes() == fused.result.tobytes() and len(compiles) == 1
    hawk.runs._LIBRARIES.clear()  # a new process: runs 1 to 5 are in the cache, 6 and 7 are new
    assert runs(x, 7).launch().result.tobytes() == unfused(monkeypatch, runs, x, 7)
    assert len(compiles) == 2 and compiles[-1].count("_p0(int64_t begin") == 2


def test_a_body_s_runs_join_the_batch(compiles, monkeypatch):
    x = np.linspace(0.0, 1.0, N)
    fused = looped(x, np.ones(1, np.uint32)).launch()
    assert len(compiles) == 1
    assert fused.result.tobytes() == unfused(monkeypatch, looped, x, np.ones(1, np.uint32))
