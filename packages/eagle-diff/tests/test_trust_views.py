"""Gradients through views of arguments (issue 17, defect 2), against central differences.

A node that reads ``x[:3]``, the rows ``xs[t]``, ``x[::2]`` or ``x[::-1]``
reads a place of its own: the gradient of ``x`` gathers those places'
adjoints element by element. What cannot be mapped exactly is refused by
name, never answered with a zero; so is a Param that is a plain number.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle import _core
from eagle.graph import opaque
from hawk import Mutable, Param, Scalar
from hawk import math as hm


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


@hawk.kernel
def wave(v: Scalar) -> Scalar:
    return hm.sin(v) * v


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def mix(a: Scalar, b: Scalar) -> Scalar:
    return a * b + hm.sin(a)


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def blend(s: Scalar, y: Mutable[Scalar]) -> None:
    y = 0.5 * y + s * s


@hawk.kernel
def scale(y: Mutable[Scalar]) -> None:
    y = 3.0 * y


@eagle.Graph.builder
def head(x, record=False):
    g = eagle.Graph(record=record)
    g.result = square(x[:3])
    return g


@eagle.Graph.builder
def rows(xs, record=False):
    g = eagle.Graph(record=record)
    acc = square(xs[0])
    for t in range(1, 3):
        acc = mix(acc, wave(xs[t]))
    g.result = acc
    return g


@eagle.Graph.builder
def overlapping(x, record=False):
    g = eagle.Graph(record=record)
    g.result = mix(x[:4], x[2:])  # both only read: each view adds its part
    return g


@eagle.Graph.builder
def looped(x, n, record=False):
    g = eagle.Graph(record=record)
    s = square(x[2:])
    for _ in range(n):  # a counted device loop: each turn reads a view of x again
        s = mix(s, x[:4])
    g.result = s
    return g


@eagle.Graph.builder
def written_through_a_view(x, y, record=False):
    g = eagle.Graph(record=record)
    blend(square(x[:3]), y[1:4])  # y: an argument written in place, through a view
    g.result = wave(x[3:])
    return g


def ramp(lo: float, hi: float, n: int = 6) -> np.ndarray:
    return np.linspace(lo, hi, n)


GRID = np.linspace(0.2, 1.3, 12).reshape(3, 4)


@pytest.mark.parametrize(("build", "arrays", "seeds"), [
    (head, {"x": ramp(0.2, 1.1, 5)}, {"result": ramp(1.0, 2.0, 3)}),
    (rows, {"xs": GRID}, {"result": ramp(0.5, 1.5, 4)}),
    (overlapping, {"x": ramp(0.2, 1.1)}, {"result": ramp(1.0, 2.0, 4)}),
    (looped, {"x": ramp(0.2, 0.7), "n": np.array([3], np.uint32)}, {"result": ramp(1.0, 2.0, 4)}),
], ids=["head", "rows", "overlapping-reads", "in-a-device-loop"])
def test_an_argument_read_through_views(gradcheck, build, arrays, seeds):
    grads = gradcheck(build, arrays, seeds, tuple(k for k in arrays if arrays[k].dtype.kind == "f"))
    assert all(np.any(g != 0) for g in grads.values())


def test_an_argument_written_through_a_view_is_seeded_and_differentiated(gradcheck):
    arrays = {"x": ramp(0.2, 1.1), "y": ramp(-1.0, 1.0, 5)}
    seeds = {"y": ramp(0.5, 1.5, 5), "result": np.ones(3)}
    grads = gradcheck(written_through_a_view, arrays, seeds, ("x", "y"))
    # y[0] and y[4] are not touched: the seed comes back unchanged; y[1:4] is halved
    np.testing.assert_allclose(grads["y"], ramp(0.5, 1.5, 5) * [1.0, 0.5, 0.5, 0.5, 1.0], rtol=1e-12)


def test_the_gradient_of_a_view_seeded_through_its_argument_is_the_same_gradient():
    x = ramp(0.2, 1.1, 5)
    g = head(x, record=True)
    g()
    got = eagle.diff.reverse(g.record, {"result": np.ones(3)}, wrt=("x", "result"))
    np.testing.assert_allclose(got["x"], [*(2 * x[:3]), 0.0, 0.0], rtol=1e-12)
    np.testing.assert_array_equal(got["result"], np.ones(3))


def test_strided_and_reversed_views_read_by_an_opaque_node(numeric_gradient):
    """Kernels take contiguous planes; an opaque node may read any view."""
    x, out = ramp(0.2, 1.1), np.zeros(3)
    evens, odds_back = x[::2], x[1::2][::-1]
    g = eagle.Graph(record=True)
    sq = square.plan(x)
    g.add(sq, name="sq")
    g.add_node(opaque(lambda: np.multiply(evens, odds_back, out=out), reads={"e": evens, "o": odds_back},
                      writes={"out": out}), name="mul")
    g.build()
    g()
    seeds = {"mul.out": ramp(1.0, 2.0, 3), "sq.out": ramp(-1.0, 1.0)}
    grads = eagle.diff.reverse(g.record, seeds, wrt=("v",),
                               vjps={"mul": lambda p, c: {"e": p["o"] * c["out"], "o": p["e"] * c["out"]}})

    def loss(a: dict[str, np.ndarray]) -> float:
        v = a["x"]
        return float(ramp(1.0, 2.0, 3) @ (v[::2] * v[1::2][::-1]) + ramp(-1.0, 1.0) @ (v * v))

    np.testing.assert_allclose(grads["v"], numeric_gradient(loss, {"x": x.copy()}, "x"), rtol=1e-6)
    assert np.all(grads["v"] != 0)


def test_a_strided_view_copied_out_of_an_array_a_kernel_reads_whole():
    x, kept = ramp(0.2, 1.0), np.zeros(3)
    g = eagle.Graph(record=True)
    g.add(square.plan(x), name="sq")
    g.add_node(eagle.copy(x[::2], into=kept), name="keep")
    g.build()
    g()
    seeds = {"sq.out": np.ones(6), "keep.into": np.array([1.0, 2.0, 3.0])}
    grads = eagle.diff.reverse(g.record, seeds, wrt=("sq.v",))
    np.testing.assert_allclose(grads["sq.v"], 2 * x + [1.0, 0, 2.0, 0, 3.0, 0], rtol=1e-12)


def test_a_copy_into_a_strided_view_of_an_array_a_kernel_then_reads_whole():
    src, y = ramp(0.2, 1.0, 3), ramp(-1.0, 1.0)
    g = eagle.Graph(record=True)
    g.add_node(eagle.copy(src, into=y[::2]), name="put")  # y: as the copy leaves it
    g.add(square.plan(y), name="sq")
    g.build()
    g()
    grads = eagle.diff.reverse(g.record, {"sq.out": ramp(1.0, 2.0)}, wrt=("put.src", "sq.v"))
    np.testing.assert_allclose(grads["put.src"], 2 * src * ramp(1.0, 2.0)[::2], rtol=1e-12)
    # each element's gradient is of its first toucher's value: the copy's for the even ones, the
    # value at the start for the odd ones; both are those square read
    np.testing.assert_allclose(grads["sq.v"], 2 * y * ramp(1.0, 2.0), rtol=1e-12)


class Exposed:
    """Memory seen only through ``__array_interface__``, as a plugin's plane (a torch tensor's) is."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def __array_interface__(self) -> dict:
        return self.array.__array_interface__


