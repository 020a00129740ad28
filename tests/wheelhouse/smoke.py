"""The smoke test of one install line, run by the nox wheelhouse session in a fresh environment.

Usage: ``python smoke.py DISTRIBUTION`` (``raptor-eagle``, ``eagle-graph``, ...; extras left off).
Each check does real work with what that line installs: a graph built and launched, a hawk
kernel compiled and run, a gradient taken, a picture drawn, a plugin's node launched.  What the
line does not install must be absent, and what it needs then names a distribution that installs.
It runs outside the repository, so everything it imports comes from the environment.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

import eagle

#: Heavy modules no install line may import just by importing eagle and listing its plugins.
HEAVY = ("mpi4py", "dask", "distributed", "torch", "jax")


def tiny_graph(record: bool = False) -> tuple[eagle.Graph, np.ndarray, np.ndarray]:
    """b = a * a by a host node, then total = sum(b): two nodes the edges order."""
    a, b, total = np.arange(1.0, 5.0), np.zeros(4), np.zeros(1)

    def square() -> None:
        np.multiply(a, a, out=b)

    g = eagle.Graph(record=record)
    g.add_node(eagle.opaque(square, reads={"a": a}, writes={"b": b}), name="square")
    g.add_node(eagle.reduce(b, total), name="total")
    return g, a, total


def check_core() -> None:
    g, _, total = tiny_graph()
    g.build().launch()
    assert total[0] == 30.0, total
    assert [p.name for p in eagle.plugins()] == [], eagle.plugins()


def check_absent(module: str, distribution: str, probe: object) -> None:
    """``module`` is not installed, and what needs it names ``distribution``."""
    assert importlib.util.find_spec(module) is None, f"{module} is installed"
    try:
        probe()  # type: ignore[operator]
    except ImportError as err:
        assert f"pip install {distribution}" in str(err), err
    else:
        raise AssertionError(f"no ImportError without {module}")


def check_builder() -> None:
    x, out = np.arange(4.0), np.zeros(1)

    @eagle.Graph.builder
    def total(x: np.ndarray, out: np.ndarray) -> eagle.Graph:
        g = eagle.Graph()
        g.add_node(eagle.reduce(x, out), name="total")
        return g

    total(x, out)()
    assert out[0] == 6.0, out


def check_diff() -> None:
    g, a, _ = tiny_graph(record=True)
    g.build().launch()

    def square_vjp(primals: dict, cotangents: dict) -> dict:
        return {"a": 2.0 * primals["a"] * cotangents["b"]}

    import eagle.diff

    grads = eagle.diff.reverse(g.record, {"out": np.ones(1)}, wrt=("a",), vjps={"square": square_vjp})
    assert np.array_equal(grads["a"], 2.0 * a), grads


def check_viz(plot: bool) -> None:
    g, _, _ = tiny_graph()
    g.build()
    assert "square" in str(g) and "flowchart TD" in g.to_mermaid() and "digraph" in g.to_dot()
    if plot:
        with tempfile.TemporaryDirectory() as folder:
            png = Path(folder) / "graph.png"
            g.plot().savefig(png)
            assert png.stat().st_size > 1000


def check_hawk() -> None:
    import hawk

    source = (
        "from hawk import Param, Scalar\n"
        "import hawk\n"
        "@hawk.kernel\n"
        "def affine(x: Scalar, a: Param, b: Param) -> Scalar:\n"
        "    return a * x + b\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernels.py"
        path.write_text(source)  # hawk reads a kernel's source from its file
        spec = importlib.util.spec_from_file_location("smoke_kernels", path)
        kernels = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kernels)
        x = np.arange(8.0)
        y = np.zeros(8)
        g = eagle.Graph().add(kernels.affine.plan(x, 2.0, 1.0, buffer=y), name="affine").build()
        g.launch()
    assert np.array_equal(y, 2.0 * x + 1.0), y
    assert np.array_equal(kernels.affine(x, 0.5, 0.0), 0.5 * x)  # a call outside a graph runs at once
    assert hawk.__version__ == importlib.metadata.version("raptor-hawk")


def check_plugin(name: str) -> None:
    found = {p.name: p for p in eagle.plugins()}
    assert name in found, found
    assert found[name].version == importlib.metadata.version(name)


def check_scan() -> None:
    check_plugin("eagle-scan")
    x, y = np.arange(1.0, 6.0), np.zeros(5)
    eagle.Graph().add_node(eagle.node("scan", x, out=y, op="sum"), name="cumsum").build().launch()
    assert np.array_equal(y, np.cumsum(x)), y


def check_framework(dist: str, module: str, framework: str) -> None:
    check_plugin(dist)
    assert importlib.util.find_spec(framework) is None, f"{framework} is installed"
    fw = importlib.import_module(f"eagle.frameworks.{module}")
    x, y = np.zeros(3), np.zeros(3)
    try:
        fw.node(lambda a: a, reads={"x": x}, writes={"y": y})
    except ImportError as err:
        assert f"pip install '{dist}[{framework}]'" in str(err), err
    else:
        raise AssertionError(f"eagle.frameworks.{module}.node made a node without {framework}")


def check_mpi() -> None:
    check_plugin("eagle-mpi")
    assert "mpi4py" not in sys.modules, "listing plugins imported mpi4py"
    from mpi4py import MPI

    x, total = np.arange(8.0), np.zeros(1)
    g = eagle.Graph(comm=MPI.COMM_WORLD)
    g.add_node(eagle.reduce(x, total), name="total")
    g.build().launch()
    assert total[0] == 28.0, total


#: A builder for eagle-dask's workers, who import it by name: it must live in a module.
DASK_STEPS = """
import numpy as np, eagle

