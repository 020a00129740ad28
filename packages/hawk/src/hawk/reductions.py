"""Cross-sample reductions: ``hawk.sum``, ``max``, ``min``, ``any``, ``all``.

In a kernel each is two steps: block partials, then a fixed-order finish
(eagle's one order, so a float sum has the same bits for any thread
count).  Outside a kernel they reduce a NumPy array the same way.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from hawk import intrinsics
from hawk.reference import reduce_samples

# Each is typed twice: over a kernel's float (a bool is one) it gives a float (any/all a bool),
# as a kernel's body computes with it; over an array, outside a kernel, what NumPy gives.


@overload
def sum(x: float) -> float: ...
@overload
def sum(x: Any) -> Any: ...
def sum(x: Any) -> Any:
    """The sum over samples, added in eagle's fixed order.

    >>> float(hawk.sum(np.array([0.5, 1.5, 2.0])))
    4.0
    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def center(x: Scalar) -> Scalar:
    ...     return x - hawk.sum(x) / 4.0       # every sample sees the one total
    >>> center(np.arange(4.0))
    array([-1.5, -0.5,  0.5,  1.5])
    """
    return reduce_samples("sum", np.asarray(x).astype(np.sum(np.zeros(1, np.asarray(x).dtype)).dtype))


@overload
def max(x: float) -> float: ...
@overload
def max(x: Any) -> Any: ...
def max(x: Any) -> Any:
    """The largest value over samples (NaN if any is NaN; over none, the lowest value of the
    dtype, -inf for floats).

    >>> float(hawk.max(np.array([1.0, 3.0, 2.0]))), float(hawk.max(np.zeros(0)))
    (3.0, -inf)
    """
    return reduce_samples("max", x)


@overload
def min(x: float) -> float: ...
@overload
def min(x: Any) -> Any: ...
def min(x: Any) -> Any:
    """The smallest value over samples (NaN if any is NaN; over none, the highest value of the
    dtype, +inf for floats).

    >>> float(hawk.min(np.array([1.0, 3.0, 2.0])))
    1.0
    """
    return reduce_samples("min", x)


@overload
def any(x: float) -> bool: ...
@overload
def any(x: Any) -> Any: ...
def any(x: Any) -> Any:
    """Whether any sample's value is true.

    >>> bool(hawk.any(np.array([0.0, 2.0]) > 1.0))
    True
    """
    return reduce_samples("any", x)


@overload
def all(x: float) -> bool: ...
@overload
def all(x: Any) -> Any: ...
def all(x: Any) -> Any:
    """Whether every sample's value is true.

    >>> bool(hawk.all(np.array([0.0, 2.0]) > 1.0))
    False
    """
    return reduce_samples("all", x)


for _fn in (sum, max, min, any, all):
    intrinsics.register(_fn, _fn.__name__, 1)
