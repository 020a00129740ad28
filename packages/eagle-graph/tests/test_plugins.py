"""Plugins: entry points (group ``eagle``) loaded lazily through pluggy, and native kinds.

Each loader test makes its own distributions (a ``.dist-info`` folder with
``entry_points.txt`` and a module) in a temporary folder and a fresh
``PluginLoader`` over them, so no test depends on what is installed.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import eagle
from eagle import _core, _kinds
from eagle._plugins import PluginLoader, PluginWarning
from eagle.graph import NativeCall, Node, node_kind, register_node_kind
from eagle.hookspecs import KindRegistry
from eagle.native import compile_library

GOOD = """
from eagle.hookspecs import hookimpl

def _planes(role):
    return lambda p: [("x", p, role)]

@hookimpl
def register_node_kinds(registry):
    registry.register_node_kind("{kind}", reads=_planes("read"), writes=lambda p: [],
                                lower_cpu=lambda p: (lambda: None), make=lambda x: x)
"""


def make_dist(root: Path, dist: str, module: str, source: str, *, entry: str | None = None,
              version: str = "1.2.3") -> None:
    """A distribution in ``root``: metadata, one eagle entry point, one module."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[eagle]\n{entry or dist} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(source))


def loader_over(root: Path, monkeypatch: pytest.MonkeyPatch, table: dict | None = None) -> PluginLoader:
    """A fresh loader over the distributions in ``root`` only."""
    monkeypatch.syspath_prepend(str(root))

    def entry_points():
        # eagle-good first, so that a plugin that breaks is always the other one
        dists = sorted(importlib.metadata.distributions(path=[str(root)]),
                       key=lambda d: (d.metadata["Name"] != "eagle-good", d.metadata["Name"]))
        return [ep for d in dists for ep in d.entry_points if ep.group == "eagle"]

    return PluginLoader(entry_points, {} if table is None else table)


@pytest.fixture
def names(request: pytest.FixtureRequest) -> str:
    """A suffix unique to the test: module and kind names never meet another test's."""
    return request.node.name.replace("[", "_").replace("]", "").replace("-", "_")


def test_a_plugin_registers_its_kinds_and_is_listed(tmp_path, monkeypatch, names):
    """A plugin's kinds land in the registry; plugins() gives name, distribution, version, kinds."""
    make_dist(tmp_path, "eagle-good", f"good_{names}", GOOD.format(kind="k_" + names))
    table: dict = {}
    loader = loader_over(tmp_path, monkeypatch, table)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (info,) = loader.load()
    assert (info.name, info.distribution, info.version, info.kinds) == (
        "eagle-good", "eagle-good", "1.2.3", ("k_" + names,))
    assert info.value == f"good_{names}"
    assert table["k_" + names].plugin == "eagle-good"
    assert table["k_" + names].describe() == f"kind 'k_{names}' of plugin eagle-good"
    assert loader.manager.get_plugin("eagle-good") is not None


def test_plugins_load_once_and_only_when_asked(tmp_path, monkeypatch, names):
    """Nothing is imported before the first load; a second load reads no entry point again."""
    make_dist(tmp_path, "eagle-good", f"good_{names}", GOOD.format(kind="k_" + names))
    calls = []
    inner = loader_over(tmp_path, monkeypatch)
    loader = PluginLoader(lambda: calls.append(1) or inner._entry_points(), {})
    assert f"good_{names}" not in sys.modules and not calls
    loader.load()
    loader.load()
    assert calls == [1] and f"good_{names}" in sys.modules


@pytest.mark.parametrize("case", ["import", "hook", "validation", "entry_name", "conflict"])
def test_a_broken_plugin_warns_by_name_and_the_others_load(tmp_path, monkeypatch, names, case):
    """A plugin that fails to import, register or validate, or is misnamed, is left out with a warning."""
    broken = {
        "import": "raise RuntimeError('no such library')\n",
        "hook": GOOD.format(kind="b_" + names) + "    raise ValueError('half-way')\n",
        "validation": "from eagle.hookspecs import hookimpl\n\n@hookimpl\ndef register_node_kindz(registry):"
                      "\n    pass\n",
        "entry_name": GOOD.format(kind="b_" + names),
        "conflict": GOOD.format(kind="k_" + names),  # the good plugin's kind, a different definition
    }[case]
    make_dist(tmp_path, "eagle-broken", f"broken_{names}", broken,
              entry="something-else" if case == "entry_name" else None)
    make_dist(tmp_path, "eagle-good", f"good_{names}", GOOD.format(kind="k_" + names))
    table: dict = {}
    with pytest.warns(PluginWarning) as caught:
        loaded = loader_over(tmp_path, monkeypatch, table).load()
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("eagle.plugins: plugin ")
    assert "eagle-broken 1.2.3" in message and "was not loaded" in message
    assert {
        "import": "RuntimeError: no such library",
        "hook": "register_node_kinds raised ValueError: half-way",
        "validation": "register_node_kindz",
        "entry_name": "an eagle entry point is named after its distribution; name it 'eagle-broken'",
        "conflict": f"a different kind is already registered as 'k_{names}' (kind 'k_{names}' of plugin "
                    "eagle-good)",
    }[case] in message
    assert [p.name for p in loaded] == ["eagle-good"]
    assert "b_" + names not in table  # a hook that raised half-way registered nothing


