"""The simulated devices' local work on every core (coll-parallel-devices,
lowering/cpu/parallel.py): a program's results are bit for bit those of
the same program on one core (--parallel=off), whatever runs at once; the
runs really become parallel loops where the devices' buffers are their own,
and stay in order where they are not."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from mlir import ir

from coll import api
from coll.core.pipeline import run as run_pipeline
from coll.ir import make_context
from coll.lowering.cpu.route import async_to_llvm, cores, route, workers

N, ROWS, COLS = 4, 512, 512  # 1 MiB per buffer: the run before the psum touches more than min-bytes

# One rank's step: a matmul (BLAS), tanh, a psum, then exp and a row sum of
# the result (an epilogue and a row reduction), as a frontend's SPMD form.
STEP = f"""
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @step(%x: memref<{ROWS}x{COLS}xf32>, %w: memref<{COLS}x{COLS}xf32>, %y: memref<{ROWS}x{COLS}xf32>,
                %r: memref<{ROWS}xf32>) attributes {{coll.ranks = {N} : i64}} {{
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<{ROWS}x{COLS}xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<{ROWS}x{COLS}xf32>)
  linalg.matmul ins(%x, %w : memref<{ROWS}x{COLS}xf32>, memref<{COLS}x{COLS}xf32>) outs(%h : memref<{ROWS}x{COLS}xf32>)
  %a = memref.alloc() : memref<{ROWS}x{COLS}xf32>
  linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%h : memref<{ROWS}x{COLS}xf32>) outs(%a : memref<{ROWS}x{COLS}xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  }}
  %s = memref.alloc() : memref<{ROWS}x{COLS}xf32>
  %tok = "coll.all_reduce"(%a, %s) {{devices = array<i64: {", ".join(map(str, range(N)))}>, kind = "sum",
      operandSegmentSizes = array<i32: 1, 1, 0>}} : (memref<{ROWS}x{COLS}xf32>, memref<{ROWS}x{COLS}xf32>) -> !coll.token
  "coll.wait"(%tok) : (!coll.token) -> ()
  linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%s : memref<{ROWS}x{COLS}xf32>) outs(%y : memref<{ROWS}x{COLS}xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }}
  linalg.fill ins(%zero : f32) outs(%r : memref<{ROWS}xf32>)
  linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%h : memref<{ROWS}x{COLS}xf32>) outs(%r : memref<{ROWS}xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %p = arith.addf %o, %v : f32
    linalg.yield %p : f32
  }}
  memref.dealloc %h : memref<{ROWS}x{COLS}xf32>
  memref.dealloc %a : memref<{ROWS}x{COLS}xf32>
  memref.dealloc %s : memref<{ROWS}x{COLS}xf32>
  return
}}
"""


def _inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((ROWS, COLS), np.float32) * 0.1 for _ in range(N)]
    ws = [rng.standard_normal((COLS, COLS), np.float32) * 0.1 for _ in range(N)]
    return xs + ws


def _run(prog: api.Runnable, ins: list[np.ndarray]) -> list[np.ndarray]:
    outs = [np.full((ROWS, COLS), np.nan, np.float32) for _ in range(N)] + \
           [np.full((ROWS,), np.nan, np.float32) for _ in range(N)]
    prog.run(ins, outs)
    return outs


def _lowered(text: str, parallel: str) -> str:
    """The module after coll-parallel-devices (the CPU route up to it; every
    run, on N threads)."""
    passes = route(parallel=parallel, epilogues="on")  # (the psum's row sum fused: two runs)
    if parallel == "on":
        upto = passes.index("coll-parallel-devices") + 1
        passes[upto - 1] = f"coll-parallel-devices{{min-bytes=0 threads={N}}}"
    else:
        upto = passes.index("coll-ieee-minmax") + 1
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(" + ",".join(["coll-spmd-to-global", "coll-lower-collectives"]
                                                          + passes[:upto]) + ")")
        return str(module)


def test_the_devices_work_runs_in_parallel():
    on, off = _lowered(STEP, "on"), _lowered(STEP, "off")
    assert "async.execute" not in off
    # The matmul and tanh (before the psum), the row sum (after): two runs,
    # each device's ops in a function of their own, N threads: N - 1
    # executes, the last device on the caller's thread.
    assert on.count("async.execute") == 2 * (N - 1) and on.count("async.await") == 2 * (N - 1), on
    assert on.count(f"call @step_device{N - 1}_0(") == 1
    for d in range(N):
        first = on[on.index(f"func.func private @step_device{d}_0("):]
        first = first[:first.index("return")]
        assert "call @scipy_cblas_sgemm" in first and "math.tanh" in first and f"coll.device = {d} " in first
        assert f"coll.device = {(d + 1) % N} " not in first
        assert f"func.func private @step_device{d}_1(" in on


@pytest.mark.parametrize("strategy", ["ring", "twoshot"])
def test_parallel_and_sequential_agree_bit_for_bit(strategy):
    ins = _inputs(1)
    par = api.compile(STEP, "cpu", strategy=strategy)
    seq = api.compile(STEP, "cpu", strategy=strategy, parallel="off")
    # (on a machine of one core there is no second thread to run a device on)
    lowered = async_to_llvm(workers())
    assert all(p in par.pipeline for p in lowered) == (cores() > 1) and not any(p in seq.pipeline for p in lowered)
    assert par.threaded == (cores() > 1) and not seq.threaded
    want = _run(seq, ins)
    for _ in range(3):  # repeated calls: the pool's threads, the static buffers reused
        got = _run(par, ins)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
    xs, ws = ins[:N], ins[N:]
    h = [x.astype(np.float64) @ w.astype(np.float64) for x, w in zip(xs, ws)]
    total = sum(np.tanh(a) for a in h)
    for d in range(N):
        np.testing.assert_allclose(got[d], np.exp(total), rtol=1e-4)
        np.testing.assert_allclose(got[N + d], h[d].sum(axis=1), rtol=1e-3, atol=1e-3)


def test_two_programs_at_once_from_two_threads():
    """Two programs, each on the pool, called from two Python threads."""
    progs = [api.compile(STEP, "cpu", strategy="ring"), api.compile(STEP, "cpu", strategy="rhd")]
    ins = [_inputs(2), _inputs(3)]
    want = [_run(api.compile(STEP, "cpu", strategy="ring", parallel="off"), i) for i in ins]
    bad: list[str] = []

    def call(k: int) -> None:
        for _ in range(5):
            got = _run(progs[k], ins[k])
            if not all(np.array_equal(g, w) for g, w in zip(got, want[k])):
                bad.append(f"program {k}")
    threads = [threading.Thread(target=call, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def _script(body: str) -> subprocess.CompletedProcess:
    """`body` run in a fresh interpreter beside this file (STEP and helpers imported)."""
    head = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r})\n" \
           "import gc, os\nimport numpy as np\nfrom coll import api\nfrom coll.lowering import cpu\n" \
           "from test_parallel_devices import STEP, _inputs, _run\n"
    return subprocess.run([sys.executable, "-c", head + textwrap.dedent(body)], capture_output=True, text=True,
                          timeout=300)


def test_a_program_collected_leaves_the_others_running():
    """An engine's destruction reset the async runtime every program shares
    (the library was the engine's): the next call of another segfaulted."""
    r = _script("""
        a, b = api.compile(STEP, "cpu", strategy="ring"), api.compile(STEP, "cpu", strategy="rhd")
        ins = _inputs(1)
        first = _run(a, ins)
        _run(b, ins)
        del b
        cpu.clear_cache()
        gc.collect()
        print(all(np.array_equal(x, y) for x, y in zip(first, _run(a, ins))))
    """)
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


def test_a_forked_child_is_refused_not_hung():
    """A child forked after its parent ran a threaded program has none of
    the pool's threads: its call would wait forever. It is refused, and a
    program built with parallel="off" runs there."""
    r = _script("""
        a = api.compile(STEP, "cpu", strategy="ring")
        seq = api.compile(STEP, "cpu", strategy="ring", parallel="off")
        ins = _inputs(1)
        want = _run(a, ins)
        pid = os.fork()
        if pid == 0:
            try:
                _run(a, ins)
                print("ran")
            except RuntimeError as e:
                print("refused:", e)
            print(all(np.array_equal(x, y) for x, y in zip(want, _run(seq, ins))), flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    assert r.returncode == 0, r.stderr
    assert "refused: this program runs its devices' local work or its collectives' tiles on the async runtime's " \
           "threads" in r.stdout
    assert "parallel=\"off\"" in r.stdout and r.stdout.strip().endswith("True")


def test_a_program_with_nothing_on_the_pool_runs_in_a_forked_child():
    """The route declares the async runtime in every program; only one that
    calls it is threaded: an all_reduce below every threshold runs in a
    child forked after its parent ran a threaded program."""
    r = _script("""
        from coll.ir import make_context
        from coll.ir.generate import all_reduce_module
        from coll.lowering import cpu
        with make_context():
            small = all_reduce_module(4, [1000], "f32", "sum")
        s = cpu.compile(small)
        a = api.compile(STEP, "cpu", strategy="ring")
        ins = _inputs(1)
        _run(a, ins)
        xs = [np.full(1000, i, np.float32) for i in range(4)]
        print(s.threaded, a.threaded, flush=True)
        pid = os.fork()
        if pid == 0:
            try:
                ys = [np.zeros(1000, np.float32) for _ in range(4)]
                s.run(xs, ys)
                print(all(np.array_equal(y, np.full(1000, 6, np.float32)) for y in ys), flush=True)
            except RuntimeError as e:
                print("refused:", e, flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", str(cores() > 1), "True"], r.stdout


def test_a_child_forked_mid_call_gets_the_program_back():
    """Forked while another thread of the parent was in a call (its lock
    held): the child's own call of that program ran, not hung."""
    r = _script("""
        import threading
        seq = api.compile(STEP, "cpu", strategy="ring", parallel="off")
        ins = _inputs(1)
        want = _run(seq, ins)
        stop = threading.Event()

        def loop():
            while not stop.is_set():
                _run(seq, ins)
        t = threading.Thread(target=loop)
        t.start()
        codes = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                ok = all(np.array_equal(x, y) for x, y in zip(want, _run(seq, ins)))
                os._exit(0 if ok else 3)
            codes.append(os.waitpid(pid, 0)[1])
        stop.set()
        t.join()
        print(codes)
    """)
    assert r.returncode == 0 and r.stdout.strip() == "[0, 0, 0, 0, 0, 0]", (r.stdout, r.stderr)
