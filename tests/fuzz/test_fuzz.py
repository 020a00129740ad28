"""The differential fuzzer: random builder programs (programs.py) held to what they mean.

For each program:
- the graph's replay equals the program run as plain Python (kernels by hawk's reference
  evaluator), bit for bit, for two closures of one builder, with the buffer plan sharing the
  temporaries' storage and with it off (``EAGLE_PLAN=0``);
- at 1, 2 and 3 threads (small and large batches, so both CPU schedules), with fusion on and
  off (EAGLE_FUSE), three replays equal the reference interpreter's (eagle.testing.check), and
  the fused replay gives the unfused one's bits; at 2 threads every fused run's sample loop is
  interleaved (hawk.emit.Emitter.interleaved), however short;
- ``bind`` to fresh arrays gives what a graph built on them gives;
- on device arrays (the CUDA driver emulation, or a GPU), fused and unfused, with the buffer
  plan on and off, the replay gives the NumPy one's bits;
- a smooth program's ``record=True`` gradient equals central differences, and its bits are
  those of the kernels reversed one by one and of a forward built unfused (which stores every
  plane: the fused one's reverse recomputes what it kept in registers); on device arrays (its
  forward on the device) it has the bits of the graph over NumPy arrays.

``EAGLE_FUZZ_EXAMPLES`` sets the number of programs per test (the ``fuzz`` nox session runs
thousands, drawn afresh: ``EAGLE_FUZZ_RANDOM=1``); a failure prints the program in both
renderings and Hypothesis's reproduce blob.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("eagle.builder")
pytest.importorskip("hawk")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402

import eagle  # noqa: E402
import hawk  # noqa: E402
from eagle.testing import check  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from programs import Program, dispatch_kernel, load_module, load_pool, programs  # noqa: E402

EXAMPLES = int(os.environ.get("EAGLE_FUZZ_EXAMPLES", "200"))
POOLS = int(os.environ.get("EAGLE_FUZZ_POOLS", "2"))
#: the suite draws the same programs every run, so its verdict is the code's; the fuzz session
#: (EAGLE_FUZZ_RANDOM=1) draws fresh ones each time to find what those miss
RANDOM = os.environ.get("EAGLE_FUZZ_RANDOM") == "1"
#: rows of a device argument are CuPy views (eagle's own DeviceArray, the emulation's, has none)
GPU_VIEWS = importlib.util.find_spec("cupy") is not None
#: Recording, building and checking hundreds of programs (and shrinking a failing one) outlasts the
#: suite's per-test timeout; the fuzz session runs with none.
pytestmark = pytest.mark.timeout(1800)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, print_blob=True, database=None, derandomize=not RANDOM,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz")
    sys.path.insert(0, str(path))
    return path


_COUNT = [0]


def faces(program: Program, folder: Path) -> tuple[Any, Any]:
    """(make of the builder, make of the plain-Python program): each takes the closure's number."""
    load_pool(program.pool, folder)
    _COUNT[0] += 1
    built = load_module(program.builder_source(), folder / f"fuzz_builder_{_COUNT[0]}.py")
    eager = load_module(program.eager_source(), folder / f"fuzz_eager_{_COUNT[0]}.py")
    return built.make, eager.make


def fresh(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() for k, v in values.items()}


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [a for v in tree.values() for a in leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [a for v in tree for a in leaves(v)]
    return [tree]


def same_bits(got: Any, want: Any, what: str) -> None:
    got_leaves, want_leaves = [np.asarray(a) for a in leaves(got)], [np.asarray(a) for a in leaves(want)]
    assert len(got_leaves) == len(want_leaves), what
    for k, (a, b) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype), f"{what}: leaf {k}: {a.shape} {a.dtype}, {b.dtype}"
        if a.tobytes() != b.tobytes():
            at = int(np.flatnonzero(a.reshape(-1) != b.reshape(-1))[0]) if a.size else 0
            got, want = a.reshape(-1)[at], b.reshape(-1)[at]
            raise AssertionError(f"{what}: leaf {k} differs at {at}: {got!r}, expected {want!r}")


