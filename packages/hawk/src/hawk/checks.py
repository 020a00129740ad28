"""The check cells of a launch in a GPU graph: what raises a checked Table read out of range or a
placing Scatter's cell written other than once, after a launch on the GPU.

On the CPU a host callback after the launch reads the cells (:func:`hawk.tables.check`).  A GPU
graph cannot raise after a launch, so :func:`on_gpu` has the graph copy the cells into pinned
memory, check them on a host node (whose error the launch's wait raises, with the CPU's message)
and copy them back cleared.  A conditional body holds no host node: there each launch's cells are
kept, the first turn that went wrong winning, in cells of the body's own, which are checked after
the outermost conditional node; between the bad access and the raise, reads stay in bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from eagle import extend
from hawk import tables

#: After each launch in a body: its cells into the kept ones unless a turn before left an error
#: there (every kept word as clean says none did), and its own cleared for the next turn.
_KEEP_FIRST = r"""
extern "C" __global__ void hk_keep_first(long long *a, const long long na, long long *b, const long long nb,
                                         long long *kept, const long long *clean)
{
    int fresh = 1;
    for (long long w = 0; w < na + nb; ++w)
        fresh &= kept[w] == clean[w];
    for (long long w = 0; w < na; ++w) {
        if (fresh)
            kept[w] = a[w];
        a[w] = clean[w];
    }
    for (long long w = 0; w < nb; ++w) {
        if (fresh)
            kept[na + w] = b[w];
        b[w] = clean[na + w];
    }
}
"""


def on_gpu(gpu: Any, cells: dict[str, Any], check: Callable[[dict[str, np.ndarray]], None]) -> None:
    """Check the device check cells of a launch or a fused run (name -> device array) after it, in
    GPU program ``gpu``: ``check(found)`` gets the cells as host arrays and raises at the wait what
    it raises on the CPU (:func:`hawk.tables.check` for a launch, :func:`hawk.run_checks.check`
    for a fused run), and clears them."""
    names, arrays = list(cells), list(cells.values())
    if not gpu.in_body:
        gpu.checked(arrays, lambda staged: check(dict(zip(names, staged, strict=True))))
        return
    # in a body: every cell's words in one kept block (a turn's errors stay together)
    clean = [tables.clean(name) for name in names]
    kept, cleared = (extend.device_copy_like(arrays[0], np.concatenate(clean)) for _ in range(2))
    a, b = arrays[0], arrays[-1]
    sizes = [np.int64(clean[0].size), np.int64(clean[-1].size if len(arrays) > 1 else 0)]
    function = extend.cuda_module(_KEEP_FIRST, "hawk_checks", gpu.device).function("hk_keep_first")
    gpu.kernel(function, [a, sizes[0], b, sizes[1], kept, cleared], (1, 1, 1), (1, 1, 1))
    ends = np.cumsum([0, *(c.size for c in clean)])
    gpu.checked([kept], lambda staged: check({name: staged[0][ends[k]:ends[k + 1]]
                                              for k, name in enumerate(names)}))
