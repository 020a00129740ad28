"""Which NVRTC eagle loads: the wheels of CUDA 12 and 13 (and a toolkit's), the driver's major
first, and messages that say which one compiled, or which were tried.

The libraries here are stand-ins built for the test (each answers ``nvrtcVersion`` with its
major), laid out as the wheels lay them out, so no NVRTC need be installed; the driver is the
emulation's, whose version ``FAKECUDA_DRIVER_VERSION`` sets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eagle import _nvrtc
from eagle.native import compile_library

# Taken at collection, before the gpu fixture swaps in the emulation's host compiler.
compile_ptx = _nvrtc.compile_ptx

STAND_IN = """
#include "eagle/eagle.h"
int nvrtcVersion(int *major, int *minor) { *major = %d; *minor = %d; return 0; }
const char *nvrtcGetErrorString(int status) { (void)status; return "NVRTC_ERROR_STAND_IN"; }
"""


def test_the_driver_s_major_first_then_older_then_newer():
    found = [(12, "wheel12"), (13, "wheel13"), (13, "libnvrtc.so.13"), (12, "libnvrtc.so.12")]
    assert _nvrtc.preferred(found, 13) == [(13, "wheel13"), (13, "libnvrtc.so.13"), (12, "wheel12"),
                                           (12, "libnvrtc.so.12")]
    assert _nvrtc.preferred(found, 12) == [(12, "wheel12"), (12, "libnvrtc.so.12"), (13, "wheel13"),
                                           (13, "libnvrtc.so.13")]
    assert _nvrtc.preferred(found, 14)[0] == (13, "wheel13")  # a newer driver reads older PTX
    assert _nvrtc.preferred(found, None)[0] == (13, "wheel13")  # no driver: the newest


def test_the_wheels_and_a_toolkit_are_found_on_their_paths(tmp_path, monkeypatch):
    site, toolkit = tmp_path / "site", tmp_path / "cuda"
    for path in (site / "nvidia/cu13/lib/libnvrtc.so.13", site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
                 toolkit / "lib64/libnvrtc.so.12"):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setenv("CUDA_HOME", str(toolkit))
    assert _nvrtc.candidates()[:3] == [(13, str(site / "nvidia/cu13/lib/libnvrtc.so.13")),
                                       (12, str(site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12")),
                                       (12, str(toolkit / "lib64/libnvrtc.so.12"))]
    assert _nvrtc.candidates()[-2:] == [(13, "libnvrtc.so.13"), (12, "libnvrtc.so.12")]



def test_the_working_directory_is_no_place_to_find_nvrtc_in(tmp_path, monkeypatch):
    """sys.path's "" is the working directory: a library lying there is not loaded."""
    (tmp_path / "nvidia/cu13/lib").mkdir(parents=True)
    (tmp_path / "nvidia/cu13/lib/libnvrtc.so.13").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", "."])
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    assert not any("nvidia/cu13" in path for _, path in _nvrtc.candidates())

@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders laid out as site-packages with the CUDA 12 wheel, the 13 one, or both."""
    root = tmp_path_factory.mktemp("nvrtc_wheels")
    libraries = {13: compile_library(STAND_IN % (13, 2), name="nvrtc_stand_in_13"),
                 12: compile_library(STAND_IN % (12, 9), name="nvrtc_stand_in_12")}
    folders = {}
    for name, majors in (("12", (12,)), ("13", (13,)), ("both", (12, 13))):
        for major in majors:
            target = root / name / _nvrtc.WHEELS[major]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(Path(libraries[major]).read_bytes())
        folders[name] = root / name
    return folders


def loaded_in(site: Path, driver: int | None, fake: Any) -> str:
    """What a fresh process whose ``sys.path`` is ``site`` when it looks for NVRTC, with a driver
    of ``driver`` (None: none), says it loads, or its NvrtcError."""
    if fake is None:
        pytest.skip("the emulation sets the driver's version; this machine has a real driver")
    env = {key: value for key, value in os.environ.items() if key not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(EAGLE_LIBCUDA=str(fake.path) if driver else str(site / "no-driver.so"),
               FAKECUDA_DRIVER_VERSION=str(driver or 0))
    # a toolkit's NVRTC on this machine's loader path would be found beside the stand-ins
    code = ("import ctypes, sys\n"
            "for name in ('libnvrtc.so.13', 'libnvrtc.so.12'):\n"
            "    try:\n        ctypes.CDLL(name)\n    except OSError:\n        continue\n"
            "    sys.exit(print('a system NVRTC'))\n"
            "from eagle import _nvrtc\n"
            f"sys.path[:] = [{str(site)!r}]\n"
            f"if any('/' in p and not p.startswith({str(site)!r}) for _, p in _nvrtc.candidates()):\n"
            "    sys.exit(print('a system NVRTC'))\n"
            "try:\n    print(_nvrtc.loaded() or _nvrtc.version())\n"
            "except _nvrtc.NvrtcError as error:\n    print(error)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if done.stdout.strip() == "a system NVRTC":
        pytest.skip("a toolkit's NVRTC is on this machine's loader path")
    return done.stdout.strip()


@pytest.mark.parametrize(("site", "driver", "major"), [
    ("both", 13000, 13), ("both", 12080, 12), ("both", None, 13), ("13", 12080, 13), ("12", 13000, 12)])
def test_a_process_loads_the_nvrtc_of_its_driver(cuda_driver, wheels, site, driver, major):
    said = loaded_in(wheels[site], driver, cuda_driver)
    wheel = wheels[site] / _nvrtc.WHEELS[major]
    assert said == f"NVRTC {major}.{9 if major == 12 else 2} ({wheel})"


@pytest.mark.parametrize(("driver", "extra"), [
    (13000, '"eagle-graph[cuda13]" (this machine\'s driver is CUDA 13)'),
    (12080, '"eagle-graph[cuda12]" (this machine\'s driver is CUDA 12)'),
    (None, '"eagle-graph[cuda12]" or "eagle-graph[cuda13]"')])
def test_without_nvrtc_the_message_names_the_extra_of_the_driver(cuda_driver, tmp_path, driver, extra):
    said = loaded_in(tmp_path, driver, cuda_driver)
    assert said.startswith("eagle: NVRTC is not installed (tried libnvrtc.so.13, libnvrtc.so.12); install "
                           f"the GPU extra: pip install {extra}"), said


@pytest.mark.skipif(not _nvrtc.available(), reason="NVRTC is not installed")
def test_a_compile_error_names_the_nvrtc_that_gave_it():
    with pytest.raises(_nvrtc.NvrtcError) as err:
        compile_ptx('extern "C" __global__ void k(double *x) { x[0] = y; }', "loader_broken")
    assert str(err.value).startswith(f"eagle: {_nvrtc.loaded()}: compiling loader_broken failed "
                                     "(NVRTC_ERROR_COMPILATION):")
    assert 'identifier "y" is undefined' in str(err.value)
