"""The front end: what a kernel may say, and what is refused at decoration with file and line."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import hawk
from hawk import Float32, Int32, Mutable, Param, Scalar, UInt32
from hawk import math as hm
from hawk.ir import If, render

LIMIT = 2.5  # a module number: folded in when the kernel is compiled
SCALE32 = np.float32(0.5)


def refused(make) -> hawk.KernelSyntaxError:
    with pytest.raises(hawk.KernelSyntaxError) as info:
        make()
    return info.value


def line_of(fn_text: str) -> int:
    """The line in this file holding ``fn_text``."""
    lines = inspect.getsource(inspect.getmodule(refused)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if fn_text in line)


@pytest.mark.parametrize("body, what", [
    ("for_loop", "a kernel loops `for i in range(n)`, `range(a, b)`"),
    ("while_loop", "a `while` in a kernel states its cap: write `while hawk.capped(cond, 100):`"),
    ("call_unknown", "print(...) cannot be called in a kernel; a kernel calls hawk.math.sin"),
    ("global_array", "np.zeros is not a number (a builtin_function_or_method); a kernel folds in numbers"),
    ("unknown_name", "name 'nowhere' is not a parameter, a local or a number"),
    ("list_expr", "a ListComp expression is not in hawk"),
    ("early_return", "gives another tree of values; every return of a kernel gives the same tree"),
    ("bitwise", "the operator BitAnd is not in hawk"),
    ("string", "a Constant expression is not in hawk"),
])
def test_refusals_name_the_file_the_line_and_what_to_write(body, what):
    err = refused(lambda: hawk.kernel(BAD[body]))
    assert err.filename == __file__
    assert err.lineno == line_of(MARK[body])
    assert what in str(err)
    assert str(err).startswith(f"hawk.kernel: {BAD[body].__name__}: ")


def for_loop(x: Scalar) -> Scalar:
    for _ in (1, 2, 3):  # mark:for
        x = x + 1.0
    return x


def while_loop(x: Scalar) -> Scalar:
    while x > 0:  # mark:while
        x = x - 1.0
    return x


def call_unknown(x: Scalar) -> Scalar:
    return print(x)  # mark:print


def global_array(x: Scalar) -> Scalar:
    return x + np.zeros  # mark:global


def unknown_name(x: Scalar) -> Scalar:
    return x + nowhere  # noqa: F821  mark:unknown


def list_expr(x: Scalar) -> Scalar:
    return [x for _ in range(2)]  # mark:listcomp


def early_return(x: Scalar):
    if x > 0:
        return x
    return -x, x  # mark:early


def bitwise(x: Int32) -> Int32:
    return x & 1  # mark:bitand


def string(x: Scalar) -> Scalar:
    return x + "a"  # mark:string


BAD = {f.__name__: f for f in (for_loop, while_loop, call_unknown, global_array, unknown_name, list_expr,
                               early_return, bitwise, string)}
MARK = {"for_loop": "mark:for", "while_loop": "mark:while", "call_unknown": "mark:print",
        "global_array": "mark:global", "unknown_name": "mark:unknown", "list_expr": "mark:listcomp",
        "early_return": "mark:early", "bitwise": "mark:bitand", "string": "mark:string"}


def test_parameters_need_hawk_annotations():
    def plain(x):
        return x

    def star(*xs: Scalar):
        return xs

    assert "parameter 'x' needs a hawk annotation" in str(refused(lambda: hawk.kernel(plain)))
    assert "no *args" in str(refused(lambda: hawk.kernel(star)))


def test_a_function_without_source_is_refused():
    scope = {"Scalar": Scalar}
    exec("def f(x: Scalar):\n    return x\n", scope)  # a function with no file
    assert "its source is not available" in str(refused(lambda: hawk.kernel(scope["f"])))


def test_one_arm_assignments_and_cell_writes_are_refused():
    def one_arm(x: Scalar) -> Scalar:
        if x > 0:
            y = x
        return y

    def per_sample_into_cell(x: Scalar, flag: Mutable[UInt32]):
        flag = hm.uint32(x)

    def reduce_in_if(x: Scalar) -> Scalar:
        if x > 0:
            x = x - hawk.sum(x)
        return x

    def narrowing(x: Scalar, flag: Mutable[UInt32]):
        flag = hawk.sum(x)

    assert "'y' may be unassigned here: it is assigned in one arm of the if" in str(
        refused(lambda: hawk.kernel(one_arm)))
    k = hawk.kernel(per_sample_into_cell)  # a per-sample flag plane is fine ...
    with pytest.raises(hawk.KernelSyntaxError, match="'flag' is one cell but is assigned a per-sample value"):
        k(np.ones(4), np.zeros(1, np.uint32))  # ... a one-cell one is not
    assert "hawk.sum inside an if" in str(refused(lambda: hawk.kernel(reduce_in_if)))
    assert re.search(r"'flag' is u32 but is assigned a f64 value; cast it, e\.g\. hawk\.math\.uint32",
                     str(refused(lambda: hawk.kernel(narrowing))))


def test_components_are_read_by_index():
    def norm2(v: Scalar) -> Scalar:
        return v[0] * v[0] + v[1] * v[1]

    k = hawk.kernel(norm2)
    v = np.array([[3.0, 1.0], [4.0, 1.0]])
    np.testing.assert_array_equal(k(v), [25.0, 2.0])
    with pytest.raises(hawk.KernelSyntaxError, match=r"v\[1\] is out of range: this call gives v 1 comp"):
        k(np.ones(3))


def test_module_numbers_fold_in_and_keep_their_type():
    def clamp(x: Scalar) -> Scalar:
        return hm.minimum(x, LIMIT)

    def half(x: Float32) -> Float32:
        return x * SCALE32

    np.testing.assert_array_equal(hawk.kernel(clamp)(np.array([1.0, 3.0])), [1.0, 2.5])
    assert hawk.kernel(half)(np.ones(2, np.float32)).dtype == np.float32


def test_if_becomes_structured_ir_and_a_constant_condition_folds():
    def branch(x: Scalar, p: Param) -> Scalar:
        if x > p:
            y = x
        elif x < -p:
            y = -x
        else:
            y = 0.0
        if LIMIT > 100:
            y = y * 1000.0  # never recorded: the condition is a module number
        return y

    ir = hawk.kernel(branch).ir(np.ones(2), 1.0)
    assert sum(isinstance(s, If) for s in ir.body) == 1
    assert "1000.0" not in render(ir)


def test_docstring_pass_annassign_and_augassign():
    def k(x: Scalar, n: Int32) -> Scalar:
        """Docstrings are fine."""
        y: float = x
        y += 1.0
        y *= 2.0
        if n > 0:
            pass
        return y

    np.testing.assert_array_equal(hawk.kernel(k)(np.arange(3.0), np.ones(3, np.int32)), [2.0, 4.0, 6.0])


def test_types_promote_as_in_numpy():
    def mix(a: Int32, b: UInt32, c: Float32, p: Param):
        return a + b, c * 2.0, c * p, a / a, c + a, a * 2

    outs = hawk.kernel(mix)(np.ones(2, np.int32), np.ones(2, np.uint32), np.ones(2, np.float32), 3.0)
    a, b, c = np.ones(2, np.int32), np.ones(2, np.uint32), np.ones(2, np.float32)
    expected = (a + b, c * 2.0, c * 3.0, a / a, c + a, a * 2)
    assert [o.dtype for o in outs] == [e.dtype for e in expected]
