"""The MPI back end: real processes under mpirun, checked against numpy.

Covering design (each launch starts mpirun, about 2 s on 2 cores, so the
grid is small):
  - N in 2 3 4 x every strategy, f32 sum on 1000 elements (chunks of
    unequal size): the three strategies of one N in one launch;
  - a mix of types and kinds, and empty chunks (numel < N), at N = 3 and 4;
  - the SPMD form and the per-rank form as input; coll-build --emit=mpi-exe
    under a plain mpirun;
  - faults: a rank killed mid-run, a rank that exits early, a rank that
    hangs, a rank that never posts its receive, the wrong rank count: each
    ends in an error that names the rank and what it was doing, within the
    timeout, and coll-run writes no output file.
Skips (with the reason) only where no MPI is installed; `make` installs one.
"""
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from coll.collectives import AllReduce
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")

# Every strategy the lowering has, but the peer ones: ranks do not share memory.
STRATEGIES = AllReduce.runnable(())
TIMEOUT = 60  # generous for a loaded 2-core machine; the fault tests use less


def _module(n, shape, dtype="f32", kind="sum", strategy=None):
    with make_context():
        return all_reduce_module(n, shape, dtype, kind, strategy=strategy)


def _run(text, strategy="auto", seed=0, **launch):
    from mlir import ir
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    prog = mpi.compile(text, strategy=strategy, timeout=launch.pop("timeout", TIMEOUT))
    inputs = check.make_inputs(problem, seed)
    outputs = check.make_outputs(problem)
    prog.launch(inputs, outputs, 0, **launch)
    return prog, problem, inputs, outputs


@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_strategy_matches_numpy(n):
    from mlir import ir
    text = _module(n, [1000])
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, n)
    runs = [(mpi.compile(text, strategy=s, timeout=TIMEOUT), inputs, check.make_outputs(problem))
            for s in STRATEGIES]
    mpi.launch(runs, 0)
    for strategy, (prog, _, outputs) in zip(STRATEGIES, runs):
        assert prog.strategies == [strategy] and prog.ranks == n
        ok, worst = check.check(problem, inputs, outputs)
        assert ok, f"{strategy}: max error {worst}"


MIXED = {  # one launch per N
    3: [([5, 7], "i32", "max", "ring"), ([64], "bf16", "sum", "all2all"), ([9], "i8", "and", "naive")],
    4: [([3], "i1", "xor", "ring"),       # chunks 1, 1, 1, 0
        ([2], "f64", "prod", "all2all")],  # two empty chunks
}


@pytest.mark.parametrize("n", sorted(MIXED))
def test_types_kinds_and_empty_chunks(n):
    from mlir import ir
    runs, problems = [], []
    for shape, dtype, kind, strategy in MIXED[n]:
        text = _module(n, shape, dtype, kind)
        with make_context():
            problem = check.describe(ir.Module.parse(text))
        inputs = check.make_inputs(problem, 7)
        runs.append((mpi.compile(text, strategy=strategy, timeout=TIMEOUT), inputs, check.make_outputs(problem)))
        problems.append(problem)
    mpi.launch(runs, 0)
    for case, problem, (_, inputs, outputs) in zip(MIXED[n], problems, runs):
        assert check.check(problem, inputs, outputs)[0], case


def test_time_reports_every_run():
    from mlir import ir
    text = _module(2, [256])
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, 1)
    outputs = check.make_outputs(problem)
    times = mpi.compile(text, strategy="ring", timeout=TIMEOUT).time(inputs, outputs, 3)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert check.check(problem, inputs, outputs)[0]


# -- faults --------------------------------------------------------------------

def _fault(fault, timeout=20):
    t0 = time.monotonic()
    with pytest.raises(mpi.MpiError) as e:
        _run(_module(2, [16384], strategy="naive"), timeout=timeout,
             env={"COLL_MPI_TEST_FAULT": fault})
    return str(e.value), time.monotonic() - t0


