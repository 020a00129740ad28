"""libeagle's own CUDA driver declarations against the real toolkit, and its GPU API without a GPU.

libeagle is built without the CUDA toolkit: ``libeagle/src/cuda_driver_types.h`` and
``cuda_driver.h`` declare what it uses of the driver under ``eg_`` names.  Wherever ``cuda.h``
exists, these tests compile those headers together with it and check every size, offset,
constant and function type, and assemble the hand-written PTX of the condition kernel with
``ptxas``.  The rest runs on any machine: libeagle builds with no CUDA header, and without
``libcuda.so.1`` every GPU call fails with a message that says what is missing.
"""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "libeagle" / "src"
TYPES_H = SRC / "cuda_driver_types.h"
DRIVER_H = SRC / "cuda_driver.h"

#: Each eg_ type and the cuda.h type it stands for.
REAL_TYPES = {
    "eg_CUresult": "CUresult",
    "eg_CUdevice": "CUdevice",
    "eg_CUdeviceptr": "CUdeviceptr",
    "eg_cuuint64_t": "cuuint64_t",
    "eg_CUgraphConditionalHandle": "CUgraphConditionalHandle",
    "eg_CUpointer_attribute": "CUpointer_attribute",
    "eg_CUdriverProcAddressQueryResult": "CUdriverProcAddressQueryResult",
    "eg_CUstreamCaptureMode": "CUstreamCaptureMode",
    "eg_CUdevice_attribute": "CUdevice_attribute",
    "eg_CUcontext": "CUcontext",
    "eg_CUmodule": "CUmodule",
    "eg_CUfunction": "CUfunction",
    "eg_CUkernel": "CUkernel",
    "eg_CUstream": "CUstream",
    "eg_CUevent": "CUevent",
    "eg_CUarray": "CUarray",
    "eg_CUgraph": "CUgraph",
    "eg_CUgraphNode": "CUgraphNode",
    "eg_CUgraphExec": "CUgraphExec",
    "eg_CUhostFn": "CUhostFn",
    "eg_CUDA_KERNEL_NODE_PARAMS": "CUDA_KERNEL_NODE_PARAMS_v2",
    "eg_CUDA_MEMCPY3D": "CUDA_MEMCPY3D_v2",
    "eg_CUDA_HOST_NODE_PARAMS": "CUDA_HOST_NODE_PARAMS_v1",
    "eg_CUDA_CONDITIONAL_NODE_PARAMS": "CUDA_CONDITIONAL_NODE_PARAMS",
    "eg_CUgraphEdgeData": "CUgraphEdgeData",
    "eg_CUgraphNodeParams": "CUgraphNodeParams",
}


