"""eagle-builder installs into the eagle namespace beside eagle-graph."""

import importlib.metadata

import eagle
import eagle.builder


def test_joins_the_eagle_namespace():
    """eagle.builder comes from eagle-builder, eagle itself from eagle-graph."""
    assert eagle.builder.__version__ == importlib.metadata.version("eagle-builder")
    assert eagle.builder is eagle.__getattr__("builder")
    shipped = {str(f) for f in importlib.metadata.distribution("eagle-builder").files or ()}
    assert "eagle/__init__.py" not in shipped  # only eagle-graph may own eagle/__init__.py
