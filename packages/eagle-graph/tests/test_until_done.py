"""eagle.until_done on the CPU: the loop over native plans and opaque nodes, runner.run stepping, the
node in a graph, its reference, and every refusal with its message."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import eagle
import eagle.testing
from eagle import _core
from eagle.native import Library, compile_library
from eagle.plan import Plan

GROW_C = r"""
#include "eagle/eagle.h"

/* x[i] += 1 for every sample, finished or not; done[i] = x[i] >= target[i] */
void grow(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr;
    const double *target = a[1].ptr;
    unsigned char *done = a[2].ptr;
    for (int64_t i = b; i < e; ++i) {
        x[i] += 1.0;
        done[i] = x[i] >= target[i];
    }
}

/* y[r * n + i] = 2 * y[r * n + i] over two rows, every sample */
void double_rows(int64_t b, int64_t e, const eagle_arg *a)
{
    double *y = a[0].ptr;
    const int64_t n = a[1].i64;
    for (int64_t r = 0; r < 2; ++r)
        for (int64_t i = b; i < e; ++i)
            y[r * n + i] *= 2.0;
}
"""


@pytest.fixture(scope="module")
def grow() -> Plan:
    lib = Library(compile_library(GROW_C, name="test_until_grow"))
    return Plan(lib.kernel("grow"), [("x", "readwrite"), ("target", "read"), ("done", "readwrite")],
                name="grow", owner=lib)


@pytest.fixture(scope="module")
def double_rows() -> Plan:
    lib = Library(compile_library(GROW_C, name="test_until_grow"))
    return Plan(lib.kernel("double_rows"), [("y", "readwrite"), ("n", "value", "i64")], name="double_rows",
                owner=lib)


def counting(n: int = 5000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x from 0, each sample finishing when it reaches its own target: 1 to 40 steps."""
    targets = (np.arange(n) * 7919 % 40 + 1).astype(np.float64)
    return np.zeros(n), targets, np.zeros(n, np.uint8)


def test_a_native_plan_is_masked_finished_samples_keep_their_bits(grow, double_rows):
    x, target, done = counting()
    y = np.ones((2, x.size))
    runner = eagle.until_done([grow.bind(x, target, done), double_rows.bind(y, x.size)], terminated=done,
                              max_steps=1000)
    assert runner.run() == eagle.Steps(40, 0)
    np.testing.assert_array_equal(x, target)  # each stopped at its own step, though grow writes all
    np.testing.assert_array_equal(y, np.broadcast_to(2.0 ** target, y.shape))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_same_bits_on_any_thread_count(grow, double_rows, threads):
    before = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        x, target, done = counting(9000)
        y = np.linspace(0.5, 1.5, 2 * x.size).reshape(2, -1)
        want = y * 2.0 ** target
        assert eagle.until_done([grow.bind(x, target, done), double_rows.bind(y, x.size)], terminated=done,
                                max_steps=100).run().done
    finally:
        _core.set_num_threads(before)
    assert y.tobytes() == want.tobytes()


def test_run_goes_on_where_it_stopped_and_a_capped_run_says_so(grow):
    x, target, done = counting()
    runner = eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=10)
    first = runner.run()  # the node's own cap
    assert first == eagle.Steps(10, int((target > 10).sum())) and not first.done
    assert runner.run(max_steps=25) == eagle.Steps(25, int((target > 35).sum()))
    assert runner.run(max_steps=100) == eagle.Steps(5, 0)
    np.testing.assert_array_equal(x, target)


def test_code_between_runs_in_your_own_loop(grow):
    """What a stream or host node does between the runs: here a tally of the live samples."""
    x, target, done = counting()
    runner = eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=1000)
    live = []
    while not (result := runner.run(max_steps=8)).done:
        live.append(result.live)
        assert result.live == int((done == 0).sum())
    assert live == [int((target > k).sum()) for k in (8, 16, 24, 32)]


def test_a_node_of_a_graph_runs_the_loop_at_each_launch_and_is_held_to_the_reference(grow):
    x, target, done = counting()
    reset = eagle.opaque(lambda: (x.fill(0.0), done.fill(0)), writes={"x": x, "done": done})
    runner = eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=12)
    g = eagle.Graph().add_node(reset, name="reset").add_node(runner, name="walk").build()
    g.launch()
    np.testing.assert_array_equal(x, np.minimum(target, 12.0))
    eagle.testing.check(g, 2)
    if importlib.util.find_spec("eagle.viz") is not None:  # the picture is eagle-viz's (not in `minimal`)
        assert "until terminated · ≤ 12" in str(g)


def test_an_opaque_step_reads_terminated_and_a_finished_sample_is_left_alone():
    n = 64
    x, done = np.arange(n, dtype=np.float64), np.zeros(n, np.int32)

    def step() -> None:
        live = done == 0
        x[live] = x[live] * 0.5
        done[:] = x < 1.0

    node = eagle.opaque(step, reads={"done": done}, writes={"x": x, "done": done})
    result = eagle.until_done([node], terminated=done, max_steps=100).run()
    assert result.done and result.steps == 6  # 63 is below 1 after 6 halvings
    assert (x < 1.0).all() and (x >= 0.5).sum() == n - 1


