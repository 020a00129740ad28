"""eagle.frameworks without a framework: the namespace names the plugin to install, and the shared
model-node machinery (eagle.frameworks.models) runs a NumPy "framework" through the same kind hooks
the torch and JAX kinds register, with the same checks of what the model returns."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.frameworks
from eagle.frameworks.models import HOOKS, Framework, helper_vjp, make
from eagle.graph import Node, node_kind, register_node_kind


class Numpy(Framework):
    """NumPy as a framework: its arrays are the planes; the pullback of an elementwise model is
    ``derivative(x) * cotangent`` (given with the model), and what ``accumulate`` collects is the
    number of calls."""

    name = "test_numpy"

    def load(self):
        return np

    def view(self, value):
        return value

    def store(self, value, result, keep):
        np.copyto(value, result)

    def pullback(self, fn, params, args, pair, accumulate):
        (_, ct), *_ = pair(fn(*args))
        if accumulate is not None:
            accumulate.append(1)
        return [fn.derivative(args[0]) * ct, *(None for _ in args[1:])]

    def gpu(self, call):
        raise NotImplementedError


NUMPY = Numpy()
register_node_kind("test_numpy", **HOOKS)


def square(x, *rest):
    return x * x, *(r.astype(np.int32) for r in rest)


square.derivative = lambda x: 2 * x


def node(fn, reads, writes):
    return Node("test_numpy", make(NUMPY, fn, reads, writes, api="test.node"))


def test_a_missing_plugin_is_named(monkeypatch):
    monkeypatch.setitem(eagle.frameworks.PLUGINS, "nope", "eagle-nope")
    with pytest.raises(
        ImportError, match=r"^eagle\.frameworks\.nope is not installed: pip install eagle-nope$"
    ):
        eagle.frameworks.nope  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'other'"):
        eagle.frameworks.other  # noqa: B018


def test_the_shared_hooks_run_a_model():
    x, y, n = np.arange(4.0), np.zeros(4), np.zeros(4, np.int32)
    g = eagle.Graph().add_node(node(square, {"x": x, "k": x + 0.5}, {"y": y, "n": n}), name="m").build()
    g.launch()
    assert np.array_equal(y, x * x) and np.array_equal(n, (x + 0.5).astype(np.int32))
    assert node_kind("test_numpy").label_of(node(square, {"x": x}, {"y": y}).payload) == "square"


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            lambda x: x[:, None],
            r"returned float64 of shape \(4, 1\) for plane 'y', which is float64 of shape \(4,\)",
        ),
        (lambda x: x.astype(np.float32), r"returned float32 of shape \(4,\) for plane 'y', which is float64"),
        (lambda x: 3.0, r"returned a float for plane 'y', which is float64 of shape \(4,\)"),
        (
            lambda x: (x, x),
            r"returned 2 arrays for 1 written planes \(y\); return one per written plane, in order$",
        ),
        (lambda x: None, r"returned None; return its results, one per written plane \(y\), in order"),
    ],
)
def test_what_a_model_returns_is_checked(fn, message):
    x, y = np.arange(4.0), np.zeros(4)
    g = eagle.Graph().add_node(node(fn, {"x": x}, {"y": y}), name="m").build()
    with pytest.raises((ValueError, TypeError), match=r"^test\.node: <lambda> " + message):
        g.launch()
    assert not y.any()  # nothing was stored


def test_declarations_are_checked():
    x, y = np.arange(4.0), np.zeros(4)
    with pytest.raises(ValueError, match=r"^test\.node: square writes no plane"):
        node(square, {"x": x}, {})
    with pytest.raises(ValueError, match=r"plane name 'x' is read as one array and written as another"):
        node(square, {"x": x}, {"x": y})
    with pytest.raises(ValueError, match=r"planes 'x' and 'y' are one array; give it one name"):
        node(square, {"x": x}, {"y": x})
    with pytest.raises(TypeError, match=r"reads\['x'\] is a int, which is no plane"):
        node(square, {"x": 3}, {"y": y})
    with pytest.raises(TypeError, match=r"fn must be callable, got int"):
        make(NUMPY, 3, {"x": x}, {"y": y}, api="test.node")


def test_the_helper_pairs_float_results_with_cotangents_in_order():
    """The vjps= helper maps primals to fn's arguments and the float results to the cotangents,
    skipping an integer result; a node reading and writing one plane is refused."""
    calls = []
    vjp = helper_vjp(NUMPY, "test.vjp", square, None, calls)
    grads = vjp({"x": np.array([3.0]), "k": np.array([1.0])}, {"y": np.array([2.0])})
    assert grads == {"x": np.array([12.0])} and calls == [1]
    with pytest.raises(ValueError, match=r"^test\.vjp: the node reads and writes 'x'"):
        vjp({"x": np.ones(1)}, {"x": np.ones(1)})
    with pytest.raises(ValueError, match=r"square returned 1 float results for the 2 float planes"):
        vjp({"x": np.ones(1), "k": np.ones(1)}, {"y": np.ones(1), "z": np.ones(1)})
