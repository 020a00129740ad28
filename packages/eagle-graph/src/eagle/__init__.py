"""eagle: write a compute step once as a graph, replay it fast.

eagle-graph ships this module; eagle-builder, eagle-diff and eagle-viz add
``eagle.builder``, ``eagle.diff`` and ``eagle.viz`` to the same namespace.
"""

# First statement: let the other distributions' ``eagle/<sub>`` folders join
# this package in regular and editable installs alike (DESIGN.md section 2).
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

import importlib as _importlib

from eagle import interop as interop
from eagle._comm import Communicator as Communicator
from eagle._comm import shard as shard
from eagle._core import BLOCK as BLOCK
from eagle._errors import Busy as Busy
from eagle._errors import RebuildWarning as RebuildWarning
from eagle._errors import SiblingRace as SiblingRace
from eagle._graph import Graph as Graph
from eagle._kinds import node as node
from eagle._nodes import SkipGuard as SkipGuard
from eagle._nodes import copy as copy
from eagle._nodes import opaque as opaque
from eagle._nodes import pinned as pinned
from eagle._nodes import reduce as reduce
from eagle._nodes import repeat_while as repeat_while
from eagle._nodes import skippable as skippable
from eagle._optional import optional_module as _optional_module
from eagle._pipeline import GraphPipeline as GraphPipeline
from eagle._plugins import PluginInfo as PluginInfo
from eagle._plugins import PluginWarning as PluginWarning
from eagle._plugins import plugins as plugins
from eagle._regions import Body as Body
from eagle._regions import DeviceIf as DeviceIf
from eagle._regions import DeviceLoop as DeviceLoop
from eagle._regions import DeviceSwitch as DeviceSwitch
from eagle._regions import Fork as Fork
from eagle._simulate import simulate as simulate
from eagle._simulate_report import SimulateReport as SimulateReport
from eagle._simulate_report import SimulateResult as SimulateResult
from eagle._stepping import Steps as Steps
from eagle._stepping import UntilDone as UntilDone
from eagle._stepping import until_done as until_done

__version__ = "0.1.0"

#: Every public name above: what ``from eagle import *`` gives and docs/api/eagle.rst documents
#: (tests/test_public_names.py holds the three together).  The optional subpackages below are not
#: in it: a star import must not fail for want of eagle-builder, eagle-diff or eagle-viz.
__all__ = [
    "BLOCK", "Body", "Busy", "Communicator", "DeviceIf", "DeviceLoop", "DeviceSwitch", "Fork",
    "Graph", "GraphPipeline", "PluginInfo", "PluginWarning", "RebuildWarning", "SiblingRace",
    "SimulateReport", "SimulateResult", "SkipGuard", "Steps", "UntilDone", "copy", "node", "opaque",
    "pinned", "plugins", "reduce", "repeat_while", "shard", "simulate", "skippable", "until_done",
]

# eagle-graph's own public modules, imported when first named (the seeds write `eagle.graph.opaque`
# after a bare `import eagle`).
_OWN = ("extend", "frameworks", "graph", "native", "plan", "testing")
# Subpackages shipped by other distributions, and the distribution to install.
_OPTIONAL = {"builder": "eagle-builder", "diff": "eagle-diff", "viz": "eagle-viz"}


def __getattr__(name: str) -> object:
    if name in _OWN:
        return _importlib.import_module(f"eagle.{name}")
    if name in _OPTIONAL:
        return _optional_module("eagle", name, _OPTIONAL[name])
    raise AttributeError(f"module 'eagle' has no attribute {name!r}")
