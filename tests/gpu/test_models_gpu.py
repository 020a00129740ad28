"""Model nodes (eagle.frameworks.torch, eagle.frameworks.jax) in a GPU build, on a GPU or the driver
emulation.  The CPU builds of torch and JAX these tests run with cannot touch device memory, so what
runs here is the lowering's refusals; the stream tiers themselves need a GPU with CUDA builds of the
frameworks (and CuPy for JAX), where the last test runs."""

from __future__ import annotations

import numpy as np
import pytest

import eagle


def test_a_jax_node_needs_planes_with_dlpack_streams(gpu):
    """eagle's own device arrays have no DLPack: the stream node is refused at build, naming what it
    takes."""
    jnp = pytest.importorskip("jax.numpy")
    ejax = pytest.importorskip("eagle.frameworks.jax")
    x, y = gpu.zeros(8), gpu.zeros(8)
    g = eagle.Graph().add_node(ejax.node(jnp.sin, reads={"x": x}, writes={"y": y}), name="m")
    with pytest.raises(
        TypeError,
        match=r"^eagle\.Graph\.build: jax node sin exchanges its planes with JAX by "
        "DLPack with streams, which CuPy arrays and torch CUDA tensors offer",
    ):
        g.build()


def test_a_torch_node_needs_a_cuda_torch(gpu):
    torch = pytest.importorskip("torch")
    etorch = pytest.importorskip("eagle.frameworks.torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA: the stream tier runs in test_stream_tiers_on_a_gpu")
    x, y = gpu.zeros(8), gpu.zeros(8)
    g = eagle.Graph().add_node(etorch.node(torch.neg, reads={"x": x}, writes={"y": y}), name="m")
    with pytest.raises(
        RuntimeError,
        match=r"^eagle\.Graph\.build: torch node neg has device planes, and this "
        r"torch has no CUDA",
    ):
        g.build()


def test_stream_tiers_on_a_gpu():
    """On a GPU with CUDA torch (and CuPy for JAX): each model node runs as a stream node between two
    CUDA graphs, its results in the planes after the launch."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA torch")
    etorch = pytest.importorskip("eagle.frameworks.torch")
    x = torch.arange(1024.0, device="cuda")
    y = torch.zeros_like(x)
    g = eagle.Graph().add_node(
        etorch.node(torch.sqrt, reads={"x": x}, writes={"y": y}, stream=torch.cuda.Stream())
    )
    g.build().launch()
    assert g.schedule == ["eager_stream"] and torch.equal(y, torch.sqrt(x))
    cupy = pytest.importorskip("cupy")
    ejax = pytest.importorskip("eagle.frameworks.jax")
    jnp = pytest.importorskip("jax.numpy")
    a = cupy.arange(1024, dtype=cupy.float32)
    b = cupy.zeros_like(a)
    eagle.Graph().add_node(ejax.node(jnp.sqrt, reads={"a": a}, writes={"b": b})).build().launch(3)
    assert np.array_equal(cupy.asnumpy(b), np.sqrt(np.arange(1024, dtype=np.float32)))