def test_a_rank_killed_mid_run_fails_the_run():
    msg, took = _fault("1:kill")
    assert re.search(r"rank 1 was killed by signal 9 \(SIGKILL\) while running the program", msg), msg
    assert took < 20


def test_a_rank_that_exits_early_fails_the_run():
    from coll.lowering.mpi.toolchain import find
    msg, _ = _fault("1:exit")
    if find().implementation == "MPICH":  # hydra does not say which rank exited
        assert "mpirun exit code 3" in msg and "rank 1 was running the program" in msg, msg
    else:
        assert "rank 1 exited early with status 3 while running the program" in msg, msg


def test_a_hanging_rank_is_killed_at_the_timeout():
    msg, took = _fault("0:hang", timeout=6)
    assert "did not finish within 6 s" in msg and "rank 0 was running the program" in msg, msg
    assert took < 6 + 10  # the timeout, then TERM/KILL with short grace periods


def test_a_receive_never_posted_times_out():
    # The projection of a 2-rank naive allreduce (64 KiB: past the eager
    # limit, so the send waits for its receive), with rank 1's receive
    # and its wait deleted.
    text = _projected(_module(2, [16384], strategy="naive"))
    head, case1 = text.split("case 1 {", 1)
    case1, tail = case1.split("default {", 1)
    req = re.search(r"(%\w+) = mpi\.irecv", case1).group(1)
    case1 = "\n".join(l for l in case1.splitlines() if "mpi.irecv" not in l and f"mpi.wait({req})" not in l)
    broken = head + "case 1 {" + case1 + "\ndefault {" + tail
    assert broken.count("mpi.irecv") == 1
    prog = mpi.compile(broken, timeout=6)
    x = [np.ones(16384, np.float32)] * 2
    y = [np.zeros(16384, np.float32) for _ in range(2)]
    t0 = time.monotonic()
    with pytest.raises(mpi.MpiError) as e:
        prog.run(x, y)
    assert "rank 0 was running the program" in str(e.value), str(e.value)
    assert time.monotonic() - t0 < 16
    assert not y[0].any() and not y[1].any()  # nothing copied back


