"""eagle-torch's entry point (group ``eagle``): registers the ``torch`` node kind.

Registering imports no torch: the kind is there where torch is not
installed, and making a node then names the extra to install.
"""

from __future__ import annotations

from eagle.hookspecs import KindRegistry, hookimpl
from eagle_torch import _node


@hookimpl
def register_node_kinds(registry: KindRegistry) -> None:
    registry.register_node_kind("torch", reads=_node.reads, writes=_node.writes, lower_cpu=_node.lower_cpu,
                                lower_gpu=_node.lower_gpu, vjp=_node.vjp, make=_node.make)
