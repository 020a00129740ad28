"""eagle-jax through eagle.frameworks.jax: a JAX step as a node over NumPy planes, and its vjp.

No test imports eagle_jax.  Skipped where JAX is not installed (the nox ``jax`` session installs it).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import sys

import numpy as np
import pytest

import eagle
from eagle.graph import node_kind

jax = pytest.importorskip("jax")
ejax = pytest.importorskip("eagle.frameworks.jax")
hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.diff")
jnp = jax.numpy

from hawk import Scalar  # noqa: E402 - after the skips


@contextlib.contextmanager
def mode(x64):
    """JAX's 64-bit mode on or off for a test (process-wide: launches may call the model on another
    thread), put back after."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


@pytest.fixture
def x64():
    with mode(True):
        yield


@pytest.fixture
def x32():
    with mode(False):
        yield


def aligned(values, alignment=64):
    """A copy of ``values`` whose memory starts on an ``alignment``-byte boundary (XLA's CPU rule)."""
    values = np.asarray(values)
    raw = np.empty(values.nbytes + alignment, np.uint8)
    start = (-raw.ctypes.data) % alignment
    out = raw[start : start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


def mlp(p, u, v):
    """(u, v) -> (s, t, hits): two float results and an integer one."""
    h = jnp.tanh(jnp.stack([u, v], axis=-1) @ p["w1"] + p["b1"])
    out = h @ p["w2"]
    return out[:, 0], out[:, 1] * u, (u > 0).astype(jnp.int32)


def params(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.standard_normal((2, 8)),
        "b1": rng.standard_normal(8),
        "w2": rng.standard_normal((8, 2)),
    }


def test_found_through_its_entry_point():
    """eagle.plugins() lists eagle-jax with its installed version and its kind."""
    (info,) = [p for p in eagle.plugins() if p.name == "eagle-jax"]
    assert info.kinds == ("jax",) and info.version == importlib.metadata.version("eagle-jax")
    kind = node_kind("jax")
    assert kind.plugin == "eagle-jax" and kind.lower_gpu is not None and kind.vjp is not None


def test_the_node_gives_the_models_bits(threads, x64):
    """On the CPU the node is a call of fn on the planes: the same bits as calling it on them."""
    rng = np.random.default_rng(1)
    u, v, w = rng.standard_normal(37), rng.standard_normal(37), params()
    s, t, hits = np.zeros(37), np.zeros(37), np.zeros(37, np.int32)
    node = ejax.node(mlp, reads={"u": u, "v": v}, writes={"s": s, "t": t, "hits": hits}, params=w)
    eagle.Graph().add_node(node, name="model").build().launch()
    for got, want in zip((s, t, hits), mlp(w, jnp.asarray(u), jnp.asarray(v)), strict=True):
        assert np.array_equal(got, np.asarray(want))


def test_zero_copy_where_xla_may_alias(x64):
    """An aligned plane reaches fn as its own memory; an unaligned one is copied by JAX, with the same
    values; the parameters' NumPy leaves are read as they are at each launch."""
    seen = []

    def fn(p, x):
        seen.append(x.unsafe_buffer_pointer())
        return x * p["c"]

    unaligned = np.arange(17.0)[1:]
    for x in (aligned(np.arange(16.0)), unaligned):
        c, out = {"c": np.array([2.0])}, np.zeros(16)
        g = eagle.Graph().add_node(ejax.node(fn, reads={"x": x}, writes={"out": out}, params=c)).build()
        g.launch()
        assert np.array_equal(out, 2 * x)
        c["c"][0] = 3.0  # an optimizer's in-place step
        g.launch()
        assert np.array_equal(out, 3 * x)
        assert seen[-2:] == [x.ctypes.data] * 2 if x is not unaligned else x.ctypes.data not in seen[-2:]


def test_32_bit_mode_is_refused_on_float64_planes(x32):
    x, out = aligned(np.ones(4)), np.zeros(4)
    g = eagle.Graph().add_node(ejax.node(jnp.sin, reads={"x": x}, writes={"out": out}), name="m").build()
    with pytest.raises(
        ValueError,
        match=r"^eagle\.frameworks\.jax\.node: jax reads plane 'x' \(float64 of "
        r"shape \(4,\)\) as float32 of shape \(4,\) \(JAX computes in 32 bits "
        r"unless 64-bit mode is on",
    ):
        g.launch()
    assert not out.any()


def test_a_reverse_in_another_mode_is_refused():
    """Primals kept in float64 are not pulled back in 32-bit mode (JAX would round them)."""
    with mode(False):
        back = ejax.vjp(jnp.sin)
        with pytest.raises(
            ValueError,
            match=r"^eagle\.frameworks\.jax\.vjp: JAX reads a float64 primal as "
            "float32 .*; differentiate in the mode the node ran in",
        ):
            back({"x": np.ones(2)}, {"y": np.ones(2)})


def test_refusals_name_the_call(x64):
    """The checks shared with every model kind (eagle-graph's test_frameworks.py holds them all) speak
    for eagle.frameworks.jax.node; JAX's own: a function returns its results."""
    x, out = np.ones(4), np.zeros(4)
    g = eagle.Graph().add_node(ejax.node(lambda x: x[:, None], reads={"x": x}, writes={"out": out})).build()
    with pytest.raises(
        ValueError,
        match=r"^eagle\.frameworks\.jax\.node: <lambda> returned float64 of shape "
        r"\(4, 1\) for plane 'out', which is float64 of shape \(4,\)",
    ):
        g.launch()
    g = eagle.Graph().add_node(ejax.node(lambda x: None, reads={"x": x}, writes={"out": out})).build()
    with pytest.raises(TypeError, match=r"<lambda> returned None; return its results, one per written plane"):
        g.launch()


def test_a_plane_read_and_written(x64):
    """A plane in reads and writes is the model's input, then its output (readwrite)."""
    acc = np.arange(4.0)
    g = eagle.Graph().add_node(ejax.node(lambda a: a + 1.0, reads={"acc": acc}, writes={"acc": acc}))
    g.build().launch(3)
    assert np.array_equal(acc, np.arange(4.0) + 3)


@hawk.kernel
def spread(x: Scalar, a: hawk.Param) -> tuple[Scalar, Scalar]:
    return a * x, x * x


@hawk.kernel
def mix(s: Scalar, t: Scalar, u: Scalar) -> Scalar:
    return s * t + u


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jitted"])
def test_the_vjp_helper_against_central_differences(x64, jit):
    """The gradient through kernels and the JAX step (vjps= the helper) matches central differences
    for the input and the parameters, whose gradient take() hands back once per reverse."""
    w, x = params(), np.random.default_rng(4).standard_normal(37)
    model = jax.jit(mlp) if jit else mlp
    g = chain_with(model, w)(x, record=True)
    seed = {"result": 2 * g()}
    back = ejax.vjp(model, w)
    grads = eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": back})
    h, e = 1e-6, np.eye(37)
    run = lambda x: float(np.sum(chain_with(model, w)(x)() ** 2))  # noqa: E731
    central = [(run(x + h * e[i]) - run(x - h * e[i])) / (2 * h) for i in (0, 5, 36)]
    assert grads["x"][[0, 5, 36]] == pytest.approx(central, rel=1e-6)
    found = back.take()
    assert set(found) == set(w) and found["w1"].shape == (2, 8)
    leaf = w["w1"]
    leaf[1, 3] += h
    up = run(x)
    leaf[1, 3] -= 2 * h
    down = run(x)
    leaf[1, 3] += h
    assert float(found["w1"][1, 3]) == pytest.approx((up - down) / (2 * h), rel=1e-6)
    g()
    eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": back})
    eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": back})
    assert float(back.take()["w1"][1, 3]) == pytest.approx(2 * float(found["w1"][1, 3]), rel=1e-12)


def chain_with(model, w):
    @eagle.Graph.builder
    def run(x, record=False):
        g = eagle.Graph(record=record)
        u, v = spread(x, 0.5)
        s, t, hits = np.zeros_like(u), np.zeros_like(u), np.zeros(u.shape, np.int32)
        g.add_node(
            ejax.node(model, reads={"u": u, "v": v}, writes={"s": s, "t": t, "hits": hits}, params=w),
            name="model",
        )
        g.result = mix(s, t, u)
        return g

    return run


def test_take_refuses_when_the_node_was_not_reversed(x64):
    """No reverse pass reached the model since the last take: its parameters have no gradient, which
    take() says rather than hand back zeros."""
    back = ejax.vjp(mlp, params())
    with pytest.raises(
        RuntimeError,
        match=r"^eagle\.frameworks\.jax\.vjp: take\(\): no reverse pass called "
        "this vjp since",
    ):
        back.take()


def test_the_kinds_own_vjp(x64):
    """Without vjps= the kind's derivative (jax.vjp through fn, the parameters held) gives the same
    input gradient as the helper."""
    w, x = params(1), np.random.default_rng(5).standard_normal(37)
    g = chain_with(mlp, w)(x, record=True)
    g()
    seed = {"result": np.ones(37)}
    own = eagle.diff.reverse(g.record, seed, wrt=("x",))
    helped = eagle.diff.reverse(g.record, seed, wrt=("x",), vjps={"model": ejax.vjp(mlp, w)})
    assert np.allclose(own["x"], helped["x"], rtol=1e-14, atol=0)


def test_lower_gpu_refuses_host_planes():
    """A GPU lowering of host planes names them."""
    node = ejax.node(jnp.sin, reads={"x": np.ones(4)}, writes={"y": np.ones(4)})
    with pytest.raises(ValueError, match=r"jax node sin has host planes \(x, y\) in a GPU build"):
        node_kind("jax").lower_gpu(node.payload)


def test_a_result_that_is_a_plane_written_before_it_keeps_its_value():
    """``return x + dt * v, x``: x is stored first, so its old value must be kept for x_prev."""
    x, v, x_prev = np.arange(4.0), np.ones(4), np.zeros(4)
    with mode(True):
        node = ejax.node(lambda x, v: (x + 0.5 * v, x), reads={"x": x, "v": v},
                         writes={"x": x, "x_prev": x_prev})
        eagle.Graph().add_node(node, name="step").build().launch()
    assert x_prev.tolist() == [0.0, 1.0, 2.0, 3.0] and x.tolist() == [0.5, 1.5, 2.5, 3.5]


def test_writing_a_jax_array_is_refused_when_the_node_is_made():
    with pytest.raises(ValueError, match=r"^eagle\.frameworks\.jax\.node: .*JAX array"):
        ejax.node(lambda x: x * 2, reads={"x": np.ones(3)}, writes={"y": jnp.zeros(3)})


def test_listing_plugins_leaves_jax_unimported():
    """eagle finds the plugins without importing jax: it loads when its node is used."""
    import subprocess

    script = ('import sys, eagle; assert "eagle-jax" in [p.name for p in eagle.plugins()]; '
              'print("jax" in sys.modules)')
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
