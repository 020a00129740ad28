"""Fixtures every package's tests share."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle import _core

HARNESS = Path(__file__).resolve().parent / "tests" / "fakecuda" / "harness.py"


def pytest_configure(config: pytest.Config) -> None:
    """On a machine without a CUDA driver, point libeagle at the CPU emulation of one
    (tests/fakecuda) before any test opens the driver: libeagle opens it once per process."""
    spec = importlib.util.spec_from_file_location("fakecuda_harness", HARNESS)
    harness = importlib.util.module_from_spec(spec)
    sys.modules["fakecuda_harness"] = harness
    spec.loader.exec_module(harness)
    if not harness.real_driver_present() and harness.compilers_available():
        harness.activate()


@pytest.fixture(params=[1, 2, 4], ids=lambda n: f"threads{n}")
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under a team of 1, 2 and 4 threads."""
    before = _core.num_threads()
    _core.set_num_threads(request.param)
    yield request.param
    _core.set_num_threads(before)
