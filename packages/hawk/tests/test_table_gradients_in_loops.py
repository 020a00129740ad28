"""A Table's gradient through reads inside a loop: a record per turn, up to the loop's cap.

The gradient of a Table read in a loop is a ScatterAdd in the loop's reverse, which records
one row per turn (hawk.records): a loop of a number of turns (`range(64)`, a capped `while`, a
loop that breaks) and `hawk.capped_range(n, cap)`, whose count is known only when it runs.
Each is held to central differences, to the reference evaluator bit for bit on one and two
threads, and to the same loop written out turn by turn (the same bits); a count with no cap
is refused by name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Int32, Param, Scalar, Table

N = 1500  # two blocks


def sibling(name: str) -> ModuleType:
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"hawk_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


derivatives = sibling("test_derivatives")


@hawk.kernel
def capped_trail(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    acc = x
    for j in hawk.capped_range(k, 6):
        acc = acc * 0.5 + t[hawk.sample() - j] * acc
    return acc


@hawk.kernel
def counted_trail(x: Scalar, t: Table.clamp) -> Scalar:
    acc = x
    for j in range(3):
        acc = acc * 0.5 + t[hawk.sample() - j] * acc
    return acc


@hawk.kernel
def written_out(x: Scalar, t: Table.clamp) -> Scalar:
    """counted_trail's loop, turn by turn."""
    acc = x
    acc = acc * 0.5 + t[hawk.sample() - 0] * acc
    acc = acc * 0.5 + t[hawk.sample() - 1] * acc
    acc = acc * 0.5 + t[hawk.sample() - 2] * acc
    return acc


@hawk.kernel
def walker(x: Scalar, t: Table.wrap, w: Param) -> Scalar:
    """A capped while whose turns read the Table where the sample has walked to, and a Param."""
    at = hawk.sample()
    acc = x
    while hawk.capped(acc < 3.0, 12):
        acc = acc + t[at] * w + 0.25
        at = at + 7
    return acc


@hawk.kernel
def broken(x: Scalar, t: Table.clamp) -> Scalar:
    """A loop that breaks per sample, with a read on each side of the break."""
    acc = x
    for j in range(8):
        acc = acc + t[hawk.sample() + j] * 0.5
        if acc > 2.0:
            break
        acc = acc * t[hawk.sample() - j]
    return acc


