"""eagle.Graph's picture methods delegate to eagle.viz, and name the package when it is missing."""

from __future__ import annotations

import sys

import pytest

import eagle
import eagle.viz


def test_methods_are_the_viz_functions(graphs):
    """g.to_mermaid(), g.to_dot() and str(g) are eagle.viz's faces of g."""
    g = graphs.seed_001()
    assert g.to_mermaid() == eagle.viz.to_mermaid(g)
    assert g.to_dot() == eagle.viz.to_dot(g)
    assert str(g) == eagle.viz.render_text(g)


@pytest.mark.parametrize(("call", "install"), [
    (lambda g: g.plot(), "'eagle-viz[plot]'"), (lambda g: g.to_mermaid(), "eagle-viz"),
    (lambda g: g.to_dot(), "eagle-viz")])
def test_without_eagle_viz_the_error_names_the_package(graphs, monkeypatch, call, install):
    """Without eagle.viz, each method raises an ImportError that starts with its API and names the package."""
    g = graphs.seed_002()
    monkeypatch.setitem(sys.modules, "eagle.viz", None)
    with pytest.raises(ImportError) as info:
        call(g)
    api = {"'eagle-viz[plot]'": "plot"}.get(install)
    assert str(info.value).startswith("eagle.Graph.")
    assert str(info.value).endswith(f"pictures come from the eagle-viz package: pip install {install}")
    if api:
        assert str(info.value).startswith("eagle.Graph.plot:")
    assert str(g).splitlines()[1].startswith("stage 0: l | r")  # str(g) falls back to the listing


@pytest.mark.parametrize("face", ["render_text", "to_mermaid", "to_dot"])
def test_faces_refuse_what_is_not_a_graph(face):
    """A non-graph is a TypeError whose message starts with the Graph method's API name."""
    api = {"render_text": "__str__"}.get(face, face)
    with pytest.raises(TypeError, match=rf"^eagle\.Graph\.{api}: expected an eagle\.Graph, got int$"):
        getattr(eagle.viz, face)(3)


def test_a_graph_draws_while_another_thread_runs_it(graphs):
    """Looking takes no guard: the pictures of a built graph are the same after launches."""
    g = graphs.seed_001().build()
    before = (str(g), g.to_mermaid(), g.to_dot())
    g.launch(2)
    assert (str(g), g.to_mermaid(), g.to_dot()) == before