def test_planes_exposed_through_the_array_interface_are_on_the_reverse_path():
    x, y = ramp(0.2, 1.0, 4), np.zeros(4)
    g = eagle.Graph(record=True)
    g.add_node(opaque(lambda: np.multiply(x, 3.0, out=y), reads={"x": Exposed(x)}, writes={"y": Exposed(y)}),
               name="triple")
    g.add(square.plan(y), name="sq")
    g.build()
    g()
    grads = eagle.diff.reverse(g.record, {"sq.out": np.ones(4)}, wrt=("x",),
                               vjps={"triple": lambda p, c: {"x": 3.0 * c["y"]}})
    np.testing.assert_allclose(grads["x"], 18.0 * x, rtol=1e-12)  # d/dx sum((3x)^2)


# ------------------------------------------------------------------ refusals


@eagle.Graph.builder
def buffer_view(x, record=False):
    g = eagle.Graph(record=record)
    b = dbl(x, buffer=True)
    g.result = square(b[1:])  # b is written whole, then read through a view
    return g


@eagle.Graph.builder
def read_then_rewritten(x, record=False):
    g = eagle.Graph(record=record)
    g.result = square(x[:3])
    scale(x)  # the whole of x rewritten in place after its view was read
    return g


@eagle.Graph.builder
def as_a_param(x, a, record=False):
    g = eagle.Graph(record=record)
    g.result = affine(x, a, 1.0)
    return g


