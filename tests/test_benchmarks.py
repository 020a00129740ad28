"""The benchmark table still runs: ``benchmarks/run.py --smoke`` on tiny sizes, one call per figure.

Timings are never asserted (a shared machine makes them noise); what is held is that every case
builds, runs, agrees with its NumPy reference where the script checks one, and reaches the table.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_benchmark_table_runs_every_case():
    for package in ("hawk", "eagle.builder", "eagle.diff"):  # the minimal session has eagle-graph alone
        pytest.importorskip(package)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--smoke"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    for row in ("chain of 100 kernels, 16 samples, in place (Mutable)", "natural form x = k(x), 16 samples",
                "capped device loop (7 of <=50 turns), 16 samples", "fork of 8 branches x 16 kernels",
                "RK4 pendulums, 50 turns of a capped loop, 64 samples", "forward + gradient of 20 kernels",
                "eagle's reverse program alone", "reverse / forward = ", "Peak resident growth",
                "eagle natural", "eagle Mutable", "NumPy natural"):
        assert row in done.stdout, (row, done.stdout)
