"""eagle-viz installs into the eagle namespace beside eagle-graph."""

import importlib.metadata

import eagle
import eagle.viz


def test_joins_the_eagle_namespace():
    """eagle.viz comes from eagle-viz, eagle itself from eagle-graph."""
    assert eagle.viz.__version__ == importlib.metadata.version("eagle-viz")
    assert eagle.viz is eagle.__getattr__("viz")
    shipped = {str(f) for f in importlib.metadata.distribution("eagle-viz").files or ()}
    assert "eagle/__init__.py" not in shipped  # only eagle-graph may own eagle/__init__.py
