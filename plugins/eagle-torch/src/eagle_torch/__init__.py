"""eagle-torch: an eagle plugin that runs torch functions on torch tensors as graph nodes.

Use it through eagle, not by importing this package::

    g.add_node(eagle.node("torch", torch.tanh, reads={"x": x}, writes={"y": y}), name="tanh")

The tensors' own memory is the node's planes, so eagle derives the edges.
"""

__version__ = "0.1.0"
