"""What the rewritten code calls: Python values decided here, constructs sent to the recorder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from eagle.builder import recorder
from eagle.builder.recorder import BREAK, CONTINUE, RETURN, UNBOUND, NotCell, is_array, is_cell
from eagle.extend import EagleTypeError


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
            raise EagleTypeError(f"eagle.Graph.builder: {current.where(line)}: a device condition in "
                                 f"`{form}` "
                            "would be decided once, while recording: test the cell in an if, while, "
                            "for ... range or match statement, which records every arm")
        if is_array(value):
            recorder.current().truth(value, line)
        return value

    @staticmethod
    def operand_of(value: Any, line: int, form: str) -> Any:
        """``value``, an operand of Python's ``form`` (``*``, ``-``, ``<`` ...): on an array a replay
        sets, Python would compute once, now, before any replay, and no replay would run it."""
        current = recorder.active()
        if current is not None and current.replayed(value):
            raise EagleTypeError(f"eagle.Graph.builder: {current.where(line)}: `{form}` on a {value.dtype} "
                                 "array "
                            f"of shape {tuple(value.shape)} that the graph computes (or an argument of it) "
                            "would run once, now, while recording, on what the array holds before any "
                            f"replay, and no replay would run it: compute `{form}` in a @hawk.kernel "
                            "(or an opaque node) and call that")
        return value

    @staticmethod
    def callee(fn: Any, line: int) -> Any:
        """``fn`` about to be called: a NumPy (or CuPy) function or an array's method that computes
        from an array a replay sets would run once, now, so it is refused; a view of one is kept."""
        module = getattr(type(fn), "__module__", "") if isinstance(fn, np.ufunc) else \
            getattr(fn, "__module__", None) or getattr(getattr(fn, "__self__", None), "__module__", "") or ""
        owner = getattr(fn, "__self__", None)
        if module.split(".")[0] not in ("numpy", "cupy") and not is_array(owner):
            return fn

        def checked(*args: Any, **kwargs: Any) -> Any:
            current = recorder.active()
            inputs = [owner, *args, *kwargs.values()]
            name = getattr(fn, "__name__", "")
            if current is None or name in _SHAPE_ONLY or not any(current.replayed(a) for a in inputs):
                return fn(*args, **kwargs)
            if name in _VIEWS and "out" not in kwargs:
                result = fn(*args, **kwargs)
                if current.replayed(result):  # a view of it: bytes a replay sets
                    return result
            shown = getattr(fn, "__qualname__", name or repr(fn))
            raise EagleTypeError(f"eagle.Graph.builder: {current.where(line)}: {shown}(...) on an array that "
                                 "the "
                            "graph computes (or an argument of it) would run once, now, while recording, on "
                            "what the array holds before any replay, and no replay would run it: compute it "
                            "in a hawk kernel or an opaque node")
        return checked

    @staticmethod
    def and_(line: int, *operands: Callable[[], Any]) -> Any:
        return _combine(operands, "and", lambda v: not v, line)

    @staticmethod
    def or_(line: int, *operands: Callable[[], Any]) -> Any:
        return _combine(operands, "or", bool, line)

    def __getattr__(self, construct: str) -> Any:
        # if_, while_, capped, for_range, for_, match_: the recorder's
        return getattr(recorder.current(), construct)


#: NumPy functions and array methods that read an array's shape and dtype only, never its values
_SHAPE_ONLY = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "shape", "ndim", "size",
                         "result_type", "may_share_memory", "shares_memory"})
#: those that give a view of it where they can (kept when they did: a copy is refused); any other
#: is refused before it runs, so nothing is written while recording
_VIEWS = frozenset({"reshape", "view", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
                    "asarray", "ascontiguousarray", "atleast_1d", "atleast_2d", "diagonal", "broadcast_to"})


def _combine(operands: tuple[Callable[[], Any], ...], op: str, stops: Callable[[Any], bool],
             line: int) -> Any:
    """Python's short-circuit ``and``/``or``; device cells cannot be combined here."""
    value = None
    for operand in operands:
        value = operand()
        if is_cell(value) or isinstance(value, NotCell):
            raise EagleTypeError(f"eagle.Graph.builder: {recorder.current().where(line)}: `{op}` of a device "
                            "condition: combine cells in a kernel that writes one cell (e.g. flag = "
                            "hm.uint32(a != 0 and b != 0)) and test that")
        if stops(recorder.current().truth(value, line)):
            return value
    return value


runtime = Runtime()
