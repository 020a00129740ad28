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