def cuda_include() -> Path | None:
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "include" / "cuda.h").is_file():
            return Path(root) / "include"
    return None


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def compile_check(source: str, tmp_path: Path, include: Path) -> None:
    path = tmp_path / "check.c"
    path.write_text(source)
    cmd = [*compiler(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", str(include),
           "-I", str(SRC), str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def declared_types() -> list[str]:
    """Every eg_ type cuda_driver_types.h defines."""
    text = TYPES_H.read_text()
    return sorted(set(re.findall(r"\b(eg_\w+);", text)) | set(re.findall(r"\(\*(eg_\w+)\)", text)))


def struct_fields(name: str) -> list[str]:
    """The member names of struct `name` in cuda_driver_types.h (including an anonymous union's)."""
    text = TYPES_H.read_text()
    body = re.search(rf"typedef struct {name} \{{.*?\n(.*?)\n\}} {name};", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = []
    for decl in re.findall(r"([^;{}]+);", body):
        if decl.split()[0] in ("union", "struct"):
            continue
        # The last identifier of each comma-separated part, after dropping array bounds.
        fields += [re.findall(r"\w+", re.sub(r"\[.*?\]", "", part))[-1] for part in decl.split(",")]
    return fields


def constants() -> list[str]:
    return re.findall(r"\b(EG_(\w+)) = ", TYPES_H.read_text())


def entry_points() -> list[tuple[str, str]]:
    return re.findall(r"X\((\w+), (\d+)\)", DRIVER_H.read_text())


def test_every_declaration_has_a_real_counterpart():
    """The checks below cover every eg_ type: a new one must be added to REAL_TYPES."""
    assert declared_types() == sorted(REAL_TYPES)
    assert len(entry_points()) >= 30


@pytest.fixture
def cuda_h() -> Path:
    include = cuda_include()
    if include is None:
        pytest.skip("no CUDA toolkit headers (cuda.h under $CUDA_HOME/include or /usr/local/cuda/include)")
    return include


def test_types_match_cuda_h(cuda_h, tmp_path):
    """Sizes, member offsets and member sizes of every type, and the value of every constant."""
    lines = ["#include <stddef.h>", "#include <cuda.h>", '#include "cuda_driver_types.h"']
    for own, real in REAL_TYPES.items():
        lines.append(f'_Static_assert(sizeof({own}) == sizeof({real}), "size of {own}");')
        lines.append(f'_Static_assert(_Alignof({own}) == _Alignof({real}), "alignment of {own}");')
        for field in struct_fields(own) if f"typedef struct {own} {{" in TYPES_H.read_text() else []:
            lines.append(f'_Static_assert(offsetof({own}, {field}) == offsetof({real}, {field}), '
                         f'"offset of {own}.{field}");')
            lines.append(f'_Static_assert(sizeof((({own} *)0)->{field}) == sizeof((({real} *)0)->{field}), '
                         f'"size of {own}.{field}");')
    for own, real in constants():
        lines.append(f'_Static_assert((long long){own} == (long long){real}, "{own}");')
    compile_check("\n".join(lines) + "\n", tmp_path, cuda_h)


def test_entry_points_match_cuda_typedefs(cuda_h, tmp_path):
    """eg_PFN_<name> is the type of cudaTypedefs.h's PFN_<name>_v<version> for the version libeagle
    asks cuGetProcAddress for: a wrong signature or a wrong version fails to compile.

    cuda_driver_types.h is replaced by the real types (its layouts are checked above), so that the
    function types can be compared exactly."""
    lines = ["#include <cuda.h>", "#include <cudaTypedefs.h>", "#define EAGLE_CUDA_DRIVER_TYPES_H"]
    lines += [f"typedef {real} {own};" for own, real in REAL_TYPES.items()]
    lines.append('#include "cuda_driver.h"')
    for name, version in entry_points():
        lines.append(f"_Static_assert(__builtin_types_compatible_p(eg_PFN_{name}, PFN_{name}_v{version}), "
                     f'"eg_PFN_{name} is not PFN_{name}_v{version}");')
    compile_check("\n".join(lines) + "\n", tmp_path, cuda_h)


def condition_ptx() -> str:
    text = (SRC / "cuda_condition_ptx.h").read_text()
    literal = text.split("condition_ptx[] =", 1)[1].split(";\n", 1)[0]
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', literal)
    return "".join(bytes(s, "ascii").decode("unicode_escape") for s in strings)


def ptxas() -> str | None:
    include = cuda_include()
    candidates = [shutil.which("ptxas")] + ([str(include.parent / "bin" / "ptxas")] if include else [])
    return next((c for c in candidates if c and Path(c).is_file()), None)


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_condition_kernel_assembles(arch, tmp_path):
    """The hand-written PTX of eagle_set_condition assembles; cudaGraphSetConditional is left for the
    driver's loader to bind (ptxas refuses an unknown extern function)."""
    tool = ptxas()
    if tool is None:
        pytest.skip("no ptxas (CUDA toolkit) on this machine")
    (tmp_path / "c.ptx").write_text(condition_ptx())
    result = subprocess.run([tool, f"-arch={arch}", str(tmp_path / "c.ptx"), "-o", str(tmp_path / "c.cubin")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    bogus = condition_ptx().replace("cudaGraphSetConditional", "eagleNoSuchFunction")
    (tmp_path / "b.ptx").write_text(bogus)
    refused = subprocess.run([tool, f"-arch={arch}", str(tmp_path / "b.ptx"), "-o",
                              str(tmp_path / "b.cubin")], capture_output=True, text=True)
    assert refused.returncode != 0 and "eagleNoSuchFunction" in refused.stderr


def test_libeagle_includes_no_cuda_header(libeagle_builder):
    """Every libeagle source compiles with its build flags and no CUDA include path, and no header it
    includes comes from a CUDA toolkit."""
    env = {k: v for k, v in os.environ.items() if k not in ("CPATH", "C_INCLUDE_PATH")}
    for source in sorted(SRC.glob("*.c")):
        cmd = [*compiler(), *libeagle_builder.FLAGS, "-I", str(SRC.parent / "include"), "-M", str(source)]
        deps = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
        headers = [Path(h) for h in deps.replace("\\\n", " ").split(":", 1)[1].split()]
        from_cuda = [h for h in headers
                     if h.name == "cuda.h" or any(part.startswith("cuda") for part in h.parent.parts)]
        assert not from_cuda, f"{source.name} includes {from_cuda}"


def has_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def message(ffi, lib) -> str:
    return ffi.string(lib.eagle_last_error()).decode()


NO_DRIVER_SCRIPT = """
import sys, cffi
ffi = cffi.FFI()
ffi.cdef(sys.argv[2])
lib = ffi.dlopen(sys.argv[1])
def message():
    return ffi.string(lib.eagle_last_error()).decode()
version = ffi.new("int *", -1)
assert lib.eagle_cuda_open(0, version) == lib.EAGLE_ERR_NO_DRIVER
assert version[0] == 0
assert message().startswith("eagle_cuda_open: no CUDA driver (libcuda.so.1) on this machine"), message()
address = ffi.new("uint64_t *")
assert lib.eagle_cuda_malloc(0, 16, address) == lib.EAGLE_ERR_NO_DRIVER
assert message().startswith("eagle_cuda_malloc: no CUDA driver")
g = lib.eagle_gpu_graph_new()
try:
    assert lib.eagle_gpu_add_copy(g, 0x1000, 0x2000, 8) == 0
    assert lib.eagle_gpu_instantiate(g, 0, 0) == lib.EAGLE_ERR_NO_DRIVER
    assert message().startswith("eagle_gpu_instantiate: no CUDA driver")
    assert lib.eagle_gpu_launch(g, 1) == lib.EAGLE_ERR_STATE
    assert "not instantiated" in message()
finally:
    lib.eagle_gpu_graph_free(g)
"""


def test_no_driver_is_a_clear_error(libeagle_path, libeagle_cdef_text):
    """In a process of its own: libeagle opens the driver once per process, and this session's
    libeagle may have opened the CPU emulation (tests/fakecuda) already."""
    if has_driver():
        pytest.skip("this machine has a CUDA driver (libcuda.so.1)")
    env = {k: v for k, v in os.environ.items() if k != "EAGLE_LIBCUDA"}
    result = subprocess.run([sys.executable, "-c", NO_DRIVER_SCRIPT, str(libeagle_path), libeagle_cdef_text],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr


def test_abi_version(libeagle):
    _, lib = libeagle
    assert lib.eagle_abi_version() == lib.EAGLE_ABI_VERSION == 3


@pytest.fixture
def gpu(libeagle):
    """A fresh graph and a helper to make more; everything freed after the test."""
    ffi, lib = libeagle
    made = []

    def new():
        g = lib.eagle_gpu_graph_new()
        made.append(g)
        return g

    yield ffi, lib, new
    # Newest first: a sub-graph (made after its top graph) refuses to be freed alone while its
    # top graph lives, and is freed with it.
    for g in reversed(made):
        lib.eagle_gpu_graph_free(g)


def test_description_refusals(gpu):
    """What CUDA would refuse later is refused while describing, with no driver needed."""
    ffi, lib, new = gpu
    top, body, other = new(), new(), new()
    assert lib.eagle_gpu_add_host(body, ffi.NULL, ffi.NULL) == lib.EAGLE_ERR_ARG
    cb = ffi.callback("int(void *)", lambda ctx: 0)
    assert lib.eagle_gpu_add_host(body, cb, ffi.NULL) == 0
    assert lib.eagle_gpu_add_if(top, 0x1000, body, ffi.NULL) == lib.EAGLE_ERR_STATE
    assert "holds a host node" in message(ffi, lib)
    assert lib.eagle_gpu_add_loop(top, 0x1000, lib.EAGLE_LOOP_COUNT, other) == lib.EAGLE_ERR_ARG
    assert "EAGLE_LOOP_COUNT is not available on the GPU" in message(ffi, lib)
    assert lib.eagle_gpu_add_loop(top, 0x1000, lib.EAGLE_LOOP_WHILE, other) == 0
    assert lib.eagle_gpu_add_if(top, 0x1000, other, ffi.NULL) == lib.EAGLE_ERR_STATE
    assert "already belongs to another graph" in message(ffi, lib)
    assert lib.eagle_gpu_add_host(other, cb, ffi.NULL) == lib.EAGLE_ERR_STATE
    assert "inside a conditional's sub-graph" in message(ffi, lib)
    arm = new()
    arms = ffi.new("eagle_gpu_graph *[2]", [arm, arm])
    assert lib.eagle_gpu_add_switch(top, 0x1000, 2, arms, ffi.NULL) == lib.EAGLE_ERR_STATE
    assert "one sub-graph used for two arms" in message(ffi, lib)
    assert lib.eagle_gpu_add_if(top, 0x1000, top, ffi.NULL) == lib.EAGLE_ERR_STATE
    assert lib.eagle_gpu_add_if(top, 0, arm, ffi.NULL) == lib.EAGLE_ERR_ARG
    assert lib.eagle_gpu_instantiate(other, 0, 0) == lib.EAGLE_ERR_STATE
    assert lib.eagle_gpu_instantiate(top, 0, 8) == lib.EAGLE_ERR_ARG


def test_kernel_items_and_node_ids(gpu):
    ffi, lib, new = gpu
    g = new()
    grid, block = ffi.new("uint32_t[3]", [4, 1, 1]), ffi.new("uint32_t[3]", [256, 1, 1])
    args = ffi.new("eagle_arg[2]")
    fn = ffi.cast("void *", 0x1234)  # never called: nothing reaches the driver while describing
    assert lib.eagle_gpu_add_kernel(g, fn, grid, block, 0, args, 2) == 0
    assert lib.eagle_gpu_add_copy(g, 0x1000, 0x2000, 8) == 1
    assert lib.eagle_gpu_stage(g) == 0 and lib.eagle_gpu_branch(g) == 0
    assert lib.eagle_gpu_add_kernel(g, fn, grid, block, 0, args, 2) == 2
    assert lib.eagle_gpu_add_copy(g, 0x1000, 0x2000, 0) == lib.EAGLE_ERR_ARG
    zero = ffi.new("uint32_t[3]", [0, 1, 1])
    assert lib.eagle_gpu_add_kernel(g, fn, zero, block, 0, args, 2) == lib.EAGLE_ERR_ARG
    assert "grid[0] is 0" in message(ffi, lib)
    assert lib.eagle_gpu_set_grid(g, 0, grid) == lib.EAGLE_ERR_STATE
    assert lib.eagle_gpu_set_kernel_args(g, 0, args, 2) == lib.EAGLE_ERR_STATE
    stats = ffi.new("int64_t[3]", [7, 7, 7])
    lib.eagle_gpu_graph_stats(g, stats)
    assert list(stats) == [0, 0, 0]
