"""eagle-jax's entry point (group ``eagle``): registers the ``jax`` node kind.

Registering imports no JAX: the kind is there where JAX is not installed,
and making a node then names the extra to install.
"""

from __future__ import annotations

from eagle.frameworks.models import HOOKS
from eagle.hookspecs import KindRegistry, hookimpl
from eagle_jax import _node


@hookimpl
def register_node_kinds(registry: KindRegistry) -> None:
    registry.register_node_kind("jax", make=_node.make, **HOOKS)
