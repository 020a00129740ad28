"""The Mermaid face: a flowchart TD that Mermaid's own parser accepts."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import eagle
from eagle.graph import opaque

#: Parses stdin with Mermaid (``npm install mermaid jsdom`` in $EAGLE_VIZ_MERMAID); prints OK or the error.
PARSE = """
import { JSDOM } from 'jsdom';
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window; globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
let text = ''; for await (const chunk of process.stdin) text += chunk;
try { await mermaid.parse(text); console.log('OK'); } catch (e) { console.log(e.message); process.exit(1); }
"""


def test_seed_001_as_mermaid(graphs):
    """Seed 001's graph: dashed opaque nodes, the frame a subgraph, each arrow labelled with its plane."""
    text = graphs.seed_001().build().to_mermaid()
    assert text.splitlines()[:4] == ["flowchart TD", "  %% eagle.Graph 4 nodes · 1 group · backend: cpu",
                                     "  %% stage 0 work_share", '  n0["seed"]:::opaque']
    assert '  subgraph f0["skip if guard"]\n    n3["combine"]:::opaque\n  end' in text
    assert '  n2 -->|"right_result"| n3' in text
    assert "classDef opaque fill:#f2f2f2,stroke:#505050,stroke-dasharray:5 4" in text


def test_syntax_characters_are_entity_codes(graphs):
    """<, >, quotes, # and | in a label become Mermaid entity codes; an order-only link is dotted."""
    text = graphs.seed_002().to_mermaid()
    assert 'n0["#lt;l#gt;"]:::python' in text
    x = np.zeros(2)
    g = eagle.Graph().add_node(opaque(lambda: None, reads={"x": x}), name='say "#1 | 2"')
    g.add_node(opaque(lambda: None, writes={"x": x}), name="w")
    text = g.to_mermaid()
    assert 'n0["#lt;say #quot;#35;1 #124; 2#quot;#gt;"]' in text
    assert "  n0 -.-> n1" in text


def test_mermaid_parses_every_graph(any_graph):
    """Mermaid's parser accepts to_mermaid() (where node and the npm packages are at hand)."""
    where = os.environ.get("EAGLE_VIZ_MERMAID")
    if not (where and shutil.which("node")):
        pytest.skip("set EAGLE_VIZ_MERMAID to a folder with `npm install mermaid jsdom` done to run Mermaid")
    for graph in (any_graph, any_graph if any_graph.backend else any_graph.build()):
        run = subprocess.run(["node", "--input-type=module", "-e", PARSE], cwd=where,
                             input=graph.to_mermaid(), capture_output=True, text=True, timeout=120)
        assert run.stdout.strip() == "OK", run.stdout + run.stderr
