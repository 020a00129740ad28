"""Central finite differences against eagle.diff.reverse (the ``gradcheck`` fixture)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import eagle
import eagle.diff
from eagle import extend
from eagle.diff.record import flatten

leaves = flatten  # the leaves of a result tree, as eagle.diff reads them


def named(graph: eagle.Graph, arguments: dict[str, Any], name: str) -> list[np.ndarray]:
    """The arrays a name stands for after a run of a builder graph."""
    if name == "result":
        return leaves(graph.result)
    if name in arguments:
        return [arguments[name]]
    return [extend.state(graph)["names"].buffers[name]]  # the builder's names


def numeric(run: Callable[[dict[str, np.ndarray]], float], arrays: dict[str, np.ndarray], wrt: str,
            eps: float = 1e-6) -> np.ndarray:
    """d run(arrays) / d arrays[wrt] by central differences, one element at a time."""
    base = arrays[wrt]
    grad = np.zeros(base.shape)
    for i in np.ndindex(base.shape):
        step = eps * max(1.0, abs(float(base[i])))
        hi, lo = base.copy(), base.copy()
        hi[i] += step
        lo[i] -= step
        grad[i] = (run({**arrays, wrt: hi}) - run({**arrays, wrt: lo})) / (2 * step)
    return grad


def builder_loss(build: Callable[..., eagle.Graph], arrays: dict[str, np.ndarray], seeds: dict[str, Any],
                 **options: Any) -> Callable[[dict[str, np.ndarray]], float]:
    """sum over seeds of <seed, output> after one run of ``build(**arrays, **options)``, the arrays
    (cells and written arguments too) refilled before every run."""
    live = {k: v.copy() for k, v in arrays.items()}
    graph = build(**live, **options)

    def run(values: dict[str, np.ndarray]) -> float:
        for k, v in values.items():
            live[k][...] = v
        graph()
        return sum(float(np.sum(np.asarray(s, np.float64) * out))
                   for name, seed in seeds.items()
                   for out, s in zip(named(graph, live, name), leaves(seed), strict=True))

    return run


def assert_close(got: np.ndarray, expected: np.ndarray, rtol: float, what: str) -> None:
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


def check(build: Callable[..., eagle.Graph], arrays: dict[str, np.ndarray], seeds: dict[str, Any],
          wrt: tuple[str, ...], rtol: float = 1e-6, **options: Any) -> dict[str, Any]:
    """A recorded run's gradients agree with central differences of the same builder (for the
    ``wrt`` names that are arguments); returns them."""
    recorded = build(**{k: v.copy() for k, v in arrays.items()}, record=True, **options)
    recorded()
    grads = eagle.diff.reverse(recorded.record, seeds, wrt=wrt)
    run = builder_loss(build, arrays, seeds, **options)
    for name in (n for n in wrt if n in arrays):  # a buffer has no value of its own to nudge
        assert_close(grads[name], numeric(run, arrays, name), rtol, name)
    return grads


@pytest.fixture
def gradcheck() -> Callable[..., dict[str, Any]]:
    """``gradcheck(build, arrays, seeds, wrt, rtol=1e-6, **options)``: see :func:`check`."""
    return check


@pytest.fixture
def numeric_gradient() -> Callable[..., np.ndarray]:
    """``numeric_gradient(run, arrays, wrt)``: central differences of ``run(arrays) -> float``."""
    return numeric
