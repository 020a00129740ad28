"""eagle-scan's entry point (group ``eagle``): registers the ``scan`` node kind."""

from __future__ import annotations

from eagle.hookspecs import KindRegistry, hookimpl
from eagle_scan import _scan


@hookimpl
def register_node_kinds(registry: KindRegistry) -> None:
    """Compile scan.c against this eagle (cached), check its ABI, register ``scan``."""
    kernels = _scan.Kernels(registry.compile_library(_scan.source(), "eagle_scan"))
    registry.register_node_kind("scan", reads=_scan.reads, writes=_scan.writes, native=kernels.native,
                                vjp=kernels.vjp, make=_scan.make)
