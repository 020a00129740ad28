"""Fractal gradient noise over a 2-D grid, ported from NVIDIA Warp's ``example_graph_capture.py``.

Each pixel ``(i, j)`` (its 2-D index from ``hawk.sample2``) reads its
coordinates ``x[j]`` and ``y[i]`` through gathers, and sums 16 octaves of
Perlin-style gradient noise: 16 launches of one kernel, the frequency
doubling and the amplitude halving, recorded once as a builder graph with
the slide of ``x`` before them and replayed every frame; the build fuses the
launches (they read only tables and write their own pixel).  Perlin's fade
and interpolation are ``@hawk.func`` helpers.  The noise's
gradients are random unit vectors at the points of a 256 x 256 lattice,
drawn with ``hawk.random``, which depends only on the seed, the lattice
point and the counter: the same on the CPU, the GPU and any thread count.
Warp's noise uses its own hash, so the pictures differ; ``numpy_frame`` is
the same arithmetic as this port in NumPy, and the test holds the two to
the same bits.

Run: python examples/noise_graph.py [--size 128] [--frames 60]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import side_by_side

import eagle
import hawk
from hawk import Int32, Mutable, Param, Scalar, Table
from hawk import math as hm

#: A plane: a NumPy array, or a device array (CuPy) where the example runs on the GPU.
Array = Any

SIZE, OCTAVES, SEED, SHIFT, LATTICE = 128, 16, 42, 2e-2, 256
TWO_PI = 6.283185307179586


@hawk.kernel
def gradients(gx: Mutable[Scalar], gy: Mutable[Scalar], seed: Param[Int32]) -> None:
    """A random unit vector at each lattice point (a sample each): float32 uniforms."""
    angle = TWO_PI * hawk.random.uniform32(seed, 0)
    gx = hm.cos(angle)
    gy = hm.sin(angle)


@hawk.func
def fade(t: Scalar) -> Scalar:
    """Perlin's quintic 6t^5 - 15t^4 + 10t^3: its first two derivatives vanish at 0 and 1."""
    return t * t * t * (t * (t * 6.0 - 15.0) + 10.0)


@hawk.func
def lerp(a: Scalar, b: Scalar, t: Scalar) -> Scalar:
    return a + t * (b - a)


@hawk.func
def blend(n00: Scalar, n10: Scalar, n01: Scalar, n11: Scalar, fx: Scalar, fy: Scalar) -> Scalar:
    """The four corners' values mixed at the point (fx, fy) of the lattice cell."""
    u = fade(fx)
    return lerp(lerp(n00, n10, u), lerp(n01, n11, u), fade(fy))


@hawk.kernel
def fbm(z: Mutable[Scalar], x: Table.clamp, y: Table.clamp, gx: Table.wrap, gy: Table.wrap,
        width: Param[Int32], frequency: Param, amplitude: Param) -> None:
    """One octave of gradient noise added to every pixel of a picture ``width`` wide.  ``i`` and
    ``j`` are always inside ``y`` and ``x``: the clamp is never taken, and it costs no check after
    the launch (a checked read's cell, staged to the host in a GPU graph)."""
    i, j = hawk.sample2(width)
    px = frequency * x[j]
    py = frequency * y[i]
    ix = hm.floor(px)
    iy = hm.floor(py)
    fx = px - ix
    fy = py - iy
    x0 = hm.int32(ix)
    y0 = hm.int32(iy)
    n00 = gx[y0, x0] * fx + gy[y0, x0] * fy
    n10 = gx[y0, x0 + 1] * (fx - 1.0) + gy[y0, x0 + 1] * fy
    n01 = gx[y0 + 1, x0] * fx + gy[y0 + 1, x0] * (fy - 1.0)
    n11 = gx[y0 + 1, x0 + 1] * (fx - 1.0) + gy[y0 + 1, x0 + 1] * (fy - 1.0)
    z = z + amplitude * blend(n00, n10, n01, n11, fx, fy)


@hawk.kernel
def clear(z: Mutable[Scalar]) -> None:
    z = 0.0


@hawk.kernel
def slide(x: Mutable[Scalar], shift: Param) -> None:
    x = x + shift


@eagle.Graph.builder
def lattice(gx: Array, gy: Array) -> eagle.Graph:
    """The lattice's gradients, drawn once (a graph, so that they are drawn where the arrays live)."""
    g = eagle.Graph()
    gradients(gx, gy, SEED)
    return g