def record(builder: Any, values: dict[str, Any], **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uncapped-loop and rebuild warnings are not under test here
        return builder(**values, **kwargs)


@contextlib.contextmanager
def switched(variable: str, on: bool) -> Iterator[None]:
    """Builds inside see ``variable`` (EAGLE_PLAN, EAGLE_FUSE) set to 1 or 0."""
    before = os.environ.get(variable)
    os.environ[variable] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[variable]
        else:
            os.environ[variable] = before


def plan(on: bool) -> contextlib.AbstractContextManager[None]:
    """Builds inside share the temporaries' storage (the default) or give each its own."""
    return switched("EAGLE_PLAN", on)



@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    from eagle import _core

    before = _core.num_threads()
    _core.set_num_threads(n)
    try:
        yield
    finally:
        _core.set_num_threads(before)


def fusion(on: bool) -> contextlib.AbstractContextManager[None]:
    """Build with fusion on or off (EAGLE_FUSE): both are held to the reference."""
    return switched("EAGLE_FUSE", on)


@contextlib.contextmanager
def interleaving(always: bool) -> Iterator[None]:
    """Fused runs built inside interleave every sample loop (``always``), or those long enough."""
    from hawk import emit

    before = emit.INTERLEAVED_FROM
    emit.INTERLEAVED_FROM = 0 if always else before
    try:
        yield
    finally:
        emit.INTERLEAVED_FROM = before



def eager_run(make: Any, closure: float, values: dict[str, Any]) -> tuple[Any, np.ndarray]:
    args = fresh(values)
    return make(closure)(**args), args["y"]


#: what a replay of a scan over ``cnt`` past the rows of ``xs`` raises (Python's own IndexError)
PAST_THE_ROWS = r"range\(cnt\) asks for \d turns, xs has 2 rows: set cnt to at most 2"
#: what a launch with a checked Table read out of range raises, on the CPU and the GPU, in a program
#: with a fork (the first launch that went wrong: one of the branches, which may run in either order)
OUT_OF_RANGE = r"hawk.kernel k\d: sample \d+ read Table 'a\d' \(shape \(\d+,\)\) at index -?\d+ on axis 0"


def raised(run: Any, program: Program) -> str | None:
    """The pattern of the IndexError ``run()`` raises, which the program's graph must raise at every
    launch: a scan's count past the rows of xs (:data:`PAST_THE_ROWS`), or a checked Table read out
    of range (its very message: the kernel, sample, index and line; :data:`OUT_OF_RANGE` with a
    fork); None when it raises none."""
    try:
        run()
    except IndexError as error:
        if "out of range, at line" in str(error):
            return OUT_OF_RANGE if "g.parallel()" in program.builder_source() else re.escape(str(error))
        if "is out of bounds" in str(error) or "asks for" in str(error):
            return PAST_THE_ROWS
        raise
    return None


@FUZZ
@given(program=programs(pools=POOLS))
def test_programs_on_the_cpu(program: Program, folder: Path) -> None:
    make_graph, make_eager = faces(program, folder)
    raises = raised(lambda: eager_run(make_eager, program.closure, program.values), program)
    if raises:
        for fused in (True, False):
            with fusion(fused):
                g = record(make_graph(program.closure), fresh(program.values))
            with pytest.raises(IndexError, match=raises):
                g()
        return
    faces_run = ((program.closure, True), (program.closure, False), (program.closure + 0.25, True))
    for closure, planned in faces_run:  # one builder, two closures; the buffer plan on and off
        want, want_y = eager_run(make_eager, closure, program.values)
        args = fresh(program.values)
        with plan(planned):
            g = record(make_graph(closure), args)
        how = f"closure {closure}, buffer plan {'on' if planned else 'off'}"
        same_bits(g(), want, f"replay vs plain Python ({how})")
        same_bits(args["y"], want_y, "y, written in place")
    builder = make_graph(program.closure)
    for team, fused in itertools.product((1, 2, 3), (True, False)):
        with threads(team), fusion(fused), interleaving(team == 2):
            check(record(builder, fresh(program.values)), 3)
    with fusion(False):
        unfused = record(builder, fresh(program.values))()
    same_bits(record(builder, fresh(program.values))(), unfused, "fused vs unfused replay")
    # bind to fresh arrays == a graph built on them
    g = record(builder, fresh(program.values))
    other = {k: (v + 0.5 if v.dtype == np.float64 else v.copy()) for k, v in program.values.items()}
    mine, theirs = fresh(other), fresh(other)
    g.bind(**mine)
    same_bits(g(), record(builder, theirs)(), "bound graph vs graph built on the new arrays")
    same_bits(mine["y"], theirs["y"], "y after bind")


@settings(FUZZ, max_examples=max(EXAMPLES // 6, 5))
@given(program=programs(pools=1, rows=GPU_VIEWS))
def test_programs_on_device_arrays(program: Program, folder: Path, gpu: Any) -> None:
    make_graph, _ = faces(program, folder)
    builder = make_graph(program.closure)
    host_args = fresh(program.values)
    try:
        on_device = record(builder, {k: gpu.asarray(v) for k, v in program.values.items()})
    except ValueError as error:  # a GPU graph checks a count against the rows at its top level only
        assert "cannot check cnt against the rows: make cnt a Python number" in str(error)
        return
    raises = raised(lambda: record(builder, fresh(program.values))(), program)
    if raises:
        with pytest.raises(IndexError, match=raises):  # raised by the launch's wait
            on_device()
        return
    want = record(builder, host_args)()
    # the buffer plan shares device temporaries' storage too (inside bodies as well): on and off
    for fused, planned in ((True, True), (False, True), (True, False)):
        device_args = {k: gpu.asarray(v) for k, v in program.values.items()}
        with fusion(fused), plan(planned):
            g = record(builder, device_args)
        assert g.backend == "gpu"
        got = g()
        same_bits([gpu.get(a) for a in leaves(got)], leaves(want),
                  f"device replay (fused: {fused}, buffer plan: {planned}) vs host")
        same_bits(gpu.get(device_args["y"]), host_args["y"], "y on the device")


#: what eagle.simulate(compact=True) says of a pool kernel keyed by its sample's position (a draw,
#: hawk.sample()): moving samples would change its bits, so it is refused by name
POSITIONAL = (r"eagle.simulate: compact=True, but item 0 \('(k\d+)'\): kernel '\1' depends on its "
              "sample's position")


@settings(FUZZ, max_examples=max(EXAMPLES // 6, 5))
@given(program=programs(pools=POOLS, stepping=True))
def test_stepping_loops_under_simulate(program: Program, folder: Path, monkeypatch: Any) -> None:
    """The program's stepping loops run by eagle.simulate over the compiled plans, compacted between
    every step (chunks of one step) and not, give the plain Python loops' bits; a pool kernel that
    depends on its sample's position is refused compaction by name."""
    _, make_eager = faces(program, folder)
    assume(not raised(lambda: eager_run(make_eager, program.closure, program.values), program))
    want, want_y = eager_run(make_eager, program.closure, program.values)
    monkeypatch.setattr(eagle._simulate, "CHUNK", 1)
    for compact in (False, True):
        monkeypatch.setitem(make_eager.__globals__, "SIMULATE", compact)
        try:
            got, got_y = eager_run(make_eager, program.closure, program.values)
        except ValueError as error:
            assert compact and re.match(POSITIONAL, str(error)), error
            continue
        same_bits(got, want, f"eagle.simulate(compact={compact}) vs the Python loops")
        same_bits(got_y, want_y, "y, written in place")


@settings(FUZZ, max_examples=max(EXAMPLES // 20, 4))
@given(number=hypothesis.strategies.integers(0, 10_000), n=hypothesis.strategies.integers(0, 3000),
       logical=hypothesis.strategies.integers(0, 3000), skipping=hypothesis.strategies.booleans(),
       seed=hypothesis.strategies.integers(0, 2**31))
def test_every_dispatch_policy_gives_the_reference_bits(number: int, n: int, logical: int, skipping: bool,
                                                          seed: int, folder: Path) -> None:
    """A random kernel's dispatch group run switch, predicated and segmented (at a logical size,
    with skip= or not), on one and two threads: every one gives the reference evaluator's bits,
    a segmented skip leaving the samples it marks as they were."""
    source = dispatch_kernel(number)
    split = load_module(source, folder / f"fuzz_dispatch_{number}.py").split
    policies = ("switch", "predicated", "segmented")
    if "for i in range" in source:  # a loop in an arm, which "predicated" would run for every sample
        policies = ("switch", "segmented")
        refused = r"dispatch group 'g': the arm at line .* holds a loop"
        with pytest.raises(hawk.KernelSyntaxError, match=refused):
            eagle.Graph().add(split.plan(np.zeros(4), np.zeros(4, np.int32), np.zeros(4), 0.75)
                              .with_dispatch({"g": "predicated"})).build()
    rng = np.random.default_rng(seed)
    a0, acc = rng.normal(size=n), rng.normal(size=n)
    m = rng.integers(-4, 5, n).astype(np.int32)
    skip = (rng.random(n) < 0.3).astype(np.uint8) if skipping else None
    size = min(logical, n)
    want_acc = acc.copy()
    want = split.reference(a0, m, want_acc, 0.75)
    for policy, team in itertools.product(policies, (1, 2)):
        got_acc, out = acc.copy(), np.full(n, -7.0)
        bound = split.plan(a0, m, got_acc, 0.75, buffer=out).with_dispatch({"g": policy}, skip=skip)
        g = eagle.Graph().add(bound).build()
        g.set_logical_size(size)
        with threads(team):
            g.launch()
        ran = np.arange(n) < size
        if policy == "segmented" and skip is not None:
            ran &= skip == 0
        what = f"{policy} on {team} threads, logical size {size} of {n}"
        same_bits(out[ran], want[ran], what)
        same_bits(got_acc[ran], want_acc[ran], f"acc, {what}")
        same_bits(got_acc[~ran], acc[~ran], f"acc of the samples that did not run, {what}")
        assert (out[~ran] == -7.0).all(), what


#: the steps of the central differences a gradient is held to, coarse first
STEPS = (1e-4, 1e-3, 1e-5, 1e-7, 1e-9)

#: what a GPU build of a recorded graph says of a counted loop over a cell (no most turns)
NO_CAP = r"eagle\.Graph\.build: the device loop '\w+' has no cap; on the GPU a record=True graph"


@settings(FUZZ, max_examples=max(EXAMPLES // 6, 5))
@given(program=programs(pools=1, smooth=True, rows=GPU_VIEWS))
def test_gradients_of_smooth_programs_on_device_arrays(program: Program, folder: Path, gpu: Any) -> None:
    """A smooth program's record=True graph over device arrays (its forward on the device, its
    reverse on what the run kept, copied home), fused and unfused: the gradients of the graph over
    NumPy arrays, bit for bit; a counted loop over a cell, which a GPU tape cannot size at build,
    is refused by name."""
    pytest.importorskip("eagle.diff")
    wrt = [name for name in ("x0", "x1") if name in program.read]
    assume(wrt)
    make_graph, make_eager = faces(program, folder)
    assume(not raised(lambda: eager_run(make_eager, program.closure, program.values), program))
    seed = np.linspace(-1.0, 1.0, program.n)
    host = record(make_graph(program.closure), fresh(program.values), record=True)
    assume(all(np.all(np.isfinite(a)) for a in leaves(host())))
    want = eagle.diff.reverse(host.record, {"result": seed}, wrt=tuple(wrt))
    for fused in (True, False):
        with fusion(fused):
            device_args = {k: gpu.asarray(v) for k, v in program.values.items()}
            try:
                g = record(make_graph(program.closure), device_args, record=True)
            except ValueError as error:
                message = str(error)
                assert re.match(NO_CAP, message) or "cannot check cnt against the rows" in message, message
                return
        assert g.backend == "gpu"
        g()
        got = eagle.diff.reverse(g.record, {"result": seed}, wrt=tuple(wrt))
        for name in wrt:
            same_bits(gpu.get(got[name]), want[name], f"d/d{name} on the device (fused: {fused}) vs host")


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 5))
@given(program=programs(pools=POOLS, smooth=True))
def test_gradients_of_smooth_programs(program: Program, folder: Path) -> None:
    pytest.importorskip("eagle.diff")
    wrt = [name for name in ("x0", "x1") if name in program.read]  # an argument no kernel reads is
    assume(wrt)  # refused as wrt= when it is one cell (it could be a Param by value)
    make_graph, make_eager = faces(program, folder)
    # a scan's count past the rows, a checked read out of range raise (test_programs_on_the_cpu holds the
    # graph to it): no gradient
    assume(not raised(lambda: eager_run(make_eager, program.closure, program.values), program))
    seed = np.linspace(-1.0, 1.0, program.n)
    args = fresh(program.values)
    g = record(make_graph(program.closure), args, record=True)
    # a value that overflowed has no finite differences to hold a gradient to
    assume(all(np.all(np.isfinite(a)) for a in leaves(g())))
    grads = eagle.diff.reverse(g.record, {"result": seed}, wrt=tuple(wrt))
    unfused = eagle.diff.reverse(g.record, {"result": seed}, wrt=tuple(wrt), fuse=False)
    with fusion(False):  # a forward that stores every plane: the reverse recomputes none
        stored = record(make_graph(program.closure), fresh(program.values), record=True)
    stored()
    kept = eagle.diff.reverse(stored.record, {"result": seed}, wrt=tuple(wrt))
    for name in wrt:  # a fused reverse gives the bits of the kernels reversed one by one
        np.testing.assert_array_equal(grads[name], unfused[name])
        np.testing.assert_array_equal(grads[name], kept[name])
    eager = make_eager(program.closure)

    def loss(name: str, i: int, step: float) -> float:
        values = fresh(program.values)
        values[name][i] += step
        return float(np.dot(seed, eager(**values)))

    def central(name: str, i: int, h: float) -> float:
        return (loss(name, i, h) - loss(name, i, -h)) / (2 * h)

    def richardson(name: str, i: int, h: float) -> float:
        # two central differences extrapolated: error O(h^4), so the polynomials the kernels
        # compose (degree 20 and more) are still differentiated to about 1e-9
        return (4 * central(name, i, h / 2) - central(name, i, h)) / 3

    for name in wrt:
        # A cell's rounding noise grows as the step shrinks, its truncation error as it grows: the
        # gradient must match the differences at one step of several (a wrong one matches none).
        # The fine steps are tried only when the coarse ones all miss: a sin or cos of a value that
        # grew large oscillates faster than a coarse step, whose differences see only the rest.
        tried = []
        for h in STEPS:
            numeric = np.array([richardson(name, i, h) for i in range(program.n)])
            scale = 1e-7 * max(1.0, float(np.max(np.abs(numeric))))
            tried.append((numeric, np.abs(grads[name] - numeric) <= scale + 1e-6 * np.abs(numeric)))
            if np.all(np.any([ok for _, ok in tried], axis=0)):
                break
        assume(any(np.all(np.isfinite(numeric)) for numeric, _ in tried))  # overflows at every step
        assert np.all(np.any([ok for _, ok in tried], axis=0)), (
            f"d(result . seed)/d{name} is {grads[name]}; central differences at steps "
            f"{', '.join(map(str, STEPS[:len(tried)]))} give {', '.join(str(n) for n, _ in tried)}")
