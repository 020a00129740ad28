"""eagle's loggers: ``eagle`` and its children, with no handler but a ``NullHandler`` (a library
leaves where records go to the application: the logging HOWTO, "Configuring Logging for a
Library").  ``logging.basicConfig(level=logging.INFO)`` shows every compile.

- ``eagle.compile``: INFO for each compile (C through ``CC``, hawk's kernels among them, and
  NVRTC), with what was compiled, how many sources and how long it took; DEBUG for each hit of
  the compile cache.
- ``eagle.build``: DEBUG for the lowering decisions of each build: each stage's schedule or
  tier, and each fused run of kernels.
- ``eagle.simulate``: DEBUG for each compaction of ``eagle.simulate``.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("eagle")
logger.addHandler(logging.NullHandler())

compile_log = logger.getChild("compile")
build_log = logger.getChild("build")
simulate_log = logger.getChild("simulate")
