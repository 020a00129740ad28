"""A checked Table read whose value is not used still raises out of range: the compiled kernel
keeps it, as the reference evaluator evaluates it (found by the fuzzer: a loop of reads whose result
the kernel dropped raised in the reference and not in the C); and both name the smallest sample of
the launch, whichever statement it read in (the reference evaluates them all before it raises)."""

from __future__ import annotations

import numpy as np
import pytest

import hawk
from hawk import Scalar, Table
from hawk import math as hm


@hawk.kernel
def unused(x: Scalar, t: Table) -> Scalar:
    s = 0.0
    for i in range(2):
        s = s + t[hawk.sample() + i]  # the last sample's second turn reads one past the end
    if x > 0.5:
        s = t[hawk.sample() - 1]  # sample 0 reads t[-1], when x[0] > 0.5
    return hm.sin(x)


@pytest.mark.parametrize("x0, bad", [(0.0, "sample 4 read Table 't' (shape (5,)) at index 5"),
                                     (1.0, "sample 0 read Table 't' (shape (5,)) at index -1")])
def test_an_unused_checked_read_raises_in_the_compiled_kernel_as_in_the_reference(x0, bad):
    x = np.array([x0, 0.0, 0.0, 0.0, 0.0])
    for run in (unused.reference, unused):
        with pytest.raises(IndexError) as raised:
            run(x, np.arange(5.0))
        assert str(raised.value).startswith(f"hawk.kernel unused: {bad} on axis 0")
    assert unused(x[1:], np.arange(5.0)).tobytes() == np.sin(x[1:]).tobytes()  # a Table one longer: in range
