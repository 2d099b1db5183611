"""Validation of `strategy=auto` with a cost-model profile on CPU-simulated
devices: over a grid of N and sizes, time every strategy the CPU runs (the
peer strategies too) with the CPU runtime, and check that the model's pick
is within 10% of the fastest measured strategy at >= 90% of the grid points.

  python bench/validate.py [--profile cpu] [--quick] [--json out.json]
"""
import json
import os
import sys
import time

import numpy as np

from coll.analysis import cost_model
from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.ops import PEER_ACCESS
from coll.lowering import cpu
from coll.lowering.cpu.runtime import CLOCKS
from coll.passes import choose_strategy
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import output_path

# What `auto` chooses from on the CPU: every strategy whose needs the CPU
# back end meets (its simulated devices share one memory: peer access).
CAPABILITIES = cpu.BACKEND.capabilities
STRATEGIES = AllReduce.runnable(CAPABILITIES)
NS = (2, 3, 4, 8)
SIZES = (4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20)  # bytes per device
QUICK_SIZES = (4 << 10, 1 << 20, 16 << 20)
TOLERANCE = 0.10
TARGET = 0.90


# How calls are timed: CLOCKS (lowering/cpu/runtime.py); wall by default,
# since a large group's tiles run on every core (coll-to-cpu's workers).
CLOCK = "wall"


def measure(n, nbytes, budget=1.0, rounds=(3, 50)):
    """{strategy: best seconds} for an f32 sum allreduce of `nbytes` per
    device on n devices. Strategies are timed in interleaved rounds, so a
    slow spell of this shared machine hits them all alike; by CLOCK."""
    clock = CLOCKS[CLOCK]
    numel = nbytes // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    progs = {s: cpu.compile(text, strategy=s) for s in STRATEGIES}
    rng = np.random.default_rng(0)
    xs = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    ys = [np.empty(numel, np.float32) for _ in range(n)]
    progs["ring"].run(xs, ys)
    want = np.sum(xs, axis=0, dtype=np.float64)
    assert np.allclose(ys[0], want, rtol=1e-4), "ring result is wrong"
    best = {s: min(p.time(xs, ys, 1, clock)) for s, p in progs.items()}  # includes a warm-up run
    start, done = time.perf_counter(), 1
    while done < rounds[1] and (done < rounds[0] or time.perf_counter() - start < budget):
        for s, p in progs.items():
            best[s] = min(best[s], p.time(xs, ys, 1, clock)[0])
        done += 1
    return best


def grid(profile, ns=NS, sizes=SIZES, log=print):
    """Rows of {n, bytes, measured: {s: sec}, predicted: {s: sec}, pick,
    reference, fastest, ok, ref_ok}."""
    rows = []
    for n in ns:
        for nbytes in sizes:
            t0 = time.perf_counter()
            measured = measure(n, nbytes)
            coll = choose_strategy.Instance(tuple(range(n)), nbytes // 4, "f32", "sum",
                                              peer_access=PEER_ACCESS in CAPABILITIES)
            cands = choose_strategy.candidates(coll, profile, STRATEGIES)
            pick = choose_strategy.pick(cands)
            ref = AllReduce.choose("auto", n, nbytes // 4)
            fastest = min(measured, key=measured.get)
            row = {"n": n, "bytes": nbytes, "measured": measured,
                   "predicted": {c["strategy"]: c["predicted_s"] for c in cands},
                   "pick": pick, "reference": ref, "fastest": fastest,
                   "ok": measured[pick] <= (1 + TOLERANCE) * measured[fastest],
                   "ref_ok": measured[ref] <= (1 + TOLERANCE) * measured[fastest]}
            rows.append(row)
            log(f"N={n} {human(nbytes):>6}: " + " ".join(
                f"{s} {measured[s] * 1e3:.3f} ms (pred {row['predicted'][s] * 1e3:.3f})" for s in STRATEGIES)
                + f" | pick {pick} fastest {fastest} {'ok' if row['ok'] else 'MISS'}"
                + f" [{time.perf_counter() - t0:.1f} s]")
    return rows


def hit_rate(rows, key="ok"):
    return sum(r[key] for r in rows) / max(len(rows), 1)


def human(nbytes):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def main(argv=None):
    global CLOCK
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="cpu", help="profile name or .json path (default cpu)")
    p.add_argument("--quick", action="store_true", help=f"sizes {', '.join(map(human, QUICK_SIZES))} only")
    p.add_argument("--json", type=output_path(), default=None, help="write the rows here")
    p.add_argument("--clock", choices=sorted(CLOCKS), default=CLOCK,
                   help="wall: wall time (default); cpu: the CPU time of every thread of the process "
                        "(leaves out the time other processes hold the cores; counts the work of "
                        "every thread, more than the time a threaded program takes)")
    args = p.parse_args(argv)
    CLOCK = args.clock  # measure() reads it (report.py calls grid() with the default)
    try:  # both before the grid's minutes of timing
        prof = cost_model.load_profile(args.profile)
    except ValueError as e:
        p.error(f"--profile: {e}")
    load = os.getloadavg()
    rows = grid(prof, sizes=QUICK_SIZES if args.quick else SIZES,
                log=lambda s: print(s, file=sys.stderr, flush=True))
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus); "
          f"clock {CLOCK}")
    rate, ref = hit_rate(rows), hit_rate(rows, "ref_ok")
    print(f"model pick within {TOLERANCE:.0%} of the fastest: {rate:.0%} of {len(rows)} points "
          f"(target {TARGET:.0%}: {'ok' if rate >= TARGET else 'MISSED'}); reference rule: {ref:.0%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if rate >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
