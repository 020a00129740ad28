"""One graph over a sample batch sharded across processes.

Every rank runs the same graph over its own block-aligned range of the
samples (:func:`shard`).  Per-sample work stays local; every cross-sample
reduction becomes global through libeagle's collective items, which reach
the communication library through a table of function pointers a plugin
provides (eagle-mpi adapts an mpi4py communicator).  The results are those
of one process holding the whole batch, bit for bit.
"""

from __future__ import annotations

from typing import Any, NoReturn, Protocol, runtime_checkable

from eagle._core import BLOCK
from eagle._errors import EagleTypeError, EagleValueError


def shard(n: int, rank: int, size: int) -> slice:
    """The samples of ``rank`` when ``n`` samples are cut over ``size`` ranks.

    Whole blocks of the fixed reduction size (``eagle.BLOCK``) are dealt out
    in rank order, as evenly as they go; only the last rank may end inside
    a block.  Every rank gets at least one block: with fewer blocks than
    ranks, the cut is refused.

    >>> [eagle.shard(5000, r, 3) for r in range(3)]
    [slice(0, 1024, None), slice(1024, 3072, None), slice(3072, 5000, None)]
    """
    for name, value in (("n", n), ("rank", rank), ("size", size)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise EagleTypeError(f"eagle.shard: {name} must be an int, got {type(value).__name__}")
    if n < 0 or size < 1 or not 0 <= rank < size:
        raise EagleValueError(f"eagle.shard: needs n >= 0, size >= 1 and 0 <= rank < size; got n={n}, "
                         f"rank={rank}, size={size}")
    blocks = -(-n // BLOCK)
    if 0 < blocks < size:
        raise EagleValueError(f"eagle.shard: {n} samples make {blocks} block(s) of {BLOCK}, fewer than the "
                              f"{size} "
                         f"ranks; every rank needs a block: run on at most {blocks} rank(s)")
    first, last = rank * blocks // size, (rank + 1) * blocks // size
    return slice(min(first * BLOCK, n), min(last * BLOCK, n))


@runtime_checkable
class Communicator(Protocol):
    """What eagle needs of a communicator; a plugin's ``eagle_communicator`` hook makes one.

    ``table()`` gives the ``eagle_collective *`` libeagle calls during a run
    (its function pointers must stay valid while the communicator lives);
    ``allgather`` exchanges small Python objects at build; ``abort`` stops
    every rank with a message, so that no rank waits forever for one that failed.
    """

    rank: int
    size: int

    def table(self) -> Any: ...

    def allgather(self, obj: Any) -> list[Any]: ...

    def abort(self, message: str) -> NoReturn: ...


def communicator_of(comm: Any, api: str) -> Communicator:
    """``comm`` as a Communicator: itself, or what an installed plugin makes of it."""
    if isinstance(comm, Communicator):
        return comm
    from eagle._plugins import adapt_communicator

    adapted = adapt_communicator(comm)
    if adapted is None:
        raise EagleTypeError(f"{api}: comm={type(comm).__module__}.{type(comm).__qualname__} is not a "
                        "communicator any installed plugin knows: for an mpi4py communicator, "
                        "pip install eagle-mpi")
    return adapted
