"""eagle-scan: an eagle plugin whose node kind is an inclusive prefix scan (sum, max).

Use it through eagle, not by importing this package::

    g.add_node(eagle.node("scan", x, out=y, op="sum"), name="cumsum")

The kernels are C (``scan.c``), run by eagle's executor like plan launches.
"""

__version__ = "0.1.0"
