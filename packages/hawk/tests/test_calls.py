"""Calling kernels: eagerly on NumPy arrays, as plans in an eagle graph, and bad calls."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(s < lim))


@hawk.kernel
def accumulate(s: Scalar, y: Mutable[Scalar]):
    y = s + 1.0


@hawk.kernel
def centre(x: Scalar) -> Scalar:
    return x - hawk.sum(x) / 4.0


def test_eager_calls_return_new_arrays_and_leave_inputs_alone():
    x = np.arange(4.0)
    out = affine(x, 2.0, 1.0)
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0, 7.0])
    np.testing.assert_array_equal(x, np.arange(4.0))
    assert out is not affine(x, 2.0, 1.0)  # a new array each call
    assert affine(x[::2], 2.0, 1.0).tolist() == [1.0, 5.0]  # a strided input is read, not refused


def test_the_fast_path_checks_each_call():
    """A call shape seen before skips the full checks; a different shape still gets them."""
    x = np.arange(4.0)
    affine(x, 2.0, 1.0)
    with pytest.raises(TypeError, match="parameter 'x' is a Scalar"):
        affine(np.arange(4), 2.0, 1.0)
    frozen = np.zeros(4)
    accumulate(x, np.zeros(4))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="'y' is written in place but the array is read-only"):
        accumulate(x, frozen)
    np.testing.assert_array_equal(affine(np.arange(5.0), 1.0, 0.0), np.arange(5.0))


def test_a_recorded_call_shape_is_checked_again_where_anything_the_checks_read_differs():
    """plan() checks a call shape once; an array's writability or byte order makes another."""
    x, y = np.arange(4.0), np.zeros(4)
    accumulate.plan(x, y)
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="'y' is written in place but the array is read-only"):
        accumulate.plan(x, frozen)
    with pytest.raises(TypeError, match="parameter 's' is a Scalar"):  # float64's dtype number, swapped
        accumulate.plan(x.astype(">f8"), y)
    s, out = accumulate.plan(x, y).args[:2]
    assert s is x and out is y  # the arrays themselves, checked or not


@pytest.mark.parametrize("call, error, message", [
    (lambda: affine(np.arange(4.0), 2.0), TypeError,
     "hawk.kernel affine: takes 3 arguments (x, a, b), got 2"),
    (lambda: affine(np.arange(4.0), 2.0, 1.0, 5.0), TypeError, "takes 3 arguments (x, a, b), got 4"),
    (lambda: affine([1.0, 2.0], 2.0, 1.0), TypeError,
     "parameter 'x' is a per-sample plane; pass a NumPy array, got list"),
    (lambda: affine(np.arange(4.0), np.zeros(3), 1.0), TypeError,
     "parameter 'a' is a Param (one number for all samples); got ndarray"),
    (lambda: affine(np.arange(4), 2.0, 1.0), TypeError,
     "parameter 'x' is a Scalar (a float32 or float64 plane); got int64"),
    (lambda: below(np.arange(4.0), 1.0, np.zeros(1)), TypeError,
     "parameter 'flag' is Mutable[UInt32] (uint32); got float64"),
    (lambda: accumulate(np.arange(4.0), np.zeros(3)), ValueError,
     "per-sample planes must have one length; got s: 4, y: 3 ('y' differs)"),
    (lambda: accumulate(np.arange(4.0), np.zeros(8)[::2]), ValueError,
     "parameter 'y' is written in place but is not contiguous"),
    (lambda: affine(np.zeros((2, 2, 2)), 1.0, 1.0), ValueError, "parameter 'x' has shape (2, 2, 2)"),
])
def test_bad_calls_name_the_parameter(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_mutables_are_written_in_place():
    y, flag = np.zeros(4), np.zeros(1, np.uint32)
    assert accumulate(np.arange(4.0), y) is None
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0, 4.0])
    below(np.arange(4.0), 2.5, flag)
    assert flag[0] == 3


def test_kernels_say_whether_they_are_per_sample():
    assert affine.per_sample and accumulate.per_sample
    assert not below.per_sample and not centre.per_sample


