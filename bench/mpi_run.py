"""MPI benchmark: every strategy against MPI_Allreduce on the same buffers.

For N ranks and B bytes per rank (f32 sum), one mpirun runs the program of
every strategy (coll-to-mpi projections) and a program that calls
MPI_Allreduce through upstream's `mpi.allreduce`, interleaved: each timed
round runs every program once, each after a barrier, so that all of them
see the same machine. Per point: the median time of each over the rounds
(the slowest rank's time per run; every run's time is in the JSON), its
ratio to MPI_Allreduce, the fastest strategy, what the cost model
(profile `mpi`, measured by bench/calibrate_mpi.py: what coll-run
--backend=mpi chooses `auto` by) and the reference rule would pick, and
whether the pick is within 10% of the fastest. Every point runs
4 x --repeat rounds (7 rounds left the medians of identical programs at
N = 2 and 64 MiB 13% apart), those under 1 MiB 16 calls in a row per timed
run (they are short and noisy). Every output is checked
against numpy. The machine's load average is printed before and after.

  python bench/mpi_run.py [--ranks 2 3 4] [--kib 4 64 1024 16384 65536] [--repeat 7] [--profile mpi] [--json out.json]
"""
import json
import math
import os
import time

import numpy as np

from coll.analysis.cost_model import load_profile
from coll.collectives import AllReduce
from coll.collectives.base import DEFAULT_THRESHOLD
from coll.execution import check
from coll.frontends.spmd import GLOBAL_ARGS_ATTR, RANK_INPUTS_ATTR, RANKS_ATTR
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import mpi
from coll.passes.choose_strategy import Instance, candidates, pick
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, output_path  # one validation for every script

MAX_RANKS = 4 * os.cpu_count()  # more ranks than a few per core would only wait on each other
MAX_KIB = 1 << 20               # 1 GiB per rank

# Every strategy the lowering has, but the peer ones: ranks do not share memory.
STRATEGIES = AllReduce.runnable(())


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
    timeout = 120 + numel * ranks * 1e-6 * 4 * repeat
    progs = [mpi.compile(text, strategy=s, timeout=timeout) for s in STRATEGIES]
    progs.append(mpi.compile(mpi_allreduce_module(ranks, numel), timeout=timeout))
    runs = [(p, inputs, check.make_outputs(problem)) for p in progs]
    # Short points: 16 calls in a row per timed run, so that the barrier's
    # skew between ranks does not swamp them.
    times = mpi.launch(runs, repeat * 4, calls=16 if kib < 1024 else 1)
    names = list(STRATEGIES) + ["MPI_Allreduce"]
    ok = {n: check.check(problem, inputs, out)[0] for n, (_, _, out) in zip(names, runs)}
    times = [[float(t) for t in ts] for ts in times]
    point = dict(ranks=ranks, kib=kib, ok=ok, times_s=dict(zip(names, times)))
    return judge(point, profile)


