"""Every allreduce strategy on buffers as an allocator hands them out,
against the same program on buffers that start on cache lines, side by side
in one process (issue 36, item 5: within 1.1x).

For N devices and B bytes per device (f32 sum) each strategy is compiled
once, as the CPU back end compiles it, and called on separate buffers laid
out several ways; every layout keeps its rows off one another's cache sets
(each starts a few lines after a page boundary, a different number per
row), so only the offset within a line differs from "lines":
  lines   every input and output on a 64-byte boundary (the reference)
  in16    inputs 0/16/32/48 bytes past a line, outputs on lines
  out16   outputs 16/32/48/0 bytes past a line, inputs on lines
  all16   both, each at another offset (malloc's 16-byte alignment in a
          heap of mixed sizes)
  outoff  every output 16 bytes past a line, inputs on lines
  7of8    outputs 16 bytes past a line but one 32 past
  malloc  np.empty as this process's allocator hands it out (large ones
          mapped anew: all 16 bytes past a page, on the same cache sets)
In interleaved rounds, the best of each's timed calls (wall time by
default: a large group's tiles run on every core); per
row the time on lines (ms), each layout's time over it, and ok or FAIL (every
output equal to numpy's sum, exact in any order: small integers). Results
stream past the cache from the back end's threshold (coll-to-cpu
nontemporal: 16 MiB of a program's buffers here, 8 x 1 MiB in and out),
and only in tiled programs: below it the layouts test plain stores.

  python bench/alignment.py [--devices 8] [--mib 1 16] [--rounds 5] [--json F]
"""
import json
import os

import numpy as np

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu
from coll.lowering.cpu.runtime import CLOCKS
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, mebibytes, output_path

MIB = 1 << 20
MAX_DEVICES = 64
MAX_MIB = 1024     # per device: every layout holds its own 2N buffers
STRATEGIES = AllReduce.runnable(cpu.BACKEND.capabilities)
PAGE = 4096
TARGET = 1.1


def _at(numel, offset, row):
    """An f32 array of `numel` starting `offset` bytes past a line, `row`
    lines past a page boundary (no two rows of a layout on one cache set)."""
    raw = np.empty(numel * 4 + 2 * PAGE + 64 * row + offset, np.uint8)
    skip = -raw.ctypes.data % PAGE + 64 * row + offset
    return raw[skip:skip + numel * 4].view(np.float32)


# name: (input offset, output offset) in bytes past a line, per device i
LAYOUTS = {
    "lines": (lambda i: 0, lambda i: 0),
    "in16": (lambda i: 16 * (i % 4), lambda i: 0),
    "out16": (lambda i: 0, lambda i: 16 * ((i + 1) % 4)),
    "all16": (lambda i: 16 * (i % 4), lambda i: 16 * ((i + 1) % 4)),
    "outoff": (lambda i: 0, lambda i: 16),
    "7of8": (lambda i: 0, lambda i: 32 if i == 7 else 16),
}


def layouts(n, numel):
    """{name: (inputs, outputs)}, every buffer its own allocation."""
    out = {name: ([_at(numel, fi(i), 3 * i + 1) for i in range(n)],
                  [_at(numel, fo(i), 3 * i + 2 + 3 * n) for i in range(n)])
           for name, (fi, fo) in LAYOUTS.items()}
    out["malloc"] = ([np.empty(numel, np.float32) for _ in range(n)],
                     [np.empty(numel, np.float32) for _ in range(n)])
    return out


def measure(n, mib, strategies, rounds, clock):
    numel = int(mib * MIB) // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    rng = np.random.default_rng(0)
    pristine = [rng.integers(-8, 8, numel).astype(np.float32) for _ in range(n)]  # exact in any order
    want = np.sum(pristine, axis=0)
    bufs = layouts(n, numel)
    for xs, _ in bufs.values():
        for x, p in zip(xs, pristine):
            x[...] = p
    rows = []
    for s in strategies:
        prog = cpu.compile(text, strategy=s)
        ok = True
        t: dict[str, list[float]] = {k: [] for k in bufs}
        for _ in range(rounds):
            for k, (xs, ys) in bufs.items():
                for y in ys:
                    y.fill(0)
                t[k] += prog.time(xs, ys, 3, clock)  # (one warm-up call first)
                ok = ok and all(np.array_equal(y, want) for y in ys)
        best = {k: float(np.min(v)) for k, v in t.items()}
        ref = best["lines"]
        row = dict(devices=n, mib=mib, strategy=s, ok=bool(ok), lines_s=ref,
                   ratios={k: v / ref for k, v in best.items() if k != "lines"})
        rows.append(row)
        worst = max(row["ratios"], key=row["ratios"].get)
        print(f"{n:>2} {mib:>6g} {s:<8} {ref * 1e3:9.3f}  " +
              " ".join(f"{r:>7.2f}" for r in row["ratios"].values()) +
              f"  {worst} {row['ratios'][worst]:.2f}  {'ok' if ok else 'FAIL'}", flush=True)
        cpu.clear_cache()
    return rows


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=count(1, MAX_DEVICES), nargs="+", default=[8])
    p.add_argument("--mib", type=mebibytes(MAX_MIB), nargs="+", default=[1, 16], help="per device")
    p.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=list(STRATEGIES))
    p.add_argument("--rounds", type=count(1), default=5, help="interleaved rounds (best of)")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    p.add_argument("--json", type=output_path(), help="also write the rows to this file")
    args = p.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus)")
    names = [k for k in layouts(1, 16) if k != "lines"]
    print(f"{'N':>2} {'MiB':>6} {'strategy':<8} {'lines ms':>9}  " + " ".join(f"{k:>7}" for k in names) +
          "  worst (each: time / time on lines)")
    rows = []
    for n in args.devices:
        for mib in args.mib:
            rows += measure(n, mib, args.strategies, args.rounds, CLOCKS[args.clock])
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    within = sum(max(r["ratios"].values()) <= TARGET for r in rows)
    worst = max(rows, key=lambda r: max(r["ratios"].values()))
    w = max(worst["ratios"], key=worst["ratios"].get)
    print(f"within {TARGET}x of lines on every layout: {within} of {len(rows)} rows; worst {worst['ratios'][w]:.2f} "
          f"({worst['strategy']}, N={worst['devices']}, {worst['mib']:g} MiB, {w}); results: "
          f"{'ok' if all(r['ok'] for r in rows) else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
