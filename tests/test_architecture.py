"""The layers of DESIGN.md section 2, as imports: above eagle-graph, only ``eagle.extend`` and the
public modules reach the core; the core imports nothing above it when it is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import eagle.extend

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "packages" / "eagle-graph" / "src"

def _sources() -> list[Path]:
    """Every shipped Python file of a package or plugin other than eagle-graph."""
    trees = [*ROOT.glob("packages/*/src"), *ROOT.glob("plugins/*/src")]
    return sorted(p for tree in trees if tree != CORE for p in tree.rglob("*.py"))


def private_imports(path: Path) -> list[str]:
    """``line: statement`` of each import of a private module of eagle (``eagle._x``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("eagle._")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("eagle._"):
                names = [node.module]
            elif node.module == "eagle":
                names = [f"eagle.{a.name}" for a in node.names if a.name.startswith("_")]
            else:
                names = []
        else:
            continue
        found += [f"{node.lineno}: {name}" for name in names]
    return found


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_check_sees_each_form_of_private_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import eagle._core\nfrom eagle._graph import Graph\nfrom eagle import _cuda, extend\n"
                      "from eagle.extend import ffi\nimport eagle.graph\n")
    assert private_imports(source) == ["1: eagle._core", "2: eagle._graph", "3: eagle._cuda"]


def test_no_private_imports_of_eagle_outside_eagle_graph():
    sources = _sources()
    assert len(sources) > 40  # the packages and plugins were found
    offenders = {_relative(p): found for p in sources if (found := private_imports(p))}
    assert not offenders, ("import these through eagle.extend (or a public eagle module), not eagle's "
                           f"private modules: {offenders}")


def _private_writes(path: Path) -> list[str]:
    """``line: owner.attribute`` of each assignment to a private attribute of an object other
    than ``self`` or ``cls`` (``graph._binder = ...``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for attr in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                if (isinstance(attr, ast.Attribute) and attr.attr.startswith("_") and not
                        attr.attr.startswith("__") and ast.unparse(attr.value) not in ("self", "cls")):
                    found.append(f"{node.lineno}: {ast.unparse(attr)}")
    return found


def test_the_check_sees_private_attribute_writes(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("graph._binder = f\ng._names, x = r, 1\nself._mine = 1\nrecord._passes[k] = v\n")
    assert _private_writes(source) == ["1: graph._binder", "2: g._names"]


def test_no_package_or_plugin_writes_private_attributes_of_others():
    offenders = {_relative(p): found for p in _sources() if (found := _private_writes(p))}
    assert not offenders, "attach extension state with eagle.extend.state(graph), not private attributes"


def _top_level_imports(path: Path) -> list[str]:
    """The modules ``path`` imports when it is imported (not inside a function)."""
    names = []
    for node in ast.parse(path.read_text(), str(path)).body:
        body = [node, *(node.body if isinstance(node, ast.Try) else [])]
        for statement in body:
            if isinstance(statement, ast.Import):
                names += [a.name for a in statement.names]
            elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
                names.append(statement.module)
    return names


def _above(module: str) -> bool:
    return any(module == top or module.startswith(f"{top}.")
               for top in ("hawk", "eagle.builder", "eagle.diff", "eagle.viz"))


def test_the_core_imports_nothing_above_it():
    offenders = {_relative(p): [n for n in _top_level_imports(p) if _above(n)]
                 for p in sorted(CORE.rglob("*.py"))}
    assert not {p: n for p, n in offenders.items() if n}, "the core finds a package above it lazily"


def test_the_extension_surface_is_versioned_and_whole():
    assert isinstance(eagle.extend.API_VERSION, tuple) and eagle.extend.API_VERSION >= (1, 0)
    missing = [name for name in eagle.extend.__all__ if not hasattr(eagle.extend, name)]
    assert not missing


def _module_groups() -> list[list[str]]:
    """The groups of eagle-graph's modules, bottom up, as docs/architecture.rst lists them."""
    text = (ROOT / "docs" / "architecture.rst").read_text()
    section = text.split("The modules of eagle-graph\n", 1)[1]
    groups = []
    for item in section.split("\n- ")[1:]:
        names = re.findall(r"``(?:eagle\.)?([a-z_]+)``", item)
        groups.append(["__init__" if name == "eagle" else name for name in names])
    return groups


def test_the_architecture_page_lists_every_module_in_import_order():
    groups = _module_groups()
    rank: dict[str, int] = {}
    for g, names in enumerate(groups):
        for name in names:
            rank.setdefault(name, g)  # the public faces' line names some placed before
    modules = {p.stem for p in (CORE / "eagle").glob("*.py")}
    assert modules <= set(rank), f"docs/architecture.rst does not place {sorted(modules - set(rank))}"
    upward = []
    for name in sorted(modules):
        for node in ast.parse((CORE / "eagle" / f"{name}.py").read_text()).body:
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue  # a module-level import of eagle's own is always a from-import here
            if node.module == "eagle":
                targets = [a.name for a in node.names]
            elif node.module.startswith("eagle."):
                targets = [node.module.split(".")[1]]
            else:
                continue
            upward += [f"{name} -> {t}" for t in targets if t in modules and rank[t] > rank[name]]
    assert not upward, f"imports against the layers of docs/architecture.rst: {upward}"
