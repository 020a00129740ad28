"""python -m eagle.demo: the seed's graph with everything, built, replayed, checked, timed and drawn."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")

import eagle
from eagle import demo

HAS_DIFF = importlib.util.find_spec("eagle.diff") is not None and hasattr(eagle.diff, "reverse")


def test_demo_prints_the_picture_the_result_and_the_timing(tmp_path, capsys):
    png = tmp_path / "graph.png"
    demo.main(["--png", str(png), "--sizes", "8,4096", "--seconds", "0"])
    out = capsys.readouterr().out
    assert "eagle.Graph 10 nodes · 1 group · backend: cpu" in out
    # the loop's body is one fused run (issue 19): its frame inside the loop's, on the row below
    lines = out.splitlines()
    (row,) = [k for k, line in enumerate(lines) if "╭─── repeat ≤ 50 ───╮" in line]
    loop, fused = lines[row].index("╭─── repeat"), lines[row + 1].find("╭─── fused 4 ───╮")
    assert fused > loop and lines[row + 1][loop] == "│", lines[row:row + 2]
    assert "the same bits as NumPy eager: True" in out
    assert "  s = [  -80.  -254." in out
    assert "       8  " in out and "   4,096  " in out
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.read_bytes().startswith(b"\x89PNG")
    else:
        assert "matplotlib is not installed" in out
    if HAS_DIFF:
        # the demo's flag starts at 1, so the loop turns once (the page's cell had it at 0); central
        # differences give these numbers too
        assert ("d(sum(result) + sum(y))/dx = [  -61.5   -213.25  -507.5   -990.75 -1709.5  -2710.25 "
                "-4039.5  -5743.75]") in out
    else:
        assert "no eagle.diff.reverse yet" in out


def test_the_graph_and_numpy_agree_bit_for_bit_on_other_values():
    x = np.random.default_rng(0).uniform(-3.0, 3.0, 5000)  # more than one block of samples
    flag, y = np.ones(1, np.uint32), np.zeros(x.size)
    flag_np, y_np = np.ones(1, np.uint32), np.zeros(x.size)
    s = demo.whole(x, flag, y)()
    assert np.array_equal(s, demo.numpy_whole(x, flag_np, y_np))
    assert np.array_equal(y, y_np) and flag[0] == flag_np[0] == 0


@pytest.mark.skipif(not HAS_DIFF, reason="needs eagle.diff.reverse")
def test_demo_gradient_is_the_seeds():
    x, flag, y = np.arange(8.0), np.zeros(1, np.uint32), np.zeros(8)  # as the page's earlier cells leave it
    gr = demo.whole(x, flag, y, record=True)
    gr()
    grads = eagle.diff.reverse(gr.record, {"result": np.ones(8), "y": np.ones(8)}, wrt=("x",))
    np.testing.assert_array_equal(grads["x"], [2.5, 2.75, 4.5, 9.25, 18.5, 33.75, 56.5, 88.25])


def test_python_m_eagle_demo_runs(tmp_path):
    done = subprocess.run([sys.executable, "-m", "eagle.demo", "--no-png", "--sizes", "8", "--seconds", "0"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "the same bits as NumPy eager: True" in done.stdout
    assert not list(tmp_path.iterdir())  # --no-png writes nothing
