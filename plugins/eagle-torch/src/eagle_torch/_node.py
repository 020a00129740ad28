"""The ``torch`` node kind: a torch function on tensors, as one node of an eagle graph.

``eagle.node("torch", fn, reads={"x": x}, writes={"y": y})`` calls
``fn(x)`` at every launch and puts what it returns into ``y`` (``fn`` may
also write its outputs itself and return None).  The tensors' own memory is
the node's planes (``_planes``), so eagle orders the node against every other
node that touches those bytes, with nothing to declare but the tensors.

On the CPU the node is a Python step, in graph order.  On the GPU it takes
one of the tiers of seed 001: ``child`` (the default: torch captures ``fn``
once into a ``torch.cuda.CUDAGraph`` that the eagle graph inserts as a child
graph) or ``stream=S`` (``fn`` runs on the host at every launch, its device
work on the torch stream ``S``, between two CUDA graphs: the graph is cut
around it, and the stream waited for).

torch is imported only when a torch node is made, so the plugin loads, and
eagle works, where torch is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eagle.graph import GpuItems
from eagle_torch._planes import DeviceTensorPlane, HostTensorPlane, plane_of

API = "eagle.node('torch')"
TIERS = ("child", "stream")


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError(f"{API}: eagle-torch needs torch: pip install 'eagle-torch[torch]'") from None
    return torch


@dataclass(frozen=True, eq=False)
class TorchCall:
    """A torch node's payload."""

    fn: Callable[..., Any]
    reads: dict[str, Any]
    writes: dict[str, Any]
    #: How it runs on the GPU: "child" or "stream" (on the CPU both are a call).
    tier: str
    #: The torch stream of the "stream" tier (None: the current stream at launch).
    stream: Any
    #: The plane of each tensor, by plane name.
    planes: dict[str, HostTensorPlane | DeviceTensorPlane] = field(default_factory=dict)
    #: Where each tensor's first element was when the node was made.
    addresses: dict[str, int] = field(default_factory=dict)

    def tensors(self) -> dict[str, Any]:
        return {**self.reads, **self.writes}

    def check_addresses(self) -> None:
        """Refuse a run after a tensor moved (``param.data = ...``): the graph holds the old memory."""
        for name, tensor in self.tensors().items():
            if tensor.data_ptr() != self.addresses[name]:
                raise RuntimeError(f"{API}: tensor {name!r} no longer lives where the graph was built "
                                   "(was it re-assigned, e.g. param.data = ...?); update it in place "
                                   "(param.copy_(...)), or build the graph again")

    def call(self) -> None:
        """Run ``fn`` on the read tensors and put its results into the written ones."""
        torch = _torch()
        with torch.no_grad():  # the graph's writes are plain stores; gradients come from the vjp
            result = self.fn(*self.reads.values())
            outs = list(self.writes.values())
            if result is None:
                return
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            if len(results) != len(outs):
                raise ValueError(f"{API}: {_name(self.fn)} returned {len(results)} tensors for "
                                 f"{len(outs)} written planes ({', '.join(self.writes)}); return one per "
                                 "written plane, in order, or None after writing them yourself")
            for out, value in zip(outs, results, strict=True):
                if value is not out:
                    out.copy_(value)


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _tensor_dict(planes: Mapping[str, Any] | None, what: str, torch: Any) -> dict[str, Any]:
    if planes is None:
        return {}
    if not isinstance(planes, Mapping):
        raise TypeError(f"{API}: declare {what} as a dict of name -> tensor, e.g. {what}={{'x': x}}")
    for name, tensor in planes.items():
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{API}: {what}[{name!r}] must be a torch tensor, got {type(tensor).__name__}")
    return dict(planes)


def make(fn: Callable[..., Any], reads: Mapping[str, Any] | None = None,
         writes: Mapping[str, Any] | None = None, *, stream: Any = None) -> TorchCall:
    """The payload of ``eagle.node("torch", fn, reads=..., writes=..., stream=None)``."""
    torch = _torch()
    if not callable(fn):
        raise TypeError(f"{API}: fn must be callable, got {type(fn).__name__}")
    ins, outs = _tensor_dict(reads, "reads", torch), _tensor_dict(writes, "writes", torch)
    if not outs:
        raise ValueError(f"{API}: {_name(fn)} writes no plane; declare what it writes (writes={{'y': y}}), "
                         "or the graph has no reason to run it")
    tensors = {**ins, **outs}
    for name in ins.keys() & outs.keys():
        if ins[name] is not outs[name]:
            raise ValueError(f"{API}: plane name {name!r} is read as one tensor and written as another; "
                             "give them two names")
    devices = {str(t.device) for t in tensors.values()}
    if len(devices) > 1:
        raise ValueError(f"{API}: the tensors live on {', '.join(sorted(devices))}; a node runs where its "
                         "planes live: move them to one device, or add eagle.copy nodes between")
    return TorchCall(fn, ins, outs, "stream" if stream is not None else "child", stream,
                     planes={name: plane_of(t) for name, t in tensors.items()},
                     addresses={name: t.data_ptr() for name, t in tensors.items()})


