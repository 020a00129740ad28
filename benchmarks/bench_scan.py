"""A scan over the rows of a stacked array: one device loop against the unrolled body, NumPy, and
``jax.lax.scan`` (jit, synchronous dispatch, the carry donated) when JAX is installed.

``for t in range(T): y = step(y, xs[t])`` records one loop whose body moves row ``t`` in; the
unrolled form (``for row in xs: y = step(y, row)``) records ``T`` launches.  The table gives, per
``T``, the nodes of the built graph (bodies included), the time to record and build it, and the
median replay, timed in turns in one process (ratios against the scan).

Run: python benchmarks/bench_scan.py [--smoke]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from harness import fmt, interleaved_medians
from peers import load_jax

import eagle
import eagle.diff
import hawk
from eagle.extend import view
from hawk import Scalar
from hawk import math as hm


@hawk.kernel
def step(y: Scalar, x: Scalar) -> Scalar:
    return hm.sin(y) * 0.75 + x


@eagle.Graph.builder
def scan(y, xs):
    g = eagle.Graph()
    for t in range(xs.shape[0]):  # one device loop: row t moved in at every turn
        y = step(y, xs[t])
    g.result = y
    return g


@eagle.Graph.builder
def recorded(y, xs):
    g = eagle.Graph(record=True)  # keeps what the reverse pass needs: one carry per turn
    for t in range(xs.shape[0]):
        y = step(y, xs[t])
    g.result = y
    return g


@eagle.Graph.builder
def unrolled(y, xs):
    g = eagle.Graph()
    for row in xs:  # a Python loop over the rows: T launches
        y = step(y, row)
    g.result = y
    return g


def numpy_scan(y: np.ndarray, xs: np.ndarray) -> np.ndarray:
    for row in xs:
        y = np.sin(y) * 0.75 + row
    return y


def nodes(g: eagle.Graph) -> int:
    return sum(1 for top in view(g).nodes for _ in top.walk())


def built(make, *args) -> tuple[eagle.Graph, float]:
    """The graph, and the time to record and build it once its kernels are compiled (a second time)."""
    make(*[np.copy(a) for a in args])
    start = time.perf_counter()
    g = make(*args)
    return g, time.perf_counter() - start


def jax_scan(jax, jnp, y: np.ndarray, xs: np.ndarray):
    def body(carry, x):
        return jnp.sin(carry) * 0.75 + x, None

    run = jax.jit(lambda c, rows: jax.lax.scan(body, c, rows)[0], donate_argnums=0)
    rows = jnp.asarray(xs)
    state = {"y": jnp.asarray(y)}

    def call():
        state["y"] = run(jnp.asarray(y), rows)
        state["y"].block_until_ready()
    return call


def jax_gradient(jax, jnp, y: np.ndarray, xs: np.ndarray):
    def body(carry, x):
        return jnp.sin(carry) * 0.75 + x, None

    grad = jax.jit(jax.grad(lambda c, rows: jax.lax.scan(body, c, rows)[0].sum(), argnums=(0, 1)))
    y0, rows = jnp.asarray(y), jnp.asarray(xs)

    def call():
        return jax.block_until_ready(grad(y0, rows))
    return call


def gradients(jax, turns: int, n: int, repeat: int) -> None:
    """The forward replay and the reverse pass for the gradient of sum(y_T) w.r.t. y0 and every row."""
    rng = np.random.default_rng(1)
    y0, xs = rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, (turns, n))
    g = recorded(y0.copy(), xs.copy())
    seed = {"result": np.ones(n)}

    def eagle_gradient():
        g()
        return eagle.diff.reverse(g.record, seed, wrt=("y", "xs"))

    fns = {"eagle": eagle_gradient}
    if jax is not None:
        fns["jax"] = jax_gradient(*jax, y0, xs)
    if jax is not None:  # the same gradients (sin is eagle's own in one, XLA's in the other)
        mine, theirs = eagle_gradient(), fns["jax"]()
        np.testing.assert_allclose(mine["y"], theirs[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(mine["xs"], theirs[1], rtol=1e-9, atol=1e-12)
    medians = interleaved_medians(fns, repeat=repeat)
    print(f"\ngradient of sum(y_T) w.r.t. y0 and the {turns} rows of xs, {n} samples")
    print(f"  eagle record=True replay + eagle.diff.reverse   {fmt(medians['eagle'])}   1.00x")
    if jax is not None:
        print(f"  jax.jit(jax.grad(lax.scan ...))               {fmt(medians['jax'])}   "
              f"{medians['jax'] / medians['eagle']:.2f}x")


def main(smoke: bool = False) -> None:
    n = 64 if smoke else 4096
    lengths = (4, 16) if smoke else (16, 256, 1024)
    repeat = 3 if smoke else 21
    jax = load_jax()
    rng = np.random.default_rng(0)
    print(f"scan of y = sin(y) * 0.75 + x over T rows of {n} samples (float64, CPU)")
    print(f"{'T':>6} {'form':<26} {'nodes':>6} {'record+build':>13} {'replay':>10} {'vs scan':>8}")
    for turns in lengths:
        y0, xs = rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, (turns, n))
        g_scan, t_scan = built(scan, y0.copy(), xs.copy())
        g_unrolled, t_unrolled = built(unrolled, y0.copy(), xs.copy())
        np.testing.assert_array_equal(g_scan(), g_unrolled())  # the same bits
        np.testing.assert_allclose(g_scan(), numpy_scan(y0, xs), rtol=1e-12, atol=1e-12)
        fns = {"scan": g_scan, "unrolled": g_unrolled, "numpy": lambda y0=y0, xs=xs: numpy_scan(y0, xs)}
        if jax is not None:
            fns["jax"] = jax_scan(*jax, y0, xs)
        medians = interleaved_medians(fns, repeat=repeat)
        rows = [("eagle scan (one loop)", nodes(g_scan), t_scan, "scan"),
                ("eagle unrolled (T nodes)", nodes(g_unrolled), t_unrolled, "unrolled"),
                ("NumPy loop", None, None, "numpy")]
        if jax is not None:
            rows.append(("jax.lax.scan (jit, donated)", None, None, "jax"))
        for label, count, build, key in rows:
            ratio = medians[key] / medians["scan"]
            print(f"{turns:>6} {label:<26} {'' if count is None else count:>6} "
                  f"{'' if build is None else fmt(build):>13} {fmt(medians[key]):>10} {ratio:>7.2f}x")
    gradients(jax, lengths[-1] if smoke else 256, n, repeat)


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
