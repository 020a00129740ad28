"""The CUDA back end: CUDA C from the IR, compiled to PTX with NVRTC (eagle's, :data:`eagle.extend.nvrtc`).

Each phase of a kernel is one ``__global__`` function ``hk_<name>_p<j>``
taking its planes and values, ``n`` (the plane length) and the logical end,
and walking the samples with a grid-stride loop.  On the GPU a phase writes
each sample's reduction operand into a plane, and the graph reduces it with
eagle's fixed-order tree before the next phase (hawk's GPU lowering).
NVRTC needs no GPU, so this compiles anywhere the GPU extra is installed.
"""

from __future__ import annotations

from eagle.extend import nvrtc

DEFAULT_ARCH = nvrtc.DEFAULT_ARCH
OPTIONS = nvrtc.OPTIONS
NvrtcError = nvrtc.NvrtcError
available = nvrtc.available
compile_ptx = nvrtc.compile_ptx
default_arch = nvrtc.default_arch
version = nvrtc.version

__all__ = ["DEFAULT_ARCH", "OPTIONS", "NvrtcError", "available", "compile_ptx", "default_arch", "version"]
