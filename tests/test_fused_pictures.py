"""A fused run is one frame around its nodes in every picture; an unfused graph has none."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
from eagle.graph import opaque

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.viz")
from hawk import Mutable, Param, Scalar  # noqa: E402


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


@hawk.kernel
def bump(x: Mutable[Scalar], a: Param):
    x = x + a


@eagle.Graph.builder
def forked(x, y, z, more):
    """A kernel, a fork of two-kernel branches, a kernel, a capped loop of two kernels."""
    g = eagle.Graph()
    bump(x, 1.0)
    with g.parallel() as p:
        with p.branch():
            bump(y, 2.0)
            bump(y, 3.0)
        with p.branch():
            bump(z, 4.0)
            bump(z, 5.0)
    bump(z, 6.0)
    for _ in range(5):
        if not more:
            break
        bump(x, 7.0)
        bump(x, 8.0)
    g.result = x
    return g


def frames(g: eagle.Graph) -> dict[str, list[str]]:
    """Each face's frame labels, in the order they open."""
    out = {"text": [], "mermaid": re.findall(r'subgraph f\d+\["(.*)"\]', g.to_mermaid()),
           "dot": re.findall(r'subgraph cluster_f\d+ \{\n\s*label="(.*?)";', g.to_dot())}
    for line in str(g).splitlines():  # frames side by side share a line
        out["text"] += re.findall(r"╭─+ (.+?) ─+╮", line)
    return out


@pytest.fixture
def two_threads():
    """A team of two, whatever EAGLE_NUM_THREADS says: branch_tasks needs one (seed 001's rule)."""
    from eagle import _core

    before = _core.num_threads()
    _core.set_num_threads(2)
    yield
    _core.set_num_threads(before)


def test_runs_inside_branches_and_a_loop_body_are_listed_and_framed(two_threads):
    n = 8  # a fork this small runs its branches as tasks: a run in each branch
    g = forked(np.ones(n), np.ones(n), np.ones(n), np.ones(1, np.uint32))
    assert g.schedule[1] == "branch_tasks"
    assert [(run.nodes, run.where) for run in g.fused_runs] == [
        (("bump", "bump"), "stage 1, branch 0"), (("bump", "bump"), "stage 1, branch 1"),
        (("bump", "bump"), "body of 'loop' (stage 3)")]
    assert g.fused == [run.nodes for run in g.fused_runs]
    for face, labels in frames(g).items():
        assert labels == ["fused 2", "fused 2", "repeat ≤ 5", "fused 2"], face


def test_a_run_through_a_work_share_fork_is_one_frame_around_it():
    n = 1 << 20  # a fork this large shares the team: its branches are one item list with the rest
    g = forked(np.ones(n), np.ones(n), np.ones(n), np.ones(1, np.uint32))
    assert g.schedule[:3] == ["work_share"] * 3
    assert [(len(run.nodes), run.where) for run in g.fused_runs] == [(6, "stages 0-2"),
                                                                     (2, "body of 'loop' (stage 3)")]
    for face, labels in frames(g).items():
        assert labels == ["fused 6", "repeat ≤ 5", "fused 2"], face
    assert str(g).count("stage") == 2 and "stages 0–2 work_share" in str(g)  # the run's three stages as one


def test_a_run_a_fork_cuts_is_framed_in_parts():
    n = 1 << 20
    x, y = np.ones(n), np.ones(n)
    g = eagle.Graph().add(bump.plan(x, 1.0), name="first")
    g.add_group([bump.plan(x, 2.0), opaque(lambda: None, reads={"y": y})], names=["joins", "python"])
    g.build()
    assert g.schedule == ["work_share", "work_share"]
    assert [(run.nodes, run.where) for run in g.fused_runs] == [(("first", "joins"), "stages 0-1")]
    for face, labels in frames(g).items():
        assert labels == ["fused 2, part 1 of 2", "fused 2, part 2 of 2"], face


def test_the_plot_frames_runs_in_bodies():
    pytest.importorskip("matplotlib")
    g = forked(np.ones(8), np.ones(8), np.ones(8), np.ones(1, np.uint32))
    texts = [t.get_text() for ax in g.plot().axes for t in ax.texts]
    assert texts.count("fused 2") == 3 and "repeat ≤ 5" in texts
