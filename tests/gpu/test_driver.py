"""libeagle's CUDA graphs on a real GPU: driver, kernel, copy and host nodes, conditionals, patching.

Run with tests/gpu/run.sh on a machine with an NVIDIA GPU: the kernels are hand-written PTX
(kernels.ptx), which the driver compiles, so no CUDA compiler is needed.  Elsewhere the tests run
on fakecuda, the CPU emulation of the driver (tests/fakecuda; the ``cuda_driver`` fixture of
tests/conftest.py), with the same kernels in CUDA C (kernels.cu) compiled for the host.  Cells and
results live in pinned host memory, read back after the launch has waited.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PTX = (HERE / "kernels.ptx").read_text()
KERNELS_CU = (HERE / "kernels.cu").read_text()


class Cuda:
    """libeagle's CUDA calls, raising on a non-zero status with libeagle's message."""

    def __init__(self, ffi, lib, image):
        self.ffi, self.lib = ffi, lib
        version = ffi.new("int *")
        self.check(lib.eagle_cuda_open(0, version))
        self.version = version[0]
        module = ffi.new("void **")
        self.check(lib.eagle_cuda_module_load(0, image.encode() + b"\0", module))
        self.functions = {}
        for name in ("scale2", "add_u32", "count_step"):
            fn = ffi.new("void **")
            self.check(lib.eagle_cuda_module_function(0, module[0], name.encode(), fn))
            self.functions[name] = fn[0]
        self.pinned = []

    def check(self, status):
        if status < 0:
            raise AssertionError(self.ffi.string(self.lib.eagle_last_error()).decode())
        return status

    def message(self):
        return self.ffi.string(self.lib.eagle_last_error()).decode()

    def host(self, ctype, values):
        """Pinned host memory holding `values`: (cdata array, address)."""
        size = self.ffi.sizeof(ctype) * len(values)
        p = self.ffi.new("void **")
        self.check(self.lib.eagle_cuda_host_alloc(0, size, p))
        self.pinned.append(p[0])
        array = self.ffi.cast(f"{ctype} *", p[0])
        for i, v in enumerate(values):
            array[i] = v
        return array, int(self.ffi.cast("uintptr_t", p[0]))

    def device(self, nbytes):
        address = self.ffi.new("uint64_t *")
        self.check(self.lib.eagle_cuda_malloc(0, nbytes, address))
        return address[0]

    def kernel(self, graph, name, args, grid=1, block=1):
        """Add kernel `name`; args are ("u64" | "u32", value) pairs.  Returns the node id."""
        slots = self.args(args)
        g3 = self.ffi.new("uint32_t[3]", [grid, 1, 1])
        b3 = self.ffi.new("uint32_t[3]", [block, 1, 1])
        return self.check(self.lib.eagle_gpu_add_kernel(graph, self.functions[name], g3, b3, 0, slots,
                                                        len(args)))

    def args(self, args):
        slots = self.ffi.new(f"eagle_arg[{len(args)}]")
        for slot, (kind, value) in zip(slots, args, strict=True):
            setattr(slot, kind, value)
        return slots

    def graph(self):
        return self.lib.eagle_gpu_graph_new()


@pytest.fixture(scope="module")
def cuda(libeagle, cuda_driver):
    """The driver, real (the PTX kernels) or emulated (kernels.cu built for the host)."""
    ffi, lib = libeagle
    image = PTX if cuda_driver is None else cuda_driver.kernels(KERNELS_CU).ptx
    c = Cuda(ffi, lib, image)
    yield c
    for p in c.pinned:
        lib.eagle_cuda_host_free(0, p)


@pytest.fixture
def needs_conditionals(cuda):
    if cuda.version < 12030:
        pytest.skip(f"conditional nodes need a CUDA 12.3 driver; this one is {cuda.version}")


def test_kernels_assemble(tmp_path):
    """The test kernels' PTX is valid wherever ptxas is (no driver needed)."""
    tool = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not Path(tool).is_file():
        pytest.skip("no ptxas (CUDA toolkit) on this machine")
    (tmp_path / "k.ptx").write_text(PTX)
    result = subprocess.run([tool, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_open_reports_the_driver_version(cuda):
    assert cuda.version >= 12000


def test_kernel_and_copies_replay_three_times(cuda):
    """H2D copy, y = 2x, D2D copy y -> x, D2H copy: three replays give x * 8."""
    n = 1000
    _src, src_addr = cuda.host("float", [float(i) for i in range(n)])
    out, out_addr = cuda.host("float", [0.0] * n)
    x, y = cuda.device(4 * n), cuda.device(4 * n)
    lib = cuda.lib
    g = cuda.graph()
    try:
        cuda.check(lib.eagle_cuda_memcpy(0, x, src_addr, 4 * n))
        cuda.kernel(g, "scale2", [("u64", x), ("u64", y), ("u32", n)], grid=(n + 255) // 256, block=256)
        cuda.check(lib.eagle_gpu_add_copy(g, x, y, 4 * n))
        cuda.check(lib.eagle_gpu_add_copy(g, out_addr, y, 4 * n))
        cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
        cuda.check(lib.eagle_gpu_launch(g, 3))
        assert [out[i] for i in range(n)] == [8.0 * i for i in range(n)]
        stats = cuda.ffi.new("int64_t[3]")
        lib.eagle_gpu_graph_stats(g, stats)
        assert list(stats) == [1, 1, 3]
        assert lib.eagle_gpu_instantiate(g, 0, 0) == lib.EAGLE_ERR_STATE
        cuda.check(lib.eagle_gpu_enqueue(g, 1))
        cuda.check(lib.eagle_gpu_synchronize(g))
        assert out[3] == 3.0 * 16
    finally:
        lib.eagle_gpu_graph_free(g)
        lib.eagle_cuda_free(0, x)
        lib.eagle_cuda_free(0, y)


def test_host_to_host_copy_and_pageable_refusal(cuda):
    _a, a_addr = cuda.host("uint32_t", [7, 8])
    b, b_addr = cuda.host("uint32_t", [0, 0])
    lib = cuda.lib
    g = cuda.graph()
    cuda.check(lib.eagle_gpu_add_copy(g, b_addr, a_addr, 8))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert (b[0], b[1]) == (7, 8)
    lib.eagle_gpu_graph_free(g)
    pageable = cuda.ffi.new("uint32_t[2]")
    g = cuda.graph()
    cuda.check(lib.eagle_gpu_add_copy(g, b_addr, int(cuda.ffi.cast("uintptr_t", pageable)), 8))
    assert lib.eagle_gpu_instantiate(g, 0, 0) == lib.EAGLE_ERR_ARG
    assert "pageable host memory" in cuda.message()
    lib.eagle_gpu_graph_free(g)


def test_host_node_runs_every_replay(cuda):
    lib, ffi = cuda.lib, cuda.ffi
    calls = []
    result = [0]

    @ffi.callback("int(void *)")
    def callback(ctx):
        calls.append(1)
        return result[0]

    g = cuda.graph()
    cuda.check(lib.eagle_gpu_add_host(g, callback, ffi.NULL))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 3))
    assert len(calls) == 3
    result[0] = 5
    assert lib.eagle_gpu_launch(g, 2) == lib.EAGLE_ERR_CALLBACK
    assert "returned 5" in cuda.message()
    assert len(calls) == 5
    result[0] = 0
    cuda.check(lib.eagle_gpu_launch(g, 1))  # the error was reported once
    lib.eagle_gpu_graph_free(g)


def test_patch_arguments_and_grid(cuda):
    n = 512
    _x, x_addr = cuda.host("float", [1.0] * n)
    _z, z_addr = cuda.host("float", [3.0] * n)
    y, y_addr = cuda.host("float", [0.0] * n)
    lib = cuda.lib
    g = cuda.graph()
    node = cuda.kernel(g, "scale2", [("u64", x_addr), ("u64", y_addr), ("u32", n)], grid=2, block=256)
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert y[0] == y[n - 1] == 2.0
    cuda.check(lib.eagle_gpu_set_kernel_args(g, node, cuda.args([("u64", z_addr), ("u64", y_addr),
                                                                 ("u32", n)]), 3))
    cuda.check(lib.eagle_gpu_set_grid(g, node, cuda.ffi.new("uint32_t[3]", [1, 1, 1])))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert (y[0], y[255], y[256], y[n - 1]) == (6.0, 6.0, 2.0, 2.0)
    assert lib.eagle_gpu_set_kernel_args(g, node, cuda.args([("u64", z_addr)]), 1) == lib.EAGLE_ERR_ARG
    lib.eagle_gpu_graph_free(g)


@pytest.mark.parametrize("kind, start, limit, turns", [
    ("EAGLE_LOOP_WHILE", 1, 5, 5), ("EAGLE_LOOP_WHILE", 0, 5, 0),
    # DO enters whatever the cell says, then loops on the cell count_step writes.
    ("EAGLE_LOOP_DO", 0, 5, 5), ("EAGLE_LOOP_DO", 0, 1, 1)])
def test_loop_counts_to_the_limit(cuda, needs_conditionals, kind, start, limit, turns):
    """WHILE runs while the cell is non-zero, re-read after every turn; DO runs once first."""
    counter, counter_addr = cuda.host("uint32_t", [0])
    _cond, cond_addr = cuda.host("uint32_t", [start])
    lib = cuda.lib
    g, body = cuda.graph(), cuda.graph()
    cuda.kernel(body, "count_step", [("u64", counter_addr), ("u64", cond_addr), ("u32", limit)])
    cuda.check(lib.eagle_gpu_add_loop(g, cond_addr, getattr(lib, kind), body))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert counter[0] == turns
    lib.eagle_gpu_graph_free(g)


@pytest.mark.parametrize("flags", [0, 1], ids=["native", "plain_if"])
def test_if_else_both_arms(cuda, needs_conditionals, flags):
    out, out_addr = cuda.host("uint32_t", [0])
    cell, cell_addr = cuda.host("uint32_t", [1])
    lib = cuda.lib
    g, then_, else_ = cuda.graph(), cuda.graph(), cuda.graph()
    cuda.kernel(then_, "add_u32", [("u64", out_addr), ("u32", 1)])
    # The else arm also sets the cell: the then arm must not run after it in the same replay.
    cuda.kernel(else_, "add_u32", [("u64", out_addr), ("u32", 100)])
    cuda.kernel(else_, "add_u32", [("u64", cell_addr), ("u32", 1)])
    cuda.check(lib.eagle_gpu_add_if(g, cell_addr, then_, else_))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, flags))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert out[0] == 1
    cell[0] = 0
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert (out[0], cell[0]) == (101, 1)
    lib.eagle_gpu_graph_free(g)


