"""Cross-sample reductions: ``hawk.sum``, ``max``, ``min``, ``any``, ``all``.

In a kernel each is two steps: block partials, then a fixed-order finish
(eagle's one order, so a float sum has the same bits for any thread
count).  Outside a kernel they reduce a NumPy array the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk import intrinsics
from hawk.reference import fixed_order_sum


def sum(x: Any) -> Any:
    """The sum over samples, added in eagle's fixed order."""
    return fixed_order_sum(np.asarray(x).astype(np.sum(np.zeros(1, np.asarray(x).dtype)).dtype))


def max(x: Any) -> Any:
    """The largest value over samples (NaN if any is NaN)."""
    return np.max(x)


def min(x: Any) -> Any:
    """The smallest value over samples (NaN if any is NaN)."""
    return np.min(x)


def any(x: Any) -> Any:
    """Whether any sample's value is true."""
    return np.any(x)


def all(x: Any) -> Any:
    """Whether every sample's value is true."""
    return np.all(x)


for _fn in (sum, max, min, any, all):
    intrinsics.register(_fn, _fn.__name__, 1)
