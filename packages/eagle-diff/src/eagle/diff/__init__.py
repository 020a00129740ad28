"""eagle.diff, shipped by the eagle-diff distribution: reverse-mode gradients through a recorded graph.

Build a graph with ``eagle.Graph(record=True)``, run it, then::

    grads = eagle.diff.reverse(g.record, {"result": np.ones(n)}, wrt=("x",))
"""

from eagle.diff.record import Record
from eagle.diff.reverse import reverse

__version__ = "0.1.0"

__all__ = ["Record", "reverse"]
