"""``Param[hawk.vec3]`` and the other value types as Params: one value for all samples, passed as
numbers, spread into one Param per component (``g.0`` ...), so folded, differentiated (the fixed-
order sum over samples, per component) and fused as scalar Params are
(tests/gpu/test_values_gpu.py runs them on the GPU emulation)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Float32, Param, Scalar

derivatives, fused_graphs = (SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name(f"{name}.py"))))
                             for name in ("test_derivatives", "test_fused_graphs"))

N = 700


@hawk.kernel
def fall(x: hawk.vec3, v: hawk.vec3, g: Param[hawk.vec3], turn: Param[hawk.mat33], dt: Param) -> hawk.vec3:
    return turn @ (x + v * dt) + g * (0.5 * dt * dt) + hawk.vec3(g.x, g[1], 0.0) * hawk.length(v)


@hawk.kernel
def spun(x: hawk.vec3f, q: Param[hawk.quat[Float32]], s: Scalar) -> hawk.vec3f:
    return hawk.quat_rotate(q, x) * s


G, TURN = (0.25, -9.8, 1.5), np.array([[1.0, 0.1, 0.0], [-0.1, 1.0, 0.2], [0.0, -0.2, 1.0]])


def planes(rng, n=N):
    return rng.standard_normal((3, n)), rng.standard_normal((3, n))


def numpy_fall(x, v, g, turn, dt):
    return turn @ (x + v * dt) + np.reshape(g, (3, 1)) * (0.5 * dt * dt) \
        + np.array([[g[0]], [g[1]], [0.0]]) * np.sqrt((v * v).sum(0))


def same(a, b):
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_a_param_of_a_value_type_is_one_value_for_all_samples(threads):
    x, v = planes(np.random.default_rng(1))
    got = fall(x, v, G, TURN, 0.1)
    same(got, fall.reference(x, v, G, TURN, 0.1))
    np.testing.assert_allclose(got, numpy_fall(x, v, G, TURN, 0.1), rtol=1e-13, atol=1e-14)
    same(fall(x, v, list(G), TURN.reshape(-1), 0.1), got)  # a list, a flat array
    same(fall(x, v, *G, *TURN.reshape(-1), 0.1), got)  # spread already, as derivatives take them
    q = np.array([0.0, 0.0, np.sin(0.3), np.cos(0.3)], np.float32)
    xf = x.astype(np.float32)
    out = spun(xf, q, np.full(N, 2.0, np.float32))
    assert out.dtype == np.float32
    same(out, spun.reference(xf, q, np.full(N, 2.0, np.float32)))


def test_the_numbers_are_folded_into_no_plane():
    x, v = planes(np.random.default_rng(2), 4)
    assert [n for n, _ in fall.params][2:5] == ["g.0", "g.1", "g.2"]
    assert repr(fall) == ("<hawk.kernel fall(x: hawk.vec3, v: hawk.vec3, g: Param[hawk.vec3], turn: "
                          "Param[hawk.mat33], dt: Param)>")
    assert all(s.role == "value" for s in fall.ir(x, v, *G, *TURN.reshape(-1), 0.1).slots[2:14])


def test_gradients_are_per_component_sums_over_the_samples():
    rng = np.random.default_rng(3)
    x, v = planes(rng, 300)
    grads = derivatives.check(fall, (x, v, *G, *TURN.reshape(-1), 0.1), rng)
    ct = np.ones((3, 300))
    by_component = fall.vjp(x, v, *G, *TURN.reshape(-1), 0.1, ct)
    assert by_component["g.2"] == pytest.approx(0.5 * 0.1 * 0.1 * 300, rel=1e-12)
    assert set(grads) >= {"g.0", "g.1", "g.2", "turn.0", "turn.8"}


def test_planned_in_a_builder_graph_and_fused(threads):
    x, v = planes(np.random.default_rng(4))
    want = fall(fall(x, v, G, TURN, 0.1), v, G, TURN, 0.2)

    @eagle.Graph.builder
    def graph(x, v):
        g = eagle.Graph()
        g.result = fall(fall(x, v, G, TURN, 0.1), v, G, TURN, 0.2)
        return g

    same(graph(x, v)(), want)

    def chain(rng):
        first = fall.plan(x, v, G, TURN, 0.1)
        second = fall.plan(first.outputs[0], v, G, TURN, 0.2)
        return [first, second], [first.outputs[0]], [*second.outputs]

    unfused, _ = fused_graphs.replay(chain, False)
    got, g = fused_graphs.replay(chain, True)
    assert g.fused
    fused_graphs.same_bytes(got, unfused)
    same(got[0], want)


def test_eagle_diff_reverses_through_it():
    x, v = planes(np.random.default_rng(5), 50)

    @eagle.Graph.builder
    def model(x, record=False):
        g = eagle.Graph(record=record)
        g.result = fall(x, v, G, TURN, 0.1)
        return g

    g = model(x, record=True)
    g()
    seed = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    grad = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))["x"]
    np.testing.assert_allclose(grad, TURN.T @ seed, rtol=1e-13)


@pytest.mark.parametrize("given", [(1.0, 2.0), "abc", ((1.0, 2.0, 3.0),), (1.0, 2.0, 1j)])
def test_other_arguments_are_refused_naming_what_to_pass(given):
    x, v = planes(np.random.default_rng(6), 3)
    with pytest.raises(TypeError, match=r"hawk.kernel fall: parameter 'g' is Param\[hawk.vec3\]: pass 3 real "
                                        r"numbers \(a tuple, list or array of shape 3\)"):
        fall(x, v, given, TURN, 0.1)


def test_a_struct_is_no_param():
    @hawk.struct
    class Pair:
        a: Scalar
        b: Scalar

    with pytest.raises(TypeError, match=r"Param\[Pair\]: a Param is a number or a vector, matrix or "
                                        r"quaternion \(Param\[hawk.vec3\]\); pass a struct's fields"):
        Param[Pair]
