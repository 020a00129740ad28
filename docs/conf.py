"""Sphinx configuration for eagle's documentation.

Build: ``python -m nox -s docs`` (warnings are errors), or
``sphinx-build -W -b html docs docs/_build/html`` in an environment with
every package and ``docs/requirements.txt`` installed.

The pages under ``scripts/`` are Python files that sphinx-gallery runs at
build time, on the CPU; what they print and draw is what the pages show, and
an example that raises fails the build.  They are files because hawk and the
builder read the source of what they decorate.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "sphinxext"))

project = "eagle"
author = "the eagle developers"
copyright = "the eagle developers"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "eagle_doxygen",  # the C++ API page: Doxygen XML of the headers, through Breathe
]
exclude_patterns = ["_build", "pages/index.rst", "pages/sg_execution_times.rst"]

html_theme = "pydata_sphinx_theme"
html_title = "eagle"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars: dict[str, list[str]] = {"**": ["sidebar-nav-bs"], "index": []}
html_static_path = ["_static"]
html_css_files = ["eagle.css"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}

# eagle.diff.reverse arrives with the eagle-diff package; until it is installed the gradients page
# is rendered without running, under a note that says so.
HAS_DIFF = False
if importlib.util.find_spec("eagle.diff") is not None:
    import eagle.diff

    HAS_DIFF = hasattr(eagle.diff, "reverse")
if not HAS_DIFF:
    tags.add("no_eagle_diff")  # type: ignore[name-defined] # noqa: F821 - Sphinx provides `tags`


sphinx_gallery_conf = {
    "examples_dirs": "scripts",
    "gallery_dirs": "pages",
    # Every script runs; the gradients page only where eagle.diff.reverse exists.
    "filename_pattern": r"\.py$" if HAS_DIFF else r"/(?!gradients)[^/]*\.py$",
    "image_scrapers": ("eagle_docs.eagle_figures",),
    "download_all_examples": False,
    "write_computation_times": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 10**9,  # the pages are docs, not benchmarks: no run times under them
    "show_signature": False,
    "capture_repr": ("__repr__",),
    "ignore_repr_types": r"(matplotlib|NoneType)",
}