@pytest.mark.parametrize("flags", [0, 1], ids=["native", "plain_if"])
def test_switch(cuda, needs_conditionals, flags):
    out, out_addr = cuda.host("uint32_t", [0])
    cell, cell_addr = cuda.host("uint32_t", [0])
    lib, ffi = cuda.lib, cuda.ffi
    g = cuda.graph()
    arms = [cuda.graph() for _ in range(3)]
    for arm, value in zip(arms, (1, 10, 100), strict=True):
        cuda.kernel(arm, "add_u32", [("u64", out_addr), ("u32", value)])
    default = cuda.graph()
    cuda.kernel(default, "add_u32", [("u64", out_addr), ("u32", 1000)])
    cuda.check(lib.eagle_gpu_add_switch(g, cell_addr, 3, ffi.new("eagle_gpu_graph *[3]", arms), default))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, flags))
    seen = []
    for value in (0, 1, 2, 3, 7):
        cell[0] = value
        out[0] = 0
        cuda.check(lib.eagle_gpu_launch(g, 1))
        seen.append(out[0])
    assert seen == [1, 10, 100, 1000, 1000]
    lib.eagle_gpu_graph_free(g)


def test_if_inside_while(cuda, needs_conditionals):
    """Nesting: an IF in a WHILE body, its handle created in the body graph."""
    counter, counter_addr = cuda.host("uint32_t", [0])
    _cond, cond_addr = cuda.host("uint32_t", [1])
    out, out_addr = cuda.host("uint32_t", [0])
    lib = cuda.lib
    g, body, then_ = cuda.graph(), cuda.graph(), cuda.graph()
    cuda.kernel(then_, "add_u32", [("u64", out_addr), ("u32", 1)])
    cuda.kernel(body, "count_step", [("u64", counter_addr), ("u64", cond_addr), ("u32", 4)])
    cuda.check(lib.eagle_gpu_add_if(body, cond_addr, then_, cuda.ffi.NULL))
    cuda.check(lib.eagle_gpu_add_loop(g, cond_addr, lib.EAGLE_LOOP_WHILE, body))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert (counter[0], out[0]) == (4, 3)
    lib.eagle_gpu_graph_free(g)


