"""The split packages share the eagle namespace the way DESIGN.md section 2 says."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest

import eagle

OPTIONAL = {"builder": "eagle-builder", "diff": "eagle-diff", "viz": "eagle-viz"}


def test_eagle_comes_from_eagle_graph():
    """eagle/__init__.py is eagle-graph's, and it extends its path first."""
    assert eagle.__version__ == importlib.metadata.version("eagle-graph")
    assert eagle.__file__.replace("\\", "/").endswith("eagle/__init__.py")


@pytest.mark.parametrize(("sub", "dist"), OPTIONAL.items())
def test_optional_subpackages(sub, dist):
    """eagle.<sub> imports when its distribution is installed, else names the package to install."""
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        assert importlib.util.find_spec(f"eagle.{sub}") is None
        with pytest.raises(ImportError, match=f"pip install {dist}"):
            getattr(eagle, sub)
    else:
        assert getattr(eagle, sub).__name__ == f"eagle.{sub}"


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        eagle.nope  # noqa: B018
