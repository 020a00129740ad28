"""The ``torch`` node kind: a torch function (an ``nn.Module``, say) as one node of an eagle graph.

``eagle.frameworks.torch.node(fn, reads={"x": x}, writes={"y": y})`` (or
``eagle.node("torch", ...)``) calls ``fn(x)`` at every launch, under
``torch.no_grad()``, on tensors over the planes' own memory (a NumPy array
through ``torch.from_numpy``, a device array through its CUDA array
interface, a tensor as it is), and copies what it returns into ``y`` (``fn``
may also write its planes itself and return None).  What the node shares
with the JAX kind is :mod:`eagle.frameworks.models`.

On the GPU it takes one of the tiers of seed 001: ``child`` (the default:
torch captures ``fn`` once into a ``torch.cuda.CUDAGraph`` that the eagle
graph inserts as a child graph) or ``stream=S`` (``fn`` runs on the host at
every launch, its device work on the torch stream ``S``, which waits for
the part of the graph before; the part after waits for ``S``, and the host
never waits).

torch is imported only when a torch node is made, so the plugin loads, and
eagle works, where torch is not installed.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eagle.extend import BoxPicture, EagleImportError, EagleRuntimeError, EagleValueError, GpuItems, on_device
from eagle.frameworks.models import Framework, ModelCall, Pair
from eagle.frameworks.models import make as make_model
from eagle_torch._planes import plane_of


def _tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")  # a tensor exists only where torch was imported
    return torch is not None and isinstance(value, torch.Tensor)


class Torch(Framework):
    name = "torch"
    noun = "tensors"
    writes_in_place = True

    def load(self) -> Any:
        try:
            import torch
        except ImportError:
            raise EagleImportError(
                "eagle.frameworks.torch needs torch: pip install 'eagle-torch[torch]'"
            ) from None
        return torch

    def plane(self, value: Any) -> Any:
        return plane_of(value) if _tensor(value) else super().plane(value)

    def writes_itself(self, value: Any) -> bool:
        return _tensor(value)

    def address(self, value: Any) -> int | None:
        return value.data_ptr() if _tensor(value) else None

    def view(self, value: Any) -> Any:
        torch = self.load()
        if _tensor(value):
            return value
        if on_device(value):  # its CUDA array interface: the same memory
            return torch.as_tensor(value, device="cuda")
        with warnings.catch_warnings():  # a read-only plane: the version check refuses a write to it
            warnings.filterwarnings("ignore", "The given NumPy array is not writable", UserWarning)
            return torch.from_numpy(np.asarray(value))

    def store(self, value: Any, result: Any, keep: list[Any]) -> None:
        torch = self.load()
        with torch.no_grad():  # a plain store, into a tensor that requires grad too
            self.view(value).copy_(result)
        if result.is_cuda:  # the copy runs on the current stream later: torch frees result after it
            result.record_stream(torch.cuda.current_stream())

    def settled(self, result: Any) -> Any:
        return result.detach().clone()

    def version(self, array: Any) -> int | None:
        return array._version

    def call(self, fn: Callable[..., Any], args: Sequence[Any]) -> Any:
        with self.load().no_grad():  # the graph's writes are plain stores; gradients come from a vjp
            return fn(*args)

    def pullback(
        self, fn: Callable[..., Any], params: Any, args: Sequence[np.ndarray], pair: Pair, accumulate: Any
    ) -> list[Any]:
        torch = self.load()
        inputs = [torch.tensor(a) for a in args]  # copies: the primals eagle.diff kept stay as they were
        for t in inputs:
            t.requires_grad_(t.is_floating_point() or t.is_complex())
        with torch.enable_grad():
            pairs = [
                (out, torch.as_tensor(np.asarray(ct), dtype=out.dtype, device=out.device))
                for out, ct in pair(fn(*inputs))
                if ct is not None and out.requires_grad
            ]
        wanted = [t for t in inputs if t.requires_grad]
        outs, cts = [out for out, _ in pairs], [ct for _, ct in pairs]
        if accumulate is None:  # the inputs' gradients alone; the model's parameters are left alone
            found = torch.autograd.grad(outs, wanted, grad_outputs=cts, allow_unused=True) if pairs else ()
        else:  # torch's own way: .grad accumulated on the parameters (and on the inputs, read back)
            if pairs:
                torch.autograd.backward(
                    outs, cts, inputs=[*wanted, *(p for p in accumulate if p.requires_grad)]
                )
            found = [t.grad for t in wanted]
        grads = dict(zip(map(id, wanted), found, strict=False))
        return [
            None
            if not t.requires_grad
            else grads.get(id(t))
            if grads.get(id(t)) is not None
            else torch.zeros_like(t)
            for t in inputs
        ]

    def gpu(self, c: ModelCall) -> GpuItems:
        torch = self.load()
        host = [name for name, plane in c.planes.items() if not on_device(plane)]
        if host:
            raise EagleValueError(
                f"eagle.Graph.build: torch node {c.label} has CPU {self.noun} ({', '.join(host)}) "
                "in a GPU build; move them with .cuda() or eagle.copy nodes"
            )
        if not torch.cuda.is_available():
            raise EagleRuntimeError(
                f"eagle.Graph.build: torch node {c.label} has device planes, and this torch "
                "has no CUDA (torch.cuda.is_available() is False): install a CUDA build of torch"
            )
        if c.stream is not None:
            stream = (
                c.stream if isinstance(c.stream, torch.cuda.Stream) else torch.cuda.ExternalStream(c.stream)
            )

            def run() -> None:
                with torch.cuda.stream(stream):
                    c.run([])

            return GpuItems(eager=run, stream=int(stream.cuda_stream))
        return _child(c, torch)

    def picture(self, c: ModelCall) -> BoxPicture:
        return BoxPicture("python", "stream" if c.stream is not None else "child")


def _child(c: ModelCall, torch: Any) -> GpuItems:
    """torch captures ``fn`` once into a CUDA graph, inserted as a child node.  torch needs a
    warm-up off the capture stream before it may capture (CUDA graphs notes); the warm-up really
    runs ``fn``, so what it writes is put back after: a build writes nothing."""
    before = {name: TORCH.view(value).clone() for name, value in c.writes.items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        c.run([])
    torch.cuda.current_stream().wait_stream(side)
    for name, saved in before.items():
        TORCH.view(c.writes[name]).copy_(saved)
    graph = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(graph):
        c.run([])
    # the torch graph lives as long as eagle's: the child node is a clone, the memory torch's pool
    held = [*c.values().values(), graph]
    return GpuItems(lambda gpu: gpu.child(int(graph.raw_cuda_graph()), touches=held))


TORCH = Torch()


def make(
    fn: Callable[..., Any],
    reads: Any = None,
    writes: Any = None,
    *,
    stream: Any = None,
    api: str = "eagle.node('torch')",
) -> ModelCall:
    """The payload of ``eagle.node("torch", fn, reads=..., writes=..., stream=None)``."""
    return make_model(TORCH, fn, reads, writes, api=api, stream=stream)