def test_patch_a_kernel_inside_a_conditional_body(cuda, needs_conditionals):
    """Open point (reference/cuda-graphs.md, 9.1): does cuGraphExecKernelNodeSetParams accept a node
    of a conditional body?  This test says what the driver does."""
    out, out_addr = cuda.host("uint32_t", [0])
    _cell, cell_addr = cuda.host("uint32_t", [1])
    lib = cuda.lib
    g, then_ = cuda.graph(), cuda.graph()
    node = cuda.kernel(then_, "add_u32", [("u64", out_addr), ("u32", 1)])
    cuda.check(lib.eagle_gpu_add_if(g, cell_addr, then_, cuda.ffi.NULL))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_set_kernel_args(then_, node, cuda.args([("u64", out_addr), ("u32", 50)]), 2))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert out[0] == 50
    lib.eagle_gpu_graph_free(g)


def test_parallel_branches_join_before_the_next_stage(cuda):
    """Two branches of a stage, then copies of both results: the next stage waits for every branch."""
    a, a_addr = cuda.host("uint32_t", [0])
    b, b_addr = cuda.host("uint32_t", [0])
    out, out_addr = cuda.host("uint32_t", [0, 0])
    lib = cuda.lib
    g = cuda.graph()
    cuda.check(lib.eagle_gpu_stage(g))
    cuda.kernel(g, "add_u32", [("u64", a_addr), ("u32", 1)])
    cuda.kernel(g, "add_u32", [("u64", a_addr), ("u32", 1)])
    cuda.check(lib.eagle_gpu_branch(g))
    cuda.kernel(g, "add_u32", [("u64", b_addr), ("u32", 5)])
    cuda.check(lib.eagle_gpu_stage(g))
    cuda.check(lib.eagle_gpu_add_copy(g, out_addr, a_addr, 4))
    cuda.check(lib.eagle_gpu_branch(g))
    cuda.check(lib.eagle_gpu_add_copy(g, out_addr + 4, b_addr, 4))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 2))
    assert (a[0], b[0], out[0], out[1]) == (4, 10, 4, 10)
    lib.eagle_gpu_graph_free(g)