def test_plans_run_in_a_graph_with_derived_edges():
    x, flag = np.arange(8.0), np.zeros(1, np.uint32)
    first = affine.plan(x, 2.0, 1.0)
    y = first.outputs[0]
    g = eagle.Graph().add(first, name="affine").add(below.plan(y, 6.0, flag), name="below")
    assert [(e.src, e.dst, e.plane, e.kind) for e in g.edges()] == [(0, 1, "out", "RAW")]
    g.build().launch()
    np.testing.assert_array_equal(y, 2.0 * x + 1.0)
    assert flag[0] == 3  # 1, 3, 5 are below 6


def test_a_chain_of_per_sample_plans_is_fused_and_matches_eager(threads):
    x = np.random.default_rng(0).standard_normal(5000)
    y = np.zeros_like(x)
    g = eagle.Graph()
    g.add(accumulate.plan(x, y))
    g.add(affine.plan(y, 0.5, 0.25, buffer=y))
    g.build().launch()
    np.testing.assert_array_equal(y, affine(accumulate_eager(x), 0.5, 0.25))


def accumulate_eager(x):
    y = np.zeros_like(x)
    accumulate(x, y)
    return y


def test_reductions_in_a_graph_are_one_fixed_order():
    x = np.random.default_rng(1).standard_normal(10_000)
    bound = centre.plan(x)
    eagle.Graph().add(bound).build().launch()
    np.testing.assert_array_equal(bound.outputs[0], centre(x))
    np.testing.assert_array_equal(bound.outputs[0], centre.reference(x))


def test_buffer_must_fit_the_output():
    x = np.arange(4.0)
    out = np.zeros(4)
    assert affine.plan(x, 1.0, 1.0, buffer=out).outputs[0] is out
    with pytest.raises(ValueError, match=r"buffer= for output 'out' must be a contiguous float64 array of "
                                         r"shape \(4,\)"):
        affine.plan(x, 1.0, 1.0, buffer=np.zeros(3))


def test_recorders_receive_calls():
    seen = []

    class Recorder:
        def call(self, kernel, args, kwargs):
            seen.append((kernel.__name__, len(args), kwargs))
            return "recorded"

    with hawk.recording(Recorder()):
        assert affine(np.zeros(2), 1.0, 2.0, buffer=True) == "recorded"
    assert seen == [("affine", 3, {"buffer": True})]
    assert isinstance(affine(np.zeros(2), 1.0, 2.0), np.ndarray)


def test_math_functions_and_reductions_run_on_numpy_arrays_outside_kernels():
    x = np.array([-1.5, 0.5, 2.0])
    np.testing.assert_array_equal(hm.minimum(x, 0.0), np.minimum(x, 0.0))
    np.testing.assert_array_equal(hm.uint32(x), [0, 0, 2])
    assert hawk.sum(x) == 1.0 and hawk.max(x) == 2.0 and hawk.any(x > 1.9)


def test_no_c_compiler_says_how_to_get_one(monkeypatch, tmp_path):
    """A first call that must compile, with CC pointing nowhere."""
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("EAGLE_CACHE_DIR", str(tmp_path / "cache"))

    @hawk.kernel
    def fresh(x: Scalar) -> Scalar:
        return x * 3.0 + 0.25

    from eagle.native import CompileError
    with pytest.raises(CompileError, match=r"does not run .*install one \(Debian/Ubuntu: apt-get"):
        fresh(np.ones(2))


SEED_X = np.arange(4.0)


def test_the_seed_kernels_run_eagerly():
    """The kernels of seed 004, called on NumPy arrays."""

    @hawk.kernel
    def over(s: Scalar, lim: Param, flag: Mutable[UInt32]):
        flag = hm.uint32(hawk.sum(s > lim))

    @hawk.kernel
    def remaining(s: Scalar, flag: Mutable[UInt32]):
        flag = hawk.math.uint32(hawk.sum(s > 1.0))

    @hawk.kernel
    def merge(s: Scalar, t: Scalar) -> Scalar: return s - t

    flag = np.zeros(1, np.uint32)
    over(SEED_X, 2.5, flag)
    assert flag[0] == 1
    remaining(SEED_X, flag)
    assert flag[0] == 2
    np.testing.assert_array_equal(merge(SEED_X, SEED_X * 2), -SEED_X)
    y = np.zeros(4)
    accumulate(SEED_X, y)
    np.testing.assert_array_equal(y, SEED_X + 1.0)