def test_the_loop_that_never_ran_has_run_no_steps(grow):
    x, target, done = counting(10)
    done[:] = 1
    runner = eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=5)
    assert runner.run() == eagle.Steps(0, 0)
    assert not x.any()


# ------------------------------------------------------------------ refusals


def test_bad_terminated_planes_are_refused(grow):
    x, target, done = counting(8)
    for bad, words in [(np.zeros((2, 4), np.uint8), "1-D plane"), (np.zeros(8), "got a float64 plane"),
                       (np.zeros(16, np.uint8)[::2], "contiguous"), ([0, 0], "1-D plane")]:
        with pytest.raises((TypeError, ValueError), match=f"eagle.until_done: terminated .*{words}"):
            eagle.until_done([grow.bind(x, target, done)], terminated=bad, max_steps=3)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, None])
def test_max_steps_must_be_a_positive_int(grow, bad):
    x, target, done = counting(8)
    with pytest.raises(ValueError, match=r"eagle.until_done: max_steps must be a positive int"):
        eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=bad)
    runner = eagle.until_done([grow.bind(x, target, done)], terminated=done, max_steps=3)
    if bad is not None:
        with pytest.raises(ValueError, match=r"eagle.until_done: runner.run: max_steps must be a positive"):
            runner.run(max_steps=bad)


def test_max_steps_is_required(grow):
    x, target, done = counting(8)
    with pytest.raises(TypeError, match="max_steps"):
        eagle.until_done([grow.bind(x, target, done)], terminated=done)


def test_items_are_a_non_empty_list_of_plans_and_nodes(grow):
    x, target, done = counting(8)
    bound = grow.bind(x, target, done)
    for bad in ([], bound, (i for i in [bound])):
        with pytest.raises(TypeError, match=r"eagle.until_done: items is a non-empty list"):
            eagle.until_done(bad, terminated=done, max_steps=3)
    with pytest.raises(TypeError, match=r"eagle.until_done: item 1 is a function; an item is a plan"):
        eagle.until_done([bound, lambda: None], terminated=done, max_steps=3)
    with pytest.raises(TypeError, match=r"item 1 \('reduce'\) is a 'reduce' node; the loop runs plans"):
        eagle.until_done([bound, eagle.reduce(x, np.zeros(1))], terminated=done, max_steps=3)


@pytest.mark.parametrize("tier, spelling", [({"stream": 1}, "stream=S"), ({"eager": True}, "eager=True")])
def test_a_stream_or_host_node_in_the_loop_is_refused_with_the_way_out(grow, tier, spelling):
    x, target, done = counting(8)
    node = eagle.opaque(lambda: None, reads={"done": done}, writes={"x": x}, **tier)
    with pytest.raises(ValueError, match=rf"item 1 \('opaque'\) is opaque\(fn, {spelling}\).*call "
                                         r"runner.run\(max_steps=k\), then your code, in your own loop"):
        eagle.until_done([grow.bind(x, target, done), node], terminated=done, max_steps=3)


def test_a_node_that_writes_but_does_not_declare_terminated_is_refused(grow):
    x, target, done = counting(8)
    node = eagle.opaque(lambda: None, writes={"x": x})
    with pytest.raises(ValueError, match=r"item 1 \('opaque'\) writes planes but does not declare terminat"):
        eagle.until_done([grow.bind(x, target, done), node], terminated=done, max_steps=3)


def test_a_loop_no_item_of_which_writes_terminated_is_refused(double_rows):
    done = np.zeros(8, np.uint8)
    with pytest.raises(ValueError, match=r"eagle.until_done: no item writes terminated, so only max_steps"):
        eagle.until_done([double_rows.bind(np.ones((2, 8)), 8)], terminated=done, max_steps=3)


def test_plans_the_mask_cannot_cover_are_refused(grow, kernels):
    x, target, done = counting(8)
    bound = grow.bind(x, target, done)
    count = Plan(kernels.kernel("decrement"), [("cell", "readwrite")], name="decrement", per_sample=False)
    with pytest.raises(ValueError, match=r"item 1 \('decrement'\): plan 'decrement' is not per-sample"):
        eagle.until_done([bound, count.bind(np.ones(1, np.uint32))], terminated=done, max_steps=3)
    shift = Plan(kernels.kernel("shift"), [("x", "readwrite"), ("d", "value")], name="shift")
    with pytest.raises(ValueError, match=r"plan 'shift' writes plane 'x' of shape \(16,\), not one value per "
                                         "sample of terminated's 8"):
        eagle.until_done([bound, shift.bind(np.zeros(16), 1.0)], terminated=done, max_steps=3)
