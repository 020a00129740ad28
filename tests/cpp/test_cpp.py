"""The C++ face (libeagle/include/eagle/*.hpp), compiled by the system C++ compiler against the headers
and the libeagle eagle-graph installed, and run in this process (ctypes): host programs and the branch
runner against eagle.Graph's bits on the same kernels, the schedule rule against build's, Busy from two
threads, the CUDA types on the driver (the emulation where there is no GPU), and every C++ snippet of
docs/cpp.rst, seed 002's among them, compiled as printed (the kernel launch line through a host
stand-in; with nvcc too where it is installed)."""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

import eagle
from eagle import _core
from eagle.graph import Node, opaque
from eagle.native import Library, compile_library, include_dir
from eagle.plan import Plan

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent.parent / "docs" / "cpp.rst"
HEADERS = ["eagle/eagle.h", "eagle/eagle.hpp", "eagle/cuda.hpp", "eagle/exec.hpp", "eagle/error.hpp",
           "eagle/util/Busy.h", "eagle/view.hpp"]
CXXFLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-ffp-contract=off", "-fPIC",
            "-pthread", "-fvisibility=hidden"]
MAX = _core.BRANCH_TASKS_MAX_SAMPLES

#: CUDA C for the CUDA tests: seed 002's addOne, and a grid-stride kernel over [0, end) that
#: Graph::addSamplesKernel launches (its last parameter is the logical end eagle passes).
KERNELS_CU = r"""
extern "C" __global__ void addOne(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

extern "C" __global__ void add_one_up_to(float *x, long long end)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < end;
         i += (long long)blockDim.x * gridDim.x)
        x[i] += 1.0f;
}
"""


def cxx() -> list[str]:
    return shlex.split(os.environ.get("CXX", "c++"))


