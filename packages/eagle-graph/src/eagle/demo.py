"""``python -m eagle.demo``: one graph with everything, on NumPy arrays.

The graph of "Every form of a graph builder" (its last section): a fork
whose branches wait on each other, blocks, a capped device loop whose guard
a kernel's reduction writes, a state seeded from an argument and an
argument written in place.  The demo builds it, prints its picture, binds new
arrays, replays it and checks the result against NumPy running the same
arithmetic eagerly, takes a gradient with ``eagle.diff.reverse`` (when
eagle-diff provides it), times a replay beside NumPy at a few sizes, and
writes the graph's picture to a PNG when matplotlib is installed.

It is the demo of the whole install: it needs hawk and eagle-builder beside
eagle-graph (``pip install .`` at the top of the repository installs all of
them) and a C compiler (``cc``), and imports them only when its graph is
first made (``main``, ``whole``), so the core does not depend on them.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import eagle
from eagle import _core
from eagle._errors import EagleAttributeError, EagleImportError

__all__ = ["main", "numpy_whole", "whole"]  # noqa: F822 - whole: made on first use (__getattr__)

_NEEDS = ("python -m eagle.demo needs hawk and eagle-builder: pip install hawk eagle-builder "
          "(or `pip install .` at the top of eagle's repository)")


@functools.cache
def _whole() -> Any:
    """The demo's builder, made on first use: the demo is the whole install's, and importing
    eagle-graph never imports the packages above it (DESIGN.md section 2)."""
    try:
        import eagle.builder  # @eagle.Graph.builder below needs it
        import hawk
        from hawk import Mutable, Scalar, UInt32
    except ImportError:  # the message says what to install
        raise EagleImportError(_NEEDS) from None

    # The kernels: toy bodies, hawk's roles.
    @hawk.kernel
    def seed(x: Scalar) -> Scalar:
        return 0.5 * x

    @hawk.kernel
    def left(a: Scalar) -> Scalar:
        return a + 1.0

    @hawk.kernel
    def right(l: Scalar) -> Scalar:  # noqa: E741 - the seed's name
        return l - 1.0

    @hawk.kernel
    def polish(v: Scalar) -> Scalar:
        return 2.0 * v

    @hawk.kernel
    def tweak(v: Scalar) -> Scalar:
        return v * v

    @hawk.kernel
    def merge(s: Scalar, t: Scalar) -> Scalar:
        return s - t

    @hawk.kernel
    def remaining(s: Scalar, flag: Mutable[UInt32]) -> None:  # a reduction writes the guard cell
        flag = hawk.math.uint32(hawk.sum(s > 1.0))  # noqa: F841 - a Mutable is written by assignment

    @hawk.kernel
    def accumulate(s: Scalar, r: Scalar, r2: Scalar, y: Mutable[Scalar]) -> None:  # writes y in place
        y = s + r + r2  # noqa: F841

    @eagle.Graph.builder
    def twice(g: eagle.Graph, v: Any) -> Any:  # a block: appends to the graph it is given
        return tweak(tweak(v))

    @eagle.Graph.builder
    def settle(g: eagle.Graph, s: Any, l: Any, flag: Any) -> Any:  # noqa: E741
        for _ in range(50):  # a capped device loop: at most 50 turns ...
            if not flag:  # ... leaving as soon as the one-cell guard reads 0
                break
            s = merge(s, twice(g, l))  # one buffer, updated in place
            remaining(s, flag)  # the body rewrites the guard
        return s

    @eagle.Graph.builder
    def whole(x: Any, flag: Any, y: Any, record: bool = False) -> eagle.Graph:
        """The seed's graph: ``whole(x, flag, y)`` records and builds it; ``g()`` replays it.

        >>> from eagle.demo import whole
        >>> x, y, flag = np.arange(4.0), np.zeros(4), np.ones(1, np.uint32)
        >>> g = whole(x, flag, y)
        >>> g()                    # the loop turns once: the state leaves (1, inf) at once
        array([ -16.,  -80., -254., -622.])
        >>> y, flag
        (array([ -16.    ,  -79.4375, -252.    , -615.4375]), array([0], dtype=uint32))
        """
        g = eagle.Graph(record=record)
        a = seed(x)
        with g.parallel() as p:  # a fork; leaving the `with` joins
            with p.branch():
                l = left(a)  # noqa: E741
                l2 = polish(l)
            with p.branch() as w:
                w.wait(l)  # this branch starts after the node that wrote l
                r = right(l)
            with p.branch() as c:
                r2 = twice(c, a)  # a block inside a branch
        s = settle(g, x, l2, flag)  # x seeds the loop's state; x itself is never changed
        accumulate(s, r, r2, y)  # y: an argument written in place
        g.result = s
        return g

    return whole


def __getattr__(name: str) -> Any:
    if name == "whole":  # the seed's graph: ``whole(x, flag, y)`` records and builds it
        return _whole()
    raise EagleAttributeError(f"module 'eagle.demo' has no attribute {name!r}")


def numpy_whole(x: np.ndarray, flag: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The same arithmetic in NumPy, eagerly, one operation at a time (the same bits).

    >>> from eagle.demo import numpy_whole
    >>> y = np.zeros(4)
    >>> numpy_whole(np.arange(4.0), np.ones(1, np.uint32), y), y
    (array([ -16.,  -80., -254., -622.]), array([ -16.    ,  -79.4375, -252.    , -615.4375]))
    """
    a = 0.5 * x
    l = a + 1.0  # noqa: E741
    l2 = 2.0 * l
    r = l - 1.0
    r2 = (a * a) * (a * a)
    s = x.copy()
    for _ in range(50):
        if not flag[0]:
            break
        t = l2 * l2
        s = s - t * t
        flag[0] = np.sum(s > 1.0)
    y[:] = s + r + r2
    return s