def ran(g: eagle.Graph) -> eagle.Graph:
    g()
    return g


def test_a_buffer_read_through_a_view(gradcheck):
    grads = gradcheck(buffer_view, {"x": ramp(0.2, 1.1)}, {"result": ramp(1.0, 2.0, 5)}, ("x", "b"))
    b = 2 * ramp(0.2, 1.1)
    np.testing.assert_allclose(grads["b"], [0.0, *(2 * b[1:] * ramp(1.0, 2.0, 5))], rtol=1e-12)


@eagle.Graph.builder
def arm_writes_a_view(x, flag, record=False):
    g = eagle.Graph(record=record)
    s = dbl(x, buffer=True)
    if flag:
        scale(s[2:])  # a device if: one arm rewrites part of the buffer
    g.result = mix(s, wave(s))
    return g


@eagle.Graph.builder
def interleaved(x, record=False):
    g = eagle.Graph(record=record)
    s = dbl(x, buffer=True)
    t = square(s[:4])
    scale(s)
    g.result = (mix(s[1:5], t), wave(s))
    return g


@pytest.mark.parametrize(("build", "arrays", "seeds"), [
    (arm_writes_a_view, {"x": ramp(0.2, 1.1), "flag": np.array([1], np.uint32)}, {"result": ramp(1.0, 2.0)}),
    (arm_writes_a_view, {"x": ramp(0.2, 1.1), "flag": np.array([0], np.uint32)}, {"result": ramp(1.0, 2.0)}),
    (interleaved, {"x": ramp(0.2, 1.1)}, {"result": (ramp(1.0, 2.0, 4), ramp(-1.0, 1.0))}),
], ids=["arm-taken", "arm-skipped", "interleaved"])
def test_views_of_a_buffer_written_and_read_in_turn(gradcheck, build, arrays, seeds):
    gradcheck(build, arrays, seeds, ("x",))


def test_a_view_read_before_its_whole_array_is_rewritten_in_place(gradcheck):
    x = ramp(0.2, 1.1)
    seeds = {"result": ramp(1.0, 2.0, 3), "x": ramp(-1.0, 1.0)}
    grads = gradcheck(read_then_rewritten, {"x": x}, seeds, ("x",))
    np.testing.assert_allclose(grads["x"], 3 * ramp(-1.0, 1.0) + [*(2 * x[:3] * ramp(1.0, 2.0, 3)), 0, 0, 0],
                               rtol=1e-12)


@pytest.mark.parametrize("threads", [1, 3])
def test_views_of_one_buffer_across_sample_blocks(threads):
    """Adjoints that share memory are per-sample items over different sample offsets: more samples
    than a block (1024) make the executor order them across blocks and threads."""
    before = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        x = np.linspace(0.1, 2.0, 3000)
        g = ran(buffer_view(x, record=True))
        seed = np.linspace(1.0, 2.0, 2999)
        grads = eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))
    finally:
        _core.set_num_threads(before)
    np.testing.assert_array_equal(grads["x"], [0.0, *(8 * x[1:] * seed)])  # 8 x seed: exact in binary


@eagle.Graph.builder
def loop_over_a_view(x, n, record=False):
    g = eagle.Graph(record=record)
    s = dbl(x, buffer=True)
    for _ in range(n):
        scale(s[1:])  # a device loop writing a view of a buffer it also reads whole
        s = square(s)
    g.result = s
    return g


@eagle.Graph.builder
def view_after_a_loop(x, n, record=False):
    g = eagle.Graph(record=record)
    s = dbl(x, buffer=True)
    for _ in range(n):  # the loop touches one view of s; a view of its result is read after it
        s = mix(s, x)
    g.result = square(s[1:])
    return g


def test_a_view_of_what_a_device_loop_wrote(gradcheck):
    arrays = {"x": ramp(0.2, 0.7), "n": np.array([3], np.uint32)}
    gradcheck(view_after_a_loop, arrays, {"result": ramp(1.0, 2.0, 5)}, ("x",))


