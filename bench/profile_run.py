"""Where a coll-run goes: its CPU-time profile, its peak memory against
the memory of the program's buffers, and its wall time, in one run.

  python bench/profile_run.py [--top 25] [--sort tottime|cumulative] -- COLL-RUN ARGS...
  e.g. coll-gen all-reduce --devices 8 --shape 16777216 > ar.mlir
       python bench/profile_run.py -- ar.mlir --backend=cpu --strategy=all

The profile counts process time (cProfile with time.process_time), so
that other work on a loaded machine does not stretch it; the wall time
and the load average are printed beside it. Peak memory is the process's
VmHWM (resident high-water mark); "buffers" are the program's arguments
(inputs and outputs, what a user's arrays hold), the measure of issue 26's
target: the whole run under twice their size.
"""
import cProfile
import io
import os
import pstats
import sys
import time

from coll.tools.args import ArgumentParser
from coll.tools.argtypes import count  # one validation for every script


def peak_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def buffer_bytes(p):
    """Bytes of the argument buffers (inputs and outputs) of Problem `p`."""
    import numpy as np

    from coll.execution.signature import NUMPY_DTYPES
    item = NUMPY_DTYPES[p.element].itemsize
    return (p.n_inputs * int(np.prod(p.shape)) + p.n_outputs * int(np.prod(p.output_shape))) * item


def main():
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=count(1, 10 ** 6), default=25)
    ap.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"))
    ap.add_argument("run", nargs="+", help="coll-run's arguments (after --)")
    args = ap.parse_args()
    from coll.tools import coll_run
    try:  # coll-run's own usage errors and diagnostics, before anything is profiled
        problem = coll_run.problem_of(args.run)
    except coll_run.Failure as e:
        ap.print_usage(sys.stderr)
        ap.exit(1, f"{e}\n")
    if problem is None:
        ap.error("the buffers of a program with local work (or of global arrays) are not known here; "
                 "expected a module of one collective")
    buffers = buffer_bytes(problem)
    load0, w0, c0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
    prof = cProfile.Profile(time.process_time)
    code = 0
    try:
        prof.runcall(coll_run.run, args.run)
    except coll_run.Failure as e:
        print(e, file=sys.stderr)
        code = 1
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats(args.sort).print_stats(args.top)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))
    rss = peak_rss()
    print(f"wall {wall:.1f} s, process time {cpu:.1f} s; load average {load0:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after ({os.cpu_count()} cpus)")
    print(f"peak resident memory {rss / 2 ** 30:.2f} GiB; the program's buffers {buffers / 2 ** 30:.2f} GiB: "
          f"{rss / buffers:.2f}x")
    return code


if __name__ == "__main__":
    sys.exit(main())
