"""The host thread team's size, read and set: ``eagle.get_num_threads`` and
``eagle.set_num_threads``, and the one check of ``EAGLE_NUM_THREADS``."""

from __future__ import annotations

import numbers
import os
import warnings

from eagle import _core
from eagle._errors import EagleTypeError, EagleValueError, EagleWarning

#: The variable libeagle's team reads its size from (team.c parses it by the same rule).
ENV = "EAGLE_NUM_THREADS"


class ConfigWarning(EagleWarning):
    """An environment variable eagle reads holds a value it cannot use; the message names the
    variable, the value, and what eagle uses instead.

    >>> issubclass(eagle.ConfigWarning, eagle.EagleWarning)
    True
    """


def get_num_threads() -> int:
    """The number of host threads a CPU launch runs on: the last :func:`set_num_threads`, else
    ``EAGLE_NUM_THREADS``, else the CPUs this process may run on.

    >>> eagle.get_num_threads() >= 1
    True
    """
    return _core.num_threads()


def set_num_threads(n: int) -> None:
    """Run CPU launches on ``n`` host threads (``n >= 1``), from the next launch or build on.

    A graph built before keeps the CPU schedule its build chose (seed 001, "CPU schedules":
    ``branch_tasks`` needs two threads or more, read at ``build``) and runs it on the new team:
    the same bits, since no result depends on the thread count (DESIGN.md section 4).  Build it
    again for the schedule the new count would choose.  Waits for a launch running on another
    thread; refused from inside a run (an opaque node's function).

    >>> before = eagle.get_num_threads()
    >>> eagle.set_num_threads(1)
    >>> eagle.get_num_threads()
    1
    >>> eagle.set_num_threads(before)
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise EagleTypeError(f"eagle.set_num_threads: n must be a whole number, got {type(n).__name__}")
    if n < 1:
        raise EagleValueError(f"eagle.set_num_threads: n must be >= 1, got {n}; "
                              f"unset {ENV} and call eagle.set_num_threads(os.cpu_count()) for every CPU")
    _core.set_num_threads(int(n))


def parse(raw: str) -> int | None:
    """The thread count ``raw`` names (a whole number >= 1, blanks around it allowed), else None;
    team.c reads ``EAGLE_NUM_THREADS`` by this rule."""
    text = raw.strip(" \t\n\r\v\f")
    return int(text) if text.isascii() and text.isdigit() and 1 <= int(text) <= 2**31 - 1 else None


def check_env() -> None:
    """One :class:`ConfigWarning` when ``EAGLE_NUM_THREADS`` is set to what is not a thread count."""
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip() or parse(raw) is not None:
        return
    warnings.warn(f"eagle: {ENV}={raw!r} is not a number of threads (a whole number >= 1); using "
                  f"{get_num_threads()}, the CPUs this process may run on: set it to a count such as 4, "
                  "or unset it", ConfigWarning, stacklevel=3)
