"""What ``eagle.simulate`` did: :class:`SimulateReport` and :class:`SimulateResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from eagle._simulate_dispatch import Decision


class Compaction(NamedTuple):
    """One compaction: at ``step``, the loop's ``before`` slots (its logical size) shrank to the
    ``after`` samples still live, gathered to the front in ``seconds``."""

    step: int
    before: int
    after: int
    seconds: float


#: The phases a run's time is split into.
PHASES = ("steps", "compaction", "decisions", "restore")


@dataclass
class SimulateReport:
    """What a run did, chunk by chunk (16 steps each).

    ``live``: (step, samples live) at the start and after each chunk.  ``dispatch``: the
    :class:`Decision` s over steps (each group's first policy at step 0, and every change).
    ``compactions``: the :class:`Compaction` s done.  ``seconds``: the time per phase (``steps``
    the chunks' runs, ``compaction`` the gathers, ``decisions`` the counting and choosing between
    chunks, ``restore`` putting the planes back in the user's order).  ``notes``: why eagle did not
    compact or decide, when it did not.

    >>> report = eagle.SimulateReport(live=[(0, 8), (16, 3), (21, 0)])
    >>> report.steps, report.compactions, sorted(report.seconds)
    (21, [], ['compaction', 'decisions', 'restore', 'steps'])
    """

    live: list[tuple[int, int]] = field(default_factory=list)
    dispatch: list[Decision] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    notes: list[str] = field(default_factory=list)

    @property
    def steps(self) -> int:
        """The steps the run took."""
        return self.live[-1][0] if self.live else 0

    def policies(self) -> dict[str, list[tuple[int, str]]]:
        """Each group's policy over steps: (step, policy) from each decision on."""
        out: dict[str, list[tuple[int, str]]] = {}
        for decision in self.dispatch:
            out.setdefault(decision.group, []).append((decision.step, decision.policy))
        return out

    def plot(self, ax: Any = None) -> Any:
        """Live samples against steps, each compaction marked, and the policy of each dispatch group
        in a band below: a ``matplotlib.figure.Figure`` made without pyplot (``eagle-viz[plot]``);
        with ``ax``, drawn there and ``ax.figure`` returned."""
        from eagle._graph import _viz

        return _viz("eagle.SimulateReport.plot", "'eagle-viz[plot]'").plot_simulation(self, ax=ax)


@dataclass
class SimulateResult:
    """What :func:`eagle.simulate` returns: ``steps`` run, ``live`` samples still live at the end
    (more than 0: ``max_steps`` stopped it), ``state`` (name -> the step's per-sample written
    planes, the user's own arrays, in the user's sample order) and ``report``.

    >>> result = eagle.SimulateResult(steps=21, live=0, state={}, report=eagle.SimulateReport())
    >>> result.done
    True
    """

    steps: int
    live: int
    state: dict[str, Any]
    report: SimulateReport

    @property
    def done(self) -> bool:
        """Every sample finished (``max_steps`` did not stop the run)."""
        return self.live == 0
