"""hawk installs beside eagle-graph and imports."""

import importlib.metadata

import hawk


def test_imports_with_its_version():
    assert hawk.__version__ == importlib.metadata.version("raptor-hawk")
