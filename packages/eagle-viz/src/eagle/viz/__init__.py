"""eagle.viz, shipped by the eagle-viz distribution.

eagle-viz: pictures of an eagle graph (text, matplotlib, Mermaid, DOT) from one layout.
Its features arrive with their issues; until then the package installs and
imports so that eagle's namespace and packaging are exercised end to end.
"""

__version__ = "0.1.0"