def test_eagle_no_plugins_turns_loading_off(tmp_path, monkeypatch, names):
    """With EAGLE_NO_PLUGINS set nothing loads; unset, the next use loads."""
    make_dist(tmp_path, "eagle-good", f"good_{names}", GOOD.format(kind="k_" + names))
    loader = loader_over(tmp_path, monkeypatch)
    monkeypatch.setenv("EAGLE_NO_PLUGINS", "1")
    assert loader.load() == [] and f"good_{names}" not in sys.modules
    assert "plugin loading is off (EAGLE_NO_PLUGINS is set)" in loader.note()
    monkeypatch.setenv("EAGLE_NO_PLUGINS", "0")
    assert [p.name for p in loader.load()] == ["eagle-good"]


def test_a_missing_kind_says_what_was_loaded(monkeypatch):
    """Node() of an unknown kind loads plugins first, and the message lists them or says loading is off."""
    with pytest.raises(KeyError, match=r"no node kind 'test_plugins_nothing' is registered; known kinds: "):
        Node("test_plugins_nothing", None)
    monkeypatch.setenv("EAGLE_NO_PLUGINS", "yes")
    with pytest.raises(KeyError, match=r"plugin loading is off \(EAGLE_NO_PLUGINS is set\)"):
        Node("test_plugins_nothing", None)


# ------------------------------------------------------------------ the C ABI

ABI_SOURCE = r"""
#include "eagle/eagle.h"
EAGLE_API int eagle_plugin_abi_version(void) { return VERSION; }
EAGLE_API void twice(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr; for (int64_t i = b; i < e; ++i) x[i] *= 2.0; }
"""


def test_a_library_for_another_abi_is_refused_by_name():
    """registry.library refuses a library built for another EAGLE_ABI_VERSION, or one that does not say."""
    registry = KindRegistry("eagle-old", {})
    other = compile_library(ABI_SOURCE.replace("VERSION", str(_core.ABI_VERSION + 7)), name="test_abi_other")
    with pytest.raises(ValueError, match=rf"^eagle\.plugins: plugin eagle-old: .* was built for "
                                         rf"EAGLE_ABI_VERSION {_core.ABI_VERSION + 7}, this eagle speaks "
                                         rf"{_core.ABI_VERSION}; rebuild eagle-old"):
        registry.library(other)
    silent = compile_library("void nothing(void) {}", name="test_abi_silent")
    with pytest.raises(ValueError, match="does not export eagle_plugin_abi_version"):
        registry.library(silent)
    same = compile_library(ABI_SOURCE.replace("VERSION", "EAGLE_ABI_VERSION"), name="test_abi_same")
    assert registry.library(same).abi_version() == _core.ABI_VERSION


def test_a_plugin_with_a_library_for_another_abi_is_not_loaded(tmp_path, monkeypatch, names):
    """The refusal reaches the user as the plugin's warning; its kind is not registered."""
    source = ABI_SOURCE.replace("VERSION", str(_core.ABI_VERSION + 1))
    make_dist(tmp_path, "eagle-old", f"old_{names}", f"""
        from eagle.hookspecs import hookimpl

        @hookimpl
        def register_node_kinds(registry):
            registry.compile_library({source!r}, "test_abi_plugin")
            registry.register_node_kind("o_{names}", reads=lambda p: [], writes=lambda p: [])
        """)
    table: dict = {}
    with pytest.warns(PluginWarning, match=r"plugin 'eagle-old' \(eagle-old 1\.2\.3.*was built for "
                                           f"EAGLE_ABI_VERSION {_core.ABI_VERSION + 1}"):
        assert loader_over(tmp_path, monkeypatch, table).load() == []
    assert table == {}


# ----------------------------------------------------------- native kinds in code


