"""coll's compiled f32 matmul (the CPU route: coll-blas-contractions, an
OpenBLAS sgemm call) against numpy's `@` on the same square shapes, side by
side in one run: GFLOP/s of the median of --repeat calls, interleaved
round by round.

    python bench/matmul_blas.py [--sizes 256,512,1024,2048,4096] [--rounds 3] [--repeat 5]
                                [--threads N] [--loops SIZE,...]
    python bench/matmul_blas.py --mpi [--ranks 2] [--sizes ...]

`--threads N`: OpenBLAS threads of coll's library (OPENBLAS_NUM_THREADS, set
before it loads; default: the CPU runtime's, one: lowering/cpu/runtime.py
one_blas_thread). numpy keeps its own (one per core). `--loops`: also time
the route without the library (coll-run --blas=off: convert-linalg-to-loops)
at these sizes (slow: keep them small).

`--transform SIZE,...`: also time upstream's own way at these sizes (multiples
of 256): the matmul tiled for the caches (64 x 256 x 128) and for registers
(8 x 32 x 16) with the transform dialect, vectorized, the contraction
lowered to outer products (FMAs on vector<32xf32>), one thread: what a
library call is weighed against (passes/blas_contractions.py).

`--mpi`: the threads per rank under mpirun. Each of --ranks ranks runs the
matmul (the SPMD form, an all_reduce of one element after it); the time
of the slowest rank with OPENBLAS_NUM_THREADS=1 (the mpi runtime's
default) against as many threads as cores, interleaved.
"""
import ctypes
import os
import sys
import time
from collections.abc import Callable

import numpy as np

MATMUL = """
func.func @mm(%a: memref<{n}x{n}xf32>, %b: memref<{n}x{n}xf32>, %c: memref<{n}x{n}xf32>)
    attributes {{llvm.emit_c_interface}} {{
  linalg.matmul ins(%a, %b : memref<{n}x{n}xf32>, memref<{n}x{n}xf32>) outs(%c : memref<{n}x{n}xf32>)
  return
}}
"""


SPMD = """
func.func @mm(%a: memref<{n}x{n}xf32>, %b: memref<{n}x{n}xf32>, %c: memref<{n}x{n}xf32>, %s: memref<1xf32>)
    attributes {{coll.ranks = {ranks} : i64, llvm.emit_c_interface}} {{
  linalg.matmul ins(%a, %b : memref<{n}x{n}xf32>, memref<{n}x{n}xf32>) outs(%c : memref<{n}x{n}xf32>)
  %t = "coll.all_reduce"(%s, %s) {{devices = array<i64: {devices}>, kind = "sum",
      operandSegmentSizes = array<i32: 1, 1, 0>}} : (memref<1xf32>, memref<1xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}}
"""


def mpi_table(sizes: list[int], ranks: int, rounds: int, repeat: int) -> None:
    from coll.lowering import mpi
    cores = os.cpu_count()
    print(f"# f32 matmul n x n on each of {ranks} ranks (mpirun), slowest rank, {rounds} rounds x {repeat} calls, "
          f"median; load {os.getloadavg()[0]:.2f}, {cores} cpus")
    print(f"{'n':>6s} {'1 thread GFLOP/s':>17s} {f'{cores} threads GFLOP/s':>18s}  (per rank)")
    for n in sizes:
        prog = mpi.compile(SPMD.format(n=n, ranks=ranks, devices=", ".join(map(str, range(ranks)))))
        rng = np.random.default_rng(n)
        args = [rng.standard_normal((n, n), np.float32) for _ in range(3 * ranks)] + \
            [np.zeros(1, np.float32) for _ in range(ranks)]
        per = {1: [], cores: []}
        for _ in range(rounds):
            for threads in per:
                times = prog.launch([a.copy() for a in args], [], repeat, env={"OPENBLAS_NUM_THREADS": str(threads)})
                per[threads].append(_median(times))
        flop = 2.0 * n ** 3
        print(f"{n:6d} {flop / _median(per[1]) / 1e9:17.1f} {flop / _median(per[cores]) / 1e9:18.1f}", flush=True)


TRANSFORM = """
module attributes {{transform.with_named_sequence}} {{
  {matmul}
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %mm = transform.structured.match ops{{["linalg.matmul"]}} in %root : (!transform.any_op) -> !transform.any_op
    %t1, %l1:3 = transform.structured.tile_using_for %mm tile_sizes [64, 256, 128]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %l2:3 = transform.structured.tile_using_for %t1 tile_sizes [8, 32, 16]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %t2 : !transform.any_op
    %f = transform.structured.match ops{{["func.func"]}} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    %h = transform.structured.hoist_redundant_vector_transfers %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }}
}}
"""


