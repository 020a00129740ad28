"""Gradients over a sharded batch: a Param's gradient sums every rank's samples, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle.testing import run_ranks
from hawk import Param, Scalar

N = 5 * eagle.BLOCK + 300


@hawk.kernel
def energy(x: Scalar, w: Param) -> Scalar:
    return w * x * x


def gradients(x0: np.ndarray, comm: object = None) -> dict[str, np.ndarray]:
    x, total = x0.copy(), np.zeros(1)
    g = eagle.Graph(record=True, comm=comm)
    plan = energy.plan(x, 0.7)
    g.add(plan, name="energy").add_node(eagle.reduce(plan.outputs[0], total), name="total").build()
    g()
    return {"total": total, **eagle.diff.reverse(g.record, {"total.out": np.ones(1)})}


@pytest.mark.parametrize("size", [2, 3])
def test_a_params_gradient_is_global_and_per_sample_gradients_stay_local(size):
    x0 = np.random.default_rng(5).uniform(-3.0, 3.0, N)
    whole = gradients(x0)
    ranks = run_ranks(size, lambda comm: gradients(x0[eagle.shard(N, comm.rank, size)], comm))
    for mine in ranks:
        assert mine["total"].tobytes() == whole["total"].tobytes()
        assert mine["w"].tobytes() == whole["w"].tobytes()
    assert np.array_equal(np.concatenate([mine["energy.x"] for mine in ranks]), whole["energy.x"])
