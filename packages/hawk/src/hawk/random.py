"""``hawk.random``: counter-based random numbers, the same bits on every target.

A draw is Philox4x32-10 (:mod:`hawk.philox`) of the kernel's ``seed``, the flat index of the
sample in its plane and the kernel's ``counter``: a pure function of the three, so the same on
the CPU, the GPU, the reference and any thread count, fused or not, and in the re-run of a vjp.
Two draws with the same seed and counter in one sample are the same number: give each draw of a
sample its own counter (and each step of a loop over launches its own seed or counters).  A draw
carries no derivative.

``hawk.random(seed, counter)`` is :func:`uniform`.  Every draw takes ``sample=``, the index of
the sample whose draw it is (by default, in a kernel, the sample's own): a kernel reads the draw of
another sample, a lattice corner's say, as that sample draws it; outside a kernel it is an array for
many samples, giving what a kernel draws there::

    >>> hawk.random.uniform(7, 0, sample=np.arange(3))
    array([0.95459735, 0.40696039, 0.00607491])
"""

from __future__ import annotations

import sys
import types
from typing import Any

from hawk import intrinsics, philox


def uniform(seed: Any, counter: Any, *, sample: Any = 0) -> Any:
    """A float64 uniform in [0, 1), on the grid of 2^-53 (words 0 and 1 of the block).

    >>> @hawk.kernel
    ... def noise(x: hawk.Scalar, seed: hawk.Param[hawk.Int32]) -> hawk.Scalar:
    ...     return x + hawk.random.uniform(seed, 0)
    >>> out = noise(np.zeros(3), 7)
    >>> out
    array([0.95459735, 0.40696039, 0.00607491])
    >>> bool((out == hawk.random(7, 0, sample=np.arange(3))).all())
    True
    """
    return philox.evaluate("random_uniform", seed, sample, counter)


def uniform32(seed: Any, counter: Any, *, sample: Any = 0) -> Any:
    """A float32 uniform in [0, 1), on the grid of 2^-24 (word 0); never 1.0, which rounding a
    float64 uniform to float32 can give.

    >>> hawk.random.uniform32(7, 0, sample=np.arange(3))
    array([0.9545971 , 0.40696037, 0.00607508], dtype=float32)
    """
    return philox.evaluate("random_uniform32", seed, sample, counter)


def normal(seed: Any, counter: Any, *, sample: Any = 0) -> Any:
    """A float64 standard normal: Box-Muller over the whole block, ``sqrt(-2 log u1) cos(2 pi
    u2)`` on hawk's own log and cos, with u1 in (0, 1] (|value| <= 8.58).

    >>> hawk.random.normal(7, 0, sample=np.arange(3)).round(6)
    array([0.229708, 0.632674, 1.13222 ])
    """
    return philox.evaluate("random_normal", seed, sample, counter)


def bits(seed: Any, counter: Any, word: int, *, sample: Any = 0) -> Any:
    """Word ``word`` (0 to 3, written out in a kernel) of the block, a uint32.

    >>> hawk.random.bits(0, 0, 0)  # Random123's known answer for a zero key and counter
    np.uint32(1713891541)
    """
    return philox.evaluate("random_bits", seed, sample, counter, word)


class _Module(types.ModuleType):
    """A module that a kernel may call as ``hawk.random(seed, counter)``."""

    def __call__(self, seed: Any, counter: Any, *, sample: Any = 0) -> Any:
        return uniform(seed, counter, sample=sample)


sys.modules[__name__].__class__ = _Module
for _fn, _op, _arity in ((uniform, "random_uniform", 2), (uniform32, "random_uniform32", 2),
                         (normal, "random_normal", 2), (bits, "random_bits", 3),
                         (sys.modules[__name__], "random_uniform", 2)):
    intrinsics.register(_fn, _op, _arity)

#: the version of the counter layout (:data:`hawk.philox.LAYOUT`)
LAYOUT = philox.LAYOUT

__all__ = ["LAYOUT", "bits", "normal", "uniform", "uniform32"]