def transform_matmul(n: int) -> Callable[[list[np.ndarray]], None]:
    """The matmul through upstream's transform dialect (TRANSFORM), JIT-compiled
    down the CPU route's passes: a function of [a, b, c]."""
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine
    from mlir.passmanager import PassManager
    from mlir.runtime import get_ranked_memref_descriptor

    from coll.core.pipeline import build
    from coll.lowering.cpu.route import CPU_TO_LLVM
    ctx = ir.Context()
    with ctx:
        m = ir.Module.parse(TRANSFORM.format(matmul=MATMUL.format(n=n)))
        PassManager.parse("builtin.module(transform-interpreter)").run(m.operation)
        for op in list(m.body.operations):
            if op.operation.name == "transform.named_sequence":
                op.operation.erase()
        passes = list(CPU_TO_LLVM)
        passes.insert(passes.index("reconcile-unrealized-casts"), "convert-ub-to-llvm")  # vector's ub.poison
        build(f"builtin.module({','.join(passes)})").run(m.operation)  # CPU_TO_LLVM holds a coll pass
        engine = ExecutionEngine(m, opt_level=3)

    def call(arrays: list[np.ndarray]) -> None:
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))) for x in arrays]
        engine.invoke("mm", *args)
    call.keep = (ctx, engine)
    return call


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def table(sizes: list[int], rounds: int, repeat: int, loops: list[int], transform: list[int]) -> None:
    from coll.lowering import cpu
    print(f"# f32 C += A @ B, n x n; {rounds} rounds x {repeat} calls, median; load {os.getloadavg()[0]:.2f}, "
          f"{os.cpu_count()} cpus")
    print(f"{'n':>6s} {'coll GFLOP/s':>13s} {'numpy GFLOP/s':>14s} {'coll/numpy':>11s}"
          + (f" {'loops GFLOP/s':>14s}" if loops else "") + (f" {'transform GFLOP/s':>18s}" if transform else ""))
    for n in sizes:
        rng = np.random.default_rng(n)
        a, b = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
        c, out = np.zeros((n, n), np.float32), np.empty((n, n), np.float32)
        prog = cpu.compile(MATMUL.format(n=n))
        prog.run([a, b, c], [])
        assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3 * n ** 0.5), "coll's matmul disagrees with numpy's"
        flop = 2.0 * n ** 3

        def numpy_call() -> float:
            t = time.perf_counter()
            np.matmul(a, b, out=out)
            return time.perf_counter() - t
        numpy_call()
        coll_t, np_t = [], []
        for _ in range(rounds):
            coll_t.append(_median(prog.time([a, b, c], [], repeat)))
            np_t.append(_median([numpy_call() for _ in range(repeat)]))
        g_coll, g_np = flop / _median(coll_t) / 1e9, flop / _median(np_t) / 1e9
        row = f"{n:6d} {g_coll:13.1f} {g_np:14.1f} {g_coll / g_np:11.2f}"
        if n in loops:
            slow = cpu.compile(MATMUL.format(n=n), blas=False)
            row += f" {flop / _median(slow.time([a, b, c], [], 1)) / 1e9:14.2f}"
        elif loops:
            row += f" {'':14s}"
        if n in transform:
            fn = transform_matmul(n)
            c2 = np.zeros((n, n), np.float32)
            fn([a, b, c2])
            assert np.allclose(c2, a @ b, rtol=1e-3, atol=1e-3 * n ** 0.5), "the transform-dialect matmul disagrees"
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                fn([a, b, c2])
                times.append(time.perf_counter() - t)
            row += f" {flop / _median(times) / 1e9:18.1f}"
        print(row, flush=True)


def main(argv: list[str] | None = None) -> int:
    from coll.tools.args import ArgumentParser
    from coll.tools.argtypes import count, counts
    sizes = counts(1, 16384)
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=sizes, default=[256, 512, 1024, 2048, 4096])
    ap.add_argument("--rounds", type=count(1, 100), default=3)
    ap.add_argument("--repeat", type=count(1, 10000), default=5)
    ap.add_argument("--threads", type=count(1, 1024), default=None)
    ap.add_argument("--loops", type=sizes, default=[], help="sizes at which to time the loops too (comma-separated)")
    ap.add_argument("--transform", type=counts(256, 16384), default=[],
                    help="sizes at which to time the transform-dialect matmul too (multiples of 256)")
    ap.add_argument("--mpi", action="store_true", help="threads per rank under mpirun (see above)")
    ap.add_argument("--ranks", type=count(1, 8), default=2)
    a = ap.parse_args(argv)
    if any(n % 256 for n in a.transform):
        ap.error(f"--transform: sizes must be multiples of 256 (its tiles), got {a.transform}")
    if a.mpi:
        mpi_table(a.sizes, a.ranks, a.rounds, a.repeat)
        return 0
    if a.threads is not None:  # read when coll's library loads (numpy, imported above, has read it already)
        os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    table(a.sizes, a.rounds, a.repeat, a.loops, a.transform)
    return 0


if __name__ == "__main__":
    sys.exit(main())
