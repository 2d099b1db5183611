"""MPI benchmark: every strategy against MPI_Allreduce on the same buffers.

For N ranks and B bytes per rank (f32 sum), one mpirun runs the program of
every strategy (coll-to-mpi projections) and a program that calls
MPI_Allreduce through upstream's `mpi.allreduce`, interleaved: each timed
round runs every program once, each after a barrier, so that all of them
see the same machine. Per point: the median time of each (slowest rank per
run), its ratio to MPI_Allreduce, the fastest strategy, and what the cost
model (profile `cpu`) and the reference rule would pick. Every output is
checked against numpy.

  python bench/mpi_run.py [--ranks 2 3 4] [--kib 4 64 1024 16384 65536] [--repeat 5] [--json out.json]
"""
import argparse
import json
import time

import numpy as np

from coll.analysis.cost_model import load_profile
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.ops import AllReduce
from coll.lowering.spmd import GLOBAL_ARGS_ATTR, RANK_INPUTS_ATTR, RANKS_ATTR
from coll.passes.choose_strategy import Collective, candidates, pick
from coll.passes.lower_all_reduce import DEFAULT_THRESHOLD, reference_rule
from coll.runtime import check, mpi

# Every strategy the lowering has, but the peer ones: ranks do not share memory.
STRATEGIES = tuple(s for s in AllReduce.STRATEGIES if s not in AllReduce.PEER_STRATEGIES)


def mpi_allreduce_module(ranks, numel):
    """A per-rank program that is one MPI_Allreduce (upstream mpi.allreduce)."""
    t = f"memref<{numel}xf32>"
    order = ", ".join(str(g) for r in range(ranks) for g in (r, ranks + r))
    return f"""
module {{
  func.func @mpi_allreduce(%x: {t}, %y: {t}) attributes {{{RANKS_ATTR} = {ranks} : i64,
      {GLOBAL_ARGS_ATTR} = array<i64: {order}>, {RANK_INPUTS_ATTR} = 1 : i64, llvm.emit_c_interface}} {{
    %comm = mpi.comm_world : !mpi.comm
    mpi.allreduce(%x, %y, MPI_SUM, %comm) : {t}, {t}
    return
  }}
}}"""


def point(ranks, kib, repeat, profile):
    numel = kib * 1024 // 4
    with make_context():
        text = all_reduce_module(ranks, [numel], "f32", "sum")
    from mlir import ir
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, ranks)
    timeout = 120 + numel * ranks * 1e-6 * repeat
    progs = [mpi.compile(text, strategy=s, timeout=timeout) for s in STRATEGIES]
    progs.append(mpi.compile(mpi_allreduce_module(ranks, numel), timeout=timeout))
    runs = [(p, inputs, check.make_outputs(problem)) for p in progs]
    times = mpi.launch(runs, repeat)
    names = list(STRATEGIES) + ["MPI_Allreduce"]
    ok = {n: check.check(problem, inputs, out)[0] for n, (_, _, out) in zip(names, runs)}
    med = {n: float(np.median(t)) for n, t in zip(names, times)}
    coll = Collective(tuple(range(ranks)), numel, "f32", "sum")
    return dict(ranks=ranks, kib=kib, median_s=med, ok=ok,
                ratio={s: med[s] / med["MPI_Allreduce"] for s in STRATEGIES},
                fastest=min(STRATEGIES, key=lambda s: med[s]),
                model_pick=pick(candidates(coll, profile)),
                reference_pick=reference_rule(ranks, numel, DEFAULT_THRESHOLD))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--kib", type=int, nargs="+", default=[4, 64, 1024, 16384, 65536])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the points here")
    args = ap.parse_args()
    ok, why = mpi.available()
    if not ok:
        raise SystemExit(f"mpi_run: {why}")
    profile = load_profile("cpu")
    t0 = time.time()
    rows = []
    print(f"{'N':>2} {'KiB/rank':>9} {'MPI_Allreduce':>14} " + " ".join(f"{s + '/MPI':>12}" for s in STRATEGIES)
          + f" {'fastest':>8} {'model':>8} {'rule':>8}  check")
    for n in args.ranks:
        for kib in args.kib:
            p = point(n, kib, args.repeat, profile)
            rows.append(p)
            print(f"{n:>2} {kib:>9} {p['median_s']['MPI_Allreduce'] * 1e3:>11.3f} ms "
                  + " ".join(f"{p['ratio'][s]:>12.2f}" for s in STRATEGIES)
                  + f" {p['fastest']:>8} {p['model_pick']:>8} {p['reference_pick']:>8}  "
                  + ("ok" if all(p["ok"].values()) else "FAIL " + str(p["ok"])), flush=True)
    print(f"{len(rows)} points in {time.time() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