def test_a_library_that_does_not_load_reports_each_ranks_own_error(tmp_path):
    """What dlopen said (an undefined symbol, as a program calling a helper
    no linked library has gave), whole, not mpirun's tail."""
    prog = mpi.compile(_module(2, [16]), timeout=TIMEOUT)
    src = tmp_path / "bad.c"
    src.write_text("extern float coll_no_such_helper(float);\nfloat f(float x) { return coll_no_such_helper(x); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(prog.lib), str(src)], check=True)
    x = [np.ones(16, np.float32)] * 2
    with pytest.raises(mpi.MpiError) as e:
        prog.run(x, [np.zeros(16, np.float32) for _ in range(2)])
    for r in (0, 1):
        assert re.search(rf"rank {r} failed while loading the program: OSError: \S+: undefined symbol: "
                         "coll_no_such_helper", str(e.value)), str(e.value)


def test_a_helper_no_library_defines_fails_the_link_naming_it(tmp_path):
    from mlir import ir

    from coll.core.errors import PassError
    from coll.lowering.mpi import toolchain
    with make_context():
        m = ir.Module.parse("llvm.func @coll_no_such_helper(f32) -> f32\n"
                            "llvm.func @f(%x: f32) -> f32 {\n"
                            "  %y = llvm.call @coll_no_such_helper(%x) : (f32) -> f32 loc(\"model.py\":7:3)\n"
                            "  llvm.return %y : f32\n}")
        with pytest.raises(PassError, match="undefined reference to `coll_no_such_helper'") as e:
            toolchain.build(m.operation, tmp_path / "lib.so", toolchain.find())
        assert str(e.value.location) == 'loc("model.py":7:3)'  # the op that calls it


def test_the_wrong_rank_count_is_refused_before_starting():
    prog = mpi.compile(_module(3, [8]), timeout=TIMEOUT)
    x = [np.ones(8, np.float32)] * 3
    y = [np.zeros(8, np.float32) for _ in range(3)]
    with pytest.raises(mpi.MpiError, match="the program is for 3 ranks, not 2: nothing was started"):
        prog.launch(x, y, 0, ranks=2)


def test_each_rank_refuses_a_group_of_the_wrong_size(monkeypatch):
    # A 2-rank program started on 3 ranks (as a user's own mpirun could):
    # every rank checks the group size after MPI_Init, before any message.
    prog = mpi.compile(_module(2, [8]), timeout=TIMEOUT)
    real = mpi.mpirun_command
    monkeypatch.setattr(mpi.runtime, "mpirun_command", lambda m, ranks: real(m, ranks + 1))
    x = [np.ones(8, np.float32)] * 2
    y = [np.zeros(8, np.float32) for _ in range(2)]
    with pytest.raises(mpi.MpiError) as e:
        prog.run(x, y)
    for r in (0, 1):  # each rank that got as far as the check says so
        assert f"rank {r} refused: the program is for 2 ranks, the job has 3" in str(e.value), str(e.value)
    assert not y[0].any()


def _projected(text):
    return subprocess.run([sys.executable, "-m", "coll.tools.coll_opt",
                           "--pass-pipeline=builtin.module(coll-spmd-to-global,coll-lower-all-reduce,coll-to-mpi)"],
                          input=text, capture_output=True, text=True, check=True).stdout


# -- coll-run ------------------------------------------------------------------

def _coll_run(tmp_path, args, env=None):
    import os
    src = tmp_path / "ar.mlir"
    src.write_text(_module(2, [16384]))
    return subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(src), "--backend=mpi"] + args,
                          capture_output=True, text=True, env=dict(os.environ, **(env or {})))


def test_coll_run_mpi_prints_the_table_and_writes_outputs(tmp_path):
    out = tmp_path / "y.npz"
    r = _coll_run(tmp_path, ["--strategy=ring", "--ranks", "2", "--repeat", "2", "--outputs", str(out)])
    assert r.returncode == 0, r.stderr
    rows = [l.split() for l in r.stdout.splitlines()[2:]]
    assert [(row[0], row[1], row[-1]) for row in rows] == [("ring", "2", "ok")], r.stdout
    y = np.load(out)
    assert sorted(y.files) == ["y0", "y1"] and np.array_equal(y["y0"], y["y1"])


def test_in_place_allreduce_under_mpi(tmp_path):
    # In place, each rank's one argument is its input and its output: the
    # projection counted it as an output only, so the ranks ran on zeros and
    # the result never came back (FAIL for a correct program).
    from coll.ir.generate import collective_module
    with make_context():
        text = collective_module("all_reduce", 3, [40], "f32", in_place=True)
    prog = mpi.compile(text, strategy="naive", timeout=TIMEOUT)
    xs = [np.arange(40, dtype=np.float32) * (i + 1) for i in range(3)]
    prog.run(xs, [])
    want = np.arange(40, dtype=np.float32) * 6
    assert all(np.array_equal(x, want) for x in xs), xs


def test_coll_run_mpi_fault_writes_nothing(tmp_path):
    out = tmp_path / "y.npz"
    r = _coll_run(tmp_path, ["--timeout", "20", "--outputs", str(out)], env={"COLL_MPI_TEST_FAULT": "1:kill"})
    assert r.returncode == 1
    assert "rank 1 was killed by signal 9" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not out.exists()


def test_coll_run_mpi_wrong_ranks_is_refused(tmp_path):
    out = tmp_path / "y.npz"
    r = _coll_run(tmp_path, ["--ranks", "3", "--outputs", str(out)])
    assert r.returncode == 1
    assert "the program is for 2 ranks (one per device), not --ranks 3; nothing was started" in r.stderr
    assert not out.exists()


# -- other input forms ---------------------------------------------------------

