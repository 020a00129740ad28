"""Planes of every kind x every node kind (issue 23): a NumPy array, a torch tensor, a torch
Parameter (which requires grad: read only), a JAX array (immutable: read only), an object with
only ``__array_interface__`` and one with only DLPack, each read (and, where it can be, written) by
an eager hawk call, a planned one, a builder's call, ``eagle.reduce``, ``eagle.copy``, a builder
graph's ``bind``, an ``opaque`` node, ``eagle.until_done`` and ``eagle.simulate``; then weights
bound through ``eagle.interop.import_buffer`` and refreshed by an optimizer's in-place step.

A kind whose library is not installed skips (the nox ``torch`` and ``jax`` sessions install them).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import eagle
import eagle.testing
from eagle.testing import DLPackOnly, InterfaceOnly

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

from hawk import Mutable, Param, Scalar, Table, UInt32  # noqa: E402
from hawk import math as hm  # noqa: E402

X = np.array([1.0, 2.0, 3.0, 4.0, 2.5], np.float32)  # the read plane's values, float32 (JAX's default)


def _torch() -> Any:
    return pytest.importorskip("torch")


def _jnp() -> Any:
    return pytest.importorskip("jax.numpy")


@dataclass(frozen=True)
class Kind:
    """A kind of plane: how to make one holding ``values``, and see what it holds now."""

    name: str
    make: Callable[[np.ndarray], Any]
    values: Callable[[Any], np.ndarray]
    #: a node may write it (a Parameter requires grad and a JAX array is immutable: read only)
    writable: bool


def _tensor_values(t: Any) -> np.ndarray:
    return t.detach().numpy()


KINDS = [
    Kind("numpy", lambda v: v.copy(), np.asarray, True),
    Kind("torch", lambda v: _torch().from_numpy(v.copy()), _tensor_values, True),
    Kind("parameter", lambda v: _torch().nn.Parameter(_torch().from_numpy(v.copy())), _tensor_values, False),
    Kind("jax", lambda v: _jnp().asarray(v), np.asarray, False),
    Kind("array_interface", lambda v: InterfaceOnly(v.copy()), lambda o: o.array, True),
    Kind("dlpack", lambda v: DLPackOnly(v.copy()), lambda o: o.array, True),
]
NUMPY = KINDS[0]


def written(kind: Kind) -> Kind:
    """The kind of the planes a test writes: ``kind`` where it can be written, else NumPy."""
    return kind if kind.writable else NUMPY


@hawk.kernel
def double(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def accumulate(x: Scalar, acc: Mutable[Scalar]):
    acc = acc + x


@hawk.kernel
def step(s: Mutable[Scalar], x: Scalar, limit: Param, done: Mutable[UInt32]):
    s = s + x
    done = hm.uint32(s >= limit)


@eagle.Graph.builder
def doubled_into(x, acc):
    g = eagle.Graph()
    accumulate(double(x), acc)
    g.result = acc
    return g


def stepped(x: np.ndarray, limit: float) -> np.ndarray:
    """What ``step`` run to the end leaves in ``s`` (from 0): whole steps until s >= limit."""
    return np.ceil(limit / x) * x


ids = [k.name for k in KINDS]


@pytest.fixture(params=KINDS, ids=ids)
def kind(request: pytest.FixtureRequest) -> Kind:
    return request.param


def test_an_eager_kernel_call(kind):
    x = kind.make(X)
    np.testing.assert_array_equal(double(x), 2.0 * X)
    acc = written(kind).make(np.ones_like(X))
    accumulate(x, acc)
    np.testing.assert_array_equal(written(kind).values(acc), 1.0 + X)


def test_a_planned_kernel_keeps_its_planes_alive_and_runs_as_the_reference_does(kind):
    out = written(kind)
    x, acc = kind.make(X), out.make(np.zeros_like(X))
    seen = out.values(acc)  # the result's memory, without the user's reference to it
    g = eagle.Graph().add(accumulate.plan(x, acc), name="acc").add(accumulate.plan(x, acc), name="again")
    g.build()
    del x, acc
    gc.collect()
    eagle.testing.check(g, 3)  # replay == the reference interpreter, from the same values
    np.testing.assert_array_equal(seen, 6.0 * X)


def test_a_builders_kernel_calls(kind):
    out = written(kind)
    acc = out.make(np.zeros_like(X))
    g = doubled_into(kind.make(X), acc)
    g.launch(2)
    np.testing.assert_array_equal(out.values(acc), 4.0 * X)


def test_reduce(kind):
    total = written(kind).make(np.zeros(1, np.float32))
    eagle.Graph().add_node(eagle.reduce(kind.make(X), total)).build().launch()
    assert written(kind).values(total)[0] == np.float32(X.sum())


def test_copy(kind):
    into = written(kind).make(np.zeros_like(X))
    eagle.Graph().add_node(eagle.copy(kind.make(X), into=into)).build().launch()
    np.testing.assert_array_equal(written(kind).values(into), X)


def test_bind(kind):
    out = written(kind)
    g = doubled_into(np.zeros_like(X), np.zeros_like(X))
    acc = out.make(np.ones_like(X))
    g.bind(x=kind.make(X), acc=acc)
    g.launch()
    np.testing.assert_array_equal(out.values(acc), 1.0 + 2.0 * X)


def test_opaque(kind):
    out = written(kind)
    x, y = kind.make(X), out.make(np.zeros_like(X))
    xs, ys = kind.values(x), out.values(y)
    g = eagle.Graph().add_node(
        eagle.opaque(lambda: np.multiply(xs, 2.0, out=ys), reads={"x": x}, writes={"y": y}), name="double"
    )
    g.build().launch()
    np.testing.assert_array_equal(ys, 2.0 * X)


def _loop_planes(kind: Kind) -> tuple[Any, Any, Any]:
    out = written(kind)
    return kind.make(X), out.make(np.zeros_like(X)), out.make(np.zeros(X.shape, np.uint32))


def test_until_done(kind):
    x, s, done = _loop_planes(kind)
    runner = eagle.until_done([step.plan(s, x, 10.0, done)], terminated=done, max_steps=100)
    assert runner.run().done
    np.testing.assert_array_equal(written(kind).values(s), stepped(X, 10.0))


def test_simulate(kind):
    """Compaction moves every per-sample plane in place, read ones too: not a read-only one."""
    x, s, done = _loop_planes(kind)
    result = eagle.simulate(
        [step.plan(s, x, 10.0, done)],
        terminated=done,
        max_steps=100,
        compact=True if kind.writable else "auto",
    )
    assert result.live == 0
    if not kind.writable:
        why = "a torch Parameter that requires grad" if kind.name == "parameter" else "a JAX array"
        assert result.report.notes[0].startswith(
            f"no compaction: item 0 ('step') plane 'x' is {why}, and it would be moved in place by compaction"
        )
    np.testing.assert_array_equal(written(kind).values(s), stepped(X, 10.0))


@pytest.mark.parametrize("name", ["parameter", "jax"])
def test_a_kernel_never_writes_a_parameter_or_a_jax_array(name):
    kind = next(k for k in KINDS if k.name == name)
    what = (
        "a torch Parameter that requires grad, and it is written in place"
        if name == "parameter"
        else "a JAX array, and it is written in place: JAX arrays are immutable"
    )
    message = f"hawk.kernel accumulate: parameter 'acc' is {what}"
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        accumulate(np.ones_like(X), kind.make(X))
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        accumulate.plan(np.ones_like(X), kind.make(X))


def test_a_bind_never_writes_a_parameter():
    torch = _torch()
    g = doubled_into(np.zeros_like(X), np.zeros_like(X))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "eagle.Graph.bind: plan 'accumulate' plane 'acc' is a torch Parameter that requires grad"
        ),
    ):
        g.bind(acc=torch.nn.Parameter(torch.zeros(len(X))))


def test_a_strided_tensor_is_read_as_its_strides_and_refused_where_written_in_place():
    torch = _torch()
    wide = torch.arange(10.0, dtype=torch.float32)
    np.testing.assert_array_equal(double(wide[::2]), 2.0 * np.arange(0.0, 10.0, 2.0))
    with pytest.raises(ValueError, match=r"parameter 'acc' is written in place but is not contiguous"):
        accumulate(np.ones(5, np.float32), wide[::2])


# ------------------------------------------------------------------ weights


@hawk.kernel
def poly(x: Scalar, w: Table) -> Scalar:
    return w[0] + w[1] * x + w[2] * x * x


@eagle.Graph.builder
def model(x, w):
    g = eagle.Graph()
    g.result = poly(x, w)
    return g


def _poly(w: np.ndarray) -> np.ndarray:
    return w[0] + w[1] * X + w[2] * X * X


def test_an_optimizer_step_is_the_refresh_of_a_table_bound_to_its_parameter():
    torch = _torch()
    w = torch.nn.Parameter(torch.tensor([1.0, 0.5, 0.25]))
    g = model(X, eagle.interop.import_buffer(w))
    np.testing.assert_array_equal(g(), _poly(np.array([1.0, 0.5, 0.25], np.float32)))
    opt = torch.optim.SGD([w], lr=0.1)
    loss = (w * torch.tensor([1.0, 2.0, 3.0])).sum()
    loss.backward()
    opt.step()  # in place: the next launch reads the new weights, nothing copied
    np.testing.assert_array_equal(g(), _poly(w.detach().numpy()))
    w.data = torch.zeros(3)  # new storage: the graph would read the old
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "eagle.Graph.launch: plane 'w' of node 'poly' is no longer the memory of a torch Parameter it "
            "was made from: its storage was replaced (param.data = ...), and the graph still holds the old; "
            "bind the tensor the optimizer updates"
        ),
    ):
        g()
    g.bind(w=eagle.interop.import_buffer(w))
    np.testing.assert_array_equal(g(), np.zeros_like(X))


def test_a_jax_arrays_weights_are_bound_anew_after_each_step():
    jnp = _jnp()
    w = jnp.asarray([1.0, 0.5, 0.25])
    g = model(X, eagle.interop.import_buffer(w))
    np.testing.assert_array_equal(g(), _poly(np.asarray(w)))
    w = w - 0.1  # an optimizer step makes a new array: the graph reads the old until bound to it
    g.bind(w=eagle.interop.import_buffer(w))
    np.testing.assert_array_equal(g(), _poly(np.asarray(w)))


@hawk.kernel
def _plus_one(v: Mutable[Scalar]):
    v = v + 1.0


def test_eagles_writes_move_torchs_version_so_a_stale_backward_is_refused():
    """A tensor autograd saved, then written by a graph's launch or a kernel call: torch refuses
    the backward pass (as after its own in-place op) instead of giving a wrong gradient."""
    torch = _torch()
    w = torch.ones(4, dtype=torch.float64, requires_grad=True)
    for write in ("graph", "call"):
        y = torch.arange(4.0, dtype=torch.float64)
        loss = (w * y).sum()  # saves y for w's gradient
        if write == "graph":
            eagle.Graph().add_node(eagle.copy(np.zeros(4), into=y), name="reset").build().launch()
        else:
            _plus_one(y)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_a_written_tensor_set_to_require_grad_after_the_build_is_refused_at_launch():
    torch = _torch()
    y = torch.zeros(4, dtype=torch.float64)
    g = eagle.Graph().add_node(eagle.copy(np.ones(4), into=y), name="fill").build()
    y.requires_grad_()
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.launch: node 'fill' plane 'into' is a torch Tensor "
                                         "that requires grad"):
        g.launch()
    assert not y.detach().any()