def _medians(fns: dict[str, Callable[[], object]], seconds: float) -> dict[str, float]:
    """Median seconds per call of each function, timed in turns so a noisy spell hits all alike."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    deadline = time.perf_counter() + seconds
    while len(next(iter(times.values()))) < 5 or time.perf_counter() < deadline:
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def _fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.2f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def _timing(sizes: list[int], seconds: float) -> None:
    print(f"\nTiming: one replay beside NumPy eager, the guard reset before each (medians; "
          f"{_core.num_threads()} threads)")
    print(f"  {'samples':>10}  {'eagle g()':>11}  {'NumPy eager':>11}  {'NumPy / eagle':>13}")
    for n in sizes:
        x = np.linspace(0.0, 1.0, n)
        flag, y = np.ones(1, np.uint32), np.zeros(n)
        flag_np, y_np = np.ones(1, np.uint32), np.zeros(n)
        g = _whole()(x, flag, y)

        def replay(g: eagle.Graph = g, flag: np.ndarray = flag) -> None:
            flag[0] = 1
            g()

        def eager(x: np.ndarray = x, flag: np.ndarray = flag_np, y: np.ndarray = y_np) -> None:
            flag[0] = 1
            numpy_whole(x, flag, y)

        t = _medians({"eagle": replay, "numpy": eager}, seconds)
        if not np.array_equal(y, y_np):
            raise SystemExit(f"eagle and NumPy disagree at {n} samples")
        print(f"  {n:>10,}  {_fmt(t['eagle']):>11}  {_fmt(t['numpy']):>11}  "
              f"{t['numpy'] / t['eagle']:>12.1f}x")


def _gradient(x: np.ndarray, flag: np.ndarray, y: np.ndarray) -> None:
    try:
        reverse = eagle.diff.reverse
    except (ImportError, AttributeError):
        print("\nGradient: this install has no eagle.diff.reverse yet (the eagle-diff package); skipped.")
        return
    flag[0] = 1
    gr = _whole()(x, flag, y, record=True)  # a recorded twin: it keeps what the reverse pass needs
    gr()
    grads = reverse(gr.record, {"result": np.ones(x.size), "y": np.ones(x.size)}, wrt=("x",))
    print('\nGradient: eagle.diff.reverse(gr.record, {"result": ones, "y": ones}, wrt=("x",))')
    print(f"  d(sum(result) + sum(y))/dx = {grads['x']}")

    def f(x: np.ndarray) -> float:  # the same function, in NumPy, with the guard as the replay found it
        y = np.zeros(x.size)
        return float(np.sum(numpy_whole(x, np.ones(1, np.uint32), y)) + np.sum(y))

    h, e = 1e-6, np.eye(x.size)
    central = np.array([(f(x + h * e[i]) - f(x - h * e[i])) / (2 * h) for i in range(x.size)])
    error = np.max(np.abs(central - grads["x"]) / np.maximum(1.0, np.abs(central)))
    print(f"  central differences agree to {error:.1e} (relative)")


def _picture(g: eagle.Graph, png: str | None) -> None:
    if png is None:
        return
    if importlib.util.find_spec("matplotlib") is None:
        print('\nPicture: matplotlib is not installed; pip install "eagle-viz[plot]" to write the PNG.')
        return
    try:
        fig = g.plot()
    except ImportError as err:
        print(f"\nPicture: {err}")
        return
    fig.savefig(png, dpi=120)
    print(f"\nPicture: g.plot() wrote {png}")


def main(argv: list[str] | None = None) -> None:
    """Run the demo: build, picture, bind, replay, gradient, timing, PNG.

    :param argv: command-line arguments (default ``sys.argv[1:]``).

    >>> from eagle import demo
    >>> demo.main(["--no-png", "--sizes", "8", "--seconds", "0"])   # doctest: +ELLIPSIS
    eagle demo: one graph with everything, on NumPy arrays (the CPU)
    ...
      the same bits as NumPy eager: True
    ...
    """
    parser = argparse.ArgumentParser(prog="python -m eagle.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--png", default="eagle-demo.png", help="where to write the picture "
                        "(default: eagle-demo.png; needs matplotlib)")
    parser.add_argument("--no-png", action="store_true", help="do not write the picture")
    parser.add_argument("--sizes", default="8,65536,1048576",
                        help="sample counts to time (comma-separated; default 8,65536,1048576)")
    parser.add_argument("--seconds", type=float, default=0.5, help="time spent timing each size")
    args = parser.parse_args(argv)

    print("eagle demo: one graph with everything, on NumPy arrays (the CPU)")
    x = np.arange(8.0)
    x2, y, flag = x + 1.0, np.zeros(8), np.array([1], dtype=np.uint32)
    g = _whole()(x, flag, y)  # records, derives the edges, lowers once: nothing runs yet
    print("\ng = whole(x, flag, y); print(g):")
    print(g)

    g.bind(x=x2)  # new arrays by the builder's parameter names: no rebuild
    s = g()  # one replay: the result; y holds its output
    print("\ng.bind(x=x + 1); s = g()")
    print(f"  s = {s}")
    print(f"  y = {y}")
    flag_np, y_np = np.array([1], dtype=np.uint32), np.zeros(8)
    same = np.array_equal(s, numpy_whole(x2, flag_np, y_np)) and np.array_equal(y, y_np)
    print(f"  the same bits as NumPy eager: {same}")
    if not same:
        raise SystemExit("eagle and NumPy disagree")

    _gradient(x, flag, np.zeros(8))
    _timing([int(n) for n in args.sizes.split(",") if n], args.seconds)
    _picture(g, None if args.no_png else args.png)


if __name__ == "__main__":
    try:
        main()
    except ImportError as err:
        if str(err) != _NEEDS:
            raise
        sys.exit(_NEEDS)
