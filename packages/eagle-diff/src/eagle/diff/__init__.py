"""eagle.diff, shipped by the eagle-diff distribution: reverse-mode gradients through a recorded graph.

Build a graph with ``eagle.Graph(record=True)``, run it, then::

    grads = eagle.diff.reverse(g.record, {"result": np.ones(n)}, wrt=("x",))
"""

from eagle import extend
from eagle.diff.record import Record, instrument, instrument_device
from eagle.diff.reverse import reverse

# A record=True graph is built and replayed through these (the core never imports eagle.diff's modules).
extend.register_record(instrument, Record._run, instrument_device)

__version__ = "0.1.0"

__all__ = ["Record", "reverse"]
