"""eagle-builder: ``@eagle.Graph.builder`` writes a graph from plain Python.

The function's ``if``, ``while``, ``for``, ``match``, ``break`` and
``continue`` are rewritten once into calls on a recorder.  Calling the
builder runs the function once, with the recorder active: kernel calls
become nodes, a Python condition is decided at once, and a one-cell uint32
array is a device condition whose arms are all recorded and chosen at every
replay.  Python side effects (``print``) happen while recording, not when
the graph replays.
"""

from eagle.builder.builder import Builder, builder
from eagle.builder.handles import Branch, Parallel
from eagle.builder.uncapped import UncappedLoopWarning

__version__ = "0.1.0"

__all__ = ["Branch", "Builder", "Parallel", "UncappedLoopWarning", "builder"]
