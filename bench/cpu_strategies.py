"""Every allreduce strategy on CPU-simulated devices against ring and
against a copy of the minimum bytes, side by side in one process.

For N devices and B bytes per device (f32 sum), every strategy is compiled
as the CPU back end compiles it (static scratch, results streamed past the
last-level cache), and, with --compare, also with coll-to-cpu{nontemporal=0}
(every store through the cache: the form before the streaming copies).
In interleaved rounds, so that a slow spell of a shared machine hits all
alike, each is timed (wall time by default: a large group's tiles run on
every core, coll-to-cpu's workers), and so is numpy's copyto of one buffer of N x B
bytes into another: the minimum any allreduce moves (each input read once,
each output written once), on one thread (a strategy on every core can
pass it: copy/t above 1). Per row: the best of the rounds (ms), the
time over ring's, and the copy's time over the strategy's (1.0: as fast
as the copy), and the minor page faults of one call. Targets (issue 26):
rhd, oneshot and tree within 1.5x of ring from 1 MiB; the best strategy at
>= 0.8 of the copy at 8 x 64 MiB.

  python bench/cpu_strategies.py [--devices 8] [--mib 1 16 64] [--rounds 5] [--compare] [--json F]
"""
import json
import os
import resource

import numpy as np

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu
from coll.lowering.cpu.runtime import CLOCKS
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, output_path

MIB = 1 << 20
MAX_DEVICES = 64   # every strategy's program at once: more would only measure compile time
MAX_MIB = 4096     # per device
STRATEGIES = AllReduce.runnable(cpu.BACKEND.capabilities)


def faults():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_minflt + r.ru_majflt




def measure(n, mib, rounds, compare, clock=CLOCKS["wall"]):
    numel = mib * MIB // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    rng = np.random.default_rng(0)
    xs = [rng.integers(-8, 8, numel).astype(np.float32) for _ in range(n)]  # exact in any order
    ys = [np.zeros(numel, np.float32) for _ in range(n)]
    want = np.sum(xs, axis=0)
    progs = {}
    for s in STRATEGIES:
        progs[s, "default"] = cpu.compile(text, strategy=s)
        if compare:
            progs[s, "nontemporal=0"] = cpu.compile(text, strategy=s, nontemporal=0)
    ok = {}
    for key, p in progs.items():
        for y in ys:
            y.fill(0)
        p.run(xs, ys)
        ok[key] = all(np.array_equal(y, want) for y in ys)
    src = np.concatenate(xs)
    dst = np.zeros_like(src)
    np.copyto(dst, src)
    t = {key: [] for key in progs}
    t["copy"] = []
    flt = {key: [] for key in progs}
    for _ in range(rounds):
        for key, p in progs.items():
            f0 = faults()
            t[key] += p.time(xs, ys, 1, clock)  # (one warm-up call first: its faults count too)
            flt[key].append(faults() - f0)
        t0 = clock()
        np.copyto(dst, src)
        t["copy"].append(clock() - t0)
    # The best of the rounds: on a loaded machine a call's median says more
    # about the other processes than about the call.
    med = {k: float(np.min(v)) for k, v in t.items()}
    rows = []
    for key in progs:
        s, form = key
        rows.append(dict(devices=n, mib=mib, strategy=s, form=form, ok=ok[key], time_s=med[key],
                         over_ring=med[key] / med["ring", form], copy_over_time=med["copy"] / med[key],
                         copy_s=med["copy"], faults_per_call=int(np.median(flt[key])) // 2))
    cpu.clear_cache()
    return rows


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=count(1, MAX_DEVICES), nargs="+", default=[8])
    p.add_argument("--mib", type=count(1, MAX_MIB), nargs="+", default=[1, 16, 64])
    p.add_argument("--rounds", type=count(1), default=5,
                   help="interleaved timed rounds (the best counts; 4x as many below 4 MiB)")
    p.add_argument("--compare", action="store_true",
                   help="also every strategy with coll-to-cpu{nontemporal=0} (no streamed results)")
    p.add_argument("--json", type=output_path(), help="also write the rows to this file")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="wall: wall time (default); cpu: the CPU time of every thread of the process "
                        "(leaves out the time other processes hold the cores; counts the work of "
                        "every thread, more than the time a threaded program takes)")
    args = p.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus); "
          f"streaming from {cpu.NONTEMPORAL / MIB:.0f} MiB of buffers; clock {args.clock}")
    print(f"{'N':>2} {'MiB':>5} {'strategy':<8} {'form':<13} {'ms':>9} {'/ring':>6} {'copy/t':>7} "
          f"{'faults':>7} check")
    rows = []
    for n in args.devices:
        for mib in args.mib:
            got = measure(n, mib, args.rounds * (4 if mib < 4 else 1), args.compare, CLOCKS[args.clock])
            for r in got:
                print(f"{n:>2} {mib:>5} {r['strategy']:<8} {r['form']:<13} {r['time_s'] * 1e3:9.2f} "
                      f"{r['over_ring']:6.2f} {r['copy_over_time']:7.2f} {r['faults_per_call']:>7} "
                      f"{'ok' if r['ok'] else 'FAIL'}", flush=True)
            print(f"{n:>2} {mib:>5} {'copy':<8} {'numpy':<13} {got[0]['copy_s'] * 1e3:9.2f}", flush=True)
            rows += got
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for form in sorted({r["form"] for r in rows}):
        sel = [r for r in rows if r["form"] == form]
        slow = [r for r in sel if r["strategy"] in ("rhd", "oneshot", "tree") and r["mib"] >= 1
                and r["over_ring"] > 1.5]
        print(f"[{form}] rhd, oneshot, tree within 1.5x of ring from 1 MiB: "
              + ("met" if not slow else "MISSED at " + ", ".join(
                  f"{r['strategy']} N={r['devices']} {r['mib']} MiB ({r['over_ring']:.2f}x)" for r in slow)))
        for n in sorted({r["devices"] for r in sel}):
            for mib in sorted({r["mib"] for r in sel if r["devices"] == n}):
                pt = [r for r in sel if r["devices"] == n and r["mib"] == mib]
                best = min(pt, key=lambda r: r["time_s"])
                print(f"[{form}] N={n} {mib} MiB: best {best['strategy']} at {best['copy_over_time']:.2f} of "
                      f"the copy's speed (target >= 0.8 at 8 x 64 MiB)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