SPMD = """
module {
  func.func @all_reduce(%x: memref<100xi64>, %y: memref<100xi64>) attributes {coll.ranks = 4 : i64} {
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", strategy = "ring",
        operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<100xi64>, memref<100xi64>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
"""


def test_spmd_form_and_per_rank_form_run(tmp_path):
    # The SPMD form (one rank's buffers, the group in attributes) and the
    # per-rank program coll-to-mpi prints both run; the global view's
    # arrays are x0..x3 and y0..y3 either way.
    projected = _projected(SPMD.replace("coll.ranks = 4 : i64", "coll.ranks = 4 : i64, llvm.emit_c_interface"))
    assert "coll.global_args" in projected
    inputs = [np.arange(100, dtype=np.int64) * (r + 1) for r in range(4)]
    for text in (SPMD, projected):
        prog = mpi.compile(text, timeout=TIMEOUT)
        assert (prog.ranks, prog.n_inputs, len(prog.specs)) == (4, 4, 8)
        outputs = [np.zeros(100, np.int64) for _ in range(4)]
        prog.run(inputs, outputs)
        for y in outputs:
            assert np.array_equal(y, np.arange(100, dtype=np.int64) * 10)
    src = tmp_path / "rank.mlir"
    src.write_text(projected)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(src), "--backend=mpi", "--repeat", "1"],
                       capture_output=True, text=True)
    # The projection carries no claim: it runs, unchecked (never "ok").
    assert r.returncode == 0 and r.stdout.rstrip().endswith("unchecked"), r.stdout + r.stderr


