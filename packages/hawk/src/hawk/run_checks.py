"""The errors of a fused run: each the error its launch would raise run on its own.

A fused run (:mod:`hawk.fusion`) has one bounds cell and one cell of placing
Scatters for all its launches.  A checked access of launch ``m`` keys its
bad sample as ``(m * n + sample) * sites + site`` (``sites``: the run's, in
its own numbering), so the smallest key is the first bad access of the first
launch that went wrong: the launch whose error the unfused launches raise
first (it raises before the next one runs).  A placing Scatter's cells name
the first Scatter, in the run's order, that wrote a cell other than once.
Both cells are read back here, after the run, and turned into that launch's
own ``IndexError`` or ``ValueError``, naming its kernel, table and line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hawk import tables
from hawk.fusion import Fused
from hawk.ir import KernelIR


def check(fused: Fused, irs: Sequence[KernelIR], names: Sequence[str], found: dict[str, np.ndarray],
          n: int) -> None:
    """Raise the error of the first launch of the run (``irs``, their kernels' ``names``) that went
    wrong, as its own launch raises it; clear the cells for the next run."""
    bounds, places = found.get(tables.BOUNDS), found.get(tables.PLACES)
    bad = None
    if bounds is not None and int(bounds[0]) != tables.NONE:
        key, index, axis = (int(v) for v in bounds[:3])
        sites = tables.sites(fused.ir)
        member, site = fused.sites[key % sites]
        sample_number = key // sites - member * n
        own = sample_number * tables.sites(irs[member]) + site
        bad = (member, tables.bounds_error(irs[member], own, index, axis, f"hawk.kernel {names[member]}"))
    if places is not None and int(places[0]) >= 0:
        member, slot = fused.origins[int(places[0])]
        if bad is None or member < bad[0]:  # one launch's bounds error comes before its places'
            own = np.array([slot, *(int(v) for v in places[1:])])
            bad = (member, tables.places_error(irs[member], own, f"hawk.kernel {names[member]}"))
    if bad is not None:
        if bounds is not None:
            bounds[...] = (tables.NONE, 0, 0, 0)
        if places is not None:
            places[...] = -1
        raise bad[1]
