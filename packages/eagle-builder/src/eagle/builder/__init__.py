"""eagle.builder, shipped by the eagle-builder distribution.

@eagle.Graph.builder: write an eagle graph from plain Python (an AST rewrite of its control flow).
Its features arrive with their issues; until then the package installs and
imports so that eagle's namespace and packaging are exercised end to end.
"""

__version__ = "0.1.0"