def test_mpi_exe_runs_under_the_users_mpirun(tmp_path):
    from coll.lowering.mpi.toolchain import find
    src, exe = tmp_path / "ar.mlir", tmp_path / "ar.exe"
    src.write_text(_module(3, [1000], "i32", "sum"))
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", str(src), "--emit=mpi-exe",
                        "--strategy=ring", "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    xs = [np.arange(1000, dtype=np.int32) * (r + 1) - 7 for r in range(3)]
    for r, x in enumerate(xs):
        x.tofile(tmp_path / f"in{r}.bin")
    run = mpi.mpirun_command(find(), 3) + [str(exe), "--in", str(tmp_path / "in"), "--out", str(tmp_path / "out")]
    r = subprocess.run(run, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(3):
        assert np.array_equal(np.fromfile(tmp_path / f"out{rank}.bin", dtype=np.int32), sum(xs))
    wrong = mpi.mpirun_command(find(), 2) + [str(exe)]
    r = subprocess.run(wrong, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode != 0 and "built for 3 ranks, started on 2; nothing was sent" in r.stdout + r.stderr


def test_mpi_exe_of_a_jax_export_and_of_a_global_view_with_local_work(tmp_path):
    # A JAX export takes global arrays: coll-build builds its SPMD function,
    # rank r reading its blocks (and saying so on stderr). The global view's
    # MLP: rank r reads its own x_r, then the weight every rank reads.
    import os

    from coll.lowering.mpi.toolchain import find
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rng = np.random.default_rng(2)
    x = rng.integers(-50, 50, 64).astype(np.float32)
    x0, x1 = rng.standard_normal((2, 2, 4)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    cases = [("tests/lit/stablehlo/Inputs/psum.mlir", [[x[8 * r:8 * r + 8]] for r in range(8)],
              [x.reshape(8, 8).sum(0)] * 8, 0),
             ("examples/tensor_mlp.mlir", [[x0, w], [x1, w]], [np.exp(x0 @ w + x1 @ w)] * 2, 1e-5)]
    for src, ins, want, rtol in cases:
        exe, n = tmp_path / "prog", len(ins)
        r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", os.path.join(root, src), "--emit=mpi-exe",
                            "-o", str(exe)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert ("is built on 8 devices" in r.stderr) == src.endswith("psum.mlir"), r.stderr
        for rank, arrays in enumerate(ins):
            np.concatenate([a.ravel() for a in arrays]).tofile(tmp_path / f"in{rank}.bin")
        run = mpi.mpirun_command(find(), n) + [str(exe), "--in", str(tmp_path / "in"), "--out", str(tmp_path / "out")]
        r = subprocess.run(run, capture_output=True, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stdout + r.stderr
        for rank in range(n):
            got = np.fromfile(tmp_path / f"out{rank}.bin", dtype=np.float32)
            np.testing.assert_allclose(got, want[rank].ravel(), rtol=rtol, err_msg=f"{src} rank {rank}")


MAIN_WITH_EXP = """func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> attributes {coll.ranks = 2 : i64} {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.exp ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %t, %r = "coll.all_reduce"(%a) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r : tensor<8xf32>
}
"""


def test_mpi_exe_of_an_entry_named_main_with_math(tmp_path):
    # Found by an outside attack: an entry named @main (JAX's name) was the
    # executable's second main, and local work's expf was not linked (no -lm).
    from coll.lowering.mpi.toolchain import find
    src, exe = tmp_path / "m.mlir", tmp_path / "m.exe"
    src.write_text(MAIN_WITH_EXP)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", str(src), "--emit=mpi-exe", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    xs = [np.linspace(-1, 1, 8, dtype=np.float32) * (r + 1) for r in range(2)]
    for r, x in enumerate(xs):
        x.tofile(tmp_path / f"in{r}.bin")
    run = mpi.mpirun_command(find(), 2) + [str(exe), "--in", str(tmp_path / "in"), "--out", str(tmp_path / "out")]
    r = subprocess.run(run, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    want = np.exp(xs[0]) + np.exp(xs[1])
    for rank in range(2):
        np.testing.assert_allclose(np.fromfile(tmp_path / f"out{rank}.bin", dtype=np.float32), want, rtol=1e-6)


def test_a_tag_above_the_mpis_tag_ub_is_refused_before_any_message():
    # coll-to-mpi refuses tags above tag-limit (tests/lit/mpi/tags.mlir); a
    # program built with a higher limit is checked at run time against the
    # MPI's own MPI_TAG_UB (at most 2^31 - 1), by every rank, before it sends.
    prog = mpi.compile(_module(2, [12], strategy="ring"), timeout=TIMEOUT)
    assert prog.max_tag == 1  # chunks of 8 and 4: two messages each way, tags 0 and 1
    prog.max_tag = 2 ** 40
    x = [np.ones(12, np.float32)] * 2
    y = [np.zeros(12, np.float32) for _ in range(2)]
    with pytest.raises(mpi.MpiError) as e:
        prog.run(x, y)
    assert re.search(r"rank 0 refused: the program uses MPI tags up to 1099511627776, this MPI's "
                     r"MPI_TAG_UB is \d+", str(e.value)), str(e.value)
    assert not y[0].any() and not y[1].any()


def test_mpirun_leaves_the_callers_stdin_alone(tmp_path):
    # Found by an outside attack: mpirun forwarded stdin to rank 0, so
    # coll-run in a `while read` loop silently ended the loop.
    text = subprocess.run([sys.executable, "-m", "coll.tools.coll_gen", "all-reduce", "--devices", "2",
                           "--shape", "16"], capture_output=True, text=True, check=True).stdout
    (tmp_path / "m.mlir").write_text(text)
    script = (f"printf 'a\\nb\\n' | ( {sys.executable} -m coll.tools.coll_run {tmp_path / 'm.mlir'} "
              "--backend=mpi --repeat 1 > /dev/null; cat )")
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert r.stdout == "a\nb\n", r.stdout + r.stderr


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "0", "-1"])
def test_timeout_out_of_range_is_a_usage_error(tmp_path, value):
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(tmp_path / "none.mlir"), "--backend=mpi",
                        "--timeout", value], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "--timeout must be > 0 seconds and at most a week" in r.stderr, r.stderr
