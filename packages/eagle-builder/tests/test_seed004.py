"""Seed 004, "Every form of a graph builder": every cell runs as printed and prints what the page shows.

The cells run in order in one namespace, as in the notebook the page comes
from: a cell's last expression is displayed.  Each cell is written to a
file first, so that hawk and the builder can read the source of what it
defines.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path
from typing import NamedTuple

import pytest

import eagle


class Cell(NamedTuple):
    title: str
    code: str
    prints: str | None
    diff: bool


def cells(path: Path) -> list[Cell]:
    """The cells of ``seed004.txt``: ``### cell: <title> [(diff)]``, its code, ``### prints``, its output."""
    found = []
    for chunk in re.split(r"^### cell: ", path.read_text(), flags=re.M)[1:]:
        head, _, rest = chunk.partition("\n")
        code, _, prints = rest.partition("### prints\n")
        diff = head.endswith(" (diff)")
        found.append(Cell(head.removesuffix(" (diff)"), code.rstrip("\n"), prints.rstrip("\n") or None, diff))
    return found


CELLS = cells(Path(__file__).with_name("seed004.txt"))
HAS_DIFF = hasattr(eagle.diff, "reverse")
REFUSALS = "what it refuses"
DIFF_REFUSALS = ("reverse without wrt:", "wrt a name that is not a key:")  # eagle.diff's own refusals


def run_cell(code: str, path: Path, namespace: dict) -> str:
    """Run one notebook cell; what it prints, and the repr of a last expression."""
    path.write_text(code + "\n")
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, str(path), "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), str(path), "eval"), namespace)
            if value is not None:
                print(repr(value))
    return out.getvalue()


def definitions_only(code: str) -> str:
    """The defs of a cell (what later cells use), for a cell that cannot run yet."""
    tree = ast.parse(code)
    tree.body = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.Import, ast.ImportFrom))]
    return ast.unparse(tree)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every cell run in order; title -> what it printed (None when it could not run here)."""
    folder = tmp_path_factory.mktemp("seed004")
    namespace: dict = {"__name__": "seed004"}
    printed = {}
    for k, cell in enumerate(CELLS):
        if cell.diff and not HAS_DIFF and cell.title != REFUSALS:
            run_cell(definitions_only(cell.code), folder / f"cell{k}_defs.py", namespace)
            printed[cell.title] = None
            continue
        printed[cell.title] = run_cell(cell.code, folder / f"cell{k}.py", namespace)
    return printed


@pytest.mark.parametrize("cell", [c for c in CELLS if c.prints is not None and c.title != REFUSALS],
                         ids=lambda c: c.title)
def test_cell_prints_what_the_page_shows(page, cell):
    if page[cell.title] is None:
        pytest.skip("needs eagle.diff.reverse (the diff issue)")
    assert page[cell.title].rstrip("\n").split("\n") == cell.prints.split("\n")


def test_every_refusal_has_the_pages_type_and_message(page):
    """Each refusal is a paragraph: its label, then the exception type and message (cut at 330)."""
    expected = next(c for c in CELLS if c.title == REFUSALS).prints.split("\n\n")
    printed = page[REFUSALS].rstrip("\n").split("\n\n")
    assert [p.split("\n")[0] for p in printed] == [p.split("\n")[0] for p in expected]
    for got, want in zip(printed, expected, strict=True):
        if HAS_DIFF or not want.startswith(DIFF_REFUSALS):
            assert got == want
