"""The reference interpreter (eagle.testing): its fixed order is libeagle's, its conditionals read
their cells when reached, and eagle.testing.check catches a lowering that disagrees with it."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle.graph import Node, opaque, register_node_kind
from eagle.testing import check, fixed_order, interpret

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint32, np.uint8, np.bool_]


@pytest.mark.parametrize(("dtype", "op"), [(d, op) for d in DTYPES for op in ("sum", "max", "all")
                                           if d is not np.bool_ or op == "all"])
@pytest.mark.parametrize("n", [1, 2, 3, 1023, 1024, 1025, 5000])
def test_fixed_order_is_libeagles(dtype: type, op: str, n: int) -> None:
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 1e3).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(0, 2 if dtype is np.bool_ else 100, n).astype(dtype)
    out = np.zeros(1, dtype)
    eagle.Graph().add_node(eagle.reduce(x, out, op)).build().launch()
    assert out.tobytes() == np.asarray(fixed_order(op, x), dtype).reshape(1).tobytes()


def test_fixed_order_is_a_tree_not_a_loop() -> None:
    x = np.array([1e16, 1.0, -1e16, 1.0])
    assert fixed_order("sum", x) == (1e16 + 1.0) + (-1e16 + 1.0)
    assert fixed_order("sum", x) != ((1e16 + 1.0) - 1e16) + 1.0


def test_nan_and_empty() -> None:
    assert np.isnan(fixed_order("max", np.array([1.0, np.nan, 3.0])))
    assert fixed_order("sum", np.zeros(0)) == 0.0
    assert fixed_order("all", np.zeros(0, np.uint32)) == 1
    assert fixed_order("max", np.zeros(0)) == -np.inf


def test_conditionals_read_their_cells_when_reached() -> None:
    x, cell = np.zeros(1), np.array([1], np.uint32)
    then = eagle.Body([opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x})])
    clear = opaque(lambda: cell.fill(0), writes={"cell": cell})
    g = eagle.Graph().add_node(Node("device_if", eagle.DeviceIf(cell, then, eagle.Body())))
    g = g.add_node(clear)
    interpret(g, 3)  # the first turn clears the cell: the next two skip
    assert x[0] == 1.0


@pytest.mark.parametrize(("kind", "turns"), [("while", 0), ("do", 1), ("count", 0)])
def test_loops_over_a_zero_cell(kind: str, turns: int) -> None:
    x, cell = np.zeros(1), np.array([0], np.uint32)
    body = eagle.Body([opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x})])
    g = eagle.Graph().add_node(Node("device_loop", eagle.DeviceLoop(cell, kind, 5, body)))
    check(g.build())
    interpret(g)
    assert x[0] == 2 * turns


def test_check_names_a_lowering_that_differs() -> None:
    # A kind whose host lowering adds 1 but whose meaning adds 2: check must say so.
    register_node_kind("test_reference_off_by_one", reads=lambda x: [("x", x, "read")],
                       writes=lambda x: [("x", x, "readwrite")],
                       lower_cpu=lambda x: lambda: np.add(x, 1.0, out=x),
                       reference=lambda x, interpreter: np.add(x, 2.0, out=x))
    x = np.zeros(3)
    g = eagle.Graph().add_node(Node("test_reference_off_by_one", x), name="bump").build()
    with pytest.raises(AssertionError, match=r"node 'bump' plane 'x': element 0 is 1.0 after the replay, "
                                             r"2.0 by the reference"):
        check(g)
    np.testing.assert_array_equal(x, [1.0, 1.0, 1.0])  # left as the replay left it


def test_logical_size_limits_what_the_reference_processes() -> None:
    x, total = np.arange(6.0), np.zeros(1)
    g = eagle.Graph().add_node(eagle.reduce(x, total)).build().set_logical_size(4)
    check(g)
    assert total[0] == 6.0
