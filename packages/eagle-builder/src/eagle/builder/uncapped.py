"""The warning of an uncapped device loop, an :class:`eagle.EagleWarning`."""

from __future__ import annotations

from eagle.extend import EagleWarning


class UncappedLoopWarning(EagleWarning):
    """A device ``while`` with no cap was recorded: a body that never clears its guard never
    returns from a replay.  Cap it (``for _ in range(N): if not cell: break``), or silence it with
    ``warnings.simplefilter("ignore", eagle.builder.UncappedLoopWarning)`` where the loop is
    known to end.

    >>> issubclass(eagle.builder.UncappedLoopWarning, eagle.EagleWarning)
    True
    """
