"""eagle without plugins: nothing installed (the nox ``minimal`` session), or loading turned off.

The ``minimal`` session installs eagle-graph alone and sets
``EAGLE_EXPECT_NO_PLUGINS=1``, so there the first test must see no entry
point at all rather than quietly take the other branch.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap

import pytest

# A hand-built graph and the kind lookup that would load plugins; prints what it saw.
SCRIPT = textwrap.dedent("""
    import sys, warnings
    warnings.simplefilter("error")  # no plugin warning may appear
    import numpy as np
    import eagle
    x, total = np.arange(4096.0), np.zeros(1)
    double = eagle.opaque(lambda: np.multiply(x, 2.0, out=x), writes={"x": x})
    g = eagle.Graph().add_node(double, name="double")
    g.add_node(eagle.reduce(x, total), name="total").build().launch(2)
    try:
        eagle.node("scan", x, out=x)
    except KeyError as err:
        print(err.args[0])
    print(eagle.plugins(), total[0], sorted(m for m in sys.modules if m.startswith(("eagle_", "pluggy"))))
    """)


def run(env: dict[str, str]) -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True,
                         env={**os.environ, **env})
    return out.stdout.splitlines()


def test_eagle_works_with_no_plugin_installed():
    """With no entry point in the group 'eagle': plugins() is empty, graphs build and replay, and a
    plugin's kind is a KeyError that says no plugin is installed."""
    installed = sorted(ep.name for ep in importlib.metadata.entry_points(group="eagle"))
    if os.environ.get("EAGLE_EXPECT_NO_PLUGINS") == "1":
        assert installed == [], f"the minimal session must install no plugin, found {installed}"
    if installed:
        pytest.skip(f"plugins are installed here ({', '.join(installed)}): the minimal nox session runs this")
    missing, listed = run({"EAGLE_NO_PLUGINS": ""})
    assert "no node kind 'scan' is registered" in missing
    assert missing.endswith("no plugin is installed (entry-point group 'eagle')")
    assert listed.startswith("[] 33546240.0")


def test_eagle_works_with_plugin_loading_off():
    """EAGLE_NO_PLUGINS=1: nothing is imported from any plugin, and eagle works."""
    missing, listed = run({"EAGLE_NO_PLUGINS": "1"})
    assert missing.endswith("plugin loading is off (EAGLE_NO_PLUGINS is set)")
    assert listed == "[] 33546240.0 []"  # no plugin module, and not even pluggy, was imported


def test_a_plain_graph_does_not_load_plugins():
    """Built-in kinds never trigger loading: a graph of them leaves the plugin loader untouched."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import eagle
        from eagle import _plugins
        x = np.ones(8)
        eagle.Graph().add_node(eagle.reduce(x, np.zeros(1))).build().launch()
        print(_plugins._LOADER.manager is None, "pluggy" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]
