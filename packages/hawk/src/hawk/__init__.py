"""hawk: the per-sample kernel language that eagle graphs launch.

Kernels written with ``@hawk.kernel`` compile to C for the CPU and CUDA C
for the GPU.  The language arrives with its issue; until then the package
installs and imports beside eagle-graph.
"""

__version__ = "0.1.0"
