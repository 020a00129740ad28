"""The split packages share the eagle namespace the way DESIGN.md section 2 says."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

import eagle

OPTIONAL = {"builder": "eagle-builder", "diff": "eagle-diff", "viz": "eagle-viz"}


def test_eagle_comes_from_eagle_graph():
    """eagle/__init__.py is eagle-graph's, and it extends its path first."""
    assert eagle.__version__ == importlib.metadata.version("eagle-graph")
    assert eagle.__file__.replace("\\", "/").endswith("eagle/__init__.py")


@pytest.mark.parametrize(("sub", "dist"), OPTIONAL.items())
def test_optional_subpackages(sub, dist):
    """eagle.<sub> imports when its distribution is installed, else names the package to install."""
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        assert importlib.util.find_spec(f"eagle.{sub}") is None
        with pytest.raises(ImportError, match=f"pip install {dist}"):
            getattr(eagle, sub)
    else:
        assert getattr(eagle, sub).__name__ == f"eagle.{sub}"


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        eagle.nope  # noqa: B018


# ------------------------------------------------------------------ the install extras

ROOT = Path(__file__).resolve().parent.parent
#: The distributions with a GPU part, and what their extras must bring of each CUDA major: CuPy
#: where eagle's device arrays come from (eagle-graph), NVRTC for every package that compiles
#: CUDA C (eagle's kernels, hawk's, eagle-diff's loop tapes, and a torch graph's eagle kernels).
GPU_PARTS = {"eagle-graph": ("cupy", "nvrtc"), "hawk": ("nvrtc",), "eagle-diff": ("nvrtc",),
             "eagle-torch": ("nvrtc",)}
#: Each CUDA major's distribution of each part.
CUDA = {"cuda12": {"cupy": "cupy-cuda12x", "nvrtc": "nvidia-cuda-nvrtc-cu12"},
        "cuda13": {"cupy": "cupy-cuda13x", "nvrtc": "nvidia-cuda-nvrtc"}}
#: What no install without an extra may pull in: a CUDA library, CuPy, torch.
HEAVY = re.compile(r"^(cupy|nvidia-|cuda-|torch)", re.I)


def projects() -> dict[str, dict[str, Any]]:
    """Every distribution of this repository by name: its pyproject's ``[project]`` table."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
    found = {}
    for path in sorted([*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("plugins/*/pyproject.toml")]):
        project = tomllib.loads(path.read_text())["project"]
        found[project["name"]] = project
    return found


def names(requirements: list[str]) -> list[str]:
    """The distribution names of requirement strings (``"cupy-cuda12x>=13"`` -> ``"cupy-cuda12x"``)."""
    return [re.match(r"[A-Za-z0-9._-]+", r).group(0).lower() for r in requirements]


def test_no_install_without_an_extra_pulls_cuda_or_torch():
    for name, project in projects().items():
        heavy = [r for r in names(project.get("dependencies", [])) if HEAVY.match(r)]
        assert not heavy, f"{name} depends on {heavy}: a CPU install must not pull them in"


@pytest.mark.parametrize("extra", sorted(CUDA))
def test_every_gpu_part_has_an_extra_of_each_cuda_major(extra):
    """The seeds install ``[cuda12]`` or ``[cuda13]``: each brings its major's CuPy and NVRTC, and
    nothing of the other major."""
    everything = projects()
    other = next(e for e in CUDA if e != extra)
    for name, parts in GPU_PARTS.items():
        optional = everything[name].get("optional-dependencies", {})
        assert extra in optional, f"{name} has no [{extra}] extra"
        got = names(optional[extra])
        assert sorted(got) == sorted(CUDA[extra][part] for part in parts), (name, extra, got)
        assert not set(got) & set(CUDA[other].values()), (name, extra, got)


def test_the_old_extra_names_are_gone():
    for name, project in projects().items():
        stale = {"gpu", "cuda"} & set(project.get("optional-dependencies", {}))
        assert not stale, f"{name} offers [{', '.join(sorted(stale))}]: the extras are [cuda12] and [cuda13]"


def test_one_nvrtc_requirement_per_cuda_major():
    """Every package asks for the same NVRTC of a major: one environment satisfies them all."""
    for extra, parts in CUDA.items():
        specs = {r for name in GPU_PARTS for r in projects()[name]["optional-dependencies"][extra]
                 if names([r])[0] == parts["nvrtc"]}
        assert len(specs) == 1, (extra, specs)


def test_the_gpu_suite_installs_its_drivers_extra():
    """tests/gpu/run.sh asks tests/gpu/extra.py which requirements of eagle-graph[cudaNN] to install."""
    import subprocess
    import sys

    script = ROOT / "tests" / "gpu" / "extra.py"
    for extra, parts in CUDA.items():
        listed = subprocess.run([sys.executable, str(script), extra, "--all"], capture_output=True, text=True,
                                check=True).stdout.split()
        assert sorted(names(listed)) == sorted(parts.values())
    refused = subprocess.run([sys.executable, str(script), "cuda11"], capture_output=True, text=True)
    assert refused.returncode and "eagle-graph has no [cuda11] extra; it has cuda12, cuda13" in refused.stderr
