"""The conventions of a well-kept Python package (issue 24): logging, the cache folder, the thread
count, ``eagle.show_config()``, one warning base, one exception base (and no builtin raised
anywhere in eagle's sources), typing that ``mypy --strict`` accepts, and tidy reprs."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import logging
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import eagle
import eagle.errors
from eagle.native import cache_dir, compile_library

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for tree in (*ROOT.glob("packages/*/src"), *ROOT.glob("plugins/*/src"))
                 for p in tree.rglob("*.py"))


def _python(code: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """``code`` run in a fresh interpreter, with ``env`` over this one's (None: unset)."""
    environ = {k: v for k, v in os.environ.items() if k not in env}
    environ.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                          check=False, timeout=120)


# ------------------------------------------------------------------ logging


def test_the_eagle_logger_has_a_null_handler_only():
    """The library installs no handler that prints: the application configures logging."""
    # hawk and the builder where installed (the minimal session has eagle-graph alone)
    out = _python("import importlib, importlib.util, logging, eagle\n"
                  "for name in ('hawk', 'eagle.builder'):\n"
                  "    if importlib.util.find_spec(name):\n"
                  "        importlib.import_module(name)\n"
                  "print([type(h).__name__ for h in logging.getLogger('eagle').handlers], "
                  "logging.getLogger().handlers)")
    assert out.stdout.split() == ["['NullHandler']", "[]"], out.stderr


def test_a_compile_is_logged_at_info_with_its_count_and_time_and_a_cache_hit_at_debug(
        tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(tmp_path))
    source = f"double conventions_{os.getpid()}(double x) {{ return x + 1; }}"
    with caplog.at_level(logging.DEBUG, logger="eagle"):
        compile_library(source, name="conventions_log")
        compile_library(source, name="conventions_log")
    compiled = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(compiled) == 1 and compiled[0].name == "eagle.compile"
    assert " ".join(compiled[0].getMessage().split()[:4]) == "eagle.native: compiled conventions_log (1"
    assert compiled[0].getMessage().endswith(" ms")
    hits = [r.getMessage() for r in caplog.records
            if r.levelno == logging.DEBUG and r.name == "eagle.compile"]
    assert len(hits) == 1 and hits[0].startswith("eagle.native: cache hit ") and str(tmp_path) in hits[0]


@pytest.fixture
def scale():
    """A hawk kernel that scales its plane in place."""
    hawk = pytest.importorskip("hawk")
    from hawk import Mutable, Param, Scalar

    @hawk.kernel
    def scale(x: Mutable[Scalar], c: Param) -> None:
        x = x * c

    return scale


def test_a_build_logs_each_stage_schedule_and_each_fused_run_at_debug(caplog, scale):
    x = np.arange(8.0)
    with caplog.at_level(logging.DEBUG, logger="eagle.build"):
        g = eagle.Graph()
        g.add(scale.plan(x, 2.0), name="first")
        g.add(scale.plan(x, 3.0), name="second")
        g.build()
    said = [r.getMessage() for r in caplog.records if r.name == "eagle.build"]
    assert "eagle.Graph.build: stage 0 ('first') on the cpu: work_share" in said
    assert any(m.startswith("eagle.Graph.build: 'first', 'second' fused into one function") for m in said)


def test_a_compaction_of_simulate_is_logged_at_debug(caplog):
    x = np.geomspace(1.0, 2.0**30, 4096)  # halved until below 1: from 1 to 31 steps, past a chunk
    done = np.zeros(x.size, np.uint8)

    def halve():
        np.multiply(x, 0.5, out=x, where=done == 0)
        done[:] = x < 1.0

    step = eagle.opaque(halve, reads={"done": done}, writes={"x": x, "done": done})
    with caplog.at_level(logging.DEBUG, logger="eagle.simulate"):
        result = eagle.simulate(step, terminated=done, max_steps=100, compact=True)
    said = [r.getMessage() for r in caplog.records if r.name == "eagle.simulate"]
    assert len(said) == len(result.report.compactions) >= 1
    assert all(m.startswith("eagle.simulate: step ") and " compacted " in m for m in said)


# ------------------------------------------------------------------ the cache folder


