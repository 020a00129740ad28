"""The split packages share the eagle namespace the way DESIGN.md section 2 says."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
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
GPU_PARTS = {"eagle-graph": ("cupy", "nvrtc"), "raptor-hawk": ("nvrtc",), "eagle-diff": ("nvrtc",),
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
    script = ROOT / "tests" / "gpu" / "extra.py"
    for extra, parts in CUDA.items():
        listed = subprocess.run([sys.executable, str(script), extra, "--all"], capture_output=True, text=True,
                                check=True).stdout.split()
        assert sorted(names(listed)) == sorted(parts.values())
    refused = subprocess.run([sys.executable, str(script), "cuda11"], capture_output=True, text=True)
    assert refused.returncode and "eagle-graph has no [cuda11] extra; it has cuda12, cuda13" in refused.stderr


# ------------------------------------------------------------------ what an index takes

#: The one address the metadata names (the project URLs of every distribution start with it).
REPOSITORY = "https://github.com/eagle-sim/eagle"
#: The distributions a user installs, as the seeds spell them.
USER_FACING = {"raptor-eagle", "raptor-hawk"}
#: Test and development tools, and the plugins' heavy dependencies: none is a requirement of
#: what `pip install .` or `pip install raptor-eagle` installs.
DEV_OR_HEAVY = {"pytest", "pytest-timeout", "hypothesis", "mpmath", "nox", "ruff", "dask", "distributed",
                "mpi4py", "mpich", "torch", "jax", "jaxlib", "eagle-workspace"}


def pyprojects() -> dict[str, dict[str, Any]]:
    """Every distribution's whole pyproject table, by folder (``packages/hawk``)."""
    tomllib = pytest.importorskip("tomllib")
    found = sorted([*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("plugins/*/pyproject.toml")])
    return {str(p.parent.relative_to(ROOT)): tomllib.loads(p.read_text()) for p in found}


def test_the_seeds_install_names_are_distributions():
    assert USER_FACING <= set(projects())


@pytest.mark.parametrize("folder", sorted(p.parent.name for p in ROOT.glob("*/*/pyproject.toml")
                                          if p.parent.parent.name in ("packages", "plugins")))
