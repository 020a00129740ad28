"""The picture of an ``eagle.simulate`` run: live samples and the chosen policies against steps.

Drawn without pyplot, as :func:`eagle.viz.plot` draws a graph: a Figure of its own, or into the
``ax`` given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from eagle.extend import EagleImportError, EagleTypeError
from eagle.viz._palette import FONT, LABEL_COLOR, WIRE_COLOR

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

API: Final = "eagle.SimulateReport.plot"
#: A policy's colour in the band of its group.
POLICY_COLORS: Final = {"switch": "#4C78A8", "predicated": "#F58518", "segmented": "#54A24B"}
#: The height of one group's band, in axes fractions, and the gap above the bands.
BAND: Final = 0.05
LIVE_COLOR: Final = "#222222"


def plot_simulation(report: Any, ax: Axes | None = None) -> Figure:
    """Draw ``report`` (an :class:`eagle.SimulateReport`) into ``ax`` (or a new Figure made
    without pyplot) and return the Figure: the live samples against steps on a log scale, a
    dotted line at each compaction, and along the bottom one band per dispatch group coloured by
    the policy it ran from each step on.

    ``result.report.plot(...)`` is this function; it needs matplotlib (``eagle-viz[plot]``).

    >>> report = eagle.SimulateReport(live=[(0, 1000), (16, 300), (32, 40), (40, 0)])
    >>> import importlib.util
    >>> if importlib.util.find_spec("matplotlib"):          # run where matplotlib is
    ...     eagle.viz.plot_simulation(report).savefig("live.png")
    """
    try:
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
    except ImportError:
        raise EagleImportError(f"{API}: needs matplotlib, the plot extra: "
                               "pip install 'eagle-viz[plot]'") from None
    if ax is not None and not isinstance(ax, Axes):
        raise EagleTypeError(f"{API}: ax must be a matplotlib Axes, got {type(ax).__name__}")
    if ax is None:
        fig = Figure(figsize=(6.5, 3.2))
        ax = fig.add_subplot()
    steps = [s for s, _ in report.live]
    live = [max(n, 0.8) for _, n in report.live]  # a log axis: 0 live drawn just under 1
    ax.step(steps, live, where="post", color=LIVE_COLOR, label="live samples")
    ax.set_yscale("log")
    for c in report.compactions:
        ax.axvline(c.step, color=WIRE_COLOR, linestyle=":", linewidth=1.0)
    if report.compactions:
        ax.plot([], [], color=WIRE_COLOR, linestyle=":", label="compaction")
    _bands(ax, report, steps[-1] if steps else 0)
    ax.set_xlabel("steps", fontfamily=FONT)
    ax.set_ylabel("live samples", fontfamily=FONT)
    ax.set_title("eagle.simulate", color=LABEL_COLOR, fontfamily=FONT)
    ax.legend(loc="upper right", fontsize="small")
    ax.figure.tight_layout()
    return ax.figure


def _bands(ax: Axes, report: Any, end: int) -> None:
    """One band per group along the bottom of ``ax``: each policy from its step to the next."""
    seen: set[str] = set()
    for row, (group, changes) in enumerate(sorted(report.policies().items())):
        bottom = BAND * row
        for (start, policy), nxt in zip(changes, [*changes[1:], (end, None)], strict=True):
            if nxt[0] <= start:
                continue
            label = policy if policy not in seen else None
            seen.add(policy)
            color = POLICY_COLORS.get(policy, WIRE_COLOR)
            ax.broken_barh([(start, nxt[0] - start)], (bottom, BAND * 0.9),
                           transform=ax.get_xaxis_transform(), color=color, alpha=0.6, label=label)
        ax.text(0.0, bottom + BAND * 0.45, f" {group}", transform=ax.transAxes, va="center",
                fontsize="x-small", color=LABEL_COLOR, fontfamily=FONT)
