"""Where a named array meets the graph's planes, element by element, through views.

A node often reads an argument through a view (``x[:3]``, the rows
``xs[t]``, ``x[::-1]``, ``x[::2]``): each view is a place of its own (whose
adjoint is a view of one over their memory where places overlap, see
:mod:`eagle.diff.memory`).  A name stands for its array's memory, so its
gradient gathers, element by element, the adjoint of the first place the
graph touches that holds the element, matched by the elements' byte
addresses; a seed is sent the other way, each element once.  A place that shares bytes
with the array but not whole elements (another dtype, a view that starts
inside an element) cannot be mapped, and is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from eagle.diff.steps import ParamSlot, Place, place
from eagle.extend import EagleValueError


@dataclass(frozen=True, eq=False)
class Link:
    """A place holding elements of a named array: ``mine[k]`` (flat, C order) of the array is
    ``theirs[k]`` of the place's array; both None when the place is the array itself.  ``rest``:
    the array's own place where no plane is it, holding what no view of it holds (a seed
    reaches its gradient unchanged)."""

    place: Place
    shape: tuple[int, ...]
    dtype: np.dtype
    mine: np.ndarray | None = None
    theirs: np.ndarray | None = None
    rest: bool = False

    @property
    def spec(self) -> tuple[tuple[int, ...], np.dtype]:
        return self.shape, self.dtype

    def indices(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(mine, theirs), flat; for the array's own place, every element to itself."""
        if self.mine is None or self.theirs is None:
            return np.arange(size), np.arange(size)
        return self.mine, self.theirs


def extent(a: np.ndarray) -> tuple[int, int]:
    """The bytes [lo, hi) an array's elements lie in."""
    start = a.ctypes.data
    lo = start + sum(min(0, (n - 1) * st) for n, st in zip(a.shape, a.strides, strict=True))
    hi = start + sum(max(0, (n - 1) * st) for n, st in zip(a.shape, a.strides, strict=True)) + a.itemsize
    return lo, hi


def addresses(a: np.ndarray) -> np.ndarray:
    """The byte address of each element, flat in C order."""
    at = np.full(a.shape, a.ctypes.data, np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
        at += (np.arange(n, dtype=np.int64) * stride).reshape((n,) + (1,) * (a.ndim - axis - 1))
    return at.reshape(-1)


def links(name: str, value: np.ndarray | ParamSlot, planes: Mapping[Place, tuple[str, np.ndarray]]
          ) -> list[Link]:
    """The places (of ``planes``: place -> (label, array), in the order the graph first touches
    them) that hold elements of ``value``, in that order, and the array's own place last as the
    ``rest`` where no plane is it; refused where bytes are shared but not elements."""
    if isinstance(value, ParamSlot):
        return [Link(value.place, (1,), value.dtype)]
    own = place(value)
    lo, hi = extent(value)
    found = []
    sorted_value: Sorted | None = None
    for where, (label, array) in planes.items():
        if where == own:
            found.append(Link(own, value.shape, value.dtype))
            continue
        if not value.size or not array.size:
            continue
        a_lo, a_hi = extent(array)
        if a_lo >= hi or lo >= a_hi:
            continue
        sorted_value = sorted_value or Sorted(value)
        matched = sorted_value.match(array)
        if matched is None:
            raise EagleValueError(f"eagle.diff.reverse: {name!r} shares memory with the plane {label} but "
                                  "not "
                             f"whole elements of it ({array.dtype} {array.shape} at strides {array.strides}, "
                             "over a view that repeats an element, another dtype, or an offset inside an "
                             "element): a gradient is kept per element; read it through views of its own "
                             "dtype that start on an element, or pass that plane an array of its own")
        if matched[0].size:
            found.append(Link(where, array.shape, array.dtype, *matched))
    if own not in planes:
        found.append(Link(own, value.shape, value.dtype, rest=True))
    return found


class Sorted:
    """An array's element addresses, sorted once, to match the elements of many planes against."""

    def __init__(self, a: np.ndarray) -> None:
        self.dtype = a.dtype
        at = addresses(a)
        self.order = np.argsort(at, kind="stable")
        self.at = at[self.order]
        self.repeats = bool(np.any(self.at[1:] == self.at[:-1]))

    def match(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(indices into the array, indices into b) of the elements they share, flat; None where b
        touches bytes of it that are not a whole element of the same dtype, or either repeats an
        element."""
        at_b = addresses(b)
        if b.dtype != self.dtype or self.repeats or np.unique(at_b).size != at_b.size:
            return None
        n, size = self.at.size, b.itemsize
        pos = np.searchsorted(self.at, at_b)
        after = self.at[np.minimum(pos, n - 1)]
        before = self.at[np.maximum(pos - 1, 0)]
        hit = (pos < n) & (after == at_b)
        # an element of b that is not one of the array must not reach into the one before or after
        touches = ((pos > 0) & (before + size > at_b)) | ((pos < n) & (after < at_b + size))
        if np.any(touches & ~hit):
            return None
        return self.order[pos[hit]], np.flatnonzero(hit)


def gather(value: np.ndarray | ParamSlot, found: list[Link], grads: Mapping[Place, np.ndarray]) -> np.ndarray:
    """A name's gradient: each element's from the first place holding it, the one the graph
    touched first (places sharing memory share their adjoint, so any would give it; which one
    says whether it is the gradient of the value at the start or of the first writer's)."""
    if found[0].mine is None:  # the array itself, before any view of it: it holds them all
        return np.array(grads[found[0].place], copy=True)
    assert isinstance(value, np.ndarray)
    out = np.zeros(value.shape, value.dtype)
    flat = out.reshape(-1)
    covered = np.zeros(value.size, bool)
    for link in found:
        grad = np.ravel(grads[link.place])
        mine, theirs = link.indices(value.size)
        fresh = ~covered[mine]
        flat[mine[fresh]] = grad[theirs[fresh]]
        covered[mine] = True
    return out


def scatter(value: np.ndarray, cotangent: np.ndarray, found: list[Link]
            ) -> Iterator[tuple[Place, np.ndarray]]:
    """A name's seed as seeds of the places holding its elements: each element seeded once (in the
    first place holding it), since places sharing memory share their adjoint."""
    if found[0].mine is None and not found[0].rest:  # the array itself, first: it holds them all
        yield found[0].place, cotangent
        return
    covered = np.zeros(value.size, bool)
    flat = np.ravel(cotangent)
    for link in found:
        mine, theirs = link.indices(value.size)
        fresh = ~covered[mine]
        seed = np.zeros(link.shape, value.dtype)
        seed.reshape(-1)[theirs[fresh]] = flat[mine[fresh]]
        covered[mine] = True
        yield link.place, seed
