"""The ``jax`` node kind: a JAX step as one node of an eagle graph.

``eagle.frameworks.jax.node(fn, reads={"x": x}, writes={"y": y})`` calls
``fn(x)`` (``fn(params, x)`` with ``params=``) at every launch on JAX arrays
over the planes' memory (``jax.dlpack.from_dlpack``: zero-copy where XLA may
alias it, a C-contiguous, 64-byte aligned, writable plane on the CPU; JAX
copies any other) and puts what it returns into ``y`` through a zero-copy
NumPy view of JAX's result.  What it shares with the torch kind is
:mod:`eagle.frameworks.models`.

On the GPU the node is always of the ``stream`` tier (seed 001): ``fn`` is
called on the host at every launch and exchanges the planes with JAX by
DLPack with streams, so that JAX's work waits on the device for the part of
the graph before, and the copies of its results go on the node's stream
(``stream=``, else one made for it), which the part after waits for; the
results are kept alive until those copies ran.  The planes are CuPy arrays
or torch CUDA tensors, whose library makes the copies.

JAX is imported only when a node is made, so the plugin loads, and eagle
works, where JAX is not installed.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.extend import EagleImportError, EagleTypeError, EagleValueError, GpuItems, is_plane, on_device
from eagle.frameworks.models import Framework, ModelCall, Pair, spec
from eagle.frameworks.models import make as make_model


class Jax(Framework):
    name = "jax"

    def load(self) -> Any:
        try:
            import jax
            import jax.dlpack
        except ImportError:
            raise EagleImportError("eagle.frameworks.jax needs JAX: pip install 'eagle-jax[jax]'") from None
        return jax

    def view(self, value: Any) -> Any:
        jax = self.load()
        if on_device(value):  # the producer's __dlpack__(stream=JAX's) orders JAX after it
            return jax.dlpack.from_dlpack(value)
        host = np.asarray(value)
        try:
            return jax.dlpack.from_dlpack(host)  # zero-copy where XLA may alias it; else JAX copies
        except (BufferError, RuntimeError, ValueError, TypeError):  # read-only or strided: DLPack refuses
            return jax.numpy.asarray(host)

    def settled(self, result: Any) -> Any:
        # JAX runs asynchronously: the copy must have read the plane before a store writes it
        return self.load().block_until_ready(result.copy())

    def store(self, value: Any, result: Any, keep: list[Any]) -> None:
        if on_device(value):
            _DEVICE.store(value, result, keep)
        else:  # np.from_dlpack: JAX's result as it is (it waits for it), one copy into the plane
            np.copyto(np.asarray(value), np.from_dlpack(result))

    def hint(self, found: Any) -> str:
        if found is not None and found[1].endswith("32") and not self.load().config.jax_enable_x64:
            return (
                " (JAX computes in 32 bits unless 64-bit mode is on: "
                "jax.config.update('jax_enable_x64', True))"
            )
        return ""

    def params_view(self, params: Any) -> Any:
        """The parameters as JAX arrays: a NumPy leaf (updated in place by an optimizer) viewed as
        it is now, a JAX array as it is."""
        return self.load().tree_util.tree_map(
            lambda leaf: self.view(leaf) if is_plane(leaf) else leaf, params
        )

    def pullback(
        self, fn: Callable[..., Any], params: Any, args: Sequence[np.ndarray], pair: Pair, accumulate: Any
    ) -> list[Any]:
        jax = self.load()
        jnp = jax.numpy
        xs = tuple(jnp.asarray(a) for a in args)
        for a, x in zip(args, xs, strict=True):
            if x.dtype != a.dtype:  # 32-bit mode turned on between the run and its reverse
                raise EagleValueError(
                    f"eagle.frameworks.jax.vjp: JAX reads a {a.dtype} primal as {x.dtype}"
                    f"{self.hint(spec(x))}; differentiate in the mode the node ran in"
                )
        floats = tuple(k for k, x in enumerate(xs) if jnp.issubdtype(x.dtype, jnp.floating))
        p = None if params is None else self.params_view(params)
        lead = () if params is None else (p,)
        cts = tuple(None if ct is None else jnp.asarray(ct) for _, ct in pair(fn(*lead, *xs)))
        found = _pullback(fn, floats, params is not None)(p, xs, cts)
        if accumulate is not None and params is not None:
            accumulate(found[0])
        moved = dict(zip(floats, found[1:], strict=True))
        return [moved.get(k) for k in range(len(xs))]

    def gpu(self, c: ModelCall) -> GpuItems:
        host = [name for name, plane in c.planes.items() if not on_device(plane)]
        if host:
            raise EagleValueError(
                f"eagle.Graph.build: jax node {c.label} has host planes ({', '.join(host)}) in "
                "a GPU build; give it device arrays, or eagle.copy nodes between"
            )
        return _DEVICE.stream_node(c)


@functools.lru_cache(maxsize=64)
def _pullback(fn: Callable[..., Any], floats: tuple[int, ...], has_params: bool) -> Callable[..., Any]:
    """``(params, args, cotangents) -> (params' gradient, each float arg's)`` by ``jax.vjp``; jitted
    when ``fn`` is (one compiled pullback per shape, as ``fn``'s own jit), eager when it is not."""
    jax = sys.modules["jax"]
    jnp = jax.numpy

    def pullback(p: Any, xs: tuple[Any, ...], cts: tuple[Any, ...]) -> Any:
        def f(p: Any, *moving: Any) -> Any:
            full = list(xs)
            for k, x in zip(floats, moving, strict=True):
                full[k] = x
            return fn(*((p,) if has_params else ()), *full)

        outs, back = jax.vjp(f, p, *(xs[k] for k in floats))
        flat = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        full = [
            _zero(out) if ct is None else jnp.asarray(ct, out.dtype)
            for out, ct in zip(flat, cts, strict=True)
        ]
        return back(type(outs)(full) if isinstance(outs, (tuple, list)) else full[0])

    return jax.jit(pullback) if isinstance(fn, _jitted(jax)) else pullback


def _jitted(jax: Any) -> type:
    """The type of ``jax.jit(f)``."""
    return type(jax.jit(abs))


def _zero(out: Any) -> Any:
    """The cotangent of an output nothing downstream needs (float0 for an integer one)."""
    jax = sys.modules["jax"]
    if jax.numpy.issubdtype(out.dtype, jax.numpy.inexact):
        return jax.numpy.zeros_like(out)
    return np.zeros(out.shape, dtype=jax.dtypes.float0)


@dataclass
class _Pending:
    """What a launch's device copies read, held until the event after them completed."""

    event: Any
    held: list[Any]


class _Device:
    """The GPU side: the planes' own library (CuPy, or torch for CUDA tensors) makes the stream
    context, the copies and the events."""

    def library(self, planes: Sequence[Any], label: str) -> Any:
        for name in ("cupy", "torch"):
            module = sys.modules.get(name)
            array = getattr(module, "ndarray" if name == "cupy" else "Tensor", None)
            if array is not None and all(isinstance(p, array) for p in planes):
                return module
        raise EagleTypeError(
            f"eagle.Graph.build: jax node {label} exchanges its planes with JAX by DLPack with "
            "streams, which CuPy arrays and torch CUDA tensors offer; give it planes of one of "
            "the two"
        )

    def store(self, value: Any, result: Any, keep: list[Any]) -> None:
        lib = self.library([value], "")
        if lib.__name__ == "cupy":
            source = lib.from_dlpack(result)  # JAX makes the current stream wait for the result
            value[...] = source
        else:
            source = lib.from_dlpack(result)
            value.copy_(source)
        keep += [result, source]

    def stream_node(self, c: ModelCall) -> GpuItems:
        lib = self.library(list(c.values().values()), c.label)
        cupy = lib.__name__ == "cupy"
        if isinstance(c.stream, int):  # a CUstream handle
            stream = lib.cuda.ExternalStream(c.stream)
        elif c.stream is not None:
            stream = c.stream
        else:  # the node's own
            stream = lib.cuda.Stream(non_blocking=True) if cupy else lib.cuda.Stream()
        handle = int(stream.ptr if cupy else stream.cuda_stream)
        pending: list[_Pending] = []

        def run() -> None:
            pending[:] = [p for p in pending if not (p.event.done if cupy else p.event.query())]
            keep: list[Any] = []
            current = stream if cupy else lib.cuda.stream(stream)
            with current:  # the planes' library's current stream: S
                c.run(keep)
                event = lib.cuda.Event()
                event.record(stream)
            pending.append(_Pending(event, keep))

        return GpuItems(eager=run, stream=handle)


_DEVICE = _Device()
JAX = Jax()


def make(
    fn: Callable[..., Any],
    reads: Any = None,
    writes: Any = None,
    *,
    params: Any = None,
    stream: Any = None,
    api: str = "eagle.node('jax')",
) -> ModelCall:
    """The payload of ``eagle.node("jax", fn, reads=..., writes=..., params=None, stream=None)``."""
    return make_model(JAX, fn, reads, writes, api=api, params=params, stream=stream)