def test_copy_inside_a_conditional_body(cuda, needs_conditionals):
    _src, src_addr = cuda.host("uint32_t", [7])
    out, out_addr = cuda.host("uint32_t", [0])
    cell, cell_addr = cuda.host("uint32_t", [0])
    dev = cuda.device(4)
    lib = cuda.lib
    g, then_ = cuda.graph(), cuda.graph()
    cuda.check(lib.eagle_gpu_add_copy(then_, dev, src_addr, 4))
    cuda.check(lib.eagle_gpu_add_copy(then_, out_addr, dev, 4))
    cuda.check(lib.eagle_gpu_add_if(g, cell_addr, then_, cuda.ffi.NULL))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert out[0] == 0
    cell[0] = 1
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert out[0] == 7
    lib.eagle_gpu_graph_free(g)
    lib.eagle_cuda_free(0, dev)


def test_do_loop_inside_a_while_enters_at_every_outer_turn(cuda, needs_conditionals):
    """The DO's first test is set each time the node is reached, not once per launch."""
    outer, outer_addr = cuda.host("uint32_t", [0])
    _oc, oc_addr = cuda.host("uint32_t", [1])
    inner, inner_addr = cuda.host("uint32_t", [0])
    _ic, ic_addr = cuda.host("uint32_t", [0])
    lib = cuda.lib
    g, body, inner_body = cuda.graph(), cuda.graph(), cuda.graph()
    cuda.kernel(inner_body, "count_step", [("u64", inner_addr), ("u64", ic_addr), ("u32", 2)])
    cuda.kernel(body, "count_step", [("u64", outer_addr), ("u64", oc_addr), ("u32", 3)])
    cuda.check(lib.eagle_gpu_add_loop(body, ic_addr, lib.EAGLE_LOOP_DO, inner_body))
    cuda.check(lib.eagle_gpu_add_loop(g, oc_addr, lib.EAGLE_LOOP_WHILE, body))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    # Outer turn 1: the DO turns twice (inner 1, 2); turns 2 and 3: once each (inner 3, 4).
    assert (outer[0], inner[0]) == (3, 4)
    lib.eagle_gpu_graph_free(g)


