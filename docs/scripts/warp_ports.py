"""
Two Warp examples, ported
=========================

NVIDIA Warp ships small examples of its kernel language.  Two of them are
ported to eagle in the repository's ``examples/`` folder, written afresh
from what they compute:

* ``examples/wave_equation.py`` is Warp's ``example_wave.py``: a wave
  equation on a 2-D grid, pushed by a moving sphere, 16 substeps a frame;
* ``examples/noise_graph.py`` is Warp's ``example_graph_capture.py``: 16
  octaves of gradient noise over a 2-D grid of pixels, a graph of 16
  launches replayed every frame.

Each has a NumPy twin, the same arithmetic written with NumPy arrays, and
the tests hold the port to its twin bit for bit on the CPU (any thread
count, fused or not) and on the GPU driver emulation; the wave's gradient
goes through ``eagle.diff.reverse``.  ``benchmarks/bench_warp_examples.py``
times each beside the original on Warp's CPU device.

What maps to what:

============================================  ==============================================
Warp                                          eagle
============================================  ==============================================
``tid = wp.tid()``; ``tid % width``, ``//``   ``i, j = hawk.sample2(width)``
``i, j = wp.tid()`` over a 2-D launch         the same, over a flat plane of pixels
``f[y * width + x]`` after ``wp.clamp``       ``cur[i, j + 1]`` of a ``Table.clamp``
``x[j]``, ``y[i]`` of another array           ``x[j]`` of a ``Table``
``wp.noise(wp.rand_init(seed), p)``           gradients drawn with ``hawk.random``, read from
                                              a ``Table.wrap`` of the lattice
a Python loop of ``wp.launch`` calls          a builder: a counted device loop, or a
                                              Python loop recorded as its launches
``wp.ScopedCapture`` / ``wp.capture_launch``  ``@eagle.Graph.builder``, then ``g.launch()``
a clock kept in Python                        a one-cell float64 plane the graph advances
============================================  ==============================================
"""

# %%
# The wave
# --------
#
# The grid's cells are the samples of flat planes; ``solve`` reads the
# current grid as a 2-D ``Table.clamp`` of the same memory, so a neighbour
# past the edge is the edge cell, as Warp's ``wp.clamp`` makes it.  A frame
# is a counted device loop of 8 turns, two substeps each (the two grids
# swap roles every substep, so after two they are back), then the mesh.

import importlib
import inspect
import sys
from pathlib import Path

import numpy as np


# The examples are scripts of the repository's examples/ folder, not a package; the docs build runs
# this page in its own folder, docs/scripts (where sphinx-gallery defines no __file__).
HERE = Path(globals().get("__file__", "warp_ports.py")).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples"))
wave, noise = importlib.import_module("wave_equation"), importlib.import_module("noise_graph")
print(inspect.getsource(wave.solve))

# %%
# Ten frames on a 48 x 48 grid, replayed, against the NumPy twin:

pond = wave.Pond(48)
for _ in range(10):
    pond.step()
zeros = np.zeros((48, 48), np.float32)
prev, cur, t = wave.numpy_frames(zeros, zeros, np.zeros(1), frames=10)
print(pond.graph)
print("the same bits as NumPy:", np.array_equal(pond.cur, cur), "at t =", pond.t[0])

# %%
# The noise
# ---------
#
# Every octave is one launch of ``fbm``: the pixel's ``(i, j)`` from
# ``hawk.sample2``, its coordinates gathered from the ``x`` and ``y``
# tables, the four lattice corners' gradients gathered from two
# ``Table.wrap`` of a 256 x 256 lattice (a periodic noise).  The gradients
# are random unit vectors drawn once with ``hawk.random.uniform32``, whose
# value depends only on the seed, the lattice point and the counter.  The 16
# launches are per-sample in the picture and only read the tables, so the
# build fuses them: runs of a few octaves, each one loop over the pixels (a
# run is cut past a few hundred statements, for its compile time).

print(inspect.getsource(noise.fbm))

# %%
# Ten frames on 48 x 48 pixels, replayed, against the NumPy twin:

pix, twin = noise.Pixels(48), noise.Pixels(48, build=False)
for _ in range(10):
    pix.step()
    twin.numpy_step()
print("fused runs:", pix.graph.fused)
print("the same bits as NumPy:", np.array_equal(pix.z, twin.z))