@pytest.fixture(scope="module")
def twice_kind():
    """A kind whose native lowering is a kernel of its own library: x *= 2 over the plane."""
    from eagle.native import Library

    lib = Library(compile_library(ABI_SOURCE.replace("VERSION", "EAGLE_ABI_VERSION"), name="test_twice"))
    kernel = lib.kernel("twice")

    class Twice:
        def __init__(self, x):
            self.x, self.samples = x, x.shape[0]

    def native(p):
        return [NativeCall(kernel, [p.x], p.samples, per_sample=True, accesses=[(p.x, "readwrite")])]

    return register_node_kind("test_plugins_twice", reads=lambda p: [],
                              writes=lambda p: [("x", p.x, "readwrite")], native=native, make=Twice)


def test_a_native_kind_runs_in_work_share_and_branch_tasks(twice_kind, threads):
    """Native calls run like plan launches: in a chain, and as the branches of a branch_tasks fork."""
    a, b = np.arange(3000.0), np.arange(3000.0) + 1
    g = eagle.Graph().add_node(eagle.node("test_plugins_twice", a))
    g.add_group([[eagle.node("test_plugins_twice", a), eagle.node("test_plugins_twice", a)],
                 eagle.node("test_plugins_twice", b)])
    g.build()
    assert g.schedule == ["work_share", "branch_tasks" if threads >= 2 else "work_share"]
    g.launch(2)
    np.testing.assert_array_equal(a, np.arange(3000.0) * 64)
    np.testing.assert_array_equal(b, (np.arange(3000.0) + 1) * 4)


def test_native_kind_refusals(twice_kind):
    """lower_cpu and native together are refused; a native lowering must give eagle_kernel_fn calls."""
    with pytest.raises(ValueError, match=r"^eagle\.graph\.register_node_kind: kind 'test_plugins_both' "
                                         "registered in code by .* gives both lower_cpu and native"):
        register_node_kind("test_plugins_both", reads=lambda p: [], writes=lambda p: [],
                           lower_cpu=lambda p: None, native=lambda p: [])
    register_node_kind("test_plugins_bad_native", reads=lambda p: [], writes=lambda p: [],
                       native=lambda p: [NativeCall(print, [], 1)])
    g = eagle.Graph().add_node(Node("test_plugins_bad_native", None), name="bad")
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.build: node 'bad': the native lowering of kind "
                                        "'test_plugins_bad_native' .* a kernel is an eagle_kernel_fn"):
        g.build()
    assert g.backend is None
    with pytest.raises(TypeError, match=r"^eagle\.node: kind 'plan' .* has no make="):
        eagle.node("plan")
    assert node_kind("test_plugins_twice") is twice_kind


def test_kinds_keep_their_plugin_after_a_refused_registration():
    """A refused plugin registration leaves the table as it was."""
    table = dict(_kinds._REGISTRY)
    registry = KindRegistry("eagle-x", table)
    with pytest.raises(ValueError, match=r"^eagle\.plugins: plugin eagle-x: a different kind is already "
                                         "registered as 'opaque'"):
        registry.register_node_kind("opaque", reads=lambda p: [], writes=lambda p: [])
    assert registry._commit() == () and table == _kinds._REGISTRY


# --------------------------------------------------------- installed, end to end

BROKEN_DIST = {"name": "eagle-broken-test", "module": "eagle_broken_test",
               "source": "raise ImportError('eagle_broken_test: this plugin is broken on purpose')\n"}


def test_a_broken_installed_plugin_does_not_break_import_eagle(tmp_path):
    """A real entry point to a module that raises: import eagle works, the plugin is named in a warning,
    and a graph builds and replays."""
    make_dist(tmp_path, BROKEN_DIST["name"], BROKEN_DIST["module"], BROKEN_DIST["source"])
    script = textwrap.dedent("""
        import warnings
        import numpy as np
        import eagle
        assert "eagle_broken_test" not in __import__("sys").modules  # import eagle loaded nothing
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = eagle.plugins()
        print([str(w.message) for w in caught if issubclass(w.category, eagle.PluginWarning)])
        print(sorted(p.name for p in loaded))
        x = np.ones(8)
        eagle.Graph().add_node(eagle.opaque(lambda: np.add(x, 1, out=x), writes={"x": x})).build().launch()
        print(x.sum())
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.pop("EAGLE_NO_PLUGINS", None)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    warned, loaded, total = out.stdout.splitlines()
    assert "eagle.plugins: plugin 'eagle-broken-test' (eagle-broken-test 1.2.3, eagle_broken_test) was " \
           "not loaded: importing eagle_broken_test raised ImportError: eagle_broken_test: this plugin is " \
           "broken on purpose" in warned
    installed = sorted({ep.name for ep in importlib.metadata.entry_points(group="eagle")})
    assert eval(loaded) == installed  # every other installed plugin still loaded
    assert float(total) == 16.0
