"""eagle: write a compute step once as a graph, replay it fast.

eagle-graph ships this module; eagle-builder, eagle-diff and eagle-viz add
``eagle.builder``, ``eagle.diff`` and ``eagle.viz`` to the same namespace.
"""

# First statement: let the other distributions' ``eagle/<sub>`` folders join
# this package in regular and editable installs alike (DESIGN.md section 2).
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

import importlib as _importlib

from eagle import _log  # noqa: F401  (the ``eagle`` logger's NullHandler, before anything logs)
from eagle import interop as interop
from eagle._comm import Communicator as Communicator
from eagle._comm import shard as shard
from eagle._core import BLOCK as BLOCK
from eagle._errors import Busy as Busy
from eagle._errors import EagleAttributeError as _EagleAttributeError
from eagle._errors import EagleError as EagleError
from eagle._errors import EagleWarning as EagleWarning
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
from eagle._show_config import show_config as show_config
from eagle._simulate import simulate as simulate
from eagle._simulate_report import SimulateReport as SimulateReport
from eagle._simulate_report import SimulateResult as SimulateResult
from eagle._stepping import Steps as Steps
from eagle._stepping import UntilDone as UntilDone
from eagle._stepping import until_done as until_done
from eagle._threads import ConfigWarning as ConfigWarning
from eagle._threads import check_env as _check_threads_env
from eagle._threads import get_num_threads as get_num_threads
from eagle._threads import set_num_threads as set_num_threads

__version__ = "0.1.0"

#: Every public name above: what ``from eagle import *`` gives and docs/api/eagle.rst documents
#: (tests/test_public_names.py holds the three together).  The optional subpackages below are not
#: in it: a star import must not fail for want of eagle-builder, eagle-diff or eagle-viz.
#: In the order of the API page (docs/api/eagle.rst documents by source order): the graph and its
#: nodes first, then running, configuration, errors and the rest.
__all__ = [  # noqa: RUF022
    "Graph", "copy", "opaque", "pinned", "reduce", "repeat_while", "skippable", "node", "SkipGuard",
    "Body", "DeviceIf", "DeviceLoop", "DeviceSwitch", "Fork", "BLOCK",
    "GraphPipeline", "simulate", "SimulateReport", "SimulateResult", "until_done", "UntilDone", "Steps",
    "Communicator", "shard",
    "get_num_threads", "set_num_threads", "show_config", "plugins", "PluginInfo",
    "EagleError", "Busy", "SiblingRace", "EagleWarning", "ConfigWarning", "PluginWarning", "RebuildWarning",
]

_check_threads_env()  # a bad EAGLE_NUM_THREADS is said once, at the first import

# eagle-graph's own public modules, imported when first named (the seeds write `eagle.graph.opaque`
# after a bare `import eagle`).
_OWN = ("errors", "extend", "frameworks", "graph", "native", "plan", "testing")
# Subpackages shipped by other distributions, and the distribution to install.
_OPTIONAL = {"builder": "eagle-builder", "diff": "eagle-diff", "viz": "eagle-viz"}


def __getattr__(name: str) -> object:
    if name in _OWN:
        return _importlib.import_module(f"eagle.{name}")
    if name in _OPTIONAL:
        return _optional_module("eagle", name, _OPTIONAL[name])
    raise _EagleAttributeError(f"module 'eagle' has no attribute {name!r}")