def reads(c: TorchCall) -> list[tuple[str, Any, str]]:
    return [(name, c.planes[name], "read") for name, t in c.reads.items() if name not in c.writes]


def writes(c: TorchCall) -> list[tuple[str, Any, str]]:
    return [(name, c.planes[name], "readwrite" if name in c.reads else "write") for name in c.writes]


def lower_cpu(c: TorchCall) -> Callable[[], None]:
    """The host step: a Python call in graph order."""
    cuda = [name for name, t in c.tensors().items() if t.is_cuda]
    if cuda:
        raise ValueError(f"eagle.Graph.build: torch node {_name(c.fn)} has CUDA tensors "
                         f"({', '.join(cuda)}); a CPU build runs CPU tensors")

    def step() -> None:
        c.check_addresses()
        c.call()

    return step


def lower_gpu(c: TorchCall) -> GpuItems:
    """The device step: a torch-captured CUDA graph as a child node, or (stream tier) a call at
    every launch between two CUDA graphs, its device work on the torch stream, waited for."""
    torch = _torch()
    host = [name for name, t in c.tensors().items() if not t.is_cuda]
    if host:
        raise ValueError(f"eagle.Graph.build: torch node {_name(c.fn)} has CPU tensors "
                         f"({', '.join(host)}) in a GPU build; move them with .cuda() or eagle.copy nodes")
    if c.tier == "stream":
        stream = c.stream if isinstance(c.stream, torch.cuda.Stream) else torch.cuda.ExternalStream(c.stream)

        def run() -> None:
            c.check_addresses()
            with torch.cuda.stream(stream):
                c.call()
            stream.synchronize()

        return GpuItems(eager=run)
    # child: torch needs a warm-up off the capture stream before it may capture (CUDA graphs notes).
    # The warm-up really runs fn: what it writes is put back after, so a build writes nothing.
    before = {name: t.clone() for name, t in c.writes.items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        c.call()
    torch.cuda.current_stream().wait_stream(side)
    for name, t in c.writes.items():
        t.copy_(before[name])
    graph = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(graph):
        c.call()
    # the torch graph lives as long as eagle's: the child node is a clone, the memory torch's pool
    held = [*c.tensors().values(), graph]
    return GpuItems(lambda gpu: gpu.child(int(graph.raw_cuda_graph()), touches=held))


def vjp(c: TorchCall, primals: Mapping[str, Any], cotangents: Mapping[str, Any]) -> dict[str, Any]:
    """``{read name: gradient}``: torch's autograd through ``fn`` at the kept primals (eagle.diff's
    contract, host-synchronized)."""
    torch = _torch()
    if not c.reads:
        return {}
    inputs = {}
    for name, tensor in c.reads.items():
        value = torch.as_tensor(primals[name], device=tensor.device).detach().clone()
        inputs[name] = value.requires_grad_(value.is_floating_point() or value.is_complex())
    with torch.enable_grad():
        result = c.fn(*inputs.values())
    if result is None:
        raise TypeError(f"eagle_torch vjp: {_name(c.fn)} wrote its outputs itself (returned None), so "
                        "autograd cannot see them; return the outputs instead, or pass vjps= to eagle.diff")
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    pairs = [(r, torch.as_tensor(cotangents[name], device=r.device, dtype=r.dtype))
             for r, name in zip(results, c.writes, strict=True) if name in cotangents and r.requires_grad]
    wanted = [name for name, t in inputs.items() if t.requires_grad]
    grads = torch.autograd.grad([r for r, _ in pairs], [inputs[n] for n in wanted],
                                grad_outputs=[g for _, g in pairs], allow_unused=True) if pairs else []
    out = {name: torch.zeros_like(inputs[name]) for name in wanted}
    out.update({name: g for name, g in zip(wanted, grads, strict=True) if g is not None})
    return out
