"""Loading libeagle: the ABI check, a missing library, and the GIL released during a run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np

from eagle import _core
from eagle._program import Program

SLOW_KERNEL = r"""
#include "eagle/eagle.h"
void slow(int64_t b, int64_t e, const eagle_arg *a)
{
    volatile double acc = 0.0;
    for (int64_t i = b; i < e; ++i)
        for (int k = 0; k < 1000000; ++k) acc += 1e-9 * (double)k;
    ((double *)a[0].ptr)[0] = acc;
}
"""


def import_core_with(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import eagle._core"], capture_output=True, text=True,
                          env={**os.environ, **env})


def test_abi_version_matches():
    assert _core.lib.eagle_abi_version() == _core.ABI_VERSION == _core.lib.EAGLE_ABI_VERSION


def test_missing_library_is_an_import_error_that_says_how_to_rebuild(tmp_path):
    result = import_core_with({"EAGLE_LIBEAGLE": str(tmp_path / "libeagle.so")})
    assert result.returncode != 0
    assert "ImportError: eagle._core: libeagle is missing" in result.stderr
    assert "pip install -e packages/eagle-graph" in result.stderr


def test_mismatched_abi_is_an_import_error(tmp_path):
    """A library built for another EAGLE_ABI_VERSION is refused by number."""
    from eagle.native import compile_library

    other = compile_library("int eagle_abi_version(void) { return 999; }", name="wrong_abi")
    result = import_core_with({"EAGLE_LIBEAGLE": str(other)})
    assert "has ABI version 999, this eagle needs" in result.stderr


def test_a_run_releases_the_gil():
    """Another Python thread keeps running while a native run is in progress."""
    from eagle.native import Library, compile_library

    slow = Library(compile_library(SLOW_KERNEL, name="slow")).kernel("slow")
    out = np.zeros(1)
    p = Program().stage()
    for _ in range(30):
        p.kernel(slow, [out], 1, per_sample=False)
    p.finalize()
    start = time.perf_counter()
    p.run()
    single = time.perf_counter() - start
    ticks = 0
    done = threading.Event()
    worker = threading.Thread(target=lambda: (p.run(), done.set()))
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0)
    worker.join()
    assert single > 0.005  # the run is long enough to notice
    assert ticks > 10
