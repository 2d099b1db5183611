"""coll's compiled f32 matmul (the CPU route: coll-blas-contractions, an
OpenBLAS sgemm call) against numpy's `@` on the same square shapes, side by
side in one run: GFLOP/s of the median of --repeat calls, interleaved
round by round.

    python bench/matmul_blas.py [--sizes 256,512,1024,2048,4096] [--rounds 3] [--repeat 5]
                                [--threads N] [--loops SIZE,...]
    python bench/matmul_blas.py --mpi [--ranks 2] [--sizes ...]

`--threads N`: OpenBLAS threads of coll's library (scipy_openblas_set_num_threads;
default: OpenBLAS's own, one per core, as numpy's). `--loops`: also time
the route without the library (coll-run --blas=off: convert-linalg-to-loops)
at these sizes (slow: keep them small).

`--mpi`: the threads per rank under mpirun. Each of --ranks ranks runs the
matmul (the SPMD form, an all_reduce of one element after it); the time
of the slowest rank with OPENBLAS_NUM_THREADS=1 (the mpi runtime's
default) against as many threads as cores, interleaved.
"""
import ctypes
import os
import sys
import time

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
    from coll.backends import mpi
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


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def set_threads(n: int) -> None:
    """OpenBLAS threads of the library coll's programs call."""
    from coll.passes.blas_contractions import library
    ctypes.CDLL(str(library())).scipy_openblas_set_num_threads(ctypes.c_int(n))


def table(sizes: list[int], rounds: int, repeat: int, loops: list[int]) -> None:
    from coll.backends import cpu
    print(f"# f32 C += A @ B, n x n; {rounds} rounds x {repeat} calls, median; load {os.getloadavg()[0]:.2f}, "
          f"{os.cpu_count()} cpus")
    print(f"{'n':>6s} {'coll GFLOP/s':>13s} {'numpy GFLOP/s':>14s} {'coll/numpy':>11s}"
          + (f" {'loops GFLOP/s':>14s}" if loops else ""))
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
        print(row, flush=True)


def main(argv: list[str] | None = None) -> int:
    from coll.tools.args import ArgumentParser
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024,2048,4096")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--loops", default="", help="sizes at which to time the loops too (comma-separated)")
    ap.add_argument("--mpi", action="store_true", help="threads per rank under mpirun (see above)")
    ap.add_argument("--ranks", type=int, default=2)
    a = ap.parse_args(argv)
    if a.mpi:
        mpi_table([int(s) for s in a.sizes.split(",")], a.ranks, a.rounds, a.repeat)
        return 0
    if a.threads is not None:
        set_threads(a.threads)
    table([int(s) for s in a.sizes.split(",")], a.rounds, a.repeat,
          [int(s) for s in a.loops.split(",") if s])
    return 0


if __name__ == "__main__":
    sys.exit(main())
