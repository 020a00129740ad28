"""Kernels compiled after lowering: appended under a stand-in address, patched before any run."""

from __future__ import annotations

import numpy as np
import pytest

from eagle import extend
from eagle._program import compiling_after
from eagle.native import Library, compile_library

TWICE = """#include "eagle/eagle.h"
EAGLE_API void twice(int64_t begin, int64_t end, const eagle_arg *a)
{ double *x = a[0].ptr; for (int64_t i = begin; i < end; ++i) x[i] *= 2; }
"""


def test_a_stand_in_is_patched_in_every_program_that_calls_it():
    library = Library(compile_library(TWICE, name="deferred_twice"))
    x, y = np.ones(3), np.ones(5)
    with compiling_after() as batch:
        compiled: list[list[str]] = []

        def compile(items):
            compiled.append(items)
            return [([library.kernel("twice")], library) for _ in items]

        stand_in = extend.deferred_kernels(compile, "twice", 1)
        assert extend.deferred_kernels(compile, "twice", 1) == stand_in  # one item, asked twice
        top, body = extend.Program().stage(), extend.Program().stage()
        top.kernel(stand_in[0], [x], 3)
        body.kernel(stand_in[0], [y], 5)
        batch.resolve()
    assert compiled == [["twice"]]
    top.finalize().run()
    body.finalize().run()
    assert x.tolist() == [2.0] * 3 and y.tolist() == [2.0] * 5


def test_a_program_calling_a_stand_in_is_not_finalized():
    with compiling_after():
        stand_in = extend.deferred_kernels(lambda items: [], "never compiled", 1)[0]
    program = extend.Program().stage()
    program.kernel(stand_in, [np.zeros(4)], 4)
    with pytest.raises(RuntimeError, match=r"^eagle\.Program\.finalize: the program calls kernels not "
                                           r"compiled yet"):
        program.finalize()


def test_outside_a_build_nothing_is_deferred():
    assert extend.deferred_kernels(lambda items: [], "item", 1) is None
