"""Listing plugins, or using another plugin's node, never imports mpi4py (importing it starts MPI)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")

LIST = """
import sys, numpy as np, eagle
names = [p.name for p in eagle.plugins()]
assert "eagle-mpi" in names, names
g = eagle.Graph().add_node(eagle.reduce(np.arange(4.0), np.zeros(1)), name="total").build()
g.launch()
print(sorted(m for m in ("mpi4py", "mpi4py.MPI") if m in sys.modules))
"""


def test_listing_plugins_leaves_mpi4py_unimported():
    out = subprocess.run([sys.executable, "-c", LIST], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_mpicomm_is_still_eagle_mpis():
    import eagle_mpi
    from eagle_mpi.comm import MPIComm

    assert eagle_mpi.MPIComm is MPIComm
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        eagle_mpi.nope  # noqa: B018
