"""How a host stage runs: the fixed rule of seed 001 ("CPU schedules")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eagle import _core
from eagle._kinds import HostItems, Node


def stage_schedule(branches: Sequence[Sequence[int]], group: bool, nodes: Sequence[Node],
                   lowerings: Sequence[Any]) -> str:
    """``"branch_tasks"`` for a fork of two or more branches of native items whose nodes each
    cover few enough samples, while the team has two threads or more (its size at this
    moment); else ``"work_share"``."""
    if not (group and len(branches) >= 2 and _core.num_threads() >= 2):
        return "work_share"  # asked of every stage: most are one node
    members = [i for branch in branches for i in branch]
    # A native kind that does not say how many samples it covers work-shares.
    samples = [nodes[i].samples() for i in members]
    if (all(isinstance(lowerings[i], HostItems) and lowerings[i].native for i in members)
            and None not in samples and max(samples) <= _core.BRANCH_TASKS_MAX_SAMPLES):
        return "branch_tasks"
    return "work_share"
