"""The DOT face: Graphviz renders it, quotes and non-ASCII labels included."""

from __future__ import annotations

import subprocess

import numpy as np

import eagle
from eagle.graph import opaque


def test_dot_renders_every_graph(any_graph, dot, tmp_path):
    """dot -Tpng and -Tsvg accept to_dot(), with nothing on stderr."""
    for fmt in ("png", "svg"):
        out = tmp_path / f"g.{fmt}"
        run = subprocess.run([dot, f"-T{fmt}", "-o", str(out)], input=any_graph.to_dot(), capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0 and not run.stderr, run.stderr
        assert out.stat().st_size > 0


def test_labels_are_quoted(dot):
    """A name with quotes, backslashes and '≤' is one DOT string; Graphviz reads it back whole."""
    x = np.zeros(2)
    g = eagle.Graph().add_node(opaque(lambda: None, writes={'say "hi"': x}), name='a "quoted" \\ name')
    g.add_node(eagle.repeat_while(opaque(lambda: None, reads={"x": x}), np.ones(1, np.uint32), 3), name="b")
    text = g.to_dot()
    assert 'label="<a \\"quoted\\" \\\\ name>"' in text and 'label="repeat ≤ 3"' in text
    plain = subprocess.run([dot, "-Tplain"], input=text, capture_output=True, text=True, check=True).stdout
    assert '"<a \\"quoted\\" \\\\ name>"' in plain or '<a "quoted" \\ name>' in plain


def test_graph_label_is_the_header(graphs):
    """The DOT graph's label is the header line every face shows."""
    g = graphs.seed_001().build()
    assert 'label="eagle.Graph 4 nodes · 1 group · backend: cpu"' in g.to_dot().splitlines()[1]
