"""The graph model's public names (the implementation lives in private modules)."""

from eagle._edges import Edge as Edge
from eagle._flows import ChoiceFlow as ChoiceFlow
from eagle._flows import CopyFlow as CopyFlow
from eagle._flows import InnerFlow as InnerFlow
from eagle._flows import KernelFlow as KernelFlow
from eagle._flows import LeafFlow as LeafFlow
from eagle._flows import LoopFlow as LoopFlow
from eagle._flows import NoFlow as NoFlow
from eagle._flows import ReduceFlow as ReduceFlow
from eagle._flows import RowFlow as RowFlow
from eagle._fused_runs import FusedRun as FusedRun
from eagle._graph import Graph as Graph
from eagle._kinds import GpuItems as GpuItems
from eagle._kinds import HostItems as HostItems
from eagle._kinds import NativeCall as NativeCall
from eagle._kinds import Node as Node
from eagle._kinds import NodeKind as NodeKind
from eagle._kinds import Swap as Swap
from eagle._kinds import kind_of as node_kind
from eagle._kinds import node as node
from eagle._kinds import register_node_kind as register_node_kind
from eagle._nodes import SkipGuard as SkipGuard
from eagle._nodes import capture_stream as capture_stream
from eagle._nodes import child as child
from eagle._nodes import copy as copy
from eagle._nodes import opaque as opaque
from eagle._nodes import pinned as pinned
from eagle._nodes import reduce as reduce
from eagle._nodes import repeat_while as repeat_while
from eagle._nodes import skippable as skippable
from eagle._pictures import BoxPicture as BoxPicture
from eagle._pictures import FramePicture as FramePicture
from eagle._pictures import NoPicture as NoPicture

__all__ = [
           "BoxPicture",
           "ChoiceFlow",
           "CopyFlow",
           "Edge",
           "FramePicture",
           "FusedRun",
           "GpuItems",
           "Graph",
           "HostItems",
           "InnerFlow",
           "KernelFlow",
           "LeafFlow",
           "LoopFlow",
           "NativeCall",
           "NoFlow",
           "NoPicture",
           "Node",
           "NodeKind",
           "ReduceFlow",
           "RowFlow",
           "SkipGuard",
           "Swap",
           "capture_stream",
           "child",
           "copy",
           "node",
           "node_kind",
           "opaque",
           "pinned",
           "reduce",
           "register_node_kind",
           "repeat_while",
           "skippable",
]
