"""eagle-dask on a LocalCluster of 2 worker processes, against the one-process run, bit for bit."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("distributed")
import eagle_dask
from distributed import Client, LocalCluster

import eagle

pytestmark = pytest.mark.timeout(120)

STEPS = pathlib.Path(__file__).with_name("dask_steps.py")


def _import_steps():
    # Under the name the workers import it by (client.upload_file keeps the file's stem).
    spec = importlib.util.spec_from_file_location(STEPS.stem, STEPS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[STEPS.stem] = module
    spec.loader.exec_module(module)
    return module


steps = _import_steps()


@pytest.fixture(scope="module")
def client():
    # Two workers on a 2-core CI box: one eagle thread each (the bits do not depend on it).
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"EAGLE_NUM_THREADS": "1"}) as cluster, Client(cluster) as client:
        client.upload_file(str(STEPS))
        yield client


def assert_same(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            assert_same(got[k], want[k])
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)
    else:
        assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("shards", [None, 2, 3])
def test_matches_one_process(client, shards):
    """n=5000 is 4.9 blocks: 2 shards cut 2048|2952, 3 cut 1024|2048|1928."""
    x, v = steps.batch(5000, 0)
    with eagle_dask.Sharded(client, steps.motion, shards=shards) as runner:
        assert_same(runner(x=x, v=v, dt=0.01), steps.motion(x, v, 0.01)())
        assert len(runner.workers) == (shards or 2) and len(set(runner.workers)) == 2


def test_later_calls_bind_on_the_warm_worker_graph(client):
    runner = eagle_dask.Sharded(client, steps.motion, shards=3)
    try:
        x, v = steps.batch(5000, 1)
        assert_same(runner(x, v, 0.01), steps.motion(x, v, 0.01)())
        built = runner.builds()
        assert sorted(built.values()) == [1, 2]  # shards 0 and 2 share a worker
        x, v = steps.batch(5000, 2)
        assert_same(runner(x, v, dt=0.01), steps.motion(x, v, 0.01)())
        assert runner.builds() == built  # new arrays: bound, not rebuilt
        assert_same(runner(x, v, 0.02), steps.motion(x, v, 0.02)())  # a new scalar is a new graph
        assert sum(runner.builds().values()) == 6
        x, v = steps.batch(3000, 3)  # new shard shapes: new graphs
        assert_same(runner(x, v, 0.01), steps.motion(x, v, 0.01)())
    finally:
        runner.close()


def test_fewer_blocks_than_shards(client):
    x, v = steps.batch(1500, 4)  # two blocks over three shards: two shards run
    with eagle_dask.Sharded(client, steps.motion, shards=3) as runner:
        assert_same(runner(x, v, 0.01), steps.motion(x, v, 0.01)())


def test_broadcast_array_goes_whole_to_every_shard(client):
    x = steps.batch(3000, 5)[0]
    with eagle_dask.Sharded(client, steps.choose, broadcast=["flag"]) as runner:
        for cell in (1, 0):
            flag = np.array([cell], np.uint32)
            assert_same(runner(x, flag), steps.choose(x, flag)())
        assert sum(runner.builds().values()) == 2


def test_cross_sample_reduction_is_refused(client):
    with eagle_dask.Sharded(client, steps.counting, broadcast=["flag"]) as runner:
        with pytest.raises(ValueError, match=r"^eagle_dask: counting reduces across samples in below; "
                                             r".*eagle-mpi.*eagle\.Graph\(comm=MPI\.COMM_WORLD\)"):
            runner(np.ones(3000), np.ones(1, np.uint32))


def test_exception_in_a_shard_reaches_the_client(client):
    with eagle_dask.Sharded(client, steps.failing) as runner:
        with pytest.raises(RuntimeError, match=r"^the loader failed on shard data$"):
            runner(np.ones(3000), "the loader failed on shard data")


def test_arrays_must_share_their_sample_count(client):
    with eagle_dask.Sharded(client, steps.choose) as runner:
        with pytest.raises(ValueError, match=r"share their sample count.*broadcast="):
            runner(np.ones(3000), np.ones(1, np.uint32))


def test_builder_must_be_importable_by_name(client):
    @eagle.Graph.builder
    def local(x):
        g = eagle.Graph()
        g.result = steps.damp(x, 2.0)
        return g

    with pytest.raises(TypeError, match=r"not reachable by its name.*upload_file"):
        eagle_dask.Sharded(client, local)


def test_builder_taken_before_an_upload_reloads_its_module(client):
    motion = steps.motion
    client.upload_file(str(STEPS))  # reloads dask_steps in this process too: the scheduler runs here
    x, v = steps.batch(3000, 6)
    with eagle_dask.Sharded(client, motion) as runner:
        assert_same(runner(x, v, 0.01), motion(x, v, 0.01)())


def test_listing_plugins_leaves_dask_unimported():
    """eagle finds the plugins without importing dask: eagle-dask has no entry point, and dask loads
    when eagle_dask is imported."""
    import subprocess

    script = 'import sys, eagle; eagle.plugins(); print("dask" in sys.modules)'
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
