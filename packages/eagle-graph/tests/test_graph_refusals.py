"""What eagle.Graph refuses (seed 001, "What is refused"; issue 3), and Plan construction and binding."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
from eagle.graph import Node, opaque, register_node_kind
from eagle.native import Library
from eagle.plan import Param, Plan


def nop() -> None:
    pass


class FakeDeviceArray:
    """A stand-in for a CuPy array: it exposes only ``__cuda_array_interface__``."""

    def __init__(self, n: int = 8) -> None:
        self._memory = np.zeros(n)  # an address for the interface to point at
        self.shape, self.ndim, self.size, self.dtype = (n,), 1, n, self._memory.dtype

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"data": (self._memory.ctypes.data, False), "shape": self.shape, "typestr": "<f8",
                "strides": None, "version": 3}


def guard() -> eagle.SkipGuard:
    return eagle.SkipGuard.nonzero(np.zeros(1, np.uint32))


# ----------------------------------------------------------- racing siblings


def racing_graph() -> eagle.Graph:
    """seed, then a fork whose branch 'v' reads the tail of what its sibling 'u' writes."""
    buf, other = np.zeros(8), np.zeros(8)
    g = eagle.Graph().add_node(opaque(nop, writes={"seed_out": other}), name="seed")
    g.add_group([opaque(nop, reads={"s": other}, writes={"a": buf}),
                 opaque(nop, reads={"tail": buf[4:]})], names=["u", "v"])
    return g


def test_siblings_that_race_are_refused_naming_nodes_and_planes():
    """Two branches where one writes what the other reads: both nodes and both planes are named."""
    g = racing_graph()
    with pytest.raises(ValueError) as info:
        g.build()
    assert str(info.value) == (
        "eagle.Graph.build: 'u' (node 1) and 'v' (node 2) are siblings of one fork/join group but "
        "overlap (RAW): 'u' plane 'a' and 'v' plane 'tail' share memory; give each branch its own "
        "plane or put them in one branch")


def test_siblings_writing_one_plane_race(plans):
    """Two plan branches rewriting one plane are refused; in one branch they build and run in order."""
    x = np.ones(16)
    g = eagle.Graph().add_group([plans.scale.bind(x, 2.0), plans.shift.bind(x, 1.0)], names=["s", "t"])
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: 's' (node 0) and 't' (node 1) are siblings of one fork/join group but "
            "overlap (RAW): 's' plane 'x' and 't' plane 'x' share memory")):
        g.build()
    g = eagle.Graph().add_group([[plans.scale.bind(x, 2.0), plans.shift.bind(x, 1.0)]]).build().launch()
    np.testing.assert_array_equal(x, np.full(16, 3.0))


def test_race_report_skips_declared_scalars():
    """A racing node that also declares a scalar is still reported by its array planes."""
    buf = np.zeros(8)
    g = eagle.Graph().add_group([opaque(nop, writes={"c": 2.0, "a": buf}), opaque(nop, reads={"t": buf[4:]})],
                                names=["u", "v"])
    with pytest.raises(ValueError, match=re.escape("overlap (RAW): 'u' plane 'a' and 'v' plane 't' share")):
        g.build()


def test_siblings_that_only_read_a_plane_build():
    """Siblings sharing a read-only plane do not race."""
    x, a, b = np.zeros(8), np.zeros(8), np.zeros(8)
    g = eagle.Graph().add_group([opaque(nop, reads={"x": x}, writes={"a": a}),
                                 opaque(nop, reads={"x": x}, writes={"b": b})]).build()
    assert g.backend == "cpu"


def test_a_failed_build_leaves_the_graph_as_it_was():
    """After a refused build: not built, same nodes, stages and edges; building again refuses the same way."""
    g = racing_graph()
    labels, edges, text = g.node_labels(), g.edges(), str(g)
    with pytest.raises(ValueError) as first:
        g.build()
    assert (g.backend, g.schedule) == (None, None)
    assert g.node_labels() == labels and g.edges() == edges and str(g) == text
    assert repr(g) == "<eagle.Graph 3 nodes, 2 stages, not built>"
    with pytest.raises(ValueError) as second:
        g.build()
    assert str(second.value) == str(first.value)
    g.add_node(opaque(nop))  # still open for adding: it was never built
    assert len(g.node_labels()) == 4


def test_a_refused_backend_leaves_the_graph_buildable(plans):
    """A build refused for its backend= changes nothing: the next build succeeds."""
    x = np.zeros(8)
    g = eagle.Graph().add(plans.shift.bind(x, 1.0))
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: backend='gpu' but every plane is a host"):
        g.build(backend="gpu")
    assert g.backend is None
    g.build(backend="cpu").launch()
    np.testing.assert_array_equal(x, np.ones(8))


# --------------------------------------------------------- copy-bound planes


def test_non_contiguous_plane_is_refused_at_add(plans):
    """A plan over a strided view would need a copy before every launch: refused at add."""
    x = np.zeros(16)
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.add: plan 'scale' plane 'x' is not contiguous and would need a copy")):
        eagle.Graph().add(plans.scale.bind(x[::2], 2.0))
    m = np.zeros((4, 16), order="F")
    with pytest.raises(ValueError, match="plane 'x' is not contiguous"):
        eagle.Graph().add(plans.scale.bind(m, 2.0))
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: plan 'p' plane 'x' is not contiguous"):
        eagle.Graph().add_group([plans.scale.bind(x[1:][::3], 2.0)], names=["p"])


def test_bound_plan_launch_refuses_a_strided_plane(plans):
    """BoundPlan.launch outside a graph refuses the same planes, and writes nothing."""
    base = np.arange(16.0)
    with pytest.raises(ValueError, match=re.escape(
            "eagle.plan.BoundPlan.launch: scale plane 'x' is not contiguous")):
        plans.scale.bind(base[::2], 2.0).launch()
    np.testing.assert_array_equal(base, np.arange(16.0))


def test_sample_major_plane_is_refused_at_add(plans):
    """An (n, k) plane beside n-sample planes is sample-major: refused, naming the (k, n) to pass."""
    src, out = np.zeros(16), np.zeros((16, 3))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.add: plan 'copy_k' plane 'out' is sample-major (16, 3): a plane holds one value "
            "per sample along its last axis; pass a (3, 16) array")):
        eagle.Graph().add(plans.copy_k.bind(src, out))
    eagle.Graph().add(plans.copy_k.bind(np.zeros((3, 16)), np.zeros((3, 16))))  # component-major: fine


def test_copy_bound_plane_in_a_conditional_is_refused(plans):
    """skippable(bound.launch) over a strided plane is refused at add too, and writes nothing."""
    base = np.arange(16.0)
    node = eagle.skippable(plans.scale.bind(base[::2], 2.0).launch, guard())
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_node: plan 'scale' plane 'x' is not "
                                         "contiguous"):
        eagle.Graph().add_node(node)
    np.testing.assert_array_equal(base, np.arange(16.0))


# --------------------------------------------------------- host and device


def test_a_node_with_planes_on_both_sides_is_refused():
    """One node may not read a NumPy plane and a device plane: refused naming both and the copy to add."""
    x, dev = np.zeros(8), FakeDeviceArray()
    g = eagle.Graph().add_node(opaque(nop, reads={"h": x, "d": dev}), name="layer")
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: node 'layer' has planes on both sides: host h, device d; add "
            "eagle.copy(h, into=<a device array>) before it")):
        g.build()
    assert g.backend is None


def test_backend_that_disagrees_with_the_planes_is_refused(plans):
    """backend='cpu' over device planes, or backend='gpu' over host planes, is refused."""
    dev = FakeDeviceArray()
    g = eagle.Graph().add_node(opaque(nop, writes={"d": dev}), name="dev_step")
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: backend='cpu' but the planes dev_step.d are device (CuPy) arrays")):
        g.build(backend="cpu")
    g = eagle.Graph().add_node(opaque(nop, reads={"c": 2.0}, writes={"d": dev}), name="dev_step")
    with pytest.raises(ValueError, match=re.escape(  # a scalar by value is no host plane
            "eagle.Graph.build: backend='cpu' but the planes dev_step.d are device (CuPy) arrays")):
        g.build(backend="cpu")
    g = eagle.Graph().add(plans.shift.bind(np.zeros(4), 1.0))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: backend='gpu' but every plane is a host (NumPy) array")):
        g.build(backend="gpu")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: backend must be None, 'cpu' or 'gpu'"):
        g.build(backend="tpu")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: dispatch='segmented' splits kernels as a "
                                         r"run goes; a built graph is one structure: use 'switch'"):
        g.build(dispatch="segmented")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: dispatch='fast' is not a policy"):
        g.build(dispatch="fast")
    assert g.build(dispatch="switch").dispatch == {}  # a native plan declares no dispatch group


# -------------------------------------------------- empty, built, second build


def test_empty_graph_is_refused():
    """Building a graph with no nodes is refused."""
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: the graph is empty: add nodes first"):
        eagle.Graph().build()


def test_second_build_is_refused(plans):
    """A built graph refuses a second build and keeps working."""
    x = np.zeros(4)
    g = eagle.Graph().add(plans.shift.bind(x, 1.0)).build()
    with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.build: the graph is already built; a second"):
        g.build()
    g.launch()
    np.testing.assert_array_equal(x, np.ones(4))


def test_adding_to_a_built_graph_is_refused(plans):
    """add, add_node and add_group on a built graph are refused, each naming itself."""
    x = np.zeros(4)
    g = eagle.Graph().add(plans.shift.bind(x, 1.0)).build()
    for api, call in [("add", lambda: g.add(plans.shift.bind(x, 1.0))),
                      ("add_node", lambda: g.add_node(opaque(nop))),
                      ("add_group", lambda: g.add_group([opaque(nop)]))]:
        with pytest.raises(RuntimeError, match=rf"^eagle\.Graph\.{api}: the graph is built; adding to a "
                                               "built graph is refused"):
            call()
    assert g.node_labels() == ["shift"]


def test_add_takes_only_a_bound_plan_and_add_node_only_a_node(plans):
    """add() of a non-BoundPlan and add_node() of a non-node are TypeErrors that say what to pass."""
    g = eagle.Graph()
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.add: takes a BoundPlan"):
        g.add(opaque(nop))
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.add_node: expected a node"):
        g.add_node(nop)
    assert g.node_labels() == [] and repr(g) == "<eagle.Graph 0 nodes, 0 stages, not built>"


# ---------------------------------------------------------------- add_group


def test_a_failed_add_group_adds_nothing(plans):
    """A group refused part-way adds no node and no stage, and frees the conditionals it took."""
    x = np.zeros(8)
    cond = eagle.skippable(opaque(nop, writes={"x": x}), guard())
    g = eagle.Graph().add(plans.shift.bind(x, 1.0))
    before = (g.node_labels(), g.edges(), repr(g))
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.add_group: expected a node"):
        g.add_group([cond, "not a node"])
    with pytest.raises(ValueError, match="is not contiguous"):
        g.add_group([[opaque(nop), plans.scale.bind(x[::2], 2.0)]])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: 2 branches but 1 names"):
        g.add_group([opaque(nop), opaque(nop)], names=["a"])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: give at least one branch"):
        g.add_group([])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: branch 1 is empty"):
        g.add_group([opaque(nop), []])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: branch 0 has 2 parts but 3 names"):
        g.add_group([[opaque(nop), opaque(nop)]], names=[["a", "b", "c"]])
    assert (g.node_labels(), g.edges(), repr(g)) == before
    eagle.Graph().add_node(cond)  # not taken by g
    g.build().launch()
    np.testing.assert_array_equal(x, np.ones(8))


# -------------------------------------------------------------- conditionals


def test_a_conditional_already_another_graphs_is_refused():
    """A conditional added to one graph is refused by a second, whether by add_node or add_group."""
    cond = eagle.skippable(opaque(nop), guard())
    eagle.Graph().add_node(cond, name="refine")
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.add_node: the conditional 'refine' is already another graph's; make a new "
            "eagle.skippable / eagle.repeat_while for this graph")):
        eagle.Graph().add_node(cond, name="refine")
    loop = eagle.repeat_while(nop, np.zeros(1, np.uint32), 3)
    eagle.Graph().add_group([loop])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.add_group: the conditional 'nop' is already"):
        eagle.Graph().add_group([loop])


def test_nested_conditional_is_refused():
    """A conditional inside a conditional is refused for now, by skippable and repeat_while."""
    inner = eagle.skippable(opaque(nop), guard())
    with pytest.raises(TypeError, match=r"^eagle\.skippable: a conditional nested in a conditional is "
                                        "refused for now"):
        eagle.skippable(inner, guard())
    with pytest.raises(TypeError, match=r"^eagle\.repeat_while: a conditional nested in a conditional"):
        eagle.repeat_while(inner, guard(), 4)


def test_tuple_as_a_loop_body_is_refused():
    """A tuple of parts as the step of a conditional is refused for now."""
    parts = (opaque(nop), opaque(nop))
    with pytest.raises(TypeError, match=r"^eagle\.repeat_while: a conditional holds one step, not a tuple"):
        eagle.repeat_while(parts, guard(), 4)
    with pytest.raises(TypeError, match=r"^eagle\.skippable: a conditional holds one step, not a tuple"):
        eagle.skippable(parts, guard())


def test_conditional_arguments_are_checked():
    """A guard must be a one-cell uint32 array, max_iters a positive int, the step callable."""
    with pytest.raises(TypeError, match=r"^eagle\.SkipGuard\.nonzero: a guard is a one-cell uint32 array"):
        eagle.SkipGuard.nonzero(np.zeros(1))
    with pytest.raises(TypeError, match=r"^eagle\.skippable: guard must be an eagle\.SkipGuard"):
        eagle.skippable(nop, np.zeros(1, np.uint32))
    with pytest.raises(ValueError, match=r"^eagle\.repeat_while: max_iters must be a positive int"):
        eagle.repeat_while(nop, guard(), 0)
    with pytest.raises(TypeError, match=r"^eagle\.skippable: step must be a node"):
        eagle.skippable(42, guard())


def test_reduce_arguments_are_checked():
    """reduce takes sum/max/all over a 1-D plane into one element."""
    with pytest.raises(ValueError, match=r"^eagle\.reduce: op must be one of"):
        eagle.reduce(np.zeros(4), np.zeros(1), "mean")
    with pytest.raises(ValueError, match=r"^eagle\.reduce: x must be a 1-D plane and out one element"):
        eagle.reduce(np.zeros((2, 2)), np.zeros(1))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.reduce: x must be contiguous and out of its dtype; got a strided float64 plane")):
        eagle.reduce(np.zeros(8)[::2], np.zeros(1))
    with pytest.raises(ValueError, match=r"and a float32 out: pass np\.ascontiguousarray"):
        eagle.reduce(np.zeros(8), np.zeros(1, np.float32))


# ---------------------------------------------------------------- node kinds


def _reads_nothing(payload: object) -> list:
    return []


def _lower_nop(payload: object):
    return nop


register_node_kind("test_refusals_kind", reads=_reads_nothing, writes=_reads_nothing, lower_cpu=_lower_nop)


def test_same_kind_twice_is_fine_a_different_one_is_refused():
    """Registering the same kind again returns it; a different kind under a taken name is refused."""
    kind = register_node_kind("test_refusals_kind", reads=_reads_nothing, writes=_reads_nothing,
                              lower_cpu=_lower_nop)
    assert kind.name == "test_refusals_kind"
    with pytest.raises(ValueError, match=r"^eagle\.graph\.register_node_kind: a different kind is already "
                                         "registered as 'test_refusals_kind'"):
        register_node_kind("test_refusals_kind", reads=_reads_nothing, writes=_reads_nothing,
                           lower_cpu=lambda p: nop)
    with pytest.raises(ValueError, match="already registered as 'opaque'"):
        register_node_kind("opaque", reads=_reads_nothing, writes=_reads_nothing, lower_cpu=_lower_nop)
    # the refused registrations changed nothing: the built-in and the test kind still run
    calls = []
    eagle.Graph().add_node(opaque(lambda: calls.append(1))).add_node(
        Node("test_refusals_kind", None)).build().launch()
    assert calls == [1]


def test_unknown_kind_and_kinds_without_a_cpu_lowering():
    """Node() of an unregistered kind is refused; a kind with no lower_cpu or a bad one fails build."""
    with pytest.raises(KeyError, match="no node kind 'test_refusals_missing' is registered"):
        Node("test_refusals_missing", None)
    register_node_kind("test_refusals_gpu_only", reads=_reads_nothing, writes=_reads_nothing)
    g = eagle.Graph().add_node(Node("test_refusals_gpu_only", None), name="gpu_only")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: node 'gpu_only' of kind "
                                         "'test_refusals_gpu_only' has no CPU lowering"):
        g.build()
    assert g.backend is None


# --------------------------------------------------------------------- plans


def test_plan_from_library_path(kernels, plans):
    """Plan.from_library takes a shared library's path (or a Library) and a symbol."""
    plan = Plan.from_library(kernels.path, "scale", [("x", "readwrite"), ("c", "value")])
    assert plan.name == "scale"
    assert repr(plan) == "<eagle.plan.Plan scale(x: readwrite, c: value)>"
    x = np.full(8, 1.5)
    eagle.Graph().add(plan.bind(x, 4.0)).build().launch()
    np.testing.assert_array_equal(x, np.full(8, 6.0))
    again = Plan.from_library(Library(kernels.path), "shift", [Param("x", "readwrite"), Param("d", "value")],
                              name="nudge")
    assert again.name == "nudge"
    again.bind(x, 1.0).launch()  # a bound plan also runs on its own
    np.testing.assert_array_equal(x, np.full(8, 7.0))
    with pytest.raises(AttributeError, match="has no symbol 'no_such_kernel'"):
        Plan.from_library(kernels.path, "no_such_kernel", [])


