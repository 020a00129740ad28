"""Build hook: compile libeagle into ``src/eagle/_lib`` and make the wheel platform-specific."""

from __future__ import annotations

import importlib.util
import shutil
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _libeagle_dir(root: Path) -> Path:
    # In the repository libeagle/ is two levels up; an sdist carries a copy.
    for candidate in (root / "libeagle", root.parent.parent / "libeagle"):
        if (candidate / "build_libeagle.py").is_file():
            return candidate
    raise FileNotFoundError(f"eagle-graph: libeagle sources not found from {root}")


class LibeagleBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        source = _libeagle_dir(root)
        spec = importlib.util.spec_from_file_location("build_libeagle", source / "build_libeagle.py")
        builder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(builder)

        lib_dir = root / "src" / "eagle" / "_lib"
        builder.compile_libeagle(lib_dir / builder.library_name(), source_dir=source)
        # The headers travel with the library: eagle._core reads eagle.h's cdef,
        # hawk's generated kernels include it, and C++ programs include the C++
        # face (eagle/*.hpp, eagle/util/Busy.h) over it.
        shutil.copytree(source / "include" / "eagle", lib_dir / "include" / "eagle", dirs_exist_ok=True)

        if version == "editable":
            return  # the editable .pth exposes src/, where the library now lies
        build_data["pure_python"] = False
        platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{platform}"
        build_data["artifacts"].append("src/eagle/_lib/")
