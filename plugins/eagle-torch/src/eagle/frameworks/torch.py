"""eagle.frameworks.torch: a torch model as one node of an eagle graph, and its vjp (eagle-torch).

>>> import torch
>>> import eagle.frameworks.torch as etorch
>>> x, y = np.linspace(-1.0, 1.0, 4), np.zeros(4)
>>> g = eagle.Graph().add_node(etorch.node(torch.tanh, reads={"x": x}, writes={"y": y}), name="model")
>>> g = g.build().launch()
>>> bool(np.array_equal(y, torch.tanh(torch.from_numpy(x)).numpy()))
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from eagle_torch._node import TORCH, make

from eagle.extend import Node, recorded
from eagle.frameworks.models import helper_vjp

__all__ = ["node", "vjp"]


def node(
    fn: Callable[..., Any],
    reads: Mapping[str, Any] | None = None,
    writes: Mapping[str, Any] | None = None,
    *,
    stream: Any = None,
) -> Node:
    """A node that calls ``fn(*reads)`` at every launch and puts its results into ``writes``.

    ``fn`` (an ``nn.Module``, or any function of tensors) gets one tensor per read plane, in the
    order declared, each over the plane's own memory (a NumPy array through ``torch.from_numpy``,
    a device array through its CUDA array interface, a tensor as it is), and runs under
    ``torch.no_grad()``.  It returns one tensor per written plane, in order, each of its plane's
    shape and dtype (eagle neither casts nor broadcasts), which is copied into the plane; or it
    writes its planes itself and returns None.  A plane it writes but declared only in ``reads``
    is refused after the call, by name.

    On the GPU the node is a child graph that torch captured from ``fn`` once, or, with
    ``stream=S`` (a ``torch.cuda.Stream``), ``fn`` called at every launch with its device work on
    ``S``, ordered by events; on the CPU it is a call in graph order.

    >>> import torch
    >>> import eagle.frameworks.torch as etorch
    >>> v, f = np.array([1.0, -2.0]), np.zeros(2)
    >>> drag = lambda v: -0.5 * v * v.abs()
    >>> g = eagle.Graph().add_node(etorch.node(drag, reads={"v": v}, writes={"f": f}), name="drag")
    >>> g = g.build().launch()
    >>> f
    array([-0.5,  2. ])
    """
    return recorded(Node("torch", make(fn, reads, writes, stream=stream, api="eagle.frameworks.torch.node")))


def vjp(
    model: Callable[..., Any], params: Iterable[Any] | None = None
) -> Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]:
    """``vjps={"model": vjp(model)}``: the model's derivative for :func:`eagle.diff.reverse`.

    The returned ``vjp(primals, cotangents) -> {read name: gradient tensor}`` runs ``model`` again on
    the primals eagle.diff kept (in the order the node declared its reads) and back-propagates
    the cotangents of its float results with ``torch.autograd.backward``, so the gradients of
    ``params`` (default: ``model.parameters()``) accumulate in their ``.grad``, as torch's own
    backward would: once per call of the node in the run, until you zero them.  The node must
    give each output a plane of its own (not one it also reads).

    >>> import torch
    >>> import eagle.frameworks.torch as etorch
    >>> lin = torch.nn.Linear(1, 1, dtype=torch.float64)
    >>> back = etorch.vjp(lin)
    >>> grads = back({"x": np.array([[2.0]])}, {"y": np.array([[1.0]])})
    >>> float(lin.weight.grad[0, 0]), bool(grads["x"] == lin.weight)   # d/dW = x, d/dx = W
    (2.0, True)
    """
    found = (
        list(model.parameters()) if params is None and hasattr(model, "parameters") else list(params or ())
    )
    return helper_vjp(TORCH, "eagle.frameworks.torch.vjp", model, None, found)
