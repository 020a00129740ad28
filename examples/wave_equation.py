"""A 2-D wave equation on a grid, ported from NVIDIA Warp's ``example_wave.py`` to eagle.

The grid's cells are the samples.  Each substep pushes the cells under a
moving sphere down (the displacement source), then integrates the wave
equation: every cell reads its four neighbours through a ``Table.clamp``
(an index past the edge reads the edge, as Warp's ``wp.clamp``), at its own
2-D index from ``hawk.sample2``; the second difference is a ``@hawk.func``
helper, as Warp's is a ``wp.func``.  A frame is 16 substeps recorded once as
a builder graph (a counted device loop of two substeps a turn), replayed per
frame, then the heights are copied into the mesh's vertices.
``numpy_frames`` is the same arithmetic in NumPy; the tests hold the two to
the same bits.

Warp works in float32, and so does this port by default.  The sphere's
centre moves with the simulated time, which Warp keeps in Python: here it
is a one-cell float64 clock that a one-sample kernel advances each substep,
writing the centre into two one-cell planes the displacement reads, so the
whole frame is one replay.

Run: python examples/wave_equation.py [--size 128] [--frames 60]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import side_by_side

import eagle
import hawk
from hawk import Float32, Float64, Int32, Mutable, Param, Scalar, Table
from hawk import math as hm

SIZE, SUBSTEPS, FPS = 128, 16, 60
DT = (1.0 / FPS) / SUBSTEPS
K_SPEED, K_DAMP = 1.0, 0.0
GRID_SIZE = 0.1
INV_CELL = 1.0 / GRID_SIZE
RADIUS, MAG, PUSH_PHASE = 10.0, 0.5, -math.pi * 0.5

#: A plane: a NumPy array, or a device array (CuPy) where the example runs on the GPU.
Array = Any


@hawk.kernel
def clock(t: Mutable[Float64], cx: Mutable[Float32], cy: Mutable[Float32], width: Param[Int32],
          height: Param[Int32], dt: Param) -> None:
    """The sphere's centre at the time ``t`` (one cell each, float32 as Warp passes it), then the
    clock advances by ``dt``."""
    cx = hm.float32(width / 2 + hm.sin(t) * width / 3)
    cy = hm.float32(height / 2 + hm.cos(t) * height / 3)
    t = t + dt


@hawk.kernel
def displace(prev: Mutable[Scalar], cur: Mutable[Scalar], cx: Float32, cy: Float32, width: Param[Int32],
             radius: Param) -> None:
    """Push the cells under the sphere (centred at the one-cell ``cx``, ``cy``) to a fixed height."""
    i, j = hawk.sample2(width)
    dx = hm.float32(j) - cx
    dy = hm.float32(i) - cy
    if dx * dx + dy * dy < radius * radius:
        prev = MAG * hm.sin(PUSH_PHASE)
        cur = MAG * hm.sin(PUSH_PHASE)


@hawk.func
def curvature(before: Scalar, at: Scalar, after: Scalar) -> Scalar:
    """The second difference of three neighbours along an axis."""
    return after - 2.0 * at + before


@hawk.kernel
def solve(prev: Mutable[Scalar], cur: Table.clamp, width: Param[Int32], dt: Param, k_speed: Param,
          k_damp: Param, inv_cell: Param) -> None:
    """One step of the wave equation: ``prev`` becomes the next height (the grids then swap roles);
    ``cur`` is the current grid, 2-D, its neighbours clamped at the edges."""
    i, j = hawk.sample2(width)
    h1 = cur[i, j]
    lap = (curvature(cur[i, j - 1], h1, cur[i, j + 1]) + curvature(cur[i - 1, j], h1, cur[i + 1, j])) \
        * inv_cell * inv_cell
    prev = 2.0 * h1 - prev + dt * dt * (k_speed * lap - k_damp * (h1 - prev))


@hawk.kernel
def lift(vertices: Mutable[Scalar], h: Scalar) -> None:
    """The mesh's vertices (x, h, z): the height becomes the y component."""
    vertices[1] = h  # type: ignore[index]  # a plane of 3 components a sample, which mypy reads as a float


@hawk.kernel
def energy(h: Scalar) -> Param:
    return hawk.sum(h * h)


@eagle.Graph.builder
def substeps(g: eagle.Graph, prev: Array, cur: Array, t: Array, cx: Array, cy: Array, turns: Array | int,
             radius: float, dt: float) -> None:
    """A block: ``turns`` turns of two substeps each, so the grids ``prev`` and ``cur`` (2-D) are
    back in their roles after every turn; ``t`` is the clock, ``cx`` and ``cy`` one-cell float32
    planes for the sphere's centre.  ``turns`` a one-cell uint32 is a counted device loop (the
    body recorded once), a Python number unrolls the turns.  The kernels see each grid as a flat
    plane of cells, and ``solve`` also as a 2-D Table of the same memory."""
    height, width = cur.shape
    prev1, cur1 = prev.reshape(-1), cur.reshape(-1)
    for _ in range(turns):
        clock(t, cx, cy, width, height, dt)
        displace(prev1, cur1, cx, cy, width, radius)
        solve(prev1, cur, width, dt, K_SPEED, K_DAMP, INV_CELL)
        clock(t, cx, cy, width, height, dt)
        displace(cur1, prev1, cx, cy, width, radius)
        solve(cur1, prev, width, dt, K_SPEED, K_DAMP, INV_CELL)


