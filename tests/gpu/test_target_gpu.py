"""A kind whose work is written once against the lowering target (``lower=``) runs in a CUDA
graph too, inside a device conditional as well, with the host's bits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import eagle
from eagle.graph import Node, register_node_kind


@dataclass(frozen=True)
class SaveAndSum:
    x: Any
    saved: Any
    total: Any


def _lower(p: SaveAndSum, target: Any) -> None:
    target.copy(p.x, p.saved)
    target.reduce(p.saved, p.total)


register_node_kind("test_target_gpu_save_and_sum", reads=lambda p: [("x", p.x, "read")],
                   writes=lambda p: [("saved", p.saved, "write"), ("total", p.total, "write")],
                   lower=_lower, both_sides=True)


def _node(x: Any, saved: Any, total: Any) -> Node:
    return Node("test_target_gpu_save_and_sum", SaveAndSum(x, saved, total))


def test_a_kind_lowered_once_gives_the_hosts_bits_on_the_gpu(gpu):
    x = np.random.default_rng(5).standard_normal(3000)
    saved, total = np.zeros_like(x), np.zeros(1)
    eagle.Graph().add_node(_node(x, saved, total)).build().launch()
    d_x, d_saved, d_total = gpu.asarray(x), gpu.zeros(x.shape), gpu.zeros(1)
    g = eagle.Graph().add_node(_node(d_x, d_saved, d_total)).build().launch()
    assert g.backend == "gpu"
    assert gpu.get(d_saved).tobytes() == saved.tobytes()
    assert gpu.get(d_total).tobytes() == total.tobytes()


def test_a_kind_lowered_once_runs_in_a_device_if_body(gpu):
    x = np.arange(10.0)
    d_x, d_saved, d_total = gpu.asarray(x), gpu.zeros(x.shape), gpu.zeros(1)
    cell = gpu.asarray(np.array([0], np.uint32))
    body = eagle.Body([_node(d_x, d_saved, d_total)])
    g = eagle.Graph().add_node(Node("device_if", eagle.DeviceIf(cell, body, eagle.Body([])))).build()
    g.launch()
    assert gpu.get(d_total)[0] == 0.0  # the cell says skip
    gpu.put(cell, np.array([1], np.uint32))
    g.launch()
    assert gpu.get(d_total)[0] == 45.0
    np.testing.assert_array_equal(gpu.get(d_saved), x)
