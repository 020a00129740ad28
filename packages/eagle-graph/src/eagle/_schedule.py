"""How a host stage runs: the fixed rule of seed 001 ("CPU schedules"), libeagle's
``eagle_stage_schedule`` (the one the C++ face's ``eagle::exec::resolve`` calls too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eagle import _core
from eagle._kinds import HostItems, Node

_NAMES = {_core.lib.EAGLE_WORK_SHARE: "work_share", _core.lib.EAGLE_BRANCH_TASKS: "branch_tasks"}


def stage_schedule(branches: Sequence[Sequence[int]], group: bool, nodes: Sequence[Node],
                   lowerings: Sequence[Any]) -> str:
    """``"branch_tasks"`` for a fork of two or more branches of native items whose nodes each
    cover few enough samples, while the team has two threads or more (its size at this
    moment); else ``"work_share"``."""
    members = [i for branch in branches for i in branch]
    # A native kind that does not say how many samples it covers (None) work-shares: -1.
    samples = [nodes[i].samples() for i in members]
    native = [isinstance(lowerings[i], HostItems) and bool(lowerings[i].native) for i in members]
    chosen = _core.lib.eagle_stage_schedule(
        int(group), len(branches), _core.num_threads(),
        _core.ffi.new("int64_t[]", [-1 if n is None else int(n) for n in samples]),
        _core.ffi.new("uint8_t[]", native), len(members))
    return _NAMES[_core.check(chosen, "eagle.Graph.build")]
