"""What a plugin's ``register_node_kinds`` hook receives (:mod:`eagle.hookspecs`): a registry
that keeps the plugin's kinds aside until the hook returns, and loads its libraries with the ABI
checked."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from eagle._errors import EagleTypeError, EagleValueError
from eagle._kinds import (
    HOOKS,
    GpuItems,
    HostItems,
    Lower,
    NativeCall,
    NodeKind,
    PlaneTuple,
    Reference,
    Vjp,
    add_kind,
)


class KindRegistry:
    """What a plugin's ``register_node_kinds`` hook receives.

    Kinds are kept aside until the hook returns, then registered together:
    a hook that raises half-way registers nothing.
    """

    def __init__(self, plugin: str, table: dict[str, NodeKind]) -> None:
        #: The distribution registering (named in every refusal).
        self.plugin = plugin
        self._table = table
        self._pending: dict[str, NodeKind] = {}
        self._libraries: list[Any] = []  # loaded libraries stay loaded with the kinds

    @property
    def abi_version(self) -> int:
        """The ``EAGLE_ABI_VERSION`` this eagle speaks."""
        from eagle._core import ABI_VERSION

        return ABI_VERSION

    def register_node_kind(self, name: str, *, reads: Callable[[Any], Iterable[PlaneTuple]],
                           writes: Callable[[Any], Iterable[PlaneTuple]],
                           lower_gpu: Callable[[Any], GpuItems] | None = None,
                           lower_cpu: Callable[[Any], Callable[[], object] | HostItems] | None = None,
                           native: Callable[[Any], Sequence[NativeCall]] | None = None,
                           vjp: Vjp | None = None, make: Callable[..., Any] | None = None,
                           both_sides: bool = False, reference: Reference | None = None,
                           lower: Lower | None = None, **hooks: Any) -> NodeKind:
        """Register a kind: the parameters of :func:`eagle.graph.register_node_kind` (``hooks``:
        its ``bodies``, ``refuse``, ``label``, ``picture``, ``rebuild``, ``flow``, ``samples``)."""
        unknown = sorted(set(hooks) - HOOKS)
        if unknown:
            raise EagleTypeError(f"eagle.plugins: plugin {self.plugin}: register_node_kind({name!r}) got "
                            f"{', '.join(unknown)}; the hooks are {', '.join(sorted(HOOKS))}")
        kind = NodeKind(name, reads, writes, lower_cpu, lower_gpu, native, vjp, make, plugin=self.plugin,
                        both_sides=both_sides, reference=reference, lower=lower, **hooks)
        view = {**self._table, **self._pending}
        added = add_kind(kind, view, f"eagle.plugins: plugin {self.plugin}")
        self._pending[name] = added
        return added

    def library(self, path: str | os.PathLike[str]) -> Any:
        """Load the plugin's shared library and check the ABI it was built for.

        :raises ValueError: the library does not say its ABI version, or says another one.
        """
        from eagle.native import PLUGIN_ABI_SYMBOL, Library

        lib = Library(path)
        found = lib.abi_version()
        if found is None:
            raise EagleValueError(f"eagle.plugins: plugin {self.plugin}: {Path(path).name} does not export "
                             f"{PLUGIN_ABI_SYMBOL}(); define `int {PLUGIN_ABI_SYMBOL}(void) {{ return "
                             "EAGLE_ABI_VERSION; }` in it so eagle can check the ABI it was built for")
        if found != self.abi_version:
            raise EagleValueError(f"eagle.plugins: plugin {self.plugin}: {Path(path).name} was built for "
                             f"EAGLE_ABI_VERSION {found}, this eagle speaks {self.abi_version}; rebuild "
                             f"{self.plugin} against this eagle's eagle.h, or install a matching eagle-graph")
        self._libraries.append(lib)
        return lib

    def compile_library(self, source: str, name: str) -> Any:
        """Compile C ``source`` against this eagle's ``eagle.h`` (cached), then :meth:`library` it."""
        from eagle.native import compile_library

        return self.library(compile_library(source, name=name))

    def _commit(self) -> tuple[str, ...]:
        for kind in self._pending.values():
            add_kind(kind, self._table, f"eagle.plugins: plugin {self.plugin}")
        return tuple(self._pending)