@eagle.Graph.builder
def loop_reading_past_its_view(x, n, record=False):
    g = eagle.Graph(record=record)
    s = dbl(x, buffer=True)
    y = square(x)
    for _ in range(n):
        scale(s[1:])  # writes a view of s and reads s whole, whose first cell no plane of the loop covers
        y = mix(y, s)
    g.result = y
    return g


def test_a_device_loop_writing_a_view_of_shared_memory_is_refused_by_name():
    g = ran(loop_reading_past_its_view(ramp(0.2, 1.1), np.array([2], np.uint32), record=True))
    with pytest.raises(ValueError, match=r"eagle.diff.reverse: the device loop \S+ writes \S+ and touches "
                                         r"another view of its memory: a loop is reversed by running"):
        eagle.diff.reverse(g.record, {"result": np.ones(6)}, wrt=("x",))


@eagle.Graph.builder
def reinterpreted(x, record=False):
    g = eagle.Graph(record=record)
    g.result = square(x.view(np.float32))
    return g


def test_a_view_of_another_dtype_is_refused_by_name():
    g = ran(reinterpreted(ramp(0.2, 1.1, 4), record=True))
    with pytest.raises(ValueError, match=r"eagle.diff.reverse: 'x' shares memory with the plane square.v but "
                                         r"not whole elements of it \(float32 \(8,\)"):
        eagle.diff.reverse(g.record, {"result": np.ones(8)}, wrt=("x",))


def test_a_written_plane_read_as_another_dtype_is_refused_by_name():
    w = ramp(0.2, 1.1, 4)
    g = eagle.Graph(record=True)
    twice = dbl.plan(w)
    g.add(twice, name="dbl")
    g.add(square.plan(twice.outputs[0].view(np.float32)), name="sq32")
    g.build()
    g()
    with pytest.raises(ValueError, match=r"eagle.diff.reverse: the planes dbl.out and sq32.v share memory "
                                         r"but not whole elements \(float64 and float32"):
        eagle.diff.reverse(g.record, {"sq32.out": np.ones(8, np.float32)}, wrt=("dbl.x",))


@pytest.mark.parametrize(("a", "what"), [(2.0, r"a Python number \(float\)"),
                                         (np.float64(2.0), r"a Python number \(float64\)"),
                                         (np.array([2.0]), "a one-cell array no plane of the graph holds")])
def test_a_param_passed_as_a_number_is_refused_with_the_way_out(a, what):
    g = ran(as_a_param(ramp(0.2, 1.1), a, record=True))
    with pytest.raises(TypeError, match=rf"eagle.diff.reverse: 'a' is {what}: a kernel takes it as a Param "
                                        r"by value.*Name the Param by its node instead, wrt=\('<node label>."
                                        r"<param>',\): this graph's are 'affine.a', 'affine.b'"):
        eagle.diff.reverse(g.record, {"result": np.ones(6)}, wrt=("x", "a"))


@eagle.Graph.builder
def chained(x, a, record=False):
    g = eagle.Graph(record=record)
    g.result = wave(affine(affine(x, a, 0.5), 2 * a, 0.1))  # Python arithmetic on a is not recorded
    return g


def test_a_builder_graph_names_a_param_by_its_node(gradcheck):
    x, seeds = ramp(0.2, 1.1), {"result": ramp(1.0, 2.0)}
    grads = gradcheck(chained, {"x": x}, seeds, ("x", "affine[0].a", "affine[1].a"), a=1.5)

    def loss(a: float) -> float:
        return float(seeds["result"] @ ran(chained(x.copy(), a)).result)

    step = 1e-6  # d loss / d a by central differences: both Params move, the second twice as fast
    expected = (loss(1.5 + step) - loss(1.5 - step)) / (2 * step)
    assert grads["affine[0].a"].shape == (1,)
    np.testing.assert_allclose(grads["affine[0].a"] + 2 * grads["affine[1].a"], [expected], rtol=1e-6)


def test_a_device_loop_writing_a_view_of_a_buffer_it_reads_whole(gradcheck):
    """The loop writes s[1:] and reads (and writes) s whole: its turns run again on one buffer laid
    out as s, from the bytes of s (which cover s[1:]) kept at each turn's start."""
    arrays = {"x": ramp(0.2, 1.1), "n": np.array([2], np.uint32)}
    gradcheck(loop_over_a_view, arrays, {"result": ramp(1.0, 2.0)}, ("x",))