@pytest.mark.parametrize("flags", [0, 1], ids=["native", "plain_if"])
def test_switch_with_missing_arms_and_no_default(cuda, needs_conditionals, flags):
    out, out_addr = cuda.host("uint32_t", [0])
    cell, cell_addr = cuda.host("uint32_t", [0])
    lib, ffi = cuda.lib, cuda.ffi
    g, arm1 = cuda.graph(), cuda.graph()
    cuda.kernel(arm1, "add_u32", [("u64", out_addr), ("u32", 10)])
    cuda.check(lib.eagle_gpu_add_switch(g, cell_addr, 2, ffi.new("eagle_gpu_graph *[2]", [ffi.NULL, arm1]),
                                        ffi.NULL))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, flags))
    seen = []
    for value in (0, 1, 2):
        cell[0] = value
        out[0] = 0
        cuda.check(lib.eagle_gpu_launch(g, 1))
        seen.append(out[0])
    assert seen == [0, 10, 0]
    lib.eagle_gpu_graph_free(g)


def test_patch_grid_of_a_kernel_inside_a_loop_body(cuda, needs_conditionals):
    n = 8
    x, x_addr = cuda.host("float", [1.0] * n)
    _cond, cond_addr = cuda.host("uint32_t", [1])
    _counter, counter_addr = cuda.host("uint32_t", [0])
    lib = cuda.lib
    g, body = cuda.graph(), cuda.graph()
    node = cuda.kernel(body, "scale2", [("u64", x_addr), ("u64", x_addr), ("u32", n)], grid=n, block=1)
    cuda.kernel(body, "count_step", [("u64", counter_addr), ("u64", cond_addr), ("u32", 2)])
    cuda.check(lib.eagle_gpu_add_loop(g, cond_addr, lib.EAGLE_LOOP_WHILE, body))
    cuda.check(lib.eagle_gpu_instantiate(g, 0, 0))
    cuda.check(lib.eagle_gpu_set_grid(body, node, cuda.ffi.new("uint32_t[3]", [4, 1, 1])))
    cuda.check(lib.eagle_gpu_launch(g, 1))
    assert [x[i] for i in range(n)] == [4.0] * 4 + [1.0] * 4
    lib.eagle_gpu_graph_free(g)


# ------------------------------------------------- older drivers, emulated (one process per driver)

