"""The C++ API reference: Doxygen reads the C++ headers into XML, Breathe renders it.

Doxygen runs once per build, before the pages are read, over ``libeagle/include/eagle``
(the headers eagle-graph installs); its XML goes under the build folder.  Doxygen is a
system package (``apt-get install doxygen``): the docs nox session and ``.ci/run`` install it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

HEADERS = Path(__file__).resolve().parents[2] / "libeagle" / "include" / "eagle"

# eagle.h is the C ABI (documented on the libeagle page, not in Doxygen comments); the detail
# namespaces are the headers' own plumbing.
DOXYFILE = """\
INPUT = {headers}
RECURSIVE = YES
FILE_PATTERNS = *.hpp *.h
EXCLUDE = {headers}/eagle.h
EXCLUDE_SYMBOLS = detail eagle::detail eagle::exec::detail eagle::cuda::detail
OUTPUT_DIRECTORY = {out}
GENERATE_XML = YES
GENERATE_HTML = NO
GENERATE_LATEX = NO
EXTRACT_ALL = NO
QUIET = YES
WARN_IF_UNDOCUMENTED = NO
ENABLE_PREPROCESSING = YES
MACRO_EXPANSION = YES
PREDEFINED = EAGLE_API=
"""


def run_doxygen(app: Any) -> None:
    """Write the Doxyfile and run Doxygen; Breathe reads ``<out>/xml``."""
    doxygen = shutil.which("doxygen")
    if doxygen is None:
        raise RuntimeError("docs: doxygen is not on PATH; the C++ API page needs it "
                           "(apt-get install doxygen)")
    out = Path(app.outdir).parent / "doxygen"
    out.mkdir(parents=True, exist_ok=True)
    (out / "Doxyfile").write_text(DOXYFILE.format(headers=HEADERS, out=out))
    subprocess.run([doxygen, "Doxyfile"], cwd=out, check=True)
    app.config.breathe_projects = {"eagle": str(out / "xml")}


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("breathe")
    app.config.breathe_default_project = "eagle"
    app.connect("builder-inited", run_doxygen)
    return {"parallel_read_safe": True}
