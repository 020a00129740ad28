"""eagle.frameworks: a torch or JAX step as one node of an eagle graph.

``eagle.frameworks.torch`` is shipped by the eagle-torch plugin and
``eagle.frameworks.jax`` by eagle-jax; each registers its node kind through
eagle's entry points and imports its framework only when a node is made.
What the two share (the planes a model reads and writes, the checks of what
it returns, the host call) is :mod:`eagle.frameworks.models`, which imports
no framework: eagle-graph never imports torch or JAX.

>>> import eagle.frameworks
>>> sorted(eagle.frameworks.PLUGINS)
['jax', 'torch']
"""

# First statement: the plugins' ``eagle/frameworks/<name>.py`` join this package (as eagle's own
# subpackages join ``eagle``), in regular and editable installs alike.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from eagle._errors import EagleAttributeError
from eagle._optional import optional_module as _optional_module

#: Each framework's module here, and the distribution that ships it.
PLUGINS = {"torch": "eagle-torch", "jax": "eagle-jax"}


def __getattr__(name: str) -> object:
    if name in PLUGINS:
        return _optional_module("eagle.frameworks", name, PLUGINS[name])
    raise EagleAttributeError(f"module 'eagle.frameworks' has no attribute {name!r}")
