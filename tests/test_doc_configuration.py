"""docs/configuration.rst: every example on the page runs and prints what the page shows (as a
doctest, in a process of its own: the page sets environment variables and configures logging)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.rst"


def test_the_configuration_page_runs_as_shown():
    code = ("import doctest, sys; "
            f"r = doctest.testfile({str(PAGE)!r}, module_relative=False, "
            "optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE); "
            "sys.exit(1 if r.failed or r.attempted < 20 else 0)")  # every example ran, and as shown
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stdout + out.stderr
