"""Builders the eagle-dask tests map over a cluster.

A module of their own: the workers import a builder by name, and a test
module (pytest's importlib mode) is not importable there.  The tests send
this file with ``client.upload_file`` and import it under the same name.
"""

import numpy as np

import eagle
import hawk
from eagle.graph import opaque
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def drift(x: Scalar, v: Scalar, dt: Param) -> Scalar:
    return x + dt * v


@hawk.kernel
def damp(v: Scalar, c: Param) -> Scalar:
    return v * c


@hawk.kernel
def spring(x: Scalar, v: Scalar, k: Param) -> Scalar:
    return v - k * hm.sin(x)


@eagle.Graph.builder
def motion(x, v, dt):
    g = eagle.Graph()
    for _ in range(3):  # a Python loop: unrolled
        v = damp(spring(x, v, 0.7), 0.999)
        x = drift(x, v, dt)
    g.result = {"x": x, "v": v, "pair": (v, [x])}
    return g


@eagle.Graph.builder
def choose(x, flag):
    g = eagle.Graph()
    if flag:  # a device condition: a one-cell array, the same for every sample
        x = damp(x, 2.0)
    else:
        x = damp(x, -1.0)
    g.result = x
    return g


@hawk.kernel
def below(x: Scalar, lim: Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(x < lim))  # reduces across samples


@eagle.Graph.builder
def counting(x, flag):
    g = eagle.Graph()
    below(x, 0.5, flag)
    g.result = damp(x, 2.0)
    return g


def _refuse(message):
    raise RuntimeError(message)


@eagle.Graph.builder
def failing(x, message):
    g = eagle.Graph()
    g.add_node(opaque(lambda: _refuse(message)), name="check")  # your Python, run at every replay
    g.result = damp(x, 2.0)
    return g


def batch(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)