def judge(p, profile):
    """Point `p` (its times_s) with its median times, ratios, fastest
    strategy and the model's pick under `profile`. Raises ValueError for
    what a --json run cannot have written."""
    def count(v, top):
        return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= top

    def times(t):
        return (isinstance(t, list) and t and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                  and 0 < x < math.inf for x in t))
    names = list(STRATEGIES) + ["MPI_Allreduce"]
    if not (isinstance(p, dict) and count(p.get("ranks"), MAX_RANKS) and count(p.get("kib"), MAX_KIB)
            and isinstance(p.get("times_s"), dict) and all(times(p["times_s"].get(n)) for n in names)
            and isinstance(p.get("ok"), dict) and all(isinstance(v, bool) for v in p["ok"].values())):
        raise ValueError(f"a point must have ranks 1..{MAX_RANKS}, kib 1..{MAX_KIB}, ok (true or false per "
                         f"program) and positive times of {', '.join(names)}, got {json.dumps(p)[:80]}")
    best = {n: float(np.median(t)) for n, t in p["times_s"].items()}
    fastest = min(STRATEGIES, key=lambda s: best[s])
    coll = Instance(tuple(range(p["ranks"])), p["kib"] * 1024 // 4, "f32", "sum")
    model = pick(candidates(coll, profile))
    return dict(p, reference_pick=AllReduce.reference_rule(p["ranks"], coll.numel, DEFAULT_THRESHOLD), median_s=best, best_s={n: float(np.min(t)) for n, t in p["times_s"].items()},
                ratio={s: best[s] / best["MPI_Allreduce"] for s in STRATEGIES}, fastest=fastest,
                model_pick=model, model_within_10=best[model] <= 1.1 * best[fastest])


HEADER = (f"{'N':>2} {'KiB/rank':>9} {'MPI_Allreduce':>14} " + " ".join(f"{s + '/MPI':>12}" for s in STRATEGIES)
          + f" {'fastest':>8} {'model':>8} {'<=1.1x':>6} {'rule':>8}  check")


def row(p):
    return (f"{p['ranks']:>2} {p['kib']:>9} {p['median_s']['MPI_Allreduce'] * 1e3:>11.3f} ms "
            + " ".join(f"{p['ratio'][s]:>12.2f}" for s in STRATEGIES)
            + f" {p['fastest']:>8} {p['model_pick']:>8} {'yes' if p['model_within_10'] else 'NO':>6}"
            + f" {p['reference_pick']:>8}  " + ("ok" if all(p["ok"].values()) else "FAIL " + str(p["ok"])))


def summary(rows):
    good = sum(p["model_within_10"] for p in rows)
    print(f"model pick within 10% of the fastest at {good}/{len(rows)} points")
    big = [p for p in rows if p["kib"] >= 1024 and p["ranks"] in (2, 4)]
    if big:
        worst = max(min(p["ratio"].values()) for p in big)
        print(f"at >= 1 MiB, N = 2 and 4: coll's best strategy / MPI_Allreduce at most {worst:.2f}")


def main():
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=count(1, MAX_RANKS), nargs="+", default=[2, 3, 4])
    ap.add_argument("--kib", type=count(1, MAX_KIB), nargs="+", default=[4, 64, 1024, 16384, 65536])
    ap.add_argument("--repeat", type=count(1, 10 ** 6), default=7)
    ap.add_argument("--profile", default="mpi", help="the cost-model profile of the model's pick")
    ap.add_argument("--json", type=output_path(), help="write the points here")
    ap.add_argument("--from", dest="source", metavar="JSON",
                    help="run nothing: the table of the points a --json run wrote, with the model's "
                         "picks of --profile as it is now, for those measurements")
    args = ap.parse_args()
    try:
        profile = load_profile(args.profile)
    except ValueError as e:
        raise SystemExit(f"mpi_run: {e}")
    if args.source:
        try:
            with open(args.source) as f:
                rows = [judge(p, profile) for p in json.load(f)]
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            raise SystemExit(f"mpi_run: {args.source} is not a --json run's points: {e}")
        if not rows:
            raise SystemExit(f"mpi_run: {args.source} holds no points")
        print(f"measured by an earlier run ({args.source}); picks of profile {args.profile}")
        print(HEADER)
        for p in rows:
            print(row(p))
        summary(rows)
        return
    ok, why = mpi.available()
    if not ok:
        raise SystemExit(f"mpi_run: {why}")
    t0 = time.time()
    rows = []
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cpus); profile {args.profile}")
    print(HEADER)
    for n in args.ranks:
        for kib in args.kib:
            rows.append(point(n, kib, args.repeat, profile))
            print(row(rows[-1]), flush=True)
            if args.json:  # after every point: a run cut short keeps what it measured
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1, default=list)
    summary(rows)
    print(f"{len(rows)} points in {time.time() - t0:.0f} s; load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
