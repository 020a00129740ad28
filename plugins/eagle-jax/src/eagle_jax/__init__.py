"""eagle-jax: an eagle plugin that runs a JAX step as a graph node.

Use it through ``eagle.frameworks.jax`` (this distribution ships that
module), not by importing this package::

    g.add_node(eagle.frameworks.jax.node(fn, reads={"x": x}, writes={"y": y}), name="model")
"""

__version__ = "0.1.0"
