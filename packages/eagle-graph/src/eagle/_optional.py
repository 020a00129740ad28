"""Modules that other distributions ship into eagle's namespace packages, imported when named."""

from __future__ import annotations

import importlib

from eagle._errors import EagleImportError


def optional_module(package: str, name: str, distribution: str) -> object:
    """``package.name`` imported; where it is not installed, an ImportError naming what to install
    (an import that fails inside it is left as it is)."""
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{package}.{name}":
            raise
        raise EagleImportError(f"{package}.{name} is not installed: pip install {distribution}") from None
