"""eagle.frameworks.torch: a torch model as a node over NumPy planes, and its vjp for eagle.diff.

Skipped where torch is not installed (the nox ``torch`` session installs it).
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle.graph import node_kind

torch = pytest.importorskip("torch")
etorch = pytest.importorskip("eagle.frameworks.torch")
hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.diff")

from hawk import Scalar  # noqa: E402 - after the skips


class Mlp(torch.nn.Module):
    """(u, v) -> (p, q, hits): two float results and an integer one."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()

    def forward(self, u, v):
        out = self.net(torch.stack([u, v], dim=-1))
        return out[:, 0], out[:, 1] * u, (u > 0).to(torch.int32)


def planes(n=37, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n), np.zeros(n), np.zeros(n), np.zeros(n, np.int32)


def test_the_node_gives_the_models_bits(threads):
    """On the CPU the node is a call of the model on the planes' memory: the same bits as calling it."""
    model = Mlp()
    u, v, p, q, hits = planes()
    node = etorch.node(model, reads={"u": u, "v": v}, writes={"p": p, "q": q, "hits": hits})
    eagle.Graph().add_node(node, name="model").build().launch()
    with torch.no_grad():
        want = model(torch.from_numpy(u), torch.from_numpy(v))
    for got, expected in zip((p, q, hits), want, strict=True):
        assert np.array_equal(got, expected.numpy())
    assert node.kind == "torch" and node_kind("torch").plugin == "eagle-torch"


def test_the_model_sees_the_planes_own_memory():
    """No copies on the way in: each tensor fn gets is over its plane's bytes; what it returns is
    copied into the plane it was declared for, which stays where it was."""
    u, out = np.arange(8.0), np.zeros(8)
    seen = []

    def fn(x):
        seen.append(x.data_ptr())
        return x * 2

    where = out.ctypes.data
    g = eagle.Graph().add_node(etorch.node(fn, reads={"u": u}, writes={"out": out})).build()
    g.launch(2)
    assert seen == [u.ctypes.data] * 2
    assert out.ctypes.data == where and np.array_equal(out, 2 * u)


def test_a_parameter_is_a_plane_it_writes():
    """A tensor that requires grad (a parameter) can be written by the node: a plain store."""
    w, x = torch.zeros(3, dtype=torch.float64, requires_grad=True), np.arange(3.0)
    eagle.Graph().add_node(etorch.node(lambda x: 2 * x, reads={"x": x}, writes={"w": w})).build().launch()
    assert torch.equal(w.detach(), 2 * torch.from_numpy(x)) and w.requires_grad and w.grad is None


def test_refusals_name_the_call():
    """The checks shared with every model kind (eagle-graph's test_frameworks.py holds them all) speak
    for eagle.frameworks.torch.node; torch's own: a model that writes a plane it only reads."""
    u, out = np.ones(4), np.zeros(4)
    g = eagle.Graph().add_node(etorch.node(lambda x: x.float(), reads={"u": u}, writes={"out": out})).build()
    with pytest.raises(
        ValueError,
        match=r"^eagle\.frameworks\.torch\.node: <lambda> returned float32 of "
        r"shape \(4,\) for plane 'out', which is float64 of shape \(4,\)",
    ):
        g.launch()
    g = eagle.Graph().add_node(etorch.node(lambda x: x.mul_(2), reads={"u": u}, writes={"out": out})).build()
    with pytest.raises(
        RuntimeError,
        match=r"^eagle\.frameworks\.torch\.node: <lambda> wrote plane 'u', which "
        r"it only reads; declare it in writes too",
    ):
        g.launch()


@hawk.kernel
def spread(x: Scalar, a: hawk.Param) -> tuple[Scalar, Scalar]:
    return a * x, x * x


@hawk.kernel
def mix(p: Scalar, q: Scalar, u: Scalar) -> Scalar:
    return p * q + u


@eagle.Graph.builder
def chain(x, model, record=False):
    """A hawk kernel, the torch model, a hawk kernel: the model's planes are the graph's own."""
    g = eagle.Graph(record=record)
    u, v = spread(x, 0.5)
    p, q, hits = np.zeros_like(u), np.zeros_like(u), np.zeros(u.shape, np.int32)
    g.add_node(
        etorch.node(model, reads={"u": u, "v": v}, writes={"p": p, "q": q, "hits": hits}), name="model"
    )
    g.result = mix(p, q, u)
    return g


def loss(x, model):
    return float(np.sum(chain(x, model)() ** 2))


