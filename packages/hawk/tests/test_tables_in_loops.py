"""Table reads inside a kernel's loop (the tables and flow parts together): a loop loads the
parameters its body reads before the first turn, but a Table is read at the indices each turn
computes."""

import numpy as np

import hawk
from hawk import Scalar, Table


@hawk.kernel
def window(x: Scalar, t: Table.clamp) -> Scalar:
    acc = x * 0.0
    for k in range(3):
        acc = acc + t[hawk.sample() + k - 1]
    return acc


def test_a_table_read_at_the_turns_index():
    x = np.arange(5.0)
    t = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    want = np.array([1 + 1 + 2, 1 + 2 + 4, 2 + 4 + 8, 4 + 8 + 16, 8 + 16 + 16], float)
    np.testing.assert_array_equal(window(x, t), want)
    np.testing.assert_array_equal(window.reference(x, t), want)


@hawk.kernel
def smear(a: Scalar, t: Table.wrap, p: hawk.Param) -> Scalar:
    return a * 0.5 + t[hawk.sample() - 2] * p


@hawk.kernel
def grown(a: Scalar, b: Scalar) -> Scalar:
    return a + b * 0.25


def test_a_builder_loop_never_merges_a_table_readers_output_into_what_it_reads():
    """In a device loop whose body ends in a device if, the name is merged into the array the
    loop carries it in; the kernel that reads that array as a Table must still write another one
    (found by the fuzzer: it was refused as writing the plane it reads)."""
    import eagle

    @eagle.Graph.builder
    def prog(x, cnt, c):
        g = eagle.Graph()
        for _ in range(cnt):
            x = smear(x, x, 0.5)
            if c:
                x = grown(x, x)
        g.result = x
        return g

    x = np.arange(6.0)
    for flag in (0, 1):
        want = x.copy()
        for _ in range(3):
            want = smear(want, want, 0.5)
            want = grown(want, want) if flag else want
        got = prog(x, np.array([3], np.uint32), np.array([flag], np.uint32))()
        assert got.tobytes() == want.tobytes()
