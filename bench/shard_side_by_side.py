"""Side by side: upstream shard programs through coll and through upstream's
convert-shard-to-mpi (LLVM 22.1.8).

For every partitioned program of tests/unit/test_shard_mpi.py (one per
shard collective, on a 1-D grid), whether upstream lowers it; then the
all_reduce program at each rank count, both ways, in one mpirun, timed
interleaved (each round runs both, each after a barrier), every output
checked against numpy. Upstream's all_reduce goes through mpi.comm_split,
which 22.1.8 lowers wrongly for OpenMPI (the communicator is truncated to
32 bits and the run crashes), so the timing runs under MPICH where it is
installed (COLL_MPI=mpich), else it reports the crash.

  python bench/shard_side_by_side.py [--ranks 2 4] [--kib 4 1024] [--repeat 20]
"""
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))
import test_shard_mpi as programs  # noqa: E402  the programs and their numpy results

from coll.frontends.run import shard  # noqa: E402
from coll.lowering import mpi
from coll.lowering.mpi import toolchain as lowering_mpi  # noqa: E402
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count  # one validation for every script


def all_reduce_program(n, numel):
    """The all_reduce program of the tests (local work on both sides), its
    buffers `numel` f32 per rank."""
    text, _, want = programs.all_reduce(n)
    cols = max(numel // 4, 1)
    return text.replace("4x8xf32", f"4x{cols}xf32"), [(4, cols)], want


def lowers(n):
    rows = []
    for case in programs.ONE_D:
        text, _, _ = case(n)
        try:
            shard.compile_upstream(text, "f", n)
            up = "lowers"
        except shard.UpstreamFailed as e:
            up = "not lowered: " + str(e)[:90]
        rows.append((case.__name__, up))
    return rows


def time_all_reduce(n, kib, repeat):
    text, shapes, want = all_reduce_program(n, kib * 1024 // 4)
    ours = shard.compile_partitioned(text, "f")
    xs = programs._inputs(n, shapes, text, seed=n)
    outs = [[np.zeros(shapes[0], np.float32) for _ in range(n)] for _ in range(2)]
    try:
        theirs = shard.compile_upstream(text, "f", n)
        runs = [(ours, programs._global(xs), outs[0]), (theirs, programs._global(xs), outs[1])]
        times = mpi.launch(runs, repeat)
    except mpi.MpiError as e:  # upstream's run crashed: ours alone
        (t,) = mpi.launch([(ours, programs._global(xs), outs[0])], repeat)
        return [float(np.median(t)), "crashed: " + str(e).splitlines()[0][:80]], ours.mpi.implementation
    for got in outs:
        for y, w in zip(got, want(xs)):
            np.testing.assert_allclose(y, w, rtol=1e-4, atol=1e-4)
    return [float(np.median(t)) for t in times], ours.mpi.implementation


def main():
    p = ArgumentParser()
    p.add_argument("--ranks", type=count(1, 4 * (os.cpu_count() or 1)), nargs="+", default=[2, 4])
    p.add_argument("--kib", type=count(1, 1 << 20), nargs="+", default=[4, 1024])
    p.add_argument("--repeat", type=count(1, 10 ** 6), default=20)
    args = p.parse_args()
    print("| program | upstream convert-shard-to-mpi | coll |")
    print("| --- | --- | --- |")
    for name, up in lowers(2):
        print(f"| {name} | {up} | runs, numpy's result (test_shard_mpi.py) |")
    print()
    if "COLL_MPI" not in os.environ:
        os.environ["COLL_MPI"] = "mpich"
        lowering_mpi.find.cache_clear()
        if lowering_mpi.find() is None:
            del os.environ["COLL_MPI"]
            lowering_mpi.find.cache_clear()
    print("| ranks | KiB per rank | MPI | coll (median) | upstream (median) | upstream / coll |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in args.ranks:
        for kib in args.kib:
            (ours, theirs), impl = time_all_reduce(n, kib, args.repeat)
            if isinstance(theirs, str):
                print(f"| {n} | {kib} | {impl} | {ours * 1e3:.3f} ms | {theirs} | - |")
                continue
            print(f"| {n} | {kib} | {impl} | {ours * 1e3:.3f} ms | {theirs * 1e3:.3f} ms | {theirs / ours:.2f} |")


if __name__ == "__main__":
    main()
