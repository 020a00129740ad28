"""What a plane is (issue 17, defects 5 and 14): memory with the buffer protocol is a plane and
carries edges; a number is a value and carries none; anything else is refused by name.  And
planes of other libraries (a DLPack-only object, a torch-like dtype) in copy and reduce."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

import eagle
from eagle._views import candidate_pairs, overlap, overlap_status
from eagle.graph import opaque
from eagle.testing import DLPackOnly


def nop() -> None:
    pass


@pytest.mark.parametrize("make", [bytearray, lambda n: memoryview(bytearray(n)),
                                  lambda n: (ctypes.c_char * n)()], ids=["bytearray", "memoryview", "ctypes"])
def test_siblings_writing_one_buffer_race(make):
    buf = make(16)
    g = eagle.Graph().add_group([opaque(nop, writes={"b": buf}), opaque(nop, writes={"c": buf})],
                                names=["u", "v"])
    with pytest.raises(eagle.SiblingRace, match=re.escape("'u' plane 'b' and 'v' plane 'c' share memory")):
        g.build()


def test_a_buffer_and_its_array_view_are_one_plane():
    buf = bytearray(32)
    view = np.frombuffer(buf, np.float64)
    g = eagle.Graph().add_node(opaque(nop, writes={"b": buf})).add_node(opaque(nop, reads={"x": view[2:]}))
    assert [(e.src, e.dst, e.kind) for e in g.edges()] == [(0, 1, "RAW")]


@pytest.mark.parametrize("value", [[1.0, 2.0], {"a": 1}, "text", None], ids=["list", "dict", "str", "None"])
def test_a_declared_plane_that_is_not_memory_is_refused_by_name(value):
    with pytest.raises(TypeError, match=r"^eagle\.graph\.opaque: plane 'p' is a \w+, which the conflict"):
        opaque(nop, writes={"p": value})


def test_numpy_scalars_are_values_with_no_edges():
    """arr[5, 5] is a copy: two of them never race (their interface points at a freed temporary)."""
    arr = np.arange(100.0).reshape(10, 10)
    for _ in range(20):
        g = eagle.Graph().add_group([opaque(nop, writes={"a": arr[5, 5]}),
                                     opaque(nop, writes={"b": arr[6, 6]})])
        assert g.edges() == []
        g.build()


def test_max_work_out_of_range_is_refused_with_the_range():
    x = np.zeros(8)
    for call in (lambda: overlap(x, x, max_work=10**100), lambda: overlap_status(x, x, max_work=-(2**63) - 1),
                 lambda: candidate_pairs([x, x], [True, True], max_work=10**100)):
        with pytest.raises(ValueError, match=r"max_work must be an int from -2\*\*63 to 2\*\*63 - 1"):
            call()
    assert overlap(x, x, max_work=2**63 - 1)


class ForeignDtype:
    """A torch-like array: an array interface, but a dtype NumPy cannot read."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array
        self.dtype = "torch.float64"
        self.shape = array.shape
        self.__array_interface__ = array.__array_interface__


def test_copy_between_other_libraries_planes():
    src, into = np.arange(8.0), np.zeros(8)
    eagle.Graph().add_node(eagle.copy(DLPackOnly(src), into=ForeignDtype(into))).build().launch()
    assert into.tolist() == src.tolist()
    raw = bytearray(64)
    eagle.Graph().add_node(eagle.copy(src.view(np.uint8), into=raw)).build().launch()
    assert np.frombuffer(raw, np.float64).tolist() == src.tolist()


def test_copy_and_reduce_refuse_what_is_not_an_array_by_name():
    with pytest.raises(TypeError, match=r"^eagle\.copy: src is a list, not an array"):
        eagle.copy([1.0, 2.0], into=np.zeros(2))
    with pytest.raises(TypeError, match=r"^eagle\.reduce: out is the number np\.float64\(0\.0\)"):
        eagle.reduce(np.zeros(2), np.float64(0.0))


def test_reduce_of_a_foreign_dtype_plane():
    x, out = np.arange(5.0), np.zeros(1)
    eagle.Graph().add_node(eagle.reduce(ForeignDtype(x), ForeignDtype(out))).build().launch()
    assert out[0] == 10.0


def test_reduce_and_copy_of_torch_tensors():
    torch = pytest.importorskip("torch")
    x, total = torch.arange(5, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
    saved = torch.zeros(5, dtype=torch.float64)
    g = eagle.Graph().add_node(eagle.reduce(x, total)).add_node(eagle.copy(x, into=saved))
    g.build().launch()
    assert total.item() == 10.0 and saved.tolist() == x.tolist()


def test_a_kind_declaring_a_non_plane_is_refused_at_add():
    from eagle.graph import Node, register_node_kind

    register_node_kind("trust_list_plane", reads=lambda p: [("xs", p, "read")], writes=lambda p: [],
                       lower_cpu=lambda p: nop)
    with pytest.raises(TypeError, match=re.escape("eagle.Graph.add_node: node 'lister' (trust_list_plane) "
                                                  "declares plane 'xs' as a list")):
        eagle.Graph().add_node(Node("trust_list_plane", [1.0, 2.0]), name="lister")
