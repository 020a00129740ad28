"""eagle-diff installs into the eagle namespace beside eagle-graph."""

import importlib.metadata

import eagle
import eagle.diff


def test_joins_the_eagle_namespace():
    """eagle.diff comes from eagle-diff, eagle itself from eagle-graph."""
    assert eagle.diff.__version__ == importlib.metadata.version("eagle-diff")
    assert eagle.diff is eagle.__getattr__("diff")
    shipped = {str(f) for f in importlib.metadata.distribution("eagle-diff").files or ()}
    assert "eagle/__init__.py" not in shipped  # only eagle-graph may own eagle/__init__.py
