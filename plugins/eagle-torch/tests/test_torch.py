"""eagle-torch through its entry point: ``eagle.node("torch", fn, reads=..., writes=...)``.

No test imports eagle_torch.  Skipped where torch is not installed (the nox
``torch`` session installs it).
"""

from __future__ import annotations

import importlib.metadata
import sys

import numpy as np
import pytest

import eagle
from eagle.graph import node_kind

torch = pytest.importorskip("torch")
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def test_found_through_its_entry_point():
    """eagle.plugins() lists eagle-torch with its installed version and its kind."""
    (info,) = [p for p in eagle.plugins() if p.name == "eagle-torch"]
    assert info.kinds == ("torch",) and info.version == importlib.metadata.version("eagle-torch")
    kind = node_kind("torch")
    assert kind.plugin == "eagle-torch" and kind.lower_gpu is not None and kind.vjp is not None


def test_a_chain_replays_like_torch_eager(threads):
    """Two torch nodes and an opaque numpy node: edges from the tensors, replay == eager, every launch."""
    x = torch.linspace(-2, 2, 5000, dtype=torch.float64)
    y, z = torch.empty_like(x), torch.empty_like(x)
    g = eagle.Graph()
    g.add_node(eagle.node("torch", torch.tanh, reads={"x": x}, writes={"y": y}), name="tanh")
    g.add_node(eagle.node("torch", lambda y: (y * 3).exp(), reads={"y": y}, writes={"z": z}), name="exp")
    zn = z.numpy()  # the same memory, seen by NumPy
    g.add_node(eagle.opaque(lambda: np.add(zn, 1.0, out=zn), writes={"z": zn}), name="plus")
    assert [(e.src, e.dst, e.plane, e.kind) for e in g.edges()] == [
        (0, 1, "y", "RAW"), (1, 2, "z", "WAW")]
    g.build().launch(2)
    assert torch.equal(z, (torch.tanh(x) * 3).exp() + 1.0)


def test_views_of_one_storage_are_ordered_by_their_bytes():
    """Two halves of one storage do not conflict; overlapping views do, and the fork refuses the race."""
    base = torch.zeros(2, 1000)
    left, right = base[0], base[1]
    both = base[:, 500]  # a strided column across both rows
    fill = eagle.node("torch", lambda: None, writes={"left": left})
    other = eagle.node("torch", lambda: None, writes={"right": right})
    g = eagle.Graph().add_group([fill, other])
    assert g.edges() == []
    g.build()  # disjoint halves: no race
    strided = eagle.node("torch", lambda: None, writes={"col": both})
    fill2 = eagle.node("torch", lambda: None, writes={"left": left})
    with pytest.raises(eagle.SiblingRace):
        eagle.Graph().add_group([fill2, strided]).build()


def test_written_in_place_several_outputs_and_odd_dtypes():
    """fn may write its outputs itself (None); a tuple fills several planes; bfloat16 and tensors that
    require grad are planes like any other."""
    w = torch.ones(64, requires_grad=True)
    lo, hi = torch.empty(64, dtype=torch.bfloat16), torch.empty(64, dtype=torch.bfloat16)
    acc = torch.zeros(64)

    def split(w):
        return (w - 0.5).to(torch.bfloat16), (w + 0.5).to(torch.bfloat16)

    g = eagle.Graph()
    g.add_node(eagle.node("torch", split, reads={"w": w}, writes={"lo": lo, "hi": hi}), name="split")
    def accumulate(lo, hi, acc):
        acc.add_(lo.float() + hi.float())  # writes its plane itself: returns None

    g.add_node(eagle.node("torch", accumulate, reads={"lo": lo, "hi": hi, "acc": acc}, writes={"acc": acc}),
               name="acc")
    assert {(e.src, e.dst, e.plane) for e in g.edges()} == {(0, 1, "lo"), (0, 1, "hi")}
    g.build().launch(3)
    assert torch.equal(acc, torch.full((64,), 6.0))
    assert w.requires_grad and w.grad is None  # the graph ran without autograd


def test_a_reassigned_tensor_is_refused_by_name():
    """After param.data = ... the graph would use freed memory: the launch is refused, naming the tensor."""
    w, y = torch.ones(8), torch.empty(8)
    g = eagle.Graph().add_node(eagle.node("torch", torch.neg, reads={"w": w}, writes={"y": y})).build()
    g.launch()
    w.data = torch.full((8,), 2.0)
    with pytest.raises(RuntimeError, match=r"^eagle\.node\('torch'\): tensor 'w' no longer lives where the "
                                           "graph was built"):
        g.launch()


