"""Sphinx configuration for eagle's documentation."""

project = "eagle"
author = "the eagle developers"
extensions = ["sphinx.ext.autodoc"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