def test_the_vjp_helper_against_central_differences():
    """The gradient through kernels and the model (vjps= the helper) matches central differences, for
    the input and for the model's weights, which accumulate in .grad once per reverse."""
    model, x = Mlp(), np.random.default_rng(1).standard_normal(37)
    g = chain(x, model, record=True)
    r = g()
    seed = {"result": 2 * r}
    grads = eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": etorch.vjp(model)})
    h, e = 1e-6, np.eye(37)
    central = [(loss(x + h * e[i], model) - loss(x - h * e[i], model)) / (2 * h) for i in (0, 5, 36)]
    assert grads["x"][[0, 5, 36]] == pytest.approx(central, rel=1e-6)
    weight = model.net[0].weight
    found = weight.grad[2, 1].item()
    with torch.no_grad():
        weight[2, 1] += h
        up = loss(x, model)
        weight[2, 1] -= 2 * h
        down = loss(x, model)
        weight[2, 1] += h
    assert found == pytest.approx((up - down) / (2 * h), rel=1e-6)
    g()
    eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": etorch.vjp(model)})
    assert weight.grad[2, 1].item() == pytest.approx(2 * found, rel=1e-12)  # accumulated, torch's way


def test_the_kinds_own_vjp_leaves_the_weights_alone():
    """Without vjps= the kind's derivative (autograd through the model) gives the same input gradient,
    and no .grad appears on the model's parameters."""
    model, x = Mlp(), np.random.default_rng(2).standard_normal(37)
    g = chain(x, model, record=True)
    seed = {"result": np.ones(37)}
    g()
    own = eagle.diff.reverse(g.record, seed, wrt=("x",))
    assert all(p.grad is None for p in model.parameters())
    helped = eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": etorch.vjp(model)})
    assert np.array_equal(own["x"], helped["x"])


def test_the_helper_refuses_a_plane_read_and_written():
    """A plane the node reads and writes breaks the helper's order of inputs and outputs: refused."""
    x, acc = np.ones(4), np.zeros(4)
    g = eagle.Graph(record=True)
    g.add_node(etorch.node(lambda x, acc: acc + x, reads={"x": x, "acc": acc}, writes={"acc": acc}), name="m")
    g.build()
    g()
    with pytest.raises(ValueError, match=r"^eagle\.frameworks\.torch\.vjp: the node reads and writes 'acc'"):
        eagle.diff.reverse(
            g.record, {"acc": np.ones(4)}, wrt=("x",), vjps={"m": etorch.vjp(lambda x, acc: acc + x)}
        )
    grads = eagle.diff.reverse(g.record, {"acc": np.ones(4)}, wrt=("x",))  # the kind's own: by name
    assert np.array_equal(grads["x"], np.ones(4))


def test_bind_repoints_the_node():
    """A builder graph's bind re-points the model node at the new arrays (the kind's rebuild)."""
    model = Mlp()
    x, y = np.random.default_rng(3).standard_normal((2, 37))
    g = chain(x, model)
    g()
    g.bind(x=y)
    assert np.array_equal(g(), chain(y, model)())


def test_a_result_that_is_a_view_of_a_plane_written_before_it_keeps_its_value():
    """``return x + dt * v, x``: x is stored first, so its old value must be kept for x_prev."""
    x, v, x_prev = np.arange(4.0), np.ones(4), np.zeros(4)
    node = etorch.node(lambda x, v: (x + 0.5 * v, x), reads={"x": x, "v": v},
                       writes={"x": x, "x_prev": x_prev})
    eagle.Graph().add_node(node, name="step").build().launch()
    assert x_prev.tolist() == [0.0, 1.0, 2.0, 3.0] and x.tolist() == [0.5, 1.5, 2.5, 3.5]


def test_a_plane_eagle_cannot_write_is_refused_when_the_node_is_made():
    read_only = np.zeros(3)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match=r"^eagle\.frameworks\.torch\.node: .*read-only"):
        etorch.node(lambda x: x * 2, reads={"x": np.ones(3)}, writes={"y": read_only})


def test_an_integer_plane_read_and_written_before_a_plane_only_read_is_refused():
    """A helper vjp would get eagle.diff's order (only read, then read and written) for fn's."""
    n, x, y = np.zeros(3, np.int64), np.ones(3), np.zeros(3)
    with pytest.raises(ValueError, match=r"^eagle\.frameworks\.torch\.node: .* reads and writes 'n', which "
                                         r"holds no floats, before 'x', which it only reads; declare the "
                                         r"reads in the order 'x', 'n'"):
        etorch.node(lambda n, x: (n + 1, x * 2), reads={"n": n, "x": x}, writes={"n": n, "y": y})
    etorch.node(lambda x, n: (n + 1, x * 2), reads={"x": x, "n": n}, writes={"n": n, "y": y})