def test_plan_roles_and_value_types_are_checked(kernels):
    """An unknown role or value type is refused when the Plan is made."""
    with pytest.raises(ValueError, match=r"^eagle\.plan\.Plan: parameter 'x' has role 'inout'"):
        Plan(kernels.kernel("scale"), [("x", "inout")])
    with pytest.raises(ValueError, match="value types"):
        Plan(kernels.kernel("scale"), [("x", "readwrite"), ("c", "value", "f16")])


def test_bind_by_position_and_keyword(plans):
    """bind fills parameters by position, then by name."""
    x = np.zeros(8)
    a = plans.axpy.bind(np.ones(8), x, c=2.0)
    b = plans.axpy.bind(x=np.ones(8), y=x, c=2.0)
    assert a.samples == b.samples == 8
    assert repr(a) == "<eagle.plan.BoundPlan axpy over 8 samples>"
    assert [(n, r) for n, _, r in a.planes()] == [("x", "read"), ("y", "readwrite")]


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((np.zeros(4),), {}, "eagle.plan.Plan.bind: scale is missing c"),
    ((), {}, "eagle.plan.Plan.bind: scale is missing x, c"),
    ((np.zeros(4), 1.0, 2.0), {}, "eagle.plan.Plan.bind: scale takes 2 arguments (x, c), got 3"),
    ((np.zeros(4), 1.0), {"d": 1.0}, "eagle.plan.Plan.bind: scale has no parameter 'd'; its parameters "
                                     "are x, c"),
    ((np.zeros(4), 1.0), {"x": np.zeros(4)}, "eagle.plan.Plan.bind: scale got 'x' twice"),
    ((np.zeros(4), np.zeros(4)), {}, "eagle.plan.Plan.bind: scale parameter 'c' is a value; got ndarray"),
    ((2.0, 1.0), {}, "eagle.plan.Plan.bind: scale parameter 'x' (readwrite) is the number 2.0, a value "
                     "copied where it is passed (a NumPy scalar too, e.g. a[5, 5]): pass an array, e.g. a "
                     "one-cell a[5:6, 5]"),
])
def test_bind_errors(plans, args, kwargs, message):
    """Missing, extra, unknown and duplicate arguments, and a value where a plane goes (or back)."""
    with pytest.raises(TypeError) as info:
        plans.scale.bind(*args, **kwargs)
    assert str(info.value) == message