@pytest.mark.parametrize(("own", "xdg", "expected"), [
    ("/tmp/own", "/tmp/xdg", "/tmp/own"),
    (None, "/tmp/xdg", "/tmp/xdg/eagle"),
    ("", "/tmp/xdg", "/tmp/xdg/eagle"),
    (None, None, "HOME/.cache/eagle"),
    (None, "", "HOME/.cache/eagle"),
    (None, "relative/cache", "HOME/.cache/eagle"),  # the XDG specification: a relative path is invalid
])
def test_the_cache_folder_is_eagle_cache_dir_then_xdg_cache_home_then_home(monkeypatch, tmp_path, own, xdg,
                                                                           expected):
    for name, value in (("EAGLE_CACHE_DIR", own), ("XDG_CACHE_HOME", xdg)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == Path(expected.replace("HOME", str(tmp_path)))


def test_a_process_with_only_xdg_cache_home_compiles_into_it(tmp_path):
    code = ("from eagle.native import compile_library; "
            "print(compile_library('double xdg_probe(double x) { return x; }', name='xdg_probe'))")
    out = _python(code, EAGLE_CACHE_DIR=None, XDG_CACHE_HOME=str(tmp_path), HOME=str(tmp_path / "home"))
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).parent == tmp_path / "eagle"


# ------------------------------------------------------------------ threads


def test_set_num_threads_is_read_back_and_refuses_what_is_not_a_count():
    before = eagle.get_num_threads()
    try:
        eagle.set_num_threads(1)
        assert eagle.get_num_threads() == 1
        eagle.set_num_threads(np.int64(3))
        assert eagle.get_num_threads() == 3
    finally:
        eagle.set_num_threads(before)
    for bad, kind in ((0, ValueError), (-3, ValueError), (True, TypeError), (2.5, TypeError),
                      ("2", TypeError)):
        with pytest.raises(kind, match=r"^eagle\.set_num_threads: n must be") as caught:
            eagle.set_num_threads(bad)
        assert isinstance(caught.value, eagle.EagleError)
    assert eagle.get_num_threads() == before


def test_a_graph_built_before_set_num_threads_keeps_its_schedule_and_its_bits(scale):
    before = eagle.get_num_threads()
    try:
        eagle.set_num_threads(2)
        a, b = np.arange(64.0), np.arange(64.0) + 0.5
        g = eagle.Graph().add_group([scale.plan(a, 1.25), scale.plan(b, 0.75)], names=["a", "b"]).build()
        assert g.schedule == ["branch_tasks"]
        g()
        two = a.copy(), b.copy()
        eagle.set_num_threads(1)
        a[:], b[:] = np.arange(64.0), np.arange(64.0) + 0.5
        g()
        assert g.schedule == ["branch_tasks"]  # chosen at build, run on the one thread now
        np.testing.assert_array_equal(a, two[0])
        np.testing.assert_array_equal(b, two[1])
    finally:
        eagle.set_num_threads(before)


@pytest.mark.parametrize("value", ["abc", "0", "-3", "3abc", "2.5"])
def test_a_bad_eagle_num_threads_warns_naming_the_value_and_what_is_used(value):
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    out = _python("import warnings\nwith warnings.catch_warnings(record=True) as caught:\n"
                  "    warnings.simplefilter('always')\n    import eagle\n"
                  "said = [w for w in caught if issubclass(w.category, eagle.EagleWarning)]\n"
                  "print(len(said), said[0].category.__name__, said[0].message)\n"
                  "print(eagle.get_num_threads())", EAGLE_NUM_THREADS=value)
    first, used = out.stdout.splitlines()
    assert first == (f"1 ConfigWarning eagle: EAGLE_NUM_THREADS={value!r} is not a number of threads (a "
                     f"whole number >= 1); using {cpus}, the CPUs this process may run on: set it to a count "
                     "such as 4, or unset it")
    assert int(used) == cpus


@pytest.mark.parametrize(("value", "threads"), [("3", 3), (" 2 ", 2), ("", None)])
def test_a_good_eagle_num_threads_is_used_without_a_warning(value, threads):
    out = _python("import warnings; warnings.simplefilter('error')\nimport eagle\n"
                  "print(eagle.get_num_threads())", EAGLE_NUM_THREADS=value)
    assert out.returncode == 0 and not out.stderr, out.stderr
    assert threads is None or int(out.stdout) == threads


# ------------------------------------------------------------------ show_config


def test_show_config_prints_each_part(capsys):
    eagle.show_config()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "eagle configuration"
    fields = {name.strip(): value.strip() for name, value in (line.split(": ", 1) for line in lines[1:])}
    assert list(fields) == ["python", "distributions", "libeagle", "threads", "cache folder", "C compiler",
                            "CUDA driver", "NVRTC", "plugins"]
    assert "eagle-graph " in fields["distributions"]
    assert fields["libeagle"].startswith(f"ABI {eagle.extend.lib.EAGLE_ABI_VERSION} (")
    assert fields["threads"].startswith(f"{eagle.get_num_threads()} (")
    assert fields["cache folder"].startswith(str(cache_dir()))
    assert fields["C compiler"]  # a compiler, or what to install


