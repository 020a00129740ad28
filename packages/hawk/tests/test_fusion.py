"""hawk.fusion: a run of launches as one kernel IR, held to the launches run one by one.

The fused IR is evaluated by the NumPy reference evaluator against the
launches evaluated in order; the compiled fused code is held to the unfused
graph bit for bit in tests/test_fusion.py (top level).
"""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Mutable, Param, Scalar
from hawk.fusion import fuse, fusible
from hawk.ir import If, KernelIR, Load, Store, Var, walk
from hawk.phases import split
from hawk.reference import evaluate


@hawk.kernel
def scale(x: Scalar, a: Param) -> Scalar:
    return x * a


@hawk.kernel
def shift_in_place(x: Mutable[Scalar], b: Param):
    x = x + b


@hawk.kernel
def total(x: Scalar):
    return hawk.sum(x * 2.0)


@hawk.kernel
def two_sums(x: Scalar, y: Scalar):
    return hawk.sum(x), hawk.max(y * 3.0)


def test_chain_forwards_and_stores_only_the_live_plane():
    x = np.linspace(-2.0, 2.0, 37)
    b1 = scale.plan(x, 1.5)
    b2 = scale.plan(b1.outputs[0], 0.5)
    b3 = shift_in_place.plan(b2.outputs[0], 0.25)
    members = [(b.plan.compiled.ir, [id(a) if isinstance(a, np.ndarray) else None for a in b.args[:len(
        b.plan.compiled.ir.slots)]]) for b in (b1, b2, b3)]
    dead = id(b1.outputs[0])
    fused = fuse(members, lambda key: key != dead, "chain")
    loads = [s for s in walk(fused.ir.body) if isinstance(s, Load) and not fused.ir.slots[s.slot].uniform]
    stores = [s for s in walk(fused.ir.body) if isinstance(s, Store)]
    assert len(loads) == 1 and len(stores) == 1  # x read once, the last plane stored once
    assert [s.role for s in fused.ir.slots if s.role != "value"] == ["read", "write"]
    out = b2.outputs[0]
    out[:] = 0.0
    evaluate(fused.ir, [[b1, b2, b3][m].args[k] for m, k in fused.origins], x.size)
    np.testing.assert_array_equal(out, (x * 1.5 * 0.5) + 0.25)


def test_reductions_share_a_phase():
    x, y = np.linspace(0.0, 1.0, 50), np.linspace(1.0, 3.0, 50)
    b1, b2 = total.plan(x), two_sums.plan(x, y)
    members = [(b.plan.compiled.ir, [id(a) for a in b.args[:len(b.plan.compiled.ir.slots)]])
               for b in (b1, b2)]
    fused = fuse(members, lambda key: True, "sums")
    phased = split(fused.ir, shared=True)
    assert len(phased.phases) == 2 and {r.phase for r in phased.reductions} == {0}
    assert not any(isinstance(s, Load) and not phased.slots[s.slot].uniform for s in walk(phased.phases[-1]))
    outs = [np.zeros(1) for _ in range(3)]
    args = [{id(b1.outputs[0]): outs[0], id(b2.outputs[0]): outs[1], id(b2.outputs[1]): outs[2]}.get(
        id([b1, b2][m].args[k]), [b1, b2][m].args[k]) for m, k in fused.origins]
    evaluate(fused.ir, args, 50)
    assert outs[0][0] == hawk.sum(x * 2.0) and outs[1][0] == hawk.sum(x) and outs[2][0] == hawk.max(y * 3.0)


def test_a_store_inside_an_if_is_not_fusible():
    ir = scale.ir(np.zeros(3), 1.0)
    assert fusible(ir)
    store = ir.body[-1]
    nested = KernelIR("nested", ir.slots, [*ir.body[:-1], If(Var("bool", False), [store], [])])
    assert not fusible(nested)
    with pytest.raises(ValueError, match="stores inside an if"):
        fuse([(nested, [1, None, 2])], lambda key: True, "run")


def test_later_phase_reads_what_it_started_from():
    """y = x - sum(x), in place: the store waits for the sum, and x is read again by the last phase."""
    @hawk.kernel
    def center(x: Mutable[Scalar]):
        x = x - hawk.sum(x)

    x = np.arange(5.0)
    phased = split(center.ir(x))
    assert len(phased.phases) == 2
    first = walk(phased.phases[0])
    assert not any(isinstance(s, Store) and not phased.slots[s.slot].reduction for s in first)
    center(x)
    np.testing.assert_array_equal(x, np.arange(5.0) - 10.0)


def test_a_plane_read_from_memory_before_it_is_stored_stays_stored():
    """A run that reads a plane and then writes it (a loop turn, the next replay read it) stores
    it even when nothing outside the run reads it."""
    x = np.arange(4.0)
    first, second = shift_in_place.plan(x, 1.0), shift_in_place.plan(x, 2.0)
    members = [(b.plan.compiled.ir, [id(a) if isinstance(a, np.ndarray) else None for a in b.args[:2]])
               for b in (first, second)]
    fused = fuse(members, lambda key: False, "turn")
    assert [s.role for s in fused.ir.slots if s.role != "value"] == ["readwrite"]
    evaluate(fused.ir, [[first, second][m].args[k] for m, k in fused.origins], 4)
    np.testing.assert_array_equal(x, np.arange(4.0) + 3.0)