@eagle.Graph.builder
def frame(prev: Array, cur: Array, t: Array, cx: Array, cy: Array, vertices: Array, turns: Array | int,
          radius: float = RADIUS, dt: float = DT) -> eagle.Graph:
    """One frame of the example: the substeps, then the mesh's vertices follow the heights."""
    g = eagle.Graph()
    substeps(g, prev, cur, t, cx, cy, turns, radius, dt)
    lift(vertices, cur.reshape(-1))
    return g


@eagle.Graph.builder
def energy_after(prev: Array, cur: Array, t: Array, cx: Array, cy: Array, turns: Array | int,
                 radius: float = RADIUS, dt: float = DT, record: bool = False) -> eagle.Graph:
    """The substeps, then the energy sum(h * h) of the final heights (for gradients)."""
    g = eagle.Graph(record=record)
    substeps(g, prev, cur, t, cx, cy, turns, radius, dt)
    g.result = energy(cur.reshape(-1))
    return g


def numpy_frames(prev: Array, cur: Array, t: Array, frames: int = 1, substeps: int = SUBSTEPS,
                 radius: float = RADIUS, dt: float = DT) -> tuple[Array, Array, Array]:
    """The same arithmetic in NumPy on the 2-D grids, substep by substep: returns the new
    ``(prev, cur, t)`` after ``frames`` frames (the arguments are left alone)."""
    height, width = cur.shape
    prev, cur, t = prev.copy(), cur.copy(), np.array(t, np.float64)
    rows, cols = np.arange(height)[:, None], np.arange(width)[None, :]
    up, down = np.maximum(rows[:, 0] - 1, 0), np.minimum(rows[:, 0] + 1, height - 1)
    left, right = np.maximum(cols[0] - 1, 0), np.minimum(cols[0] + 1, width - 1)
    push = cur.dtype.type(MAG * hm.sin(np.float64(PUSH_PHASE)))
    for _ in range(frames * substeps):
        cx = hm.float32(width / 2 + hm.sin(t) * width / 3)
        cy = hm.float32(height / 2 + hm.cos(t) * height / 3)
        dx, dy = hm.float32(cols) - cx, hm.float32(rows) - cy
        inside = dx * dx + dy * dy < radius * radius
        prev, cur = np.where(inside, push, prev), np.where(inside, push, cur)
        lap = (curvature(cur[:, left], cur, cur[:, right]) + curvature(cur[up, :], cur, cur[down, :])) \
            * INV_CELL * INV_CELL  # the helper, called from Python, on NumPy arrays
        prev, cur = cur, 2.0 * cur - prev + dt * dt * (K_SPEED * lap - K_DAMP * (cur - prev))
        t = t + dt
    return prev, cur, t


class Pond:
    """The example's state: two grids of ``size`` x ``size`` cells, the clock, the mesh's vertices
    (a plane of 3 components per cell), and the frame's graph over them (``device``: a function
    that makes a device array of a NumPy one, for a graph on the GPU; ``build=False``: the arrays
    only, for the NumPy twin's ``numpy_step``)."""

    def __init__(self, size: int = SIZE, dtype: type[np.floating[Any]] = np.float32, substeps: int = SUBSTEPS,
                 device: Callable[[Array], Array] | None = None, build: bool = True) -> None:
        n = size * size
        rows, cols = np.divmod(np.arange(n), size)
        verts = np.array([cols * GRID_SIZE, np.zeros(n), rows * GRID_SIZE], dtype)
        put: Callable[[Array], Array] = np.asarray if device is None else device
        self.prev, self.cur = put(np.zeros((size, size), dtype)), put(np.zeros((size, size), dtype))
        self.t, self.vertices = put(np.zeros(1)), put(verts)
        self.cx, self.cy = put(np.zeros(1, np.float32)), put(np.zeros(1, np.float32))
        self.turns = put(np.array([substeps // 2], np.uint32))
        self.graph = frame(self.prev, self.cur, self.t, self.cx, self.cy, self.vertices,
                           self.turns) if build else None

    def step(self) -> None:
        assert self.graph is not None, "made with build=False: run numpy_step"
        self.graph.launch()

    def numpy_step(self) -> None:
        self.prev, self.cur, self.t = numpy_frames(self.prev, self.cur, self.t)
        self.vertices[1] = self.cur.reshape(-1)


def main(argv: list[str] | None = None) -> None:
    run = side_by_side.run(__doc__, Pond, SIZE, argv)
    pond, twin = run.ours, run.twin
    same = all(np.array_equal(getattr(pond, k), getattr(twin, k)) for k in ("prev", "cur", "t", "vertices"))
    print(f"eagle: a {run.size}x{run.size} wave, {SUBSTEPS} substeps a frame, {run.frames} frames, "
          f"one replay a frame ({eagle.get_num_threads()} threads)")
    print(f"  recorded and built in {run.built * 1e3:.1f} ms; schedule {pond.graph.schedule}")
    print(f"  a frame: eagle {run.eagle * 1e3:.3f} ms, NumPy {run.numpy * 1e3:.3f} ms "
          f"(eagle/NumPy = {run.eagle / run.numpy:.3f})")
    print(f"  heights in [{pond.cur.min():.4f}, {pond.cur.max():.4f}] at t = {pond.t[0]:.4f} s; "
          f"the same bits as NumPy: {same}")
    if not same:
        raise SystemExit("eagle and NumPy disagree")


if __name__ == "__main__":
    main()
