"""eagle.diff, shipped by the eagle-diff distribution.

eagle.diff: reverse-mode gradients through a recorded eagle graph.
Its features arrive with their issues; until then the package installs and
imports so that eagle's namespace and packaging are exercised end to end.
"""

__version__ = "0.1.0"
