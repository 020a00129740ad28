"""A kernel whose written plane partly overlaps a plane it reads is refused (issue 17, defect 4):
its blocks run on several threads, so it would read what other samples already wrote."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
from eagle.graph import Node
from eagle.plan import Plan

PARTLY = "writes plane 'out', which partly overlaps plane 'src' it reads"


def test_partly_overlapping_planes_are_refused_at_add(plans):
    x = np.arange(10000.0)
    at_add = "^" + re.escape(f"eagle.Graph.add: plan 'shifted' {PARTLY}")
    with pytest.raises(ValueError, match=at_add) as info:
        eagle.Graph().add(plans.copy_k.bind(x[:-1], x[1:]), name="shifted")
    assert "x[1:].copy()" in str(info.value)
    with pytest.raises(ValueError, match="^" + re.escape(f"eagle.plan.BoundPlan.launch: copy_k {PARTLY}")):
        plans.copy_k.bind(x[1:], x[:-1]).launch()
    assert x.tolist() == np.arange(10000.0).tolist()  # nothing ran


def test_a_partly_overlapping_kernel_held_by_a_conditional_is_refused(plans):
    x, skip = np.arange(16.0), np.zeros(1, np.uint32)
    node = eagle.skippable(Node("plan", plans.copy_k.bind(x[:-2], x[2:])), eagle.SkipGuard.nonzero(skip))
    with pytest.raises(ValueError, match="^" + re.escape(f"eagle.Graph.add_node: plan 'copy_k' {PARTLY}")):
        eagle.Graph().add_node(node)


def test_the_same_view_read_and_written_by_a_per_sample_kernel_stays_allowed(plans):
    x = np.arange(8.0)
    eagle.Graph().add(plans.copy_k.bind(x, x)).add(plans.copy_k.bind(x[2:], x[2:])).build().launch()
    plans.mix.bind(x[:4], x[4:]).launch()  # disjoint halves: fine


def test_the_same_view_in_a_kernel_that_is_not_per_sample_is_refused(kernels):
    serial = Plan(kernels.kernel("copy_k"), [("src", "read"), ("out", "write")], name="serial",
                  per_sample=False)
    x = np.arange(8.0)
    with pytest.raises(ValueError, match=re.escape("plan 'serial' writes plane 'out', which is plane 'src' "
                                                   "it reads, and the kernel is not per-sample")):
        eagle.Graph().add(serial.bind(x, x))