OLD_DRIVER_SCRIPT = r"""
import importlib.util, json, sys
import cffi

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

harness_path, test_path, libeagle_path, cdef = sys.argv[1:5]
fake = load("fakecuda_harness", harness_path).activate()
td = load("gpu_test_driver", test_path)
ffi = cffi.FFI()
ffi.cdef(cdef)
lib = ffi.dlopen(libeagle_path)
cuda = td.Cuda(ffi, lib, fake.kernels(td.KERNELS_CU).ptx)
out, out_addr = cuda.host("uint32_t", [0])
cell, cell_addr = cuda.host("uint32_t", [0])
result = {"version": cuda.version}

def run(name, g, value):
    status = lib.eagle_gpu_instantiate(g, 0, 0)
    if status < 0:
        result[name] = {"status": status, "message": cuda.message()}
        return
    cell[0], out[0] = value, 0
    before = fake.kernel_runs()
    cuda.check(lib.eagle_gpu_launch(g, 1))
    result[name] = {"status": status, "out": out[0], "kernels": fake.kernel_runs() - before}

g, then_, else_ = cuda.graph(), cuda.graph(), cuda.graph()
cuda.kernel(then_, "add_u32", [("u64", out_addr), ("u32", 1)])
cuda.kernel(else_, "add_u32", [("u64", out_addr), ("u32", 100)])
cuda.check(lib.eagle_gpu_add_if(g, cell_addr, then_, else_))
run("if_else", g, 0)
g = cuda.graph()
arms = [cuda.graph() for _ in range(3)]
for arm, v in zip(arms, (1, 10, 100)):
    cuda.kernel(arm, "add_u32", [("u64", out_addr), ("u32", v)])
cuda.check(lib.eagle_gpu_add_switch(g, cell_addr, 3, ffi.new("eagle_gpu_graph *[3]", arms), ffi.NULL))
run("switch", g, 2)
print(json.dumps(result))
"""


def run_on_old_driver(version, libeagle_path, cdef, tmp_path):
    """OLD_DRIVER_SCRIPT's results in a process whose fakecuda reports driver `version` (libeagle
    reads the version once per process)."""
    env = dict(os.environ, FAKECUDA_DRIVER_VERSION=str(version))
    script = tmp_path / "old_driver.py"
    script.write_text(OLD_DRIVER_SCRIPT)
    result = subprocess.run([sys.executable, str(script), str(HERE.parent / "fakecuda" / "harness.py"),
                             __file__, str(libeagle_path), cdef],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture
def fake_only(cuda_driver):
    if cuda_driver is None:
        pytest.skip("driver versions are emulated by fakecuda only")


# Kernel runs per launch: one set-condition kernel per conditional node, plus the arm that runs.
@pytest.mark.parametrize("version, if_else_kernels, switch_kernels", [
    (12030, 3, 4),   # IF/ELSE as two IF nodes; SWITCH as three
    (12080, 3, 2),   # IF/ELSE still two IF nodes (12.8/12.9 mis-instantiate two bodies); SWITCH native
    (13000, 2, 2),   # both native
])
def test_conditionals_on_older_drivers(fake_only, libeagle_path, libeagle_cdef_text, tmp_path, version,
                                       if_else_kernels, switch_kernels):
    result = run_on_old_driver(version, libeagle_path, libeagle_cdef_text, tmp_path)
    assert result["version"] == version
    assert result["if_else"] == {"status": 0, "out": 100, "kernels": if_else_kernels}
    assert result["switch"] == {"status": 0, "out": 100, "kernels": switch_kernels}


def test_conditionals_need_a_12_3_driver(fake_only, libeagle_path, libeagle_cdef_text, tmp_path):
    result = run_on_old_driver(12020, libeagle_path, libeagle_cdef_text, tmp_path)
    for name in ("if_else", "switch"):
        assert result[name]["status"] < 0
        assert "CUDA 12.3 driver" in result[name]["message"]
        assert "CUDA 12.2" in result[name]["message"]