@eagle.Graph.builder
def double(x):
    g = eagle.Graph()
    y = np.zeros_like(x)

    def run():
        np.multiply(x, 2.0, out=y)

    g.add_node(eagle.opaque(run, reads={"x": x}, writes={"y": y}), name="double")
    g.result = y
    return g
"""


def check_dask() -> None:
    assert eagle.plugins() == [] and "dask" not in sys.modules  # eagle-dask has no entry point
    import eagle_dask
    from distributed import Client

    assert eagle_dask.__version__ == importlib.metadata.version("eagle-dask")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "smoke_dask_steps.py").write_text(DASK_STEPS)
        sys.path.insert(0, folder)
        import smoke_dask_steps

        x = np.arange(10_000.0)
        # workers in this process: the shards, their graphs and the gather are eagle-dask's own
        with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
            out = eagle_dask.Sharded(client, smoke_dask_steps.double)(x=x)
    assert np.array_equal(out, 2.0 * x), out


def main(target: str) -> None:
    checks = {
        "eagle-graph": lambda: (check_core(), check_absent("eagle.builder", "eagle-builder",
                                                           lambda: eagle.Graph.builder(check_core))),
        "eagle-builder": lambda: (check_core(), check_builder()),
        "eagle-diff": lambda: (check_core(), check_diff()),
        "eagle-viz": lambda: (check_core(), check_viz(plot=False)),
        "raptor-eagle": lambda: (check_core(), check_builder(), check_diff(), check_viz(plot=True)),
        "raptor-hawk": lambda: (check_core(), check_hawk()),
        "eagle-scan": check_scan,
        "eagle-torch": lambda: check_framework("eagle-torch", "torch", "torch"),
        "eagle-jax": lambda: check_framework("eagle-jax", "jax", "jax"),
        "eagle-mpi": check_mpi,
        "eagle-dask": check_dask,
    }
    heavy_before = [m for m in HEAVY if m in sys.modules]
    assert not heavy_before, f"import eagle imported {heavy_before}"
    checks[target]()
    print(f"smoke {target}: ok (eagle {eagle.__version__})")


if __name__ == "__main__":
    main(sys.argv[1])