def test_refusals():
    """Bad declarations are refused at eagle.node; a wrong number of results at launch."""
    x = torch.ones(4)
    with pytest.raises(ValueError, match=r"^eagle\.node\('torch'\): .* writes no plane"):
        eagle.node("torch", torch.neg, reads={"x": x})
    with pytest.raises(TypeError, match=r"reads\['x'\] is a list, which is no plane"):
        eagle.node("torch", torch.neg, reads={"x": [1.0, 2.0]}, writes={"y": x})
    with pytest.raises(TypeError, match="declare reads as a dict"):
        eagle.node("torch", torch.neg, reads=[x], writes={"y": x})
    with pytest.raises(ValueError, match="plane name 'x' is read as one tensor and written as another"):
        eagle.node("torch", torch.neg, reads={"x": x}, writes={"x": torch.ones(4)})
    y = torch.empty(4)
    g = eagle.Graph().add_node(eagle.node("torch", lambda x: (x, x), reads={"x": x}, writes={"y": y}))
    with pytest.raises(ValueError, match="returned 2 tensors for 1 written planes"):
        g.build().launch()


def test_lower_gpu_refuses_host_tensors():
    """A GPU lowering of CPU tensors names them and says to move them."""
    node = eagle.node("torch", torch.neg, reads={"x": torch.ones(4)}, writes={"y": torch.ones(4)})
    with pytest.raises(ValueError, match=r"has CPU tensors \(x, y\) in a GPU build"):
        node_kind("torch").lower_gpu(node.payload)


def test_vjp_is_autograd_at_the_primals():
    """The kind's vjp: torch autograd through fn at the kept primals, against finite differences."""
    rng = np.random.default_rng(1)
    a0, b0 = torch.tensor(rng.standard_normal(50)), torch.tensor(rng.standard_normal(50))
    y, s = torch.empty(50, dtype=torch.float64), torch.empty(1, dtype=torch.float64)

    def f(a, b):
        return torch.sin(a) * b, (a * a).sum().reshape(1)

    node = eagle.node("torch", f, reads={"a": a0.clone(), "b": b0.clone()}, writes={"y": y, "s": s})
    gy, gs = torch.tensor(rng.standard_normal(50)), torch.tensor([0.7], dtype=torch.float64)
    grads = node_kind("torch").vjp(node.payload, {"a": a0, "b": b0}, {"y": gy, "s": gs})
    da, db = torch.tensor(rng.standard_normal(50)), torch.tensor(rng.standard_normal(50))

    def loss(a, b):
        yy, ss = f(a, b)
        return float(gy @ yy + gs @ ss)

    h = 1e-6
    numeric = (loss(a0 + h * da, b0 + h * db) - loss(a0 - h * da, b0 - h * db)) / (2 * h)
    assert float(grads["a"] @ da + grads["b"] @ db) == pytest.approx(numeric, rel=1e-6)


@cuda
def test_gpu_tiers_run_in_a_cuda_graph():
    """On a GPU: the default tier captures fn into a torch CUDA graph, a child node of eagle's;
    stream= runs it at every launch between two CUDA graphs, on that stream."""
    x = torch.arange(1024.0, device="cuda")
    y = torch.empty_like(x)
    y.zero_()
    g = eagle.Graph().add_node(eagle.node("torch", torch.sqrt, reads={"x": x}, writes={"y": y})).build()
    assert g.backend == "gpu" and not y.any()  # the build's warm-up run left y as it was
    g.launch()
    assert torch.equal(y, torch.sqrt(x))
    stream = torch.cuda.Stream()
    node = eagle.node("torch", torch.neg, reads={"x": x}, writes={"y": y}, stream=stream)
    eagle.Graph().add_node(node).build().launch()
    assert torch.equal(y, -x)


def test_listing_plugins_leaves_torch_unimported():
    """eagle finds the plugins without importing torch: it loads when its node is used."""
    import subprocess

    script = ('import sys, eagle; assert "eagle-torch" in [p.name for p in eagle.plugins()]; '
              'print("torch" in sys.modules)')
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