def test_metadata_an_index_shows(folder):
    [(where, table)] = [(w, t) for w, t in pyprojects().items() if w.endswith(f"/{folder}")]
    project = table["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE"]
    assert project["authors"] == [{"name": "the eagle developers"}]
    assert "Development Status :: 3 - Alpha" in project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")], "the SPDX field says it"
    urls = project["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert urls["Homepage"] == REPOSITORY and urls["Source"] == f"{REPOSITORY}/tree/main/{where}"
    assert (ROOT / where / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()


def test_the_license_is_bsd_3_clause_of_the_eagle_developers():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License\n\nCopyright (c) 2026, the eagle developers\n")
    assert "Neither the name of the copyright holder" in text


READMES = [*ROOT.glob("packages/*/README.md"), *ROOT.glob("plugins/*/README.md")]


@pytest.mark.parametrize("where", sorted(str(p.parent.relative_to(ROOT)) for p in READMES))
def test_every_readme_says_what_it_is_how_to_install_it_and_shows_it(where):
    """An index shows the readme: what it is, an install line naming a distribution that installs, an
    example, and where the documentation is."""
    text = (ROOT / where / "README.md").read_text()
    name = pyprojects()[where]["project"]["name"]
    assert text.startswith(f"# {name}\n"), f"{where}/README.md is titled by its distribution's name"
    assert "pip install" in text and "```python" in text, where
    assert "https://eagle-sim.github.io/eagle/" in text, where


def test_each_version_is_written_once():
    """Each distribution's version is read from its package's ``__version__`` (hatch's version
    source), so no pyproject repeats it; raptor-eagle, which ships no module, writes its own."""
    for where, table in pyprojects().items():
        project = table["project"]
        if project["name"] == "raptor-eagle":
            assert "version" in project and "version" not in table.get("tool", {}).get("hatch", {})
            continue
        assert project.get("dynamic") == ["version"] and "version" not in project, where
        source = ROOT / where / table["tool"]["hatch"]["version"]["path"]
        assert re.search(r'^__version__ = "[0-9][^"]*"$', source.read_text(), re.M), source


@pytest.mark.parametrize(("dist", "module"), [("eagle-graph", "eagle"), ("raptor-hawk", "hawk")])
def test_the_installed_version_is_the_packages(dist, module):
    try:
        installed = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed")
    assert pytest.importorskip(module).__version__ == installed


def test_raptor_eagle_is_the_library_and_its_extras():
    project = projects()["raptor-eagle"]
    library = ["eagle-builder", "eagle-diff", "eagle-graph", "eagle-viz"]
    assert sorted(names(project["dependencies"])) == library
    extras = project["optional-dependencies"]
    assert sorted(extras) == ["cuda12", "cuda13", "dask", "jax", "mpi", "plot", "torch"]
    ours = projects()
    for extra, requirements in extras.items():
        for requirement in requirements:
            name, wanted = _name_and_extras(requirement)
            assert name in ours, (extra, requirement)
            assert wanted <= set(ours[name].get("optional-dependencies", {})), (extra, requirement)


def test_pip_install_dot_installs_the_library_and_no_tool():
    """The root pyproject (not published) installs raptor-eagle and raptor-hawk from this clone's
    folders, every split package they need by its local path, and nothing else."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    ours = {table["project"]["name"]: where for where, table in pyprojects().items()}
    wanted = {"raptor-eagle", "raptor-hawk", "eagle-graph", "eagle-builder", "eagle-diff", "eagle-viz"}
    got = {}
    for requirement in project["dependencies"]:
        name, _, url = requirement.partition(" @ ")
        got[name] = url
    assert set(got) == wanted
    for name, url in got.items():
        # "/.": a folder named like name-version ("eagle-graph") would have pip cache a stale wheel
        assert url == "{root:uri}/" + ours[name] + "/.", (name, url)
    for name in wanted & set(projects()):
        assert not set(names(projects()[name].get("dependencies", []))) & DEV_OR_HEAVY, name
    assert not set(project.get("optional-dependencies", {})), "extras of the root are raptor-eagle's"


def test_test_tools_come_from_nox():
    """No distribution offers the test tools as an extra: nox installs them (noxfile.TEST_TOOLS)."""
    tools = {"pytest", "pytest-timeout", "hypothesis", "mpmath"}
    for name, project in projects().items():
        for extra, requirements in project.get("optional-dependencies", {}).items():
            assert not set(names(requirements)) & tools, f"{name}[{extra}]"


def _name_and_extras(requirement: str) -> tuple[str, set[str]]:
    m = re.match(r"([A-Za-z0-9._-]+)(?:\[([^\]]*)\])?", requirement)
    return m.group(1).lower(), {e.strip() for e in (m.group(2) or "").split(",") if e.strip()}


# ------------------------------------------------------------------ install lines that install

#: What install lines may name besides this repository's distributions.
THIRD_PARTY = {"nox", "mpich", "warp-lang"}
#: Prose that may follow an install line on the same line.
PROSE = {"to", "or", "and", "for", "with", "then", "in", "at", "alone", "is", "if", "the", "it"}
#: Where messages and install lines are written.
SOURCES = ["README.md", "packages", "plugins", "docs", "examples", "benchmarks", "tests"]


def install_lines() -> list[tuple[str, str]]:
    """Every ``pip install`` a message, docstring or page gives: (file, requirement) per name."""
    found = []
    texts = (".py", ".rst", ".md", ".txt", ".sh")
    files = [ROOT / "README.md"] + [p for top in SOURCES[1:] for p in (ROOT / top).rglob("*")
                                    if p.suffix in texts and "_build" not in p.parts]
    for path in files:
        if path == Path(__file__).resolve():
            continue
        for line in path.read_text(errors="replace").splitlines():
            for rest in line.split("pip install")[1:]:
                for token in _requirements(rest):
                    found.append((str(path.relative_to(ROOT)), token))
    return found


def _requirements(rest: str) -> list[str]:
    """The requirement tokens after one ``pip install``, up to the prose that follows them."""
    tokens = []
    for raw in rest.split():
        token = raw.strip("`'\"\\,.;:)")
        if raw.startswith(("#", "(", "&&", "|")) or "{" in raw or token in PROSE or not token:
            break
        if token.startswith("-") or token == "." or "/" in token:
            continue  # a flag, or a path in a clone
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,-]+\])?", token):
            break
        tokens.append(token)
        if raw.rstrip(",.;:").endswith(("`", ")")):
            break  # the end of the command in a sentence
    return tokens


def test_the_install_lines_are_found():
    """The scan sees the messages it checks (a scan that finds nothing would pass anything)."""
    found = {token for _, token in install_lines()}
    assert {"raptor-eagle", "raptor-hawk", "eagle-builder", "eagle-diff", "raptor-eagle[plot]"} <= found


def test_every_install_line_names_a_distribution_that_installs():
    """Each name a message or page tells a user to install is one of this repository's
    distributions (with an extra it has) or a named third-party tool: never ``hawk``, which on
    the public index is another project, nor ``eagle``."""
    ours = projects()
    wrong = []
    for where, token in install_lines():
        name, extras = _name_and_extras(token)
        if name in THIRD_PARTY:
            continue
        if name not in ours or not extras <= set(ours[name].get("optional-dependencies", {})):
            wrong.append(f"{where}: pip install {token}")
    assert not wrong, "\n".join(wrong)


def test_the_hints_of_modules_other_distributions_ship_name_them():
    """``eagle.diff``, ``eagle.frameworks.torch`` and the rest name their distribution when missing
    (a message made from these tables, which the scan above cannot read)."""
    import eagle.frameworks

    for dist in [*eagle._OPTIONAL.values(), *eagle.frameworks.PLUGINS.values()]:
        assert dist in projects(), dist


# ------------------------------------------------------------------ plugins found, not imported

LISTING = """
import sys, numpy as np, eagle
found = eagle.plugins()
if any(p.name == "eagle-scan" for p in found):  # a plugin's node used: still no other's library
    x, y = np.arange(4.0), np.zeros(4)
    eagle.Graph().add_node(eagle.node("scan", x, out=y, op="sum"), name="s").build().launch()
    assert y[-1] == 6.0, y
print(sorted(m for m in ("mpi4py", "dask", "distributed", "torch", "jax") if m in sys.modules))
"""


def test_listing_plugins_imports_no_heavy_library():
    """Plugins are found through their entry points without importing mpi4py, dask, torch or JAX:
    those load when a node of their plugin is used."""
    out = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
