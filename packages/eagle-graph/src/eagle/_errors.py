"""eagle's exceptions.  Each refusal subclasses the builtin that fits, so a
plain ``except ValueError`` keeps working, and its message starts with the
API it came from."""

from __future__ import annotations


class Busy(RuntimeError):
    """Another thread is inside build, launch or enqueue of the same Graph."""

    def __init__(self, api: str) -> None:
        super().__init__(f"{api}: another call is still running on this Graph; "
                         "give each thread its own Graph, or wait for it")


class SiblingRace(ValueError):
    """Two branches of one fork touch one plane, one writes it, and no wait orders them."""
