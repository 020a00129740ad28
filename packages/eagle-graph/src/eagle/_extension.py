"""What the packages above eagle-graph attach to it: a graph's extension slot, and eagle.diff's hooks.

A graph has one slot for the state of extensions (:func:`state`), a dict
whose documented keys the core reads: ``"recording"`` (the recording that
writes into this graph: its ``add_node`` and ``parallel`` take the graph's),
``"bind"`` (what ``Graph.bind`` calls), ``"names"`` (the builder's names of
the graph's arrays, for eagle.diff).  Packages keep anything else under
their own distribution's name.

A ``record=True`` graph is instrumented and replayed by the hooks eagle.diff
registers (:func:`register_record`); the core imports the package eagle.diff
to have them registered, never one of its modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eagle._errors import EagleImportError

#: ``instrument(graph, lowerings) -> (lowerings, record)``: at the build of a record=True graph,
#: with its nodes' host lowerings (``instrument``) or their GPU lowerings (``instrument_device``).
Instrument = Callable[[Any, list[Any]], tuple[list[Any], Any]]
#: ``replay(record, program, n)``: runs the built program ``n`` times for the record.
Replay = Callable[[Any, Any, int], None]


@dataclass(frozen=True)
class RecordHooks:
    instrument: Instrument
    replay: Replay
    instrument_device: Instrument | None = None


_HOOKS: list[RecordHooks] = []


def state(graph: Any) -> dict[str, Any]:
    """The graph's one slot for extension state, a dict (its documented keys: see this module).

    >>> from eagle.extend import state
    >>> g = eagle.Graph()
    >>> state(g)["my-plugin"] = {"runs": 0}
    >>> state(g)
    {'my-plugin': {'runs': 0}}
    """
    return graph._extension


def register_record(instrument: Instrument, replay: Replay,
                    instrument_device: Instrument | None = None) -> None:
    """What a ``record=True`` graph runs through (eagle.diff registers it when imported):
    ``instrument`` at a CPU build, ``instrument_device`` at a GPU build (None: the package
    records on the CPU only, and a GPU build of a recorded graph is refused)."""
    _HOOKS[:] = [RecordHooks(instrument, replay, instrument_device)]


def record_hooks(api: str) -> RecordHooks:
    """The hooks eagle.diff registered: its package is imported (found in sys.modules after the
    first time) to register them, and named when it is not installed."""
    try:
        importlib.import_module("eagle.diff")
    except ModuleNotFoundError as err:
        if err.name != "eagle.diff":
            raise
        raise EagleImportError(f"{api}: a record=True graph needs eagle-diff: "
                               "pip install eagle-diff") from None
    if not _HOOKS:
        raise EagleImportError(f"{api}: the installed eagle.diff registers no record hooks "
                          "(eagle.extend.register_record): install eagle-diff from this release")
    return _HOOKS[0]