@eagle.Graph.builder
def frame(x: Array, y: Array, z: Array, gx: Array, gy: Array) -> eagle.Graph:
    """One frame: slide ``x``, then 16 octaves of noise into ``z`` (cleared first)."""
    g = eagle.Graph()
    gx2, gy2 = gx.reshape(LATTICE, LATTICE), gy.reshape(LATTICE, LATTICE)  # the same memory, 2-D
    clear(z)
    slide(x, SHIFT)
    for k in range(OCTAVES):  # a Python loop: 16 launches in the graph
        fbm(z, x, y, gx2, gy2, x.shape[0], 2.0**k, 0.5**k)
    return g


def numpy_noise(gx: Array, gy: Array, px: Array, py: Array) -> Array:
    """One octave of the noise at the points (px, py), in NumPy: the kernel's arithmetic, its
    gathers written as NumPy's indexing."""
    lattice = gx.shape[0]
    ix, iy = np.floor(px), np.floor(py)
    fx, fy = px - ix, py - iy
    x0, y0 = hm.int32(ix), hm.int32(iy)
    x1, y1 = (x0 + 1) % lattice, (y0 + 1) % lattice
    x0, y0 = x0 % lattice, y0 % lattice
    n00 = gx[y0, x0] * fx + gy[y0, x0] * fy
    n10 = gx[y0, x1] * (fx - 1.0) + gy[y0, x1] * fy
    n01 = gx[y1, x0] * fx + gy[y1, x0] * (fy - 1.0)
    n11 = gx[y1, x1] * (fx - 1.0) + gy[y1, x1] * (fy - 1.0)
    return blend(n00, n10, n01, n11, fx, fy)  # a helper is plain Python on NumPy arrays too


def numpy_frame(x: Array, y: Array, z: Array, gx: Array, gy: Array) -> None:
    """The frame in NumPy, in place on ``x`` and ``z`` (2-D, ``y`` down the rows)."""
    z[...] = 0.0
    x += SHIFT
    px, py = x[None, :], y[:, None]
    for k in range(OCTAVES):
        z += 0.5**k * numpy_noise(gx, gy, 2.0**k * px, 2.0**k * py)


def numpy_gradients(seed: int = SEED, lattice: int = LATTICE,
                    dtype: type[np.floating[Any]] = np.float32) -> tuple[Array, Array]:
    """The lattice's gradients in NumPy: ``hawk.random`` outside a kernel, given the sample index."""
    u = hawk.random.uniform32(seed, 0, sample=np.arange(lattice * lattice))
    angle = TWO_PI * u.astype(dtype)
    return hm.cos(angle), hm.sin(angle)


class Pixels:
    """The example's state: the pixels' coordinates ``x`` (width) and ``y`` (height), the picture
    ``z`` (flat, ``y`` down the rows), the lattice's gradients, and the frame's graph over them
    (``build=False``: the arrays only, for the NumPy twin's ``numpy_step``)."""

    def __init__(self, size: int = SIZE, dtype: type[np.floating[Any]] = np.float32,
                 device: Callable[[Array], Array] | None = None, build: bool = True) -> None:
        put: Callable[[Array], Array] = np.asarray if device is None else device
        grid = np.linspace(0.0, 2.0, size).astype(dtype)
        self.x, self.y = put(grid.copy()), put(grid.copy())
        self.z = put(np.zeros(size * size, dtype))
        cells = LATTICE * LATTICE
        self.gx, self.gy = put(np.empty(cells, dtype)), put(np.empty(cells, dtype))
        lattice(self.gx, self.gy).launch()
        self.graph = frame(self.x, self.y, self.z, self.gx, self.gy) if build else None

    def step(self) -> None:
        assert self.graph is not None, "made with build=False: run numpy_step"
        self.graph.launch()

    def numpy_step(self) -> None:
        numpy_frame(self.x, self.y, self.z.reshape(self.y.size, self.x.size),
                    self.gx.reshape(LATTICE, LATTICE), self.gy.reshape(LATTICE, LATTICE))


def main(argv: list[str] | None = None) -> None:
    run = side_by_side.run(__doc__, Pixels, SIZE, argv)
    pix, twin = run.ours, run.twin
    same = np.array_equal(pix.z, twin.z) and np.array_equal(pix.x, twin.x)
    print(f"eagle: {OCTAVES} octaves of gradient noise over {run.size}x{run.size} pixels, {run.frames} "
          f"frames, one replay a frame ({eagle.get_num_threads()} threads)")
    print(f"  recorded and built in {run.built * 1e3:.1f} ms; fused runs {pix.graph.fused}")
    print(f"  a frame: eagle {run.eagle * 1e3:.3f} ms, NumPy {run.numpy * 1e3:.3f} ms "
          f"(eagle/NumPy = {run.eagle / run.numpy:.3f})")
    print(f"  values in [{pix.z.min():.4f}, {pix.z.max():.4f}]; the same bits as NumPy: {same}")
    if not same:
        raise SystemExit("eagle and NumPy disagree")


if __name__ == "__main__":
    main()
