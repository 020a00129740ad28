"""What the rewritten code calls: Python values decided here, constructs sent to the recorder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eagle.builder import recorder
from eagle.builder.recorder import BREAK, CONTINUE, RETURN, UNBOUND, NotCell, is_array, is_cell


class Runtime:
    """``__eagle_builder__`` in a rewritten function."""

    UNBOUND, BREAK, CONTINUE, RETURN = UNBOUND, BREAK, CONTINUE, RETURN

    @staticmethod
    def look(read: Callable[[], Any]) -> Any:
        """A name's value, or UNBOUND."""
        try:
            return read()
        except NameError:
            return UNBOUND

    @staticmethod
    def named(name: str, value: Any) -> Any:
        return recorder.current().named(name, value)

    @staticmethod
    def not_(value: Any, line: int) -> Any:
        if is_cell(value):
            return NotCell(value)
        if isinstance(value, NotCell):
            return value.cell
        return not recorder.current().truth(value, line)

    @staticmethod
    def truth_of(value: Any, line: int, form: str) -> Any:
        """``value``, which Python is about to test for truth in ``form``: a device condition
        there would be read once, while recording, so it is refused, and so is any array."""
        if is_cell(value) or isinstance(value, NotCell):
            current = recorder.current()
            raise TypeError(f"eagle.Graph.builder: {current.where(line)}: a device condition in `{form}` "
                            "would be decided once, while recording: test the cell in an if, while, "
                            "for ... range or match statement, which records every arm")
        if is_array(value):
            recorder.current().truth(value, line)
        return value

    @staticmethod
    def and_(line: int, *operands: Callable[[], Any]) -> Any:
        return _combine(operands, "and", lambda v: not v, line)

    @staticmethod
    def or_(line: int, *operands: Callable[[], Any]) -> Any:
        return _combine(operands, "or", bool, line)

    def __getattr__(self, construct: str) -> Any:
        # if_, while_, capped, for_range, for_, match_: the recorder's
        return getattr(recorder.current(), construct)


def _combine(operands: tuple[Callable[[], Any], ...], op: str, stops: Callable[[Any], bool],
             line: int) -> Any:
    """Python's short-circuit ``and``/``or``; device cells cannot be combined here."""
    value = None
    for operand in operands:
        value = operand()
        if is_cell(value) or isinstance(value, NotCell):
            raise TypeError(f"eagle.Graph.builder: {recorder.current().where(line)}: `{op}` of a device "
                            "condition: combine cells in a kernel that writes one cell (e.g. flag = "
                            "hm.uint32(a != 0 and b != 0)) and test that")
        if stops(recorder.current().truth(value, line)):
            return value
    return value


runtime = Runtime()