def test_show_config_lists_plugins_without_importing_their_frameworks():
    out = _python("import sys, eagle; eagle.show_config(); "
                  "print([m for m in ('mpi4py', 'dask', 'distributed', 'torch', 'jax') if m in sys.modules])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "[]"


# ------------------------------------------------------------------ warnings and exceptions


def test_every_warning_class_of_eagle_is_an_eagle_warning():
    import eagle.native

    classes = [eagle.RebuildWarning, eagle.PluginWarning, eagle.ConfigWarning, eagle.native.CacheWarning]
    if importlib.util.find_spec("eagle.builder"):
        import eagle.builder

        classes.append(eagle.builder.UncappedLoopWarning)
    assert all(issubclass(c, eagle.EagleWarning) for c in classes)
    assert issubclass(eagle.EagleWarning, UserWarning)


def test_every_warning_eagle_gives_names_an_eagle_warning_class():
    """Each ``warnings.warn`` in eagle's sources passes a category, and not a builtin one."""
    plain = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "warnings"):
                category = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "category"), None)
                if category is None or (isinstance(category, ast.Name) and category.id in dir(builtins)):
                    plain.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not plain, f"give these an eagle.EagleWarning subclass: {plain}"


def test_an_error_is_the_builtin_that_fits_and_an_eagle_error():
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: the graph is empty") as caught:
        eagle.Graph().build()
    err = caught.value
    assert isinstance(err, eagle.EagleError) and type(err) is eagle.errors.ValueError
    assert type(err).__name__ == "ValueError"  # what the seeds print: type(err).__name__
    again = pickle.loads(pickle.dumps(err))  # a worker's error crosses processes whole
    assert type(again) is eagle.errors.ValueError and again.args == err.args
    for name in eagle.errors.__all__:
        cls = getattr(eagle.errors, name)
        if name in ("EagleError", "EagleWarning"):
            continue
        assert issubclass(cls, eagle.EagleError) and issubclass(cls, getattr(builtins, name))
        assert cls.__module__ == "eagle.errors" and cls.__qualname__ == name
    assert issubclass(eagle.Busy, eagle.EagleError) and issubclass(eagle.SiblingRace, eagle.EagleError)
    assert issubclass(eagle.native.CompileError, eagle.EagleError)


def test_an_import_hint_is_an_eagle_error():
    """Where eagle-builder is missing (here: blocked), Graph.builder's hint is an EagleError."""
    out = _python("import sys\nsys.modules['eagle.builder'] = None\nimport eagle\n"
                  "try:\n    eagle.Graph.builder(print)\nexcept ImportError as err:\n"
                  "    print(isinstance(err, eagle.EagleError), err)")
    assert out.stdout.startswith("True eagle.Graph.builder needs eagle-builder: "), out.stderr


