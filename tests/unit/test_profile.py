"""coll-run --profile (lowering/cpu/profile.py, issue 36): the time a
program spends in its collectives, apart from its local work; the results
stay right, a pure collective is mostly collective, a program of local
work around a small collective mostly not, and a program built without it
says nothing."""
import os
import subprocess
import sys

import numpy as np
import pytest

from coll import api

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import epilogue as bench  # noqa: E402


def _coll_run(*args):
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "coll-run"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def _share(prog, ins, outs, repeat=5):
    times = prog.time(ins, outs, repeat)
    seconds, calls = prog.split()
    assert calls == repeat  # time() counts its timed runs only
    return seconds / sum(times)


def test_a_collective_alone_is_mostly_collective():
    with api.make_context():
        text = api.collective_module("all_reduce", devices=4, shape=[1 << 18], dtype="f32")
    prog = api.compile(text, "cpu", strategy="ring", split=True)
    xs = [np.random.default_rng(i).standard_normal(1 << 18).astype(np.float32) for i in range(4)]
    ys = [np.empty(1 << 18, np.float32) for _ in range(4)]
    prog.run(xs, ys)
    np.testing.assert_allclose(ys[0], xs[0] + xs[1] + xs[2] + xs[3], rtol=1e-5, atol=1e-5)
    assert 0.8 < _share(prog, xs, ys) <= 1.0


def test_local_work_is_not_counted():
    """RMSNorm on 4 rows of 4096 per device after an all_reduce of them:
    the epilogue's passes over the rows, not the collective, take most of
    the call."""
    n, rows = 2, 256
    prog = api.compile(bench.program(n, rows), "cpu", strategy="twoshot", split=True)
    ins = bench.inputs(n, rows)
    outs = [np.empty((rows, bench.H), np.float32) for _ in range(2 * n)]
    prog.run(ins, outs)
    for o, r in zip(outs, bench.reference(n, ins)):
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-4)
    assert 0.0 < _share(prog, ins, outs) < 0.6


def test_a_program_built_without_it_says_nothing():
    with api.make_context():
        text = api.collective_module("all_reduce", devices=2, shape=[64], dtype="f32")
    assert api.compile(text, "cpu", strategy="ring").split() is None


def test_coll_run_prints_the_split():
    r = _coll_run("examples/allreduce_4x.mlir", "--backend=cpu", "--strategy=ring", "--profile", "--repeat", "3")
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    assert line.startswith("profile ring: collectives ") and "(mean of 3 calls)" in line, r.stdout
    share = int(line.split("% of the")[0].split()[-1])
    assert 50 <= share <= 105, line  # a collective alone (the clock reads aside)


def test_coll_run_prints_the_split_of_a_frontends_program():
    r = _coll_run("examples/mlp_shard_4.mlir", "--backend=cpu", "--profile", "--repeat", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith("profile "), r.stdout


@pytest.mark.parametrize("args,says", [
    (["--backend=gpu", "--profile"], "--profile applies to --backend=cpu or mpi only"),
])
def test_coll_run_refuses_it_elsewhere(args, says):
    r = _coll_run("examples/allreduce_4x.mlir", *args)
    assert r.returncode == 1 and says in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("option", [["--blas", "off"], ["--epilogues", "off"]])
def test_back_end_options_reach_a_frontends_program(option):
    """They were refused with "compile() got an unexpected keyword argument"
    (the frontends' compile took no back end options)."""
    r = _coll_run("examples/mlp_shard_4.mlir", "--backend=cpu", "--repeat", "1", *option)
    assert r.returncode == 0 and "unexpected keyword" not in r.stderr, r.stderr
    assert r.stdout.split()[-1] == "ok", r.stdout
