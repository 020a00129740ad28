"""The lowering target: the host program and the GPU program implement one protocol, and a
kind whose work is written once against it (``lower=``) runs on either."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import eagle
from eagle._gpu_program import GpuProgram
from eagle._gpu_segments import GpuSegments
from eagle._program import Program
from eagle._target import Target
from eagle.graph import Node, register_node_kind

RUNNING = ("finalize", "run", "enqueue", "synchronize", "set_logical_size", "rebind", "stats")


def _protocol_methods() -> list[str]:
    return [name for name, value in vars(Target).items() if callable(value) and not name.startswith("_")]


def _signature(cls: type, name: str) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.default, p.kind) for p in inspect.signature(getattr(cls, name)).parameters.values()]


@pytest.mark.parametrize("cls", [Program, GpuProgram])
def test_both_programs_implement_the_target_with_its_signatures(cls):
    """Every method of the protocol, with the protocol's parameters and defaults."""
    methods = _protocol_methods()
    assert {"stage", "branch", "body", "node", "callback", "copy", "reduce", "if_", "switch", "loop",
            "signal", "wait", *RUNNING} <= set(methods)
    for name in methods:
        assert _signature(cls, name) == _signature(Target, name), name
    assert isinstance(cls.patches, bool)


def test_gpu_segments_run_like_a_target():
    """The segments of a graph cut by an eager node are a finalized target: the running half."""
    for name in RUNNING:
        assert _signature(GpuSegments, name) == _signature(Target, name), name


def _lower_scaled_copy(p: dict[str, Any], target: Target) -> None:
    """A copy, then a Python step over the copy, then the fixed-order sum of it."""
    target.copy(p["x"], p["y"])
    target.callback(lambda: np.multiply(p["y"], 2.0, out=p["y"]), touches=[p["y"]])
    target.reduce(p["y"], p["total"])


register_node_kind("test_target_scaled_copy", reads=lambda p: [("x", p["x"], "read")],
                   writes=lambda p: [("y", p["y"], "write"), ("total", p["total"], "write")],
                   lower=_lower_scaled_copy)


def test_a_kind_lowered_once_runs_on_the_host():
    """``lower=`` is the kind's host lowering too (no native work: it never runs as branch tasks)."""
    x = np.random.default_rng(3).standard_normal(3000)
    y, total, expected = np.zeros_like(x), np.zeros(1), np.zeros(1)
    g = eagle.Graph().add_node(Node("test_target_scaled_copy", {"x": x, "y": y, "total": total}))
    g.build().launch()
    eagle.Graph().add_node(eagle.reduce(2.0 * x, expected)).build().launch()
    assert g.backend == "cpu"
    np.testing.assert_array_equal(y, 2.0 * x)
    assert total.tobytes() == expected.tobytes()


def test_lower_is_given_alone():
    """A kind's work is written once (lower=) or per target (lower_cpu, lower_gpu, native)."""
    with pytest.raises(ValueError, match=r"^eagle\.graph\.register_node_kind: .* gives lower and also "
                                         r"lower_cpu, lower_gpu or native; give lower alone"):
        register_node_kind("test_target_both", reads=lambda p: [], writes=lambda p: [],
                           lower=lambda p, t: None, lower_cpu=lambda p: lambda: None)


def test_signal_and_wait_are_by_key_and_mean_something_under_branch_tasks_only():
    """A work_share stage runs its branches in order: a signal and its wait add nothing there."""
    calls: list[str] = []
    key = object()
    p = Program().stage().callback(lambda: calls.append("a")).signal(key)
    p.branch().wait(key).callback(lambda: calls.append("b"))
    p.finalize().run()
    assert calls == ["a", "b"]
