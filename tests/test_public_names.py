"""``eagle.__all__`` is eagle's public surface: every public name the module holds, what a star
import gives, and what the API page (docs/api/eagle.rst) documents."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import eagle
import eagle.graph

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api" / "eagle.rst"
#: The subpackages other distributions add, found lazily and kept out of __all__ (a star import
#: must not fail where one is not installed).
OPTIONAL = {"builder", "diff", "viz"}


def public_names(module: object) -> set[str]:
    """What a reader of ``dir(module)`` takes for public: no leading underscore, not a submodule."""
    return {name for name in dir(module)
            if not name.startswith("_") and not inspect.ismodule(getattr(module, name))}


def automodule_options(text: str, module: str) -> dict[str, str]:
    """The options of the page's ``.. automodule:: module`` directive."""
    match = re.search(rf"^\.\. automodule:: {re.escape(module)}\n((?:   :.*\n)*)", text, re.M)
    assert match, f"{API_PAGE.name} has no automodule directive for {module}"
    options = re.findall(r"^   :([\w-]+):(.*)$", match.group(1), re.M)
    return {name: value.strip() for name, value in options}


def test_all_is_every_public_name():
    assert len(set(eagle.__all__)) == len(eagle.__all__), "eagle.__all__ names a name twice"
    assert sorted(eagle.__all__) == sorted(public_names(eagle))


def test_star_import_gives_all():
    namespace: dict[str, object] = {}
    exec("from eagle import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(eagle.__all__)


def test_the_api_page_documents_all():
    text = API_PAGE.read_text()
    options = automodule_options(text, "eagle")
    # automodule's :members: is __all__ unless told to ignore it: the page documents exactly __all__
    assert "members" in options and "imported-members" in options
    assert "ignore-module-all" not in options
    excluded = {name.strip() for name in options.get("exclude-members", "").split(",") if name.strip()}
    assert excluded == OPTIONAL
    # the names the page says eagle.graph re-exports are documented by the automodule above it
    sentence = re.search(r"``eagle\.graph`` also re-exports(.*?)documented above", text, re.S)
    assert sentence
    reexported = set(re.findall(r"``(\w+)``", sentence.group(1)))
    assert reexported and reexported <= set(eagle.__all__)
    assert all(hasattr(eagle.graph, name) for name in reexported)


def test_a_bare_import_reaches_eagles_own_modules():
    """The seeds write ``eagle.graph.opaque`` after ``import eagle`` alone (a fresh process, where
    nothing else has imported eagle.graph)."""
    import subprocess
    import sys

    code = ("import eagle; "
            "print(eagle.graph.opaque.__name__, eagle.plan.BoundPlan.__name__, eagle.interop.__name__,"
            " sorted(eagle.frameworks.PLUGINS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["opaque", "BoundPlan", "eagle.interop", "['jax',", "'torch']"]
