"""Plugins: node kinds from other distributions, through entry points and pluggy.

Loading happens once, lazily: the first time a kind name is not registered
(:func:`eagle._kinds.kind_of` asks the loader this module installs in its
``FINDER``), or when ``eagle.plugins()`` is called; ``import eagle``
itself loads nothing, so a broken plugin can never break it.  Each plugin
is loaded on its own: one that fails to import, to validate against
``eagle.hookspecs`` or to register gives a :class:`PluginWarning` naming it,
is unregistered, and leaves no kind behind.

Environment:

``EAGLE_NO_PLUGINS``
    Set to anything but ``""`` or ``"0"``: no plugin is loaded (checked at
    each first use while it is set, so unsetting it later loads them).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from eagle._errors import EagleWarning
from eagle._kinds import _REGISTRY, FINDER, NodeKind
from eagle._registry import KindRegistry

#: The entry-point group, which is also pluggy's project name.
GROUP = "eagle"
#: The environment variable that turns plugin loading off.
DISABLE_ENV = "EAGLE_NO_PLUGINS"


class PluginWarning(EagleWarning):
    """A plugin was not loaded; the message names it and says why.

    An :class:`eagle.EagleWarning`: ``warnings.simplefilter("error", eagle.PluginWarning)``
    turns a broken plugin into an error.

    >>> issubclass(eagle.PluginWarning, eagle.EagleWarning)
    True
    """


@dataclass(frozen=True)
class PluginInfo:
    """A loaded plugin, as ``eagle.plugins()`` lists it.

    >>> info = eagle.PluginInfo("eagle-scan", "eagle-scan", "0.1.0", "eagle_scan", ("scan",))
    >>> info.name, info.kinds
    ('eagle-scan', ('scan',))
    """

    #: The entry point's name, which is the distribution's name.
    name: str
    #: The distribution that installed it, as its metadata spells it.
    distribution: str
    #: That distribution's version.
    version: str
    #: What the entry point points at (``module`` or ``module:attr``).
    value: str
    #: The node kinds it registered, in registration order.
    kinds: tuple[str, ...]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def disabled() -> bool:
    """Whether ``EAGLE_NO_PLUGINS`` turns loading off right now."""
    return os.environ.get(DISABLE_ENV, "") not in ("", "0")


def _installed_entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    return importlib.metadata.entry_points(group=GROUP)


class PluginLoader:
    """Loads the plugins of the entry-point group once; tests make their own.

    :param entry_points: returns the entry points to load (default: the installed ones).
    :param table: the kind registry to register into (default: eagle's).
    """

    def __init__(self, entry_points: Callable[[], Iterable[importlib.metadata.EntryPoint]] | None = None,
                 table: dict[str, NodeKind] | None = None) -> None:
        self._entry_points = entry_points or _installed_entry_points
        self._table = _REGISTRY if table is None else table
        self._lock = threading.RLock()  # re-entered when a plugin's import asks for a kind
        self._done = False
        self._loaded: list[PluginInfo] = []
        self.manager: Any = None  # the pluggy PluginManager, once loading started

    def load(self) -> list[PluginInfo]:
        """Load every plugin the first time (unless disabled); the loaded ones, in load order."""
        if self._done or disabled():
            return list(self._loaded)
        with self._lock:
            if self.manager is None:  # not started, and not being loaded by this thread above us
                self.manager = self._new_manager()
                seen: set[str] = set()
                for ep in self._entry_points():
                    info = self._load_one(ep, seen)
                    if info is not None:
                        self._loaded.append(info)
                self._done = True
            return list(self._loaded)

    @staticmethod
    def _new_manager() -> Any:
        import pluggy  # only when loading: ``import eagle`` imports no plugin machinery

        from eagle import hookspecs

        manager = pluggy.PluginManager(GROUP)
        manager.add_hookspecs(hookspecs)
        return manager

    def _load_one(self, ep: importlib.metadata.EntryPoint, seen: set[str]) -> PluginInfo | None:
        dist = getattr(ep, "dist", None)
        distribution = dist.metadata["Name"] if dist is not None else ep.name
        version = dist.version if dist is not None else "?"
        who = f"plugin {ep.name!r} ({distribution} {version}, {ep.value})"
        if _canonical(ep.name) != _canonical(distribution):
            return _refuse(f"{who} was not loaded: an eagle entry point is named after its distribution; "
                           f"name it {distribution!r} in [project.entry-points.eagle]")
        if _canonical(ep.name) in seen:
            return None  # the same distribution found twice on sys.path: the first one counts
        seen.add(_canonical(ep.name))
        manager = self.manager
        try:
            plugin = ep.load()
        except Exception as err:  # noqa: BLE001 -- a plugin may raise anything; eagle goes on
            return _refuse(f"{who} was not loaded: importing {ep.value} raised {type(err).__name__}: {err}")
        try:
            manager.register(plugin, name=ep.name)
            manager.check_pending()  # a hook implementation eagle does not specify
        except Exception as err:  # noqa: BLE001 -- pluggy's PluginValidationError, or a name taken
            _unregister(manager, ep.name)
            return _refuse(f"{who} was not loaded: {type(err).__name__}: {err}")
        registry = KindRegistry(distribution, self._table)
        others = [p for p in manager.get_plugins() if p is not plugin]
        try:
            manager.subset_hook_caller("register_node_kinds", remove_plugins=others)(registry=registry)
            kinds = registry._commit()
        except Exception as err:  # noqa: BLE001 -- as above: the plugin is left out, eagle goes on
            _unregister(manager, ep.name)
            return _refuse(f"{who} was not loaded: register_node_kinds raised {type(err).__name__}: {err}")
        return PluginInfo(ep.name, distribution, version, ep.value, kinds)

    def note(self) -> str:
        """A clause for a message about a missing kind: what was loaded, or that loading is off."""
        if disabled():
            return f"; plugin loading is off ({DISABLE_ENV} is set)"
        if self._loaded:
            return f"; plugins loaded: {', '.join(p.name for p in self._loaded)}"
        return "; no plugin is installed (entry-point group 'eagle')"


def _unregister(manager: Any, name: str) -> None:
    if manager.get_plugin(name) is not None:
        manager.unregister(name=name)


def _refuse(message: str) -> None:
    warnings.warn(f"eagle.plugins: {message}", PluginWarning, stacklevel=4)


_LOADER = PluginLoader()


def adapt_communicator(comm: object) -> Any:
    """What the first plugin implementing ``eagle_communicator`` makes of ``comm``, or None."""
    _LOADER.load()
    manager = _LOADER.manager
    return None if manager is None else manager.hook.eagle_communicator(comm=comm)


def _find() -> str:
    """What kind_of asks for a name not registered in code: the plugins loaded, then the note."""
    _LOADER.load()
    return _LOADER.note()


FINDER.find = _find


def plugins() -> list[PluginInfo]:
    """The plugins loaded from the entry-point group ``eagle``: name, distribution, version, kinds.

    Loads them on the first call.  A plugin that failed to load is not listed;
    its :class:`PluginWarning` said why.

    >>> found = eagle.plugins()              # what this environment has installed
    >>> all(isinstance(info, eagle.PluginInfo) for info in found)
    True
    """
    return _LOADER.load()
