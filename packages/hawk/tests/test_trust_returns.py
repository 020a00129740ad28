"""The return annotation is a contract: every call path gives what it says, or decoration refuses."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Float32, Int32, Param, Scalar
from hawk import math as hm
from hawk.kernel import leaves

X = np.arange(5.0)


@hawk.kernel
def int_constant(x: Scalar) -> Int32:
    return 1  # a Python int: converted to the annotated int32


@hawk.kernel
def float_constant(x: Scalar) -> Scalar:
    return 1.0  # the same for every sample, returned once per sample


@hawk.kernel
def narrowed(x: Scalar) -> Float32:
    return x * 3.0  # float64 -> float32: within its kind, converted as hawk casts


@hawk.kernel
def tree(x: Scalar, p: Param) -> dict[str, tuple[Scalar, Param[Int32]]]:
    return {"a": (p, hm.int32(hawk.sum(x))), "b": (x * p, 7)}


@hawk.kernel
def several(x: Scalar) -> tuple[Float32, ...]:
    return x, x * 2.0


def paths(kernel, *args):
    """The kernel's result by every path: the eager call, a planned graph, the reference."""
    bound = kernel.plan(*args)
    eagle.Graph().add(bound, name="k").build().launch()
    return [kernel(*args), bound.result(), kernel.reference(*args)]


def agree(results, expected_dtypes, expected_shapes):
    for result in results:
        out = leaves(result)
        assert [o.dtype for o in out] == expected_dtypes
        assert [o.shape for o in out] == expected_shapes
        for a, b in zip(out, leaves(results[0]), strict=True):
            np.testing.assert_array_equal(a, b)


def test_an_int_return_has_the_annotated_dtype_on_every_path():
    results = paths(int_constant, X)
    agree(results, [np.dtype(np.int32)], [(5,)])
    np.testing.assert_array_equal(results[0], np.ones(5, np.int32))


def test_a_constant_return_gives_one_value_per_sample():
    results = paths(float_constant, X)
    agree(results, [np.dtype(np.float64)], [(5,)])
    np.testing.assert_array_equal(results[0], np.ones(5))
    assert float_constant(X.astype(np.float32)).dtype == np.float32  # Scalar follows the plane


def test_conversions_within_a_kind_follow_hawk_casts():
    x = np.array([-1.0, 0.1, 1e300])
    agree(paths(narrowed, x), [np.dtype(np.float32)], [(3,)])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(narrowed(x), (x * 3.0).astype(np.float32))


def test_trees_of_contracts():
    results = paths(tree, X, 2.0)
    agree(results, [np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.float64), np.dtype(np.int32)],
          [(5,), (1,), (5,), (1,)])
    out = results[0]
    np.testing.assert_array_equal(out["a"][0], np.full(5, 2.0))  # a Param, sent to every sample
    assert out["a"][1][0] == 10 and out["b"][1][0] == 7
    agree(paths(several, X.astype(np.float32)), [np.dtype(np.float32)] * 2, [(5,)] * 2)


def refusal(text: str) -> hawk.KernelSyntaxError:
    """Decorating the kernel ``text`` (defined in a file of its own) must be refused."""
    scope = {"hawk": hawk, "Scalar": Scalar, "Int32": Int32, "UInt32": hawk.UInt32, "Param": Param}
    with pytest.raises(hawk.KernelSyntaxError) as info:
        hawk.kernel(_defined(text, scope))
    return info.value


def _defined(text: str, scope: dict):
    import linecache

    name = f"<kernel {len(linecache.cache)}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)  # inspect reads source here
    exec(compile(text, name, "exec"), scope)
    return scope["k"]


@pytest.mark.parametrize("text, message", [
    ("def k(x: Scalar) -> Int32:\n    return x\n",
     "the returned value is f64 but the return annotation says Int32 (i32); cast it, e.g. hawk.math.int32"),
    ("def k(x: Scalar) -> Param:\n    return x\n",
     "the return annotation says Param (one value for all samples) but the value returned differs"),
    ("def k(x: Scalar) -> tuple[Scalar, Scalar]:\n    return x\n",
     "the return annotation says tuple[Scalar, Scalar] but the kernel returns one value `x`"),
    ("def k(x: Scalar) -> tuple[Scalar, Scalar]:\n    return x, x, x\n",
     "says tuple[Scalar, Scalar] (2 values) but the kernel returns 3"),
    ("def k(x: Scalar) -> Scalar:\n    return x, x\n", "says Scalar but the kernel returns a tuple `(x, x)`"),
    ("def k(x: Scalar) -> None:\n    return x\n", "the return annotation says None but the kernel returns"),
    ("def k(x: Scalar) -> Scalar:\n    x = x + 1.0\n", "says Scalar but the kernel returns nothing"),
    ("def k(x: Scalar) -> int:\n    return x\n", "the return annotation <class 'int'> is not a hawk type"),
    ("def k(x: Int32) -> UInt32:\n    return x\n", "is i32 but the return annotation says UInt32 (u32)"),
])
def test_a_broken_contract_is_refused_at_decoration(text, message):
    err = refusal(text)
    assert message in str(err) and str(err).startswith("hawk.kernel: k: ")
    assert err.lineno in (1, 2)


def test_a_derivative_of_a_uniform_value_returned_per_sample():
    @hawk.kernel
    def scaled(x: Scalar, p: Param) -> Scalar:
        return p * 3.0

    grads = scaled.vjp(X, 2.0, np.ones(5))
    assert grads["p"][0] == 15.0  # every sample's copy of p * 3 carries its cotangent


def test_a_builder_graph_records_the_contract():
    pytest.importorskip("eagle.builder")

    @eagle.Graph.builder
    def program(x):
        g = eagle.Graph()
        ones = float_constant(x)
        g.result = (ones, int_constant(ones), tree(ones, 2.0))
        return g

    ones, ints, out = program(X)()
    np.testing.assert_array_equal(ones, np.ones(5))
    assert ints.dtype == np.int32 and ints.shape == (5,)
    agree([out, tree(np.ones(5), 2.0)], [np.dtype(np.float64), np.dtype(np.int32)] * 2, [(5,), (1,)] * 2)
