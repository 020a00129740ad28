"""hawk: the per-sample kernel language that eagle graphs launch.

A kernel is a Python function over one sample, its parameters annotated::

    @hawk.kernel
    def affine(x: Scalar, a: Param, b: Param) -> Scalar:
        return a * x + b

A kernel is checked and lowered to a typed IR once, compiled to C for the
CPU (and to CUDA C for the GPU), and then called on NumPy arrays,
recorded into an eagle graph (``Graph.add(affine.plan(x, 2.0, 1.0))``), or
differentiated (``affine.vjp``, ``affine.jvp``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from hawk import dispatch_groups, linalg, math, random, structs
from hawk.annotation_types import Float32, Float64, Int32, Mutable, Param, Scalar, Scatter, Table, UInt32
from hawk.dispatch_groups import dispatch
from hawk.flow import capped, capped_range
from hawk.frontend import KernelSyntaxError, default_signature, lower, parse
from hawk.helpers import Func, func
from hawk.kernel import Kernel, KernelBound, KernelPlan
from hawk.recording import recording
from hawk.reductions import all, any, max, min, sum
from hawk.structs import struct
from hawk.tables import sample, sample2
from hawk.values import (
    mat22,
    mat22d,
    mat22f,
    mat33,
    mat33d,
    mat33f,
    mat44,
    mat44d,
    mat44f,
    quat,
    quatd,
    quatf,
    vec2,
    vec2d,
    vec2f,
    vec3,
    vec3d,
    vec3f,
    vec4,
    vec4d,
    vec4f,
)

#: the vector, matrix and quaternion functions (docs/hawk.rst, "Vectors, matrices, quaternions")
VALUE_FUNCTIONS = tuple(linalg.PUBLIC)
(cross, cw_div, cw_mul, determinant, diag, dot, identity22, identity33, identity44, inverse, length,
 length_sq, normalize, outer, quat_conjugate, quat_from_axis_angle, quat_identity, quat_rotate,
 quat_rotate_inv, solve, trace, transpose) = (linalg.PUBLIC[name] for name in sorted(VALUE_FUNCTIONS))

__version__ = "0.1.0"


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Make ``fn`` a hawk kernel; what the language lacks is refused here, with file and line.

    >>> from hawk import Mutable, Scalar, UInt32
    >>> @hawk.kernel
    ... def above(x: Scalar, limit: hawk.Param, count: Mutable[UInt32]):
    ...     count = hawk.math.uint32(hawk.sum(x > limit))
    >>> count = np.zeros(1, np.uint32)
    >>> above(np.arange(5.0), 2.0, count)
    >>> count
    array([2], dtype=uint32)

    A ``Param`` may be a vector, matrix or quaternion (``Param[hawk.vec3]``), passed as numbers:

    >>> @hawk.kernel
    ... def fall(x: hawk.vec3, g: hawk.Param[hawk.vec3], dt: hawk.Param) -> hawk.vec3:
    ...     return x + g * dt
    >>> fall(np.zeros((3, 2)), (0.0, -9.8, 0.0), 0.5)
    array([[ 0. ,  0. ],
           [-4.9, -4.9],
           [ 0. ,  0. ]])
    """
    source = parse(fn, sys._getframe(1).f_locals)  # the decorating scope: annotations imported there
    source, grouped = structs.spread_params(source)
    lower(source, default_signature(source.params))  # check the whole body now, not at the first call
    make = structs.StructKernel if grouped else Kernel
    k = make(fn.__name__, source.params,
             lambda signature, chosen=dispatch_groups.SWITCH: lower(source, signature, chosen),
             **({"structs": grouped} if grouped else {}))
    k.__doc__, k.__module__, k.__wrapped__ = fn.__doc__, fn.__module__, fn
    return k


__all__ = [
    "Float32",
    "Float64",
    "Func",
    "Int32",
    "Kernel",
    "KernelBound",
    "KernelPlan",
    "KernelSyntaxError",
    "Mutable",
    "Param",
    "Scalar",
    "Scatter",
    "Table",
    "UInt32",
    "all",
    "any",
    "capped",
    "capped_range",
    "cross",
    "cw_div",
    "cw_mul",
    "determinant",
    "diag",
    "dispatch",
    "dot",
    "func",
    "identity22",
    "identity33",
    "identity44",
    "inverse",
    "kernel",
    "length",
    "length_sq",
    "linalg",
    "mat22",
    "mat22d",
    "mat22f",
    "mat33",
    "mat33d",
    "mat33f",
    "mat44",
    "mat44d",
    "mat44f",
    "math",
    "max",
    "min",
    "normalize",
    "outer",
    "quat",
    "quat_conjugate",
    "quat_from_axis_angle",
    "quat_identity",
    "quat_rotate",
    "quat_rotate_inv",
    "quatd",
    "quatf",
    "random",
    "recording",
    "sample",
    "sample2",
    "solve",
    "struct",
    "structs",
    "sum",
    "trace",
    "transpose",
    "vec2",
    "vec2d",
    "vec2f",
    "vec3",
    "vec3d",
    "vec3f",
    "vec4",
    "vec4d",
    "vec4f",
]
