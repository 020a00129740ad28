"""The descriptive hooks of a node kind: their defaults, the built-in kinds' answers, a plugin's
registry passing them through, and Swap rebuilding through them."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle import _kinds
from eagle._regions import SignalAfter, Wait
from eagle.graph import (
    BoxPicture,
    ChoiceFlow,
    FramePicture,
    InnerFlow,
    LeafFlow,
    LoopFlow,
    Node,
    NoFlow,
    NoPicture,
    Swap,
    node_kind,
    register_node_kind,
)
from eagle.hookspecs import KindRegistry


class Payload:
    def __init__(self, x: np.ndarray) -> None:
        self.x = x


def _planes(p: Payload) -> list[tuple[str, np.ndarray, str]]:
    return [("x", p.x, "readwrite")]


def _register(name: str) -> None:
    register_node_kind(name, reads=_planes, writes=_planes, lower_cpu=lambda p: lambda: None)


def test_a_kind_without_hooks_is_a_leaf_box_named_by_its_kind():
    _register("test_kind_hooks_bare")
    node = Node("test_kind_hooks_bare", Payload(np.zeros(2)))
    assert (node.default_label(), node.picture(), node.flow(), node.bodies(), node.samples()) == (
        "test_kind_hooks_bare", BoxPicture(), LeafFlow(), (), None)
    assert list(node.walk()) == [node]


def test_a_payload_that_says_its_samples_is_heard_without_the_hook():
    """Plugins written before the ``samples`` hook (eagle-scan) keep a ``samples`` attribute."""
    payload = Payload(np.zeros(2))
    payload.samples = 2
    _register("test_kind_hooks_counted")
    assert Node("test_kind_hooks_counted", payload).samples() == 2


def test_the_built_in_kinds_describe_themselves():
    x, cell = np.zeros(2), np.zeros(1, np.uint32)
    step = eagle.opaque(lambda: x.fill(1.0), writes={"x": x}, stream=0x1)
    skip = eagle.skippable(step, eagle.SkipGuard.nonzero(cell))
    assert skip.default_label() == "opaque" and [n for n in skip.walk()] == [skip, step]
    assert skip.picture() == FramePicture("skip if guard", "skip", around=BoxPicture("python", "stream"))
    assert isinstance(skip.flow(), ChoiceFlow) and skip.flow().arms[1].steps == [step]
    loop = Node("device_loop", eagle.DeviceLoop(cell, "do", 4, eagle.Body([step])))
    assert loop.flow() == LoopFlow(cell, "do", 4, loop.payload.body)
    assert loop.picture() == FramePicture("repeat ≤ 4", "loop", (loop.payload.body,))
    signal = Node("signal_after", SignalAfter(step))
    wait = Node("wait", Wait(signal, "x"))
    assert signal.flow() == InnerFlow(step) and signal.picture() == step.picture()
    assert (wait.flow(), wait.picture(), wait.samples()) == (NoFlow(), NoPicture(signal), 0)


def test_swap_rebuilds_held_nodes_through_their_kinds():
    x, y, cell = np.zeros(3), np.ones(3), np.zeros(1, np.uint32)
    copy = eagle.copy(np.arange(3.0), into=x)
    loop = Node("device_loop", eagle.DeviceLoop(cell, "while", -1, eagle.Body([copy])))
    fresh = Swap(lambda a: y if a is x else a).node(loop)
    assert fresh is not loop and fresh.payload.body.steps[0].payload.dst is y
    assert copy.payload.dst is x  # not in place: the old nodes are left as they were
    Swap(lambda a: y if a is x else a, in_place=True).node(loop)
    assert loop.payload.body.steps[0] is copy and copy.payload.dst is y


def test_swap_refuses_a_kind_without_rebuild_that_holds_a_swapped_array():
    x = np.zeros(3)
    step = eagle.opaque(lambda: None, writes={"x": x})
    with pytest.raises(ValueError, match=r"^eagle\.graph\.Swap: node 'opaque' of kind 'opaque' .* holds x, "
                                         r"which are swapped, and the kind has no rebuild="):
        Swap(lambda a: np.ones(3) if a is x else a).node(step)
    assert Swap(lambda a: a).node(step) is step  # nothing it holds is swapped


def test_a_plugin_registry_passes_the_hooks_through_and_refuses_an_unknown_one():
    table = dict(_kinds._REGISTRY)
    registry = KindRegistry("eagle-x", table)
    kind = registry.register_node_kind("test_kind_hooks_plugin", reads=_planes, writes=_planes,
                                       label=lambda p: "mine", picture=lambda p: NoPicture())
    assert (kind.label_of(None), kind.picture_of(None), kind.plugin) == ("mine", NoPicture(), "eagle-x")
    with pytest.raises(TypeError, match=r"^eagle\.plugins: plugin eagle-x: register_node_kind\("
                                        r"'test_kind_hooks_typo'\) got inerr; the hooks are bodies, "):
        registry.register_node_kind("test_kind_hooks_typo", reads=_planes, writes=_planes, inerr=None)
    assert node_kind("copy").rebuild is not None and node_kind("opaque").rebuild is None
