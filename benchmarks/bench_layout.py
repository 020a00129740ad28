"""The layout of a 10,000-node graph's picture (issue 25: under 1 s), with libeagle's layout engine.

Run: python benchmarks/bench_layout.py

Three hand-built graphs of 10,000 nodes, each node its own label so nothing
folds (the worst case; folded, a chain is one box): a chain, 2,500 forks of
four branches, and a chain where every 50th node's plane is read 25 nodes
later (200 long links, routed around the boxes).  For each: ``model``
(eagle.viz.describe: the graph read into blocks), ``layout`` (describe plus
eagle.viz.layout: the picture tree to libeagle, the cells back as the faces'
dataclasses), ``engine`` (the one C call, eagle.extend.lay_out, on the tree
already made) and ``text`` (print(g)'s whole picture).  Medians over repeats.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

import eagle
import eagle.viz
from eagle.extend import lay_out
from eagle.graph import opaque

NODES = 10_000
REPEATS = 5


def _noop() -> None:
    pass


def chain(n: int = NODES, skip_every: int = 0, skip_by: int = 25) -> eagle.Graph:
    """n nodes in one line, each reading the plane the one before wrote; with ``skip_every``,
    every such node's plane is read again ``skip_by`` nodes later."""
    planes = [np.zeros(1) for _ in range(n + 1)]
    g = eagle.Graph()
    for i in range(n):
        reads = {f"p{i}": planes[i]}
        if skip_every and i >= skip_by and (i - skip_by) % skip_every == 0:
            reads[f"p{i - skip_by + 1}"] = planes[i - skip_by + 1]
        g.add_node(opaque(_noop, reads=reads, writes={f"p{i + 1}": planes[i + 1]}), name=f"k{i}")
    return g


def forks(n: int = NODES, width: int = 4) -> eagle.Graph:
    """n nodes as forks of ``width`` branches, one node each, every fork reading the last's planes."""
    g = eagle.Graph()
    before = [np.zeros(1)]
    for f in range(n // width):
        after = [np.zeros(1) for _ in range(width)]
        nodes = [opaque(_noop, reads={f"q{f}_{b}": before[b % len(before)]}, writes={f"q{f + 1}_{b}": out})
                 for b, out in enumerate(after)]
        g.add_group(nodes, names=[f"f{f}b{b}" for b in range(width)])
        before = after
    return g


def median_ms(fn: Callable[[], object]) -> float:
    fn()  # warm: imports, caches
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def engine_call(g: eagle.Graph) -> Callable[[], object]:
    """The C call alone (and its result read back), on the picture tree describe + layout would
    hand it, the cyclic collector paused as eagle.viz.layout pauses it."""
    from eagle.viz._bulk import without_cycle_passes
    from eagle.viz._layout import _data_pairs, _preorder, _row, node_text, stage_text

    model = eagle.viz.describe(g, "bench", fold=False)
    texts = {n.index: node_text(n) for n in model.nodes}
    rows = [_row(b, texts) for s in model.stages for b in _preorder(s.block)]
    widths = [len(stage_text(s.index, s.last, s.schedule)) for s in model.stages]
    owners = [n.owner for n in model.nodes]
    pairs, _ = _data_pairs(model)
    return without_cycle_passes(lambda: lay_out(rows, len(model.stages), widths, 1, owners, pairs))


def main() -> None:
    graphs = {"chain": chain(), "forks 4 wide": forks(), "chain, 200 long links": chain(skip_every=50)}
    print(f"layout of a {NODES:,}-node graph's picture, medians of {REPEATS} (ms)")
    print(f"{'graph':24} {'model':>8} {'layout':>8} {'engine':>8} {'text':>8}  cells")
    for name, g in graphs.items():
        model = median_ms(lambda g=g: eagle.viz.describe(g, "bench", fold=False))
        whole = median_ms(lambda g=g: eagle.viz.layout(eagle.viz.describe(g, "bench", fold=False)))
        engine = median_ms(engine_call(g))
        text = median_ms(lambda g=g: eagle.viz.draw_text(eagle.viz.layout(eagle.viz.describe(g, "bench",
                                                                                              fold=False))))
        lay = eagle.viz.layout(eagle.viz.describe(g, "bench", fold=False))
        print(f"{name:24} {model:8.1f} {whole:8.1f} {engine:8.1f} {text:8.1f}  {lay.width}×{lay.height}")


if __name__ == "__main__":
    main()
