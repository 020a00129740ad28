"""eagle-torch's entry point (group ``eagle``): registers the ``torch`` node kind.

Registering imports no torch: the kind is there where torch is not
installed, and making a node then names the extra to install.
"""

from __future__ import annotations

from eagle.frameworks.models import HOOKS
from eagle.hookspecs import KindRegistry, hookimpl
from eagle_torch import _node


@hookimpl
def register_node_kinds(registry: KindRegistry) -> None:
    registry.register_node_kind("torch", make=_node.make, **HOOKS)
