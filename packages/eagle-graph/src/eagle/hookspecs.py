"""The hooks an eagle plugin implements (pluggy, project name ``"eagle"``).

A plugin is a distribution with an entry point in the group ``eagle``, named
after the distribution (pluggy silently drops a second plugin under a name
already taken, and distribution names are unique)::

    [project.entry-points.eagle]
    eagle-scan = "eagle_scan.plugin"

The module (or object) the entry point names implements the hooks below,
marked with :data:`hookimpl`::

    from eagle.hookspecs import hookimpl

    @hookimpl
    def register_node_kinds(registry):
        lib = registry.compile_library(SOURCE, "eagle_scan")   # ABI version checked
        registry.register_node_kind("scan", reads=..., writes=..., native=..., make=...)

Plugins load once, lazily: the first time a kind is not found among those
registered, or when :func:`eagle.plugins` is called.  ``EAGLE_NO_PLUGINS``
turns loading off.  A plugin that fails to import, to validate or to
register gives an :class:`eagle.PluginWarning` naming it and is left out;
eagle and the other plugins go on.
"""

from __future__ import annotations

import pluggy

from eagle._registry import KindRegistry as KindRegistry  # what the hook receives, for annotations

#: The marker of a hook's specification (eagle's side).
hookspec = pluggy.HookspecMarker("eagle")
#: The marker a plugin puts on its hook implementations.
hookimpl = pluggy.HookimplMarker("eagle")


@hookspec
def register_node_kinds(registry: KindRegistry) -> None:
    """Register the plugin's node kinds.

    Called once per plugin, when plugins load.  Everything a kind needs to
    lower goes through ``registry``: ``registry.register_node_kind(name,
    reads=, writes=, lower=, lower_cpu=, lower_gpu=, native=, vjp=, make=)`` (the
    parameters of :func:`eagle.graph.register_node_kind`), and
    ``registry.library(path)`` or ``registry.compile_library(source, name)``
    for the plugin's own shared library, whose ``eagle_plugin_abi_version()``
    must return the ``EAGLE_ABI_VERSION`` of this eagle.  The kinds become
    visible only when the hook returns: a hook that raises registers nothing.

    :param registry: the plugin's door to eagle's kind registry; it knows
        which plugin is registering, so refusals name it.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def eagle_communicator(comm: object) -> object:
    """Adapt ``comm``, given as ``eagle.Graph(comm=...)``, to an :class:`eagle.Communicator`.

    Return None when ``comm`` is not of the plugin's kind; the first plugin
    that returns one wins.  eagle-mpi implements it for mpi4py communicators.

    .. versionadded:: 0.2
    """
