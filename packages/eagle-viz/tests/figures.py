"""Write the figures of docs/viz.rst from the test graphs.

    python packages/eagle-viz/tests/figures.py docs/_figures
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import conftest  # the test graphs, beside this file


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    figures = {"graph_fork_join.png": conftest.seed_001_graph(),  # the name seed 001's page uses
               "graph_builder.png": conftest.recorded_graph()}  # built by the builder
    for name, graph in figures.items():
        if graph.backend is None:
            graph.build()
        graph.plot().savefig(out / name, dpi=150)
        print(out / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/_figures"))