#: Builtins a raise may name: not errors (a command's exit, a generator's end).
NOT_ERRORS = {"SystemExit", "StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "GeneratorExit"}
BUILTIN_EXCEPTIONS = {name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
                      and issubclass(getattr(builtins, name), BaseException)} - NOT_ERRORS


def builtin_raises(path: Path) -> list[str]:
    """``line: Name`` of each builtin exception class made (``raise ValueError(...)``, a bare
    ``raise ValueError``, ``return TypeError(...)``) and each class deriving from one directly."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in BUILTIN_EXCEPTIONS:
                found.append((node.lineno, node.func.id))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name):
            if node.exc.id in BUILTIN_EXCEPTIONS:
                found.append((node.lineno, node.exc.id))
        elif isinstance(node, ast.ClassDef):
            found += [(node.lineno, f"class {node.name}({b.id})") for b in node.bases
                      if isinstance(b, ast.Name) and b.id in BUILTIN_EXCEPTIONS | {"UserWarning", "Warning"}]
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_the_raise_check_sees_each_form(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(textwrap.dedent("""\
        raise ValueError("a")
        raise KeyError
        def f():
            return TypeError("b")
        class Mine(RuntimeError): ...
        class Cautious(UserWarning): ...
        raise SystemExit(1)
        raise EagleValueError("fine")
        """))
    assert builtin_raises(source) == ["1: ValueError", "2: KeyError", "4: TypeError",
                                      "5: class Mine(RuntimeError)", "6: class Cautious(UserWarning)"]


def test_no_builtin_exception_is_raised_in_eagles_packages():
    assert len(SOURCES) > 100
    offenders = {str(p.relative_to(ROOT)): found for p in SOURCES
                 if p.name != "_errors.py" and (found := builtin_raises(p))}
    assert not offenders, ("raise eagle's class of that name instead (eagle.extend.EagleValueError and the "
                           f"like; eagle._errors inside eagle-graph): {offenders}")


# ------------------------------------------------------------------ typing


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (the nox tests session installs it)")
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False, timeout=600)


def test_every_package_ships_a_py_typed_marker():
    """Each distribution's own package (eagle-graph's ``eagle``, eagle-builder's ``eagle/builder``,
    hawk, each plugin's ``eagle_*``) says that it is typed."""
    owns = [p for tree in (*ROOT.glob("packages/*/src"), *ROOT.glob("plugins/*/src"))
            for p in [*tree.glob("*/__init__.py"), *tree.glob("eagle/*/__init__.py")]
            if p.parent.name != "frameworks"]  # eagle-graph's subpackage: eagle's marker covers it
    assert len(owns) >= 10
    missing = [str(p.parent.relative_to(ROOT)) for p in owns if not (p.parent / "py.typed").is_file()]
    assert not missing, f"add a py.typed to {missing}"


def test_mypy_strict_accepts_the_examples():
    out = _mypy("--config-file", "examples/mypy.ini", "examples/")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_reads_kernel_annotations_and_a_builders_call_as_their_types(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""\
        from typing import Any

        import numpy as np
        from numpy.typing import NDArray
        from typing_extensions import assert_type

        import eagle
        import hawk
        from hawk import Int32, Mutable, Param, Scalar, Table


        @hawk.func
        def twice(v: Scalar) -> Scalar:
            return 2.0 * v


        @hawk.kernel
        def shifted(x: Mutable[Scalar], a: Param, n: Param[Int32], t: Table.clamp) -> None:
            assert_type(a, float)
            assert_type(n, int)
            assert_type(t[n], float)
            assert_type(twice(a), float)
            assert_type(hawk.math.sin(a), float)
            assert_type(hawk.math.uint32(a), int)
            assert_type(hawk.sum(a), float)
            x = x + twice(a) * t[n]


        @eagle.Graph.builder
        def step(x: NDArray[np.float64]) -> eagle.Graph:
            g = eagle.Graph()
            shifted(x, 1.0, 0, x)
            return g


        @eagle.Graph.builder
        def typed(x: NDArray[np.float64]) -> eagle.Graph[NDArray[np.float64]]:
            g = eagle.Graph[NDArray[np.float64]]()
            shifted(x, 1.0, 0, x)
            g.result = x
            return g


        assert_type(step(np.zeros(3)), eagle.Graph)
        assert_type(step(np.zeros(3)).launch(), eagle.Graph)
        assert_type(step(np.zeros(3))(), Any)
        assert_type(typed(np.zeros(3))(), NDArray[np.float64])
        assert_type(typed(np.zeros(3)).build().launch(2).result, NDArray[np.float64])
        """))
    out = _mypy("--strict", str(probe))
    assert out.returncode == 0, out.stdout + out.stderr


# ------------------------------------------------------------------ reprs


def test_a_graphs_repr_says_one_and_many_right():
    x = np.zeros(3)
    g = eagle.Graph().add_node(eagle.copy(x, into=np.zeros(3)))
    assert repr(g) == "<eagle.Graph 1 node, 1 stage, not built>"
    g.add_node(eagle.copy(x, into=np.zeros(3)))
    assert repr(g) == "<eagle.Graph 2 nodes, 2 stages, not built>"


def test_a_nodes_repr_shows_arrays_by_shape_and_dtype():
    big = np.arange(100_000.0)
    node = eagle.opaque(lambda: None, reads={"big": big}, writes={"out": np.zeros((3, 4), np.float32)})
    text = repr(node)
    assert "ndarray(shape=(100000,), dtype=float64)" in text
    assert "ndarray(shape=(3, 4), dtype=float32)" in text
    assert len(text) < 300 and "99999" not in text


def test_the_api_page_opens_on_graph():
    assert eagle.__all__[0] == "Graph"
    page = (ROOT / "docs" / "api" / "eagle.rst").read_text()
    conf = (ROOT / "docs" / "conf.py").read_text()
    # automodule documents __all__ in its order under bysource (autodoc's ModuleDocumenter)
    assert 'autodoc_member_order = "bysource"' in conf and ".. automodule:: eagle\n" in page
    assert eagle.__all__.index("Graph") < eagle.__all__.index("Communicator")


def test_warnings_filter_on_the_base_class_silences_every_eagle_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", eagle.EagleWarning)
        warnings.warn("probe", eagle.RebuildWarning, stacklevel=1)
        warnings.warn("probe", eagle.ConfigWarning, stacklevel=1)
    assert caught == []
