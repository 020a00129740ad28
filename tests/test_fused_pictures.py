"""A fused run is one frame around its nodes in every picture; an unfused graph has none."""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.viz")
from hawk import Param, Scalar  # noqa: E402


@hawk.kernel
def scale(x: Scalar, a: Param) -> Scalar:
    return x * a


@hawk.kernel
def centre(x: Scalar) -> Scalar:
    return x - hawk.sum(x)


def chain(fuse: bool) -> eagle.Graph:
    first = scale.plan(np.ones(8), 2.0)
    second = scale.plan(first.outputs[0], 3.0)
    last = centre.plan(second.outputs[0])
    g = eagle.Graph().add(first, name="first").add(second, name="second").add(last, name="last")
    return g.build(fuse=fuse)


def test_the_text_and_the_mermaid_picture_frame_a_fused_run():
    g = chain(True)
    assert g.fused == [("first", "second", "last")]
    text = str(g)
    assert "fused 3" in text and text.count("stage") == 1  # one stage: the run
    assert 'subgraph f0["fused 3"]' in g.to_mermaid()
    assert "fused 3" in g.to_dot()
    plain = chain(False)
    assert plain.fused == [] and "fused" not in str(plain) and str(plain).count("stage") == 3


def test_the_plot_frames_a_fused_run():
    pytest.importorskip("matplotlib")
    figure = chain(True).plot()
    assert "fused 3" in [t.get_text() for ax in figure.axes for t in ax.texts]
