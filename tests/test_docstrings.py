"""Every public function and class has a docstring with an example, and every example runs.

The examples are doctests (``>>>``), run here with ``np``, ``eagle`` and
``hawk`` imported; hawk kernels and builders defined in an example work
because doctest serves the examples' source to ``inspect``.  A package that
is not installed (the minimal session has only eagle-graph) is skipped.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import numpy as np
import pytest

import eagle

# module -> its public names; None: the module's __all__.
PUBLIC: dict[str, list[str] | None] = {
    "eagle": ["Graph", "opaque", "copy", "pinned", "reduce", "skippable", "repeat_while", "SkipGuard",
              "Busy", "SiblingRace", "GraphPipeline", "Body", "Fork", "DeviceIf", "DeviceSwitch",
              "DeviceLoop", "node", "plugins", "PluginInfo", "PluginWarning", "until_done", "UntilDone",
              "Steps", "simulate", "SimulateResult", "SimulateReport", "EagleError", "EagleWarning",
              "ConfigWarning", "get_num_threads", "set_num_threads", "show_config"],
    "eagle.graph": None,
    "eagle.plan": ["Plan", "BoundPlan", "Param", "DispatchGroup"],
    "eagle.native": ["compile_library", "Library", "CompileError", "CacheWarning", "cache_dir", "cached",
                     "lookup", "include_dir"],
    "eagle.demo": ["main", "whole", "numpy_whole"],
    "eagle.extend": ["view", "GraphView", "state", "Recording", "recording", "flatten", "unflatten",
                     "lay_out", "picture_text", "picture_mermaid", "picture_dot", "picture_style"],
    "eagle.interop": None,
    "eagle.testing": ["DLPackOnly", "InterfaceOnly"],
    "eagle.builder": None,
    "eagle.viz": None,
    "eagle.diff": None,
    "eagle.frameworks.models": ["Framework", "spec", "floating"],
    "eagle.frameworks.torch": None,
    "eagle.frameworks.jax": None,
    "hawk": None,
    "hawk.math": None,
    "hawk.random": None,
}


#: module -> the packages its examples need beyond its own (eagle.demo is the whole install's demo,
#: shipped in eagle-graph, which never imports the packages above it)
NEEDS = {"eagle.demo": ("hawk", "eagle.builder"), "eagle.frameworks.torch": ("torch",),
         "eagle.frameworks.jax": ("jax",)}


def public_objects() -> list[tuple[str, object]]:
    found, seen = [], set()
    for module_name, names in PUBLIC.items():
        try:
            module = importlib.import_module(module_name)
            for needed in NEEDS.get(module_name, ()):
                importlib.import_module(needed)
        except ImportError:
            continue
        for name in names if names is not None else getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or callable(obj)) or inspect.ismodule(obj):
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # hawk's parameter kinds (Scalar, Param, ...) are values, documented by hawk's page
            if id(obj) not in seen:
                seen.add(id(obj))
                found.append((f"{module_name}.{name}", obj))
    return found


OBJECTS = public_objects()


def test_the_list_is_not_empty():
    assert len(OBJECTS) >= 20


@pytest.mark.parametrize(("name", "obj"), OBJECTS, ids=[name for name, _ in OBJECTS])
def test_docstring_has_an_example_that_runs(name, obj, tmp_path, monkeypatch):
    doc = inspect.getdoc(obj) or ""
    assert ">>>" in doc, f"{name}: its docstring has no example"
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    globs = {"np": np, "eagle": eagle}
    try:
        import hawk
    except ImportError:  # only eagle-graph is installed: its examples do without hawk
        pass
    else:
        globs["hawk"] = hawk
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(obj, name, globs=globs):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} example lines failed (above)"
