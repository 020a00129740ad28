"""eagle-mpi under mpiexec: ranks.py run on 1, 2 and 3 ranks against the one-process run.

Every multi-process run is bounded by a timeout: a rank that waits forever
fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

RANKS = Path(__file__).with_name("ranks.py")
HERE_FIRST = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the venv's MPI
MPIEXEC = shutil.which("mpiexec", path=HERE_FIRST)
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec: pip install mpich (or a system MPI)")
N = 5000  # 5 blocks: 3 ranks hold 1, 2 and 2 blocks, the last one ragged


def mpiexec(ranks: int, mode: str, n: int = N, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, str(RANKS), mode, str(n)],
                          capture_output=True, text=True, timeout=timeout)


def lines(out: str) -> dict[int, str]:
    """Each rank's line, by rank."""
    found = {}
    for line in out.splitlines():
        rank, sep, rest = line.partition(": ")
        if sep and rank.isdigit():
            found[int(rank)] = rest
    return found


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_every_output_trip_count_and_gradient_matches_one_process(ranks):
    run = mpiexec(ranks, "same")
    assert run.returncode == 0, run.stdout + run.stderr
    said = lines(run.stdout)
    assert sorted(said) == list(range(ranks))
    assert len({text.split(" turns=")[1] for text in said.values()}) == 1  # one trip count, one total


def test_a_rank_that_fails_while_recording_stops_every_rank_build():
    run = mpiexec(2, "record")
    assert run.returncode == 0, run.stdout + run.stderr
    said = lines(run.stdout)
    assert said[1] == "failed ZeroDivisionError: rank 1 cannot record"
    assert said[0] == ("failed eagle.Graph.build: rank 1 of 2 failed to build the graph, so every rank "
                       "stops: ZeroDivisionError: rank 1 cannot record")


def test_ranks_that_record_different_graphs_all_refuse_to_build():
    run = mpiexec(3, "diverge")
    assert run.returncode == 0, run.stdout + run.stderr
    said = lines(run.stdout)
    assert sorted(said) == [0, 1, 2]
    for text in said.values():
        assert text == ("refused eagle.Graph.build: the ranks recorded different graphs: rank 0 has 1 nodes, "
                        "rank 2 has 2; every rank must record the same nodes on planes that differ only in "
                        "the sample (last) axis")


def test_a_rank_that_raises_stops_every_rank_with_its_message():
    run = mpiexec(3, "raise", timeout=60)
    assert run.returncode != 0
    assert ("eagle-mpi: eagle.Graph.launch: rank 2 of 3 failed: ZeroDivisionError: rank 2 gave up"
            in run.stderr)
    assert "ran" not in run.stdout  # no rank finished its 1000 replays
