"""docs/interop.rst: every example on the page runs and prints what the page shows under it.

The page's Python blocks run in order, as one file (hawk reads the source of the kernels it
defines); a ``text`` block right after a Python block is what that block prints, and a block
with none prints nothing.  A section whose examples use torch or JAX is left out where that
library is not installed (the nox ``torch`` and ``jax`` sessions run those).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import runpy
from pathlib import Path

import pytest

pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

PAGE = Path(__file__).resolve().parents[1] / "docs" / "interop.rst"
#: A framework, and how code that uses it reads.
FRAMEWORKS = {"torch": r"\btorch\b", "jax": r"\b(jax|jnp)\b"}
MARK = "\x1e"  # printed between two blocks' outputs


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """``(section title, language, code)`` of every code block, in order."""
    found, section = [], ""
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if k + 1 < len(lines) and line and set(lines[k + 1]) == {"-"} and len(lines[k + 1]) == len(line):
            section = line
        match = re.fullmatch(r"\.\. code-block:: (\w+)", line)
        if match:
            k += 2  # the blank line after the directive
            body = []
            while k < len(lines) and (not lines[k] or lines[k].startswith("   ")):
                body.append(lines[k][3:])
                k += 1
            found.append((section, match.group(1), "\n".join(body).strip("\n")))
            continue
        k += 1
    return found


def _needs(code: str) -> set[str]:
    return {name for name, use in FRAMEWORKS.items() if re.search(use, code)}


def test_every_example_on_the_page_prints_what_the_page_shows(tmp_path, monkeypatch):
    blocks = _blocks(PAGE.read_text())
    needs: dict[str, set[str]] = {}
    for section, language, code in blocks:
        if language == "python":
            needs.setdefault(section, set()).update(_needs(code))
    missing = {name for name in FRAMEWORKS if importlib.util.find_spec(name) is None}
    runs, expected = [], []
    for k, (section, language, code) in enumerate(blocks):
        if language != "python" or needs[section] & missing:
            continue
        runs.append(code)
        after = blocks[k + 1] if k + 1 < len(blocks) else None
        expected.append(after[2] if after is not None and after[1] == "text" else "")
    assert len(runs) >= 2  # the set-up and the child section need no framework
    script = tmp_path / "interop_page.py"
    script.write_text(f"\nprint({MARK!r})\n".join(runs) + "\n")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(script), run_name="__main__")
    printed = [part.strip("\n") for part in out.getvalue().split(MARK)]
    assert printed == expected
