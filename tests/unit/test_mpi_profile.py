"""coll-run --backend=mpi --profile (lowering/cpu/profile.py after
coll-to-mpi, the worker reading each rank's counters): each rank's time in
its collectives (its messages, waits and combines), apart from its local
work; the results stay right, a pure collective is mostly collective, a
program of local work around a small collective mostly not."""
import os
import subprocess
import sys

import numpy as np
import pytest

from coll import api
from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_a_collective_alone_is_mostly_collective():
    n, numel = 2, 1 << 18
    with api.make_context():
        text = api.collective_module("all_reduce", devices=n, shape=[numel], dtype="f32")
    prog = mpi.compile(text, strategy="ring", split=True)
    assert "coll-profile-collectives" in prog.pipeline
    xs = [np.random.default_rng(i).integers(-8, 8, numel).astype(np.float32) for i in range(n)]
    ys = [np.empty(numel, np.float32) for _ in range(n)]
    times = prog.time(xs, ys, 4)
    np.testing.assert_array_equal(ys[1], xs[0] + xs[1])
    assert len(prog.rank_splits) == n and all(calls == 4 for _, calls in prog.rank_splits)  # the timed runs only
    seconds, calls = prog.split()
    assert calls == 4 and 0.3 < seconds / sum(times) <= 1.0


def test_local_work_is_not_counted():
    """A 256 x 256 matmul per rank, repeated in a loop, around an
    all_reduce of 4 floats: the collectives take a small share."""
    text = """
    func.func @main(%a: memref<256x256xf32>, %y: memref<4xf32>, %c: memref<256x256xf32>)
        attributes {coll.ranks = 2 : i64, llvm.emit_c_interface} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      scf.for %i = %c0 to %c8 step %c1 {
        linalg.matmul ins(%a, %a : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
      }
      %t = "coll.all_reduce"(%y, %y) {devices = array<i64: 0, 1>, kind = "sum",
          operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xf32>, memref<4xf32>) -> !coll.token
      "coll.wait"(%t) : (!coll.token) -> ()
      return
    }"""
    prog = mpi.compile(text, strategy="naive", split=True, blas="off")
    a = [np.full((256, 256), 0.5, np.float32) for _ in range(2)]
    y = [np.arange(4, dtype=np.float32) + r for r in range(2)]
    # (%c is an input: the matmul adds to what the caller passed in; it was
    # taken for an output while a read inside a loop did not count)
    c = [np.zeros((256, 256), np.float32) for _ in range(2)]
    times = prog.time(a + y + c, [], 3)
    np.testing.assert_array_equal(y[0], np.arange(4) * 2 + 1)
    seconds, calls = prog.split()
    assert calls == 3 and 0.0 < seconds / sum(times) < 0.3


def test_a_program_built_without_it_says_nothing():
    with api.make_context():
        text = api.collective_module("all_reduce", devices=2, shape=[64], dtype="f32")
    assert mpi.compile(text, strategy="ring").split() is None


def test_coll_run_prints_each_ranks_split():
    r = subprocess.run([os.path.join(os.path.dirname(sys.executable), "coll-run"), "examples/allreduce_4x.mlir",
                        "--backend=mpi", "--strategy=ring", "--profile", "--repeat", "3"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    assert line.startswith("profile ring: collectives ") and "(mean of 3 calls)" in line, r.stdout
    each = line.split("(ranks ")[1].split(" ms)")[0].split(", ")
    assert len(each) == 4 and all(float(t) > 0 for t in each), line
