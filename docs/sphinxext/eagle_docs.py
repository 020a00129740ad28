"""Helpers for eagle's docs build (imported by conf.py and sphinx-gallery by name)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any


def eagle_figures(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery scraper for the matplotlib Figures ``g.plot()`` returns.

    eagle-viz makes its figures without pyplot, so matplotlib's own scraper
    never sees them: this one saves each new Figure the example holds in a
    global variable.
    """
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import figure_rst

    seen = block_vars.setdefault("eagle_seen_figures", set())
    paths = []
    for value in list(block_vars["example_globals"].values()):
        if isinstance(value, Figure) and id(value) not in seen:
            seen.add(id(value))
            path = PurePosixPath(next(block_vars["image_path_iterator"]))
            value.savefig(path, dpi=110)
            paths.append(path)
    return figure_rst(paths, gallery_conf["src_dir"])
