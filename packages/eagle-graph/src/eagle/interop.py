"""eagle.interop: arrays of other libraries as eagle's planes.

Every node takes a torch tensor, a JAX array, a CuPy array, or any object with DLPack, an array
interface or the buffer protocol, where it takes a NumPy array.  eagle reads the memory where it
is, with no copy and no import of the library, and keeps the object alive as long as a graph
holds it.  :func:`import_buffer` is that plane made explicit, for a framework's weights bound as a
hawk ``Table``.
"""

from __future__ import annotations

from typing import Any

from eagle._cuda import contiguous
from eagle._errors import EagleValueError
from eagle._foreign import as_plane

__all__ = ["import_buffer"]

API = "eagle.interop.import_buffer"


def import_buffer(param: Any) -> Any:
    """One zero-copy buffer over a framework parameter: a NumPy array over its memory (a device
    array for a CUDA tensor) that a hawk ``Table`` plane can be bound to.

    ``param`` is a torch ``Parameter`` or tensor, a JAX array, a NumPy array (returned as it is)
    or any object with DLPack or an array interface, contiguous.  The buffer *is* the parameter's
    memory, so the optimizer's in-place step (``opt.step()``) is the refresh: the next launch reads
    the new weights, with nothing copied.  The same parameter gives the same buffer while it lives.

    - Update weights after ``launch()`` returns (or after ``synchronize()``), never between
      ``enqueue`` and ``synchronize``: that call refuses a torch tensor changed in place meanwhile.
    - A launch after ``param.data = ...`` (new storage for the parameter) is refused by name: bind
      the tensor the optimizer updates, or change it in place (``param.copy_(new)``).
    - A JAX array never changes: its buffer is read-only (a node that writes it is refused), and
      an optimizer step (optax) makes a new array, which a built graph does not see: import that
      one and bind it (``g.bind(w=...)``, a builder graph's), or build the graph again.

    :raises TypeError: ``param`` is a number or no array.
    :raises ValueError: it is not contiguous (its contiguous copy is not what the optimizer
        updates), or lives on a device eagle does not run on.

    >>> class Weights:                  # a framework's parameter, as eagle sees one: DLPack only
    ...     def __init__(self, values):
    ...         self.values = values
    ...     def __dlpack__(self, **kwargs):
    ...         return self.values.__dlpack__(**kwargs)
    ...     def __dlpack_device__(self):
    ...         return self.values.__dlpack_device__()
    >>> w = Weights(np.array([0.5, 2.0]))
    >>> buffer = eagle.interop.import_buffer(w)
    >>> w.values *= 10.0                # the optimizer's in-place step
    >>> buffer, eagle.interop.import_buffer(w) is buffer
    (array([ 5., 20.]), True)
    """
    buffer = as_plane(param, API, "param")
    if not contiguous(buffer):
        raise EagleValueError(
            f"{API}: param (shape {tuple(buffer.shape)}) is not contiguous; a Table plane is "
            "one block of memory, and a contiguous copy (param.contiguous()) would not be what "
            "the optimizer updates: import the parameter itself"
        )
    return buffer
