"""eagle.frameworks.jax: a JAX step as one node of an eagle graph, and its vjp (eagle-jax).

>>> import jax.numpy as jnp
>>> import eagle.frameworks.jax as ejax
>>> x, y = np.linspace(-1.0, 1.0, 4, dtype=np.float32), np.zeros(4, np.float32)
>>> g = eagle.Graph().add_node(ejax.node(jnp.tanh, reads={"x": x}, writes={"y": y}), name="model")
>>> g = g.build().launch()
>>> bool(np.array_equal(y, jnp.tanh(x)))
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from eagle_jax._node import JAX, make

from eagle.extend import EagleRuntimeError, Node, recorded
from eagle.frameworks.models import helper_vjp

__all__ = ["Vjp", "node", "vjp"]


def node(
    fn: Callable[..., Any],
    reads: Mapping[str, Any] | None = None,
    writes: Mapping[str, Any] | None = None,
    *,
    params: Any = None,
    stream: Any = None,
) -> Node:
    """A node that calls ``fn(*reads)`` (``fn(params, *reads)`` with ``params=``) at every launch
    and puts its results into ``writes``.

    ``fn`` (a function of JAX arrays, jitted or not) gets one array per read plane, in the order
    declared, over the plane's own memory (``jax.dlpack.from_dlpack``: zero-copy where XLA may
    alias the memory, on the CPU a C-contiguous, 64-byte aligned, writable plane; JAX copies
    any other).  It returns one array per written plane, in order, each of its plane's shape
    and dtype (eagle neither casts nor broadcasts: without ``jax_enable_x64`` JAX computes in
    float32, so give it float32 planes or turn 64-bit mode on), which is copied into the plane.
    ``params``, a pytree, is passed as it is at each launch: its NumPy leaves are viewed, so an
    optimizer's in-place step is the refresh.

    On the GPU it is a ``stream=`` node (seed 001): ``fn`` is called at every launch, JAX's work
    waits on the device for the graph before it, its results are copied into the planes on
    ``stream`` (a CuPy or torch stream; by default one of the node's own), which the graph after
    it waits for, and eagle keeps the results alive until those copies ran.  On the CPU it is a
    call in graph order.

    >>> import jax.numpy as jnp
    >>> v, f = np.array([1.0, -2.0], np.float32), np.zeros(2, np.float32)
    >>> w = {"c": np.array([0.5], np.float32)}
    >>> import eagle.frameworks.jax as ejax
    >>> drag = lambda w, v: -w["c"] * v * jnp.abs(v)
    >>> g = eagle.Graph().add_node(ejax.node(drag, reads={"v": v}, writes={"f": f}, params=w), name="drag")
    >>> g = g.build().launch()
    >>> f
    array([-0.5,  2. ], dtype=float32)
    """
    return recorded(
        Node("jax", make(fn, reads, writes, params=params, stream=stream, api="eagle.frameworks.jax.node"))
    )


class Vjp:
    """``vjps={"model": vjp(fn, params)}``: a JAX step's derivative for :func:`eagle.diff.reverse`.

    Called as ``vjp(primals, cotangents) -> {read name: gradient}``, it runs ``jax.vjp`` through
    ``fn`` at the primals eagle.diff kept (in the order the node declared its reads) and the
    parameters as they are, pulling back the cotangents of its float results.  The parameters'
    gradient, a pytree shaped like ``params``, is summed over every call (once per call of the
    node in the run) and handed back by :meth:`take`.

    >>> import eagle.frameworks.jax as ejax
    >>> w = {"c": np.array([2.0], np.float32)}
    >>> back = ejax.vjp(lambda w, x: w["c"] * x * x, w)     # d/dx = 2 c x, d/dc = x * x
    >>> np.asarray(back({"x": np.array([3.0], np.float32)}, {"y": np.array([1.0], np.float32)})["x"])
    array([12.], dtype=float32)
    >>> np.asarray(back.take()["c"])
    array([9.], dtype=float32)
    """

    def __init__(self, fn: Callable[..., Any], params: Any) -> None:
        self._params = params
        self._sum: Any = None
        self._call = helper_vjp(JAX, "eagle.frameworks.jax.vjp", fn, params, self._add)

    def __call__(self, primals: Mapping[str, Any], cotangents: Mapping[str, Any]) -> dict[str, Any]:
        return self._call(primals, cotangents)

    def _add(self, grads: Any) -> None:
        tree = JAX.load().tree_util
        self._sum = grads if self._sum is None else tree.tree_map(lambda a, b: a + b, self._sum, grads)

    def take(self) -> Any:
        """The parameters' gradient summed since the last ``take``, as JAX arrays in a pytree
        shaped like ``params``; the sum starts again.  Refused when no reverse pass called this vjp
        since (no ``wrt`` name reached the node's reads, so eagle.diff did not reverse it): eagle
        cannot tell a zero gradient from a node it was not asked to differentiate.

        >>> import jax.numpy as jnp
        >>> import eagle.frameworks.jax as ejax
        >>> w = {"c": np.array([0.5], np.float32)}
        >>> back = ejax.vjp(lambda w, v: w["c"] * v, w)
        >>> np.asarray(back({"v": np.array([3.0], np.float32)}, {"f": np.array([1.0], np.float32)})["v"])
        array([0.5], dtype=float32)
        >>> np.asarray(back.take()["c"])
        array([3.], dtype=float32)
        """
        if self._sum is None:
            raise EagleRuntimeError(
                "eagle.frameworks.jax.vjp: take(): no reverse pass called this vjp since the "
                "last take, so the parameters have no gradient: run eagle.diff.reverse with "
                "vjps={label: this vjp} and a wrt= name the node's reads depend on"
            )
        found, self._sum = self._sum, None
        return found


def vjp(fn: Callable[..., Any], params: Any = None) -> Vjp:
    """The derivative of the node ``node(fn, ..., params=params)`` for ``vjps=`` (:class:`Vjp`).

    >>> import jax.numpy as jnp
    >>> import eagle.frameworks.jax as ejax
    >>> back = ejax.vjp(jnp.sin)
    >>> grads = back({"x": np.array([0.0], np.float32)}, {"y": np.array([2.0], np.float32)})
    >>> np.asarray(grads["x"])
    array([2.], dtype=float32)
    """
    return Vjp(fn, params)