@hawk.kernel
def nested(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    """Reads in a capped loop inside a counted one."""
    acc = x
    for i in range(3):
        for j in hawk.capped_range(k, 4):
            acc = acc * 0.75 + t[hawk.sample() + i - j]
    return acc


@hawk.kernel
def long_stencil(x: Scalar, t: Table.wrap) -> Scalar:
    """More turns than a loop was ever unrolled to (256)."""
    acc = x
    for j in range(300):
        acc = acc * 0.99 + t[hawk.sample() + j] * 0.01
    return acc


def data(n: int = N, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 1.0, n), rng.uniform(-0.5, 0.5, n)


CASES = [
    (capped_trail, lambda x, t: (x, t, 4)),
    (capped_trail, lambda x, t: (x, t, 9)),  # more than the cap: 6 turns
    (capped_trail, lambda x, t: (x, t, 0)),
    (counted_trail, lambda x, t: (x, t)),
    (walker, lambda x, t: (x, t, 1.5)),
    (broken, lambda x, t: (x, t + 1.0)),
    (nested, lambda x, t: (x, t, 3)),
    (long_stencil, lambda x, t: (x, t)),
]
IDS = ["capped", "past-the-cap", "no-turn", "counted", "while", "break", "nested", "300-turns"]
SHORT = N // 50  # the 300 turns reversed are 45,150 turns run: a few samples for the reference


def same_bits(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert np.asarray(a[name]).tobytes() == np.asarray(b[name]).tobytes(), name


@pytest.mark.parametrize("kernel, make", CASES, ids=IDS)
def test_the_gradient_is_the_references_bit_for_bit(kernel, make, threads):
    x, t = data(SHORT if kernel is long_stencil else N)
    args = make(x, t)
    ct = np.random.default_rng(1).standard_normal(x.size)
    same_bits(kernel.vjp(*args, ct), kernel.vjp.reference(*args, ct))


@pytest.mark.parametrize("kernel, make", CASES, ids=IDS)
def test_the_gradient_agrees_with_central_differences(kernel, make):
    rng = np.random.default_rng(2)
    x, t = data(SHORT if kernel is long_stencil else 300, 3)
    grads = derivatives.check(kernel, make(x, t), rng)
    assert "t" in grads


def test_a_capped_count_and_a_number_give_the_bits_of_the_loop_written_out(threads):
    x, t = data()
    ct = np.random.default_rng(4).standard_normal(N)
    want = written_out.vjp(x, t, ct)
    same_bits(counted_trail.vjp(x, t, ct), want)
    capped = capped_trail.vjp(x, t, 3, ct)
    assert capped["t"].tobytes() == want["t"].tobytes() and capped["x"].tobytes() == want["x"].tobytes()


def test_turns_past_the_count_record_nothing():
    """Turns past the count leave the Table's cells read only there at -0.0, as no read."""
    x, t = np.full(8, 0.5), np.linspace(0.1, 0.8, 8)
    grads = capped_trail.vjp(x, t, 1, np.ones(8))  # one turn: each sample reads its own cell
    assert np.all(grads["t"] > 0.0)
    grads = capped_trail.vjp(x, t, 0, np.ones(8))
    assert np.all(grads["t"] == 0.0) and np.all(np.signbit(grads["t"]) == np.signbit(-0.0 + 0.0))


def test_the_gradient_in_a_builder_graph_under_eagle_diff_reverse():
    rng = np.random.default_rng(6)
    x, t = data(200, 7)

    @eagle.Graph.builder
    def model(x, t, record=False):
        g = eagle.Graph(record=record)
        g.result = nested(capped_trail(x, t, 5), t, 2)
        return g

    g = model(x, t, record=True)
    g()
    seed = rng.standard_normal(200)
    grads = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x", "t"))
    for name, arg in (("x", x), ("t", t)):
        direction = rng.standard_normal(arg.shape)
        eps = 1e-6
        up = {"x": x, "t": t, name: arg + eps * direction}
        down = {"x": x, "t": t, name: arg - eps * direction}
        fd = float(np.sum((model(**up)() - model(**down)()) * seed)) / (2 * eps)
        np.testing.assert_allclose(float(np.sum(grads[name] * direction)), fd, rtol=1e-6)


@hawk.kernel
def halved(x: Scalar) -> Scalar:
    return x * 0.5


def test_the_forward_kernel_fuses_with_the_unfused_bits(monkeypatch):
    x, t = data()

    @eagle.Graph.builder
    def model(x, t):
        g = eagle.Graph()
        g.result = capped_trail(halved(capped_trail(x, t, 3)), t, 4)
        return g

    monkeypatch.setenv("EAGLE_FUSE", "0")
    want = model(x, t)().copy()
    assert want.tobytes() == capped_trail(halved(capped_trail(x, t, 3)), t, 4).tobytes()
    monkeypatch.setenv("EAGLE_FUSE", "1")
    g = model(x, t)
    assert g().tobytes() == want.tobytes()
    assert g.fused


@hawk.kernel
def param_count(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    acc = x
    for j in range(k):
        acc = acc + t[hawk.sample() - j]
    return acc


@hawk.kernel
def param_cap(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    acc = x
    while hawk.capped(acc < 2.0, k):
        acc = acc + t[hawk.sample()]
    return acc


@hawk.kernel
def param_capped_range(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    acc = x
    for j in hawk.capped_range(4, k):  # a cap that is a Param: the forward runs, the records have no size
        acc = acc + t[hawk.sample() - j]
    return acc


@pytest.mark.parametrize("kernel", [param_count, param_cap, param_capped_range])
def test_a_loop_with_no_cap_written_as_a_number_is_refused_with_the_fix(kernel):
    x, t = np.ones(8), np.ones(8)
    with pytest.raises(ValueError, match=rf"{kernel.__name__}.vjp: the gradient of a Table read in a loop: "
                                         r"its loop runs a value known only when it runs.*"
                                         r"`for i in hawk.capped_range\(n, 64\):`"):
        kernel.vjp(x, t, 3, np.ones(8))
    assert set(kernel.vjp_of(wrt=("x",))(x, t, 3, np.ones(8))) == {"x"}


def test_capped_range_outside_a_kernel_is_a_range():
    assert list(hawk.capped_range(3, 8)) == [0, 1, 2] and list(hawk.capped_range(9, 2)) == [0, 1]