def compiler_env() -> dict[str, str]:
    """This environment without LD_PRELOAD: the sanitizer session preloads ASan into this process, and
    compilers (nvcc's tools above all) are not built to run under it."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


@pytest.fixture(scope="session")
def build_cpp(tmp_path_factory: pytest.TempPathFactory):
    """``build(name, source) -> ctypes.CDLL``: C++ source compiled into a shared library against the
    installed headers and the libeagle this process loaded (a sanitizer build under EAGLE_LIBEAGLE), so
    that both share one team, one driver and one error slot per thread."""
    if shutil.which(cxx()[0]) is None:
        pytest.fail(f"no C++ compiler ({cxx()[0]}): install one, or name it in CXX")
    out_dir = tmp_path_factory.mktemp("cpp")

    def build(name: str, source: str) -> ctypes.CDLL:
        src = out_dir / f"{name}.cpp"
        src.write_text(source)
        lib = out_dir / f"lib{name}.so"
        library = _core.library_path()
        cmd = [*cxx(), *CXXFLAGS, "-shared", "-I", str(include_dir()), "-I", str(HERE), str(src),
               "-o", str(lib), str(library), f"-Wl,-rpath,{library.parent}"]
        result = subprocess.run(cmd, capture_output=True, text=True, env=compiler_env())
        assert result.returncode == 0, f"{shlex.join(cmd)}\n{result.stderr}"
        return ctypes.CDLL(str(lib))

    return build


def call(lib: ctypes.CDLL, name: str, *args: object) -> None:
    """Run an exported test function; its failure message (cpp_error) fails the test."""
    fn = getattr(lib, name)
    fn.restype = ctypes.c_int
    rc = fn(*args)
    if rc:
        lib.cpp_error.restype = ctypes.c_char_p
        pytest.fail(f"{name} returned {rc}: {lib.cpp_error().decode()}")


@pytest.fixture(scope="session")
def host_tests(build_cpp) -> ctypes.CDLL:
    return build_cpp("host_tests", (HERE / "host_tests.cpp").read_text())


@pytest.fixture(scope="session")
def kernels() -> Library:
    """tests/cpp/kernels.c, which both the Python plans and the C++ programs call."""
    return Library(compile_library((HERE / "kernels.c").read_text(), name="cpp_test_kernels"))


def address(kernels: Library, name: str) -> ctypes.c_void_p:
    return ctypes.c_void_p(kernels.address(name))


def doubles(a: np.ndarray) -> ctypes.c_void_p:
    assert a.flags.c_contiguous
    return ctypes.c_void_p(a.ctypes.data)


def pointer_array(arrays: list[np.ndarray]) -> ctypes.Array:
    return (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])


SCHEDULES = {_core.lib.EAGLE_WORK_SHARE: "work_share", _core.lib.EAGLE_BRANCH_TASKS: "branch_tasks"}


# ------------------------------------------------------------------------------------------ install


def test_the_headers_are_installed_beside_eagle_h():
    """eagle-graph installs the C++ face with eagle.h: the folder eagle.native.include_dir() names."""
    for header in HEADERS:
        assert (include_dir() / header).is_file(), header
    source = HERE.parent.parent / "libeagle" / "include"
    for header in HEADERS:  # the installed copies are this checkout's
        assert (include_dir() / header).read_text() == (source / header).read_text(), header


# ------------------------------------------------------------------------------------- host programs


class Plans:
    def __init__(self, lib: Library) -> None:
        self.scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
        self.shift = Plan(lib.kernel("shift"), [("x", "readwrite"), ("d", "value")], name="shift")
        self.axpy = Plan(lib.kernel("axpy"), [("x", "read"), ("y", "readwrite"), ("c", "value")], name="axpy")


def chains(plans: Plans, planes: list[np.ndarray], length: int) -> list[list]:
    """One branch per plane: x *= 1 + 0.01k and x += 0.25k alternately (host_tests.cpp's chain)."""
    return [[plans.scale.bind(x, 1.0 + 0.01 * k) if k % 2 == 0 else plans.shift.bind(x, 0.25 * k)
             for k in range(length)] for x in planes]


def resolve(host_tests: ctypes.CDLL, group: bool, branches: int, samples: list[int], native: list[bool],
            threads: int) -> str:
    out = ctypes.c_int(-1)
    s = np.array(samples, np.int64)
    m = np.array(native, np.uint8)
    call(host_tests, "cpp_resolve", int(group), branches, ctypes.c_void_p(s.ctypes.data),
         ctypes.c_void_p(m.ctypes.data), ctypes.c_int64(len(samples)), threads, ctypes.byref(out))
    return SCHEDULES[out.value]


@pytest.mark.parametrize("n", [16, MAX, MAX + 1])
def test_resolve_is_the_rule_build_applies(host_tests, kernels, threads, n):
    """eagle::exec::resolve picks what eagle.Graph.build picks for the same stage, at every team size."""
    plans = Plans(kernels)
    planes = [np.ones(n) for _ in range(3)]
    g = eagle.Graph().add_group(chains(plans, planes, 4)).build()
    assert resolve(host_tests, True, 3, [n] * 12, [True] * 12, threads) == g.schedule[0]
    # a Python callable in a branch: not native, so the fork work-shares
    mixed = eagle.Graph().add_group([plans.scale.bind(planes[0], 2.0),
                                     opaque(lambda: None, writes={"b": planes[1]})]).build()
    assert resolve(host_tests, True, 2, [n, -1], [True, False], threads) == mixed.schedule[0] == "work_share"
    assert resolve(host_tests, False, 1, [n], [True], threads) == "work_share"


def test_resolve_refuses_bad_arguments_by_name(host_tests):
    """A negative branch count is EAGLE_ERR_ARG, thrown as eagle::Error naming eagle::exec::resolve."""
    out = ctypes.c_int(-1)
    fn = host_tests.cpp_resolve
    assert fn(1, -1, None, None, ctypes.c_int64(0), 2, ctypes.byref(out)) == -1
    host_tests.cpp_error.restype = ctypes.c_char_p
    assert host_tests.cpp_error().decode() == (
        "eagle::Error (status -1): eagle::exec::resolve: eagle_stage_schedule: a negative count, "
        "or NULL samples or native")


def python_fork_join(plans: Plans, start: list[np.ndarray], n: int, length: int, replays: int):
    planes = [s.copy() for s in start]
    acc = np.zeros(n)
    g = eagle.Graph().add_group(chains(plans, planes, length))
    for i, x in enumerate(planes):
        g.add(plans.axpy.bind(x, acc, 0.5 + i))
    g.build().launch(replays)
    return planes, acc, g.schedule[0]


@pytest.mark.parametrize("n", [1000, MAX + 100])
def test_a_program_has_the_bits_of_the_python_graph(host_tests, kernels, threads, n):
    """A fork of 8 kernel chains joined by axpy, built as an eagle::exec::Program: eagle.Graph's bits and
    schedule, under 1, 2 and 4 threads."""
    rng = np.random.default_rng(n)
    start = [rng.standard_normal(n) for _ in range(8)]
    expected, expected_acc, schedule = python_fork_join(Plans(kernels), start, n, 6, 2)
    planes, acc = [s.copy() for s in start], np.zeros(n)
    chosen = ctypes.c_int(-1)
    call(host_tests, "cpp_fork_join", address(kernels, "scale"), address(kernels, "shift"),
         address(kernels, "axpy"), pointer_array(planes), len(planes), doubles(acc), ctypes.c_int64(n), 6,
         ctypes.c_int64(2), ctypes.byref(chosen))
    assert SCHEDULES[chosen.value] == schedule
    for got, want in zip(planes, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(acc, expected_acc)


@pytest.mark.parametrize("n", [64, MAX + 1])
def test_run_host_branches_has_the_bits_of_the_python_fork(host_tests, kernels, threads, n):
    """eagle::exec::runHostBranches over 5 chains: the bits of eagle.Graph().add_group of the same chains."""
    rng = np.random.default_rng(7)
    start = [rng.standard_normal(n) for _ in range(5)]
    planes = [s.copy() for s in start]
    eagle.Graph().add_group(chains(Plans(kernels), planes, 7)).build().launch(3)
    mine = [s.copy() for s in start]
    call(host_tests, "cpp_run_branches", address(kernels, "scale"), address(kernels, "shift"),
         pointer_array(mine), len(mine), ctypes.c_int64(n), 7, ctypes.c_int64(3))
    for got, want in zip(mine, planes, strict=True):
        np.testing.assert_array_equal(got, want)


def test_reductions_have_the_bits_of_eagle_reduce(host_tests, threads):
    """Program::reduce (sum and max of float64, sum of float32) gives eagle.reduce's bits."""
    n = 3 * _core.BLOCK + 5
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n) * 1e3
    x32 = x.astype(np.float32)
    want = {op: np.zeros(1) for op in ("sum", "max")}
    want32 = np.zeros(1, np.float32)
    g = eagle.Graph()
    for op, out in want.items():
        g.add_node(eagle.reduce(x, out, op=op), name=op)
    g.add_node(eagle.reduce(x32, want32), name="sum32").build().launch()
    out64, out32 = np.zeros(2), np.zeros(1, np.float32)
    call(host_tests, "cpp_reduce", doubles(x), ctypes.c_void_p(x32.ctypes.data), ctypes.c_int64(n),
         doubles(out64), ctypes.c_void_p(out32.ctypes.data))
    assert out64.tobytes() == np.concatenate([want["sum"], want["max"]]).tobytes()
    assert out32.tobytes() == want32.tobytes()


@pytest.mark.parametrize(("cell", "flag", "logical"), [(5, 1, 2000), (2, 0, 700)])
def test_loops_and_branches_of_a_program(host_tests, kernels, threads, cell, flag, logical):
    """A While loop (at most 3 turns) over a decrement and x *= 2, an if/else on a flag, and a mix, over
    the first `logical` samples: NumPy's bits for the same steps."""
    n = 2500
    x = np.linspace(-3.0, 3.0, n)
    turns = min(cell, 3)
    want = x.copy()
    head = want[:logical] * 2.0**turns + (1.0 if flag else -1.0)
    want[:logical] = head
    want_out = np.zeros(n)
    want_out[:logical] = (head * 1.0000001 + 0.5) / (1.0 + head * head)
    cells = np.array([cell], np.uint32)
    flags = np.array([flag], np.uint32)
    out = np.zeros(n)
    call(host_tests, "cpp_control", address(kernels, "scale"), address(kernels, "shift"),
         address(kernels, "decrement"), address(kernels, "mix"), ctypes.c_void_p(cells.ctypes.data),
         ctypes.c_void_p(flags.ctypes.data), doubles(x), doubles(out), ctypes.c_int64(n), ctypes.c_int64(3),
         ctypes.c_int64(logical))
    assert cells[0] == cell - turns
    np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(out, want_out)


def test_errors_carry_libeagles_status_and_message(host_tests):
    """eagle::Error: libeagle's status, a message that starts with the C++ call, then libeagle's words."""
    message = ctypes.create_string_buffer(512)
    call(host_tests, "cpp_errors", message, ctypes.c_size_t(len(message)))
    assert message.value.decode().startswith("eagle::exec::Program::stage: this Program was moved from")


def test_busy_from_two_threads(host_tests):
    """Busy: a second thread gets BusyError at once, from a Hold or from a launch whose guard the C core
    holds (the same flag), and nothing of the refused launch runs."""
    held = ctypes.c_int32(0)
    call(host_tests, "cpp_busy_two_threads", ctypes.byref(held))
    assert held.value == 1


# ------------------------------------------------------------------------------------------ the view


@pytest.fixture(scope="session")
def view_tests(build_cpp) -> ctypes.CDLL:
    # the view's pictures are compared with eagle-viz's (the cpp session installs it; the minimal
    # session has eagle-graph alone)
    pytest.importorskip("eagle.viz")
    return build_cpp("view_tests", (HERE / "view_tests.cpp").read_text())


def picture(lib: ctypes.CDLL, name: str, *args: object) -> str:
    """What an exported view test writes into its buffer, decoded."""
    out = ctypes.create_string_buffer(1 << 14)
    call(lib, name, *args, out, ctypes.c_size_t(len(out)))
    return out.value.decode()


#: eagle.Graph's faces, numbered as the view tests number the view's (text, Mermaid, DOT).
FACES = (str, eagle.Graph.to_mermaid, eagle.Graph.to_dot)


def assert_faces_equal(g: eagle.Graph, lib: ctypes.CDLL, name: str, kernels: tuple[object, ...],
                       arrays: list[np.ndarray], *args: object) -> str:
    """The view an exported view test builds draws each face as ``g`` does (each built over copies of
    ``arrays``: the test runs the program once); its text."""
    drawn = []
    for face, expected in enumerate(FACES):
        copies = [a.copy() for a in arrays]
        drawn.append(picture(lib, name, *kernels, *(ctypes.c_void_p(a.ctypes.data) for a in copies), *args,
                             face))
        assert drawn[-1] == expected(g), f"face {face}"
    return drawn[0]


def python_fork_join_graph(lib: Library, a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> eagle.Graph:
    """view_tests.cpp's cpp_view_fork_join as an eagle.Graph: each plan's planes named as the C++ view
    names the arrays."""
    def plan(kernel: str, *planes: tuple[str, str]) -> Plan:
        return Plan(lib.kernel(kernel), [*planes, ("c", "value")], name=kernel)

    g = eagle.Graph().add_group([[plan("scale", ("a", "readwrite")).bind(a, 2.0),
                                  plan("shift", ("a", "readwrite")).bind(a, 1.0)],
                                 [plan("scale", ("b", "readwrite")).bind(b, 3.0)]])
    for x, name, c in ((a, "a", 0.5), (b, "b", 1.5)):
        g.add(plan("axpy", (name, "read"), ("acc", "readwrite")).bind(x, acc, c))
    return g.build()


@pytest.mark.parametrize("n", [16, MAX + 1])
def test_the_view_prints_what_print_g_prints(view_tests, kernels, threads, n):
    """A fork of two branches joined by two axpys, built in C++ through eagle::GraphView: its text is
    str(g) of the same eagle.Graph, character for character (the long link, the plane names and the
    schedules included), its Mermaid and DOT are g.to_mermaid() and g.to_dot(), and the program it
    built has the graph's bits."""
    start = [np.linspace(0.0, 1.0, n), np.linspace(1.0, 2.0, n), np.zeros(n)]
    arrays = [s.copy() for s in start]
    g = python_fork_join_graph(kernels, *arrays)
    fns = (address(kernels, "scale"), address(kernels, "shift"), address(kernels, "axpy"))
    text = assert_faces_equal(g, view_tests, "cpp_view_fork_join", fns, start, ctypes.c_int64(n))
    assert "◂" in text and "stage 1 work_share" in text  # the long link b -> the second axpy is drawn
    viz = pytest.importorskip("eagle.viz")
    assert text == viz.draw_text(viz.layout(viz.describe(g, "test", fold=False)))
    mine = [s.copy() for s in start]
    picture(view_tests, "cpp_view_fork_join", *fns, *(doubles(a) for a in mine), ctypes.c_int64(n), 0)
    g.launch()
    for got, want in zip(mine, arrays, strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_views_reduce_prints_what_print_g_prints(view_tests, kernels):
    """A kernel then a reduce (eagle.reduce, named; a builtin's colours in Mermaid and DOT): each face
    of the view is the graph's."""
    n = 40
    x, total = np.ones(n), np.zeros(1)
    g = eagle.Graph().add(Plan(kernels.kernel("scale"), [("x", "readwrite"), ("c", "value")],
                               name="scale").bind(x, 2.0))
    g.add_node(eagle.reduce(x, total), name="sum").build()
    assert_faces_equal(g, view_tests, "cpp_view_reduce", (address(kernels, "scale"),), [x, total],
                       ctypes.c_int64(n))
    assert "classDef builtin" in g.to_mermaid() and ":::builtin" in g.to_mermaid()


def test_the_views_frames_print_what_print_g_prints(view_tests, kernels):
    """A device loop and a device if/else (eagle.DeviceLoop, eagle.DeviceIf), built in C++ as Program::loop
    and ifThenElse through the view: frames titled as eagle's, the bodies' boxes inside, the planes passed
    on under them; each face is the same eagle.Graph's, and the bits are the graph's."""
    n = 64
    x, result = np.linspace(-1.0, 1.0, n), np.zeros(n)
    cell, flag = np.array([2], np.uint32), np.array([1], np.uint32)
    px, presult, pcell = x.copy(), result.copy(), cell.copy()

    def plan(kernel: str, *params: tuple[str, str]) -> Plan:
        return Plan(kernels.kernel(kernel), list(params), name=kernel)

    scale = plan("scale", ("x", "readwrite"), ("c", "value"))
    shift = plan("shift", ("x", "readwrite"), ("d", "value"))
    decrement = plan("decrement", ("cell", "readwrite"))
    loop = eagle.DeviceLoop(pcell, "while", 3, eagle.Body([Node("plan", decrement.bind(pcell)),
                                                           Node("plan", scale.bind(px, 2.0))]))
    choice = eagle.DeviceIf(flag, eagle.Body([Node("plan", shift.bind(px, 1.0))]),
                            eagle.Body([Node("plan", shift.bind(px, -1.0))]))
    g = eagle.Graph().add_node(Node("device_loop", loop)).add_node(Node("device_if", choice))
    g = g.add(plan("mix", ("x", "read"), ("out", "write")).bind(px, presult)).build()
    fns = tuple(address(kernels, k) for k in ("scale", "shift", "decrement", "mix"))
    arrays = [cell, flag, x, result]
    text = assert_faces_equal(g, view_tests, "cpp_view_control", fns, arrays, ctypes.c_int64(n))
    assert "repeat ≤ 3" in text and "if guard · else" in text
    picture(view_tests, "cpp_view_control", *fns, *(ctypes.c_void_p(a.ctypes.data) for a in arrays),
            ctypes.c_int64(n), 0)
    g.launch()
    np.testing.assert_array_equal(x, px)
    np.testing.assert_array_equal(result, presult)
    assert cell[0] == pcell[0] == 0


def test_the_views_chain_in_a_body_prints_what_print_g_prints(view_tests, kernels):
    """A device loop over a chain (a decrement, x *= 2, out = mix(x)): the plane x the body passes from
    the scale to the mix is a flow of the view as of print(g), drawn by the wire between the two; each
    face is the same eagle.Graph's, and the bits are the graph's."""
    n = 32
    x, result, cell = np.linspace(-1.0, 1.0, n), np.zeros(n), np.array([2], np.uint32)
    px, presult, pcell = x.copy(), result.copy(), cell.copy()
    body = eagle.Body([Node("plan", Plan(kernels.kernel("decrement"), [("cell", "readwrite")],
                                         name="decrement").bind(pcell)),
                       Node("plan", Plan(kernels.kernel("scale"), [("x", "readwrite"), ("c", "value")],
                                         name="scale").bind(px, 2.0)),
                       Node("plan", Plan(kernels.kernel("mix"), [("x", "read"), ("out", "write")],
                                         name="mix").bind(px, presult))])
    g = eagle.Graph().add_node(Node("device_loop", eagle.DeviceLoop(pcell, "while", 3, body))).build()
    fns = tuple(address(kernels, k) for k in ("scale", "decrement", "mix"))
    text = assert_faces_equal(g, view_tests, "cpp_view_chain", fns, [cell, x, result], ctypes.c_int64(n))
    assert "repeat ≤ 3" in text and 'n2 -->|"x"| n3' in g.to_mermaid()  # x: the wire between the two boxes
    picture(view_tests, "cpp_view_chain", *fns, *(ctypes.c_void_p(a.ctypes.data) for a in (cell, x, result)),
            ctypes.c_int64(n), 0)
    g.launch()
    np.testing.assert_array_equal(x, px)
    np.testing.assert_array_equal(result, presult)


def test_a_refused_construct_leaves_the_view_as_it_was(view_tests, kernels):
    """ifThenElse refused for a name its other arm gives differently, and ifThenElse, ifThen and loop
    refused by the program (a NULL guard): the view's names are untouched, its text() the same."""
    x = np.ones(8)
    call(view_tests, "cpp_view_refused_constructs", address(kernels, "scale"), doubles(x), ctypes.c_int64(8))


def test_the_view_refuses_what_it_cannot_draw_truly(view_tests, kernels):
    """An unnamed array, overlapping different views, an empty stage, a name eagle.Graph's picture would
    cut, plane names wider than their room, a plane a body passes other than from one item to the next
    (read two items down, or written later in a loop's body for its next turn): each an eagle::Error that
    names the call and says what to change, never a picture."""
    x = np.ones(8)
    lines = picture(view_tests, "cpp_view_refusals", address(kernels, "scale"), doubles(x),
                    ctypes.c_int64(8)).splitlines()
    assert lines == [
        "eagle::GraphView::text: item 0 ('scale') touches an array no name() names: name it by its pointer",
        "eagle::GraphView::text: items 0 and 1 touch overlapping but different views of one memory: the view "
        "links accesses to the very same view only; give them the same view",
        "eagle::GraphView::text: stage 1 has no item: add one, or open no stage",
        "eagle::GraphView::kernel: the name 'a_name_of_twenty_five_col' is wider than 24 columns, which "
        "eagle.Graph's picture cuts: give a shorter one",
        "eagle::GraphView::text: the planes item 0 ('s') passes on, 'a_long_plane_name_of_many_columns', are "
        "wider than the 5 columns under its box, which eagle.Graph's picture cuts: give the arrays shorter "
        "names",
        "eagle::GraphView::loop: a body is drawn as one sequence of items, as eagle.Graph's device "
        "constructs are: build it with no stage() or branch()",
        "eagle::GraphView::text: node 0 ('repeat guard times') has no item in its frame: give its body "
        "an item",
        "eagle::GraphView::ifThen: an array is named 'x' here and 'y' in the body: give it one name",
        "eagle::GraphView::mermaid: the planes from item 0 to item 1, 'plane_number_one, plane_two_x', are "
        "wider than 24 columns, which eagle.Graph's picture cuts: give the arrays shorter names",
        *(f"eagle::GraphView::dot: node {reader} ('u') in the body of node 0 ('repeat guard times') reads "
          f"'x', which node {writer} ('s') writes{where}: print(g) draws that as a link the view does not "
          "draw (it draws a body's planes between consecutive items only); build the body so that each item "
          "reads only planes the item directly before it writes"
          for reader, writer, where in ((3, 1, ", not directly before it in one body"),
                                        (1, 2, " later in the loop's body, for its next turn"))),
    ]
    np.testing.assert_array_equal(x, np.ones(8))  # the refused kernel never ran


# ----------------------------------------------------------------------------------------------- CUDA


@pytest.fixture(scope="session")
def cuda_kernels(cuda_driver):
    """(module image, addOne's name, add_one_up_to's name): on the emulation the kernels compiled for the
    host and registered (their names carry the module's tag); on a GPU, NVRTC's PTX."""
    if cuda_driver is not None:
        module = cuda_driver.kernels(KERNELS_CU)
        tagged = {entry.split("@")[0]: entry for entry in re.findall(r"\.entry (\S+)\(", module.ptx)}
        return module.ptx.encode() + b"\0", tagged["addOne"].encode(), tagged["add_one_up_to"].encode()
    from eagle import _nvrtc

    if not _nvrtc.available():
        pytest.skip("a CUDA driver but no NVRTC to compile the test kernels "
                    "(pip install eagle-graph[cuda12])")
    return _nvrtc.compile_ptx(KERNELS_CU, "cpp_test").encode() + b"\0", b"addOne", b"add_one_up_to"


@pytest.fixture(scope="session")
def cuda_tests(build_cpp) -> ctypes.CDLL:
    return build_cpp("cuda_tests", (HERE / "cuda_tests.cpp").read_text())


@pytest.mark.parametrize("logical", [0, 100, 256, 10_000])
def test_capture_replay_and_retune(cuda_tests, cuda_kernels, logical):
    """Stream, StreamCapturer, CapturedGraph, Graph and Launcher: a capture and a kernel node replayed 3
    times on the caller's stream (one capture, one instantiation, three replays), then a samples kernel
    retuned."""
    n = 256
    x = np.arange(n, dtype=np.float32)
    stats = np.zeros(_core.lib.EAGLE_GPU_NSTATS, np.int64)
    image, add_one, up_to = cuda_kernels
    call(cuda_tests, "cpp_cuda_capture_replay", image, add_one, up_to, ctypes.c_void_p(x.ctypes.data), n, 3,
         ctypes.c_int64(logical), ctypes.c_void_p(stats.ctypes.data))
    want = np.arange(n, dtype=np.float32) + 2 * 3  # the captured add and the kernel node's, 3 times
    want[:logical] += 1
    np.testing.assert_array_equal(x, want)
    assert list(stats) == [1, 1, 3]  # captures, graph_builds, replays


def test_cuda_refusals(cuda_tests, cuda_kernels):
    """The CUDA types' refusals name the C++ call and carry libeagle's status and message."""
    message = ctypes.create_string_buffer(512)
    call(cuda_tests, "cpp_cuda_refusals", cuda_kernels[0], message, ctypes.c_size_t(len(message)))
    assert "eagle::cuda::Module::function: eagle_cuda_module_function: cuModuleGetFunction failed" in \
        message.value.decode()


# ----------------------------------------------------------------------------------- the docs' snippets


def snippets() -> dict[str, str]:
    """Every ``.. code-block:: cpp`` of docs/cpp.rst with a ``:name:``, dedented, by name."""
    found = {}
    block = re.compile(r"^\.\. code-block:: cpp\n   :name: ([\w-]+)\n\n((?:   .*\n|\n)+)", re.M)
    for match in block.finditer(DOCS.read_text()):
        found[match.group(1)] = textwrap.dedent(match.group(2)).strip("\n") + "\n"
    return found


LAUNCH_LINE = re.compile(r"^(\s*)(\w+)<<<(.+?)>>>\((.*)\);$", re.M)


def with_standin(code: str) -> str:
    """The kernel launch line ``k<<<cfg>>>(args);`` as the host stand-in's call,
    ``standin::launch(k, cfg, args);``."""
    return LAUNCH_LINE.sub(r"\1standin::launch(\2, \3, \4);", code)


def test_the_docs_name_every_snippet_this_file_compiles():
    """docs/cpp.rst holds seed 002's snippets as printed, and the tests below compile every named one."""
    found = snippets()
    assert set(found) == {"cpp-record", "cpp-replay", "cpp-retune", "cpp-program", "cpp-branches", "cpp-busy",
                          "cpp-view"}
    assert "addOne<<<1, N, 0, stream.cuda()>>>(dBuf, N);" in found["cpp-record"]
    assert "graph.addNode(eagle::cuda::CapturedGraph{ capturer.end() });" in found["cpp-record"]
    assert "eagle::cuda::Launcher launcher = graph.launcher();" in found["cpp-replay"]
    standin = "standin::launch(addOne, 1, N, 0, stream.cuda(), dBuf, N);"
    assert with_standin(found["cpp-record"]).count(standin) == 1


SEED_PRELUDE = """\
#include "eagle/eagle.hpp"
#include "harness.hpp"
#include "standin.hpp"

EXPORT int cpp_seed_002(const char *image, const char *add_one, const char *add_one_up_to, float *host)
{
    return harness::run([&] {
        constexpr int N = 256;
        constexpr int REPLAYS = 3;
        eagle::cuda::Module module(image);
        void *addOne = module.function(add_one);
        void *addOneUpTo = module.function(add_one_up_to);
        eagle::cuda::DeviceMemory buffer(N * sizeof(float));
        buffer.copyFrom(host);
        float *dBuf = buffer.get<float>();
"""


def test_seed_002_snippets_run_on_the_driver(build_cpp, cuda_kernels):
    """Record, replay and retune as docs/cpp.rst prints them (the launch line through the host stand-in):
    the first N/2 values end at 4, the rest at 3."""
    found = snippets()
    body = "".join(with_standin(found[name]) for name in ("cpp-record", "cpp-replay", "cpp-retune"))
    source = SEED_PRELUDE + textwrap.indent(body, " " * 8) + "        buffer.copyTo(host);\n    });\n}\n"
    lib = build_cpp("seed_002", source)
    host = np.zeros(256, np.float32)
    call(lib, "cpp_seed_002", *cuda_kernels, ctypes.c_void_p(host.ctypes.data))
    np.testing.assert_array_equal(host, np.repeat(np.float32([4, 3]), 128))


NVCC_PRELUDE = KERNELS_CU + """
#include <cstdio>
#include <cuda_runtime.h>
#include "eagle/eagle.hpp"

int main()
{
    constexpr int N = 256;
    constexpr int REPLAYS = 3;
    float *dBuf = nullptr;
    if (cudaMalloc(&dBuf, N * sizeof(float)) != cudaSuccess || cudaMemset(dBuf, 0, N * sizeof(float)))
        return 2;
    void *addOneUpTo = nullptr;
    if (cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t *>(&addOneUpTo),
                            reinterpret_cast<const void *>(add_one_up_to)) != cudaSuccess)
        return 3;
"""
NVCC_END = """
    float host[N];
    cudaMemcpy(host, dBuf, sizeof host, cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; ++i)
        if (host[i] != (i < N / 2 ? 4.0f : 3.0f))
            return 1;
    std::printf("seed 002 ok\\n");
    return 0;
}
"""


def test_seed_002_snippets_with_nvcc(tmp_path, cuda_driver):
    """The same snippets, verbatim, kernel launch line and all, compiled by nvcc; run where a GPU is."""
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed: the snippets ran through the host stand-in only")
    found = snippets()
    body = "".join(found[name] for name in ("cpp-record", "cpp-replay", "cpp-retune"))
    source = tmp_path / "seed_002.cu"
    source.write_text(NVCC_PRELUDE + textwrap.indent(body, "    ") + NVCC_END)
    program = tmp_path / "seed_002"
    library = include_dir().parent / "libeagle.so"  # the installed one: a program of its own
    cmd = [nvcc, "-std=c++17", "-I", str(include_dir()), str(source), "-o", str(program), str(library),
           f"-Xlinker=-rpath,{library.parent}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=compiler_env())
    assert result.returncode == 0, f"{shlex.join(cmd)}\n{result.stderr}"
    if cuda_driver is not None:
        return  # compiled; the CUDA runtime it links needs a real driver to run
    run = subprocess.run([str(program)], capture_output=True, text=True, timeout=120, env=compiler_env())
    assert (run.returncode, run.stdout) == (0, "seed 002 ok\n"), run.stderr


HOST_PRELUDE = """\
#include <vector>
#include "eagle/eagle.hpp"
#include "harness.hpp"

EXPORT int cpp_docs_host(eagle_kernel_fn scale, double *results)
{
    return harness::run([&] {
        std::int64_t n = 3000;
"""


def test_docs_host_snippets_compile_and_run(build_cpp, kernels):
    """docs/cpp.rst's host program, branch runner and guard snippets, compiled as printed and run."""
    found = snippets()
    body = ("{\n" + found["cpp-program"] + "{\n" + found["cpp-busy"] + "}\nresults[0] = total;\n}\n"
            "{\n" + found["cpp-branches"] + "results[1] = a[0] + a[n - 1];\nresults[2] = b[0];\n}\n")
    source = HOST_PRELUDE + textwrap.indent(body, " " * 8) + "    });\n}\n"
    lib = build_cpp("docs_host", source)
    results = np.zeros(3)
    call(lib, "cpp_docs_host", address(kernels, "scale"), doubles(results))
    # x: 101 runs of x *= 2 (100, then one more under the guard), summed after each run
    assert results[0] == 3000 * 2.0**101
    assert list(results[1:]) == [2 * 2.0**10, 3.0**10]


def docs_picture(name: str) -> str:
    """The ``.. code-block:: text`` of docs/cpp.rst with ``:name: name``, dedented."""
    block = re.compile(rf"^\.\. code-block:: text\n   :name: {name}\n\n((?:   .*\n|\n)+)", re.M)
    match = block.search(DOCS.read_text())
    assert match, f"docs/cpp.rst has no text block named {name}"
    return textwrap.dedent(match.group(1)).strip("\n")


def test_docs_view_snippet_prints_the_picture_the_page_shows(build_cpp, kernels, capfd):
    """docs/cpp.rst's GraphView snippet, compiled as printed and run: what it prints is the picture the
    page shows under it."""
    source = ('#include <iostream>\n#include <vector>\n#include "eagle/eagle.hpp"\n#include "harness.hpp"\n\n'
              "EXPORT int cpp_docs_view(eagle_kernel_fn scale)\n{\n    return harness::run([&] {\n"
              "        std::int64_t n = 3000;\n" + textwrap.indent(snippets()["cpp-view"], " " * 8)
              + "    });\n}\n")
    lib = build_cpp("docs_view", source)
    capfd.readouterr()
    call(lib, "cpp_docs_view", address(kernels, "scale"))
    assert capfd.readouterr().out == docs_picture("cpp-view-picture") + "\n"


def header_examples() -> dict[str, str]:
    """The ``@code`` examples of the installed headers' Doxygen comments (what the API page shows), by
    header and order: ``"exec.hpp:0"``, ..."""
    found = {}
    for header in HEADERS:
        text = (include_dir() / header).read_text()
        for k, match in enumerate(re.finditer(r"@code\n(.*?)^\s*\* @endcode", text, re.S | re.M)):
            lines = [re.sub(r"^\s*\* ?", "", line) for line in match.group(1).splitlines()]
            found[f"{Path(header).name}:{k}"] = "\n".join(lines) + "\n"
    return found


def test_header_examples_compile_and_run(build_cpp, kernels):
    """The headers' Doxygen examples, compiled as printed and run: resolve's answer is the one its comment
    gives, the Program example's sum is 8 samples of 2^100, the GraphView example's picture is its graph's
    (the header its comment gives, both boxes) and its sum is 8 samples of 2."""
    found = header_examples()
    assert set(found) == {"exec.hpp:0", "exec.hpp:1", "Busy.h:0", "view.hpp:0"}
    body = ("{\n" + found["exec.hpp:0"] + "CHECK(s == Schedule::BranchTasks);\n}\n"
            "{\n" + found["exec.hpp:1"] + "results[0] = total;\n}\n"
            "{\n" + found["Busy.h:0"] + "}\n"
            "{\nstd::fill(xs.begin(), xs.end(), 1.0);\ntotal = 0.0;\n" + found["view.hpp:0"]
            + 'CHECK(picture.rfind("eagle.Graph 2 nodes · 0 groups · backend: cpu\\n", 0) == 0);\n'
            'CHECK(picture.find("│ scale │") != std::string::npos);\n'
            'CHECK(picture.find("│ sum │") != std::string::npos);\n'
            "results[1] = total;\n}\n")
    source = ('#include <algorithm>\n#include <vector>\n'
              '#include "eagle/eagle.hpp"\n#include "harness.hpp"\n\n'
              "EXPORT int cpp_header_examples(eagle_kernel_fn scale, double *results)\n{\n"
              "    return harness::run([&] {\n"
              "        std::int64_t n = 8;\n        std::vector<double> xs(8, 1.0);\n"
              "        double *x = xs.data();\n        double total = 0.0;\n"
              + textwrap.indent(body, " " * 8) + "    });\n}\n")
    lib = build_cpp("header_examples", source)
    results = np.zeros(2)
    call(lib, "cpp_header_examples", address(kernels, "scale"), doubles(results))
    assert list(results) == [8 * 2.0**100, 8 * 2.0]
