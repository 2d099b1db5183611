"""CPU runtime benchmark of the collective family against numpy.

For N devices and B bytes per device (f32; sum where the op reduces), every
strategy of reduce_scatter, all_gather, broadcast, reduce, all_to_all and
permute (a ring shift):
  - time of the compiled program (best and median of its runs);
  - numpy doing the same data movement in the same process, on the same
    arrays: reduce_scatter: the reduction into one buffer, then one copy of
    each block into its device's output; all_gather: one concatenate per
    device; broadcast: N copies; reduce: the reduction; all_to_all: the N^2
    block copies; permute: N copies;
  - program time / numpy time, of the best runs (and of the medians). The
    program and numpy runs alternate (one program run, one numpy run,
    strategy after strategy, repeated), so both see the same machine load.
B is the larger per-device buffer: the input of reduce_scatter, reduce,
broadcast, all_to_all and permute, the output of all_gather (its input is B/N), as
nccl-tests counts it.
With --memory, each op x strategy also runs once in a child process that
reports its peak resident memory (VmHWM, reset after the buffers are made):
the scratch the run needs beyond the buffers, against the bound of one
buffer (B) of scratch per device.
Target, at 64 MiB per device and N = 4, 8: the best strategy of each op no
slower than numpy (ratio <= 1); peak scratch <= N x B.
With --small, the allreduce at 4 KB on 8 devices: every strategy timed in
interleaved rounds, against the pick of coll-choose-strategy{profile=cpu};
target: the pick within 10% of the fastest.

  python bench/collectives_run.py [--devices 4 8] [--mib 64] [--repeat 5] [--memory] [--small]
                                  [--profile cpu] [--json F]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from mlir import ir

from coll.analysis.cost_model import load_profile
from coll.collectives import AllReduce
from coll.ir import (
    MAX_DEVICES,  # noqa: E402
    make_context,
)
from coll.ir.generate import collective_module
from coll.ir.ops import OPS
from coll.lowering import cpu
from coll.passes.choose_strategy import choose_strategies
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, output_path  # one validation for every script

MIB = 1 << 20
NAMES = ("reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "permute")


def strategies(op):
    return OPS["coll." + op].STRATEGIES


class Case:
    """One op at N devices and `numel` elements per device (the larger
    buffer): its module, its arrays and numpy's version of its work."""

    def __init__(self, op, n, numel, seed=0):
        self.op, self.n = op, n
        numel -= numel % n
        self.numel = numel
        self.in_numel = numel // n if op == "all_gather" else numel
        self.out_numel = numel // n if op == "reduce_scatter" else numel
        n_in = 1 if op == "broadcast" else n
        n_out = 1 if op == "reduce" else n
        rng = np.random.default_rng(seed)
        self.xs = [rng.random(self.in_numel, dtype=np.float32) for _ in range(n_in)]
        self.ys = [np.empty(self.out_numel, np.float32) for _ in range(n_out)]
        self.ws = [np.empty(self.out_numel, np.float32) for _ in range(n_out)]
        # numpy's reduce_scatter reduces into one buffer first.
        self.scratch = np.empty(numel, np.float32) if op == "reduce_scatter" else None

    def module(self, strategy):
        kw = {"reduce_scatter": dict(kind="sum", axis=0), "all_gather": dict(axis=0),
              "broadcast": dict(root=0), "reduce": dict(kind="sum", root=0),
              "all_to_all": dict(split_axis=0, concat_axis=0), "permute": {}}[self.op]  # permute: a ring shift
        with make_context():
            return collective_module(self.op, self.n, [self.in_numel], "f32", strategy=strategy, **kw)

    def numpy(self, ys):
        """The same data movement in numpy, into `ys`."""
        xs, n, op = self.xs, self.n, self.op
        if op in ("reduce", "reduce_scatter"):
            r = ys[0] if op == "reduce" else self.scratch
            np.add(xs[0], xs[1], out=r) if n > 1 else np.copyto(r, xs[0])
            for x in xs[2:]:
                np.add(r, x, out=r)
            if op == "reduce_scatter":
                b = self.out_numel
                for j, y in enumerate(ys):
                    np.copyto(y, r[j * b:(j + 1) * b])
        elif op == "all_gather":
            for y in ys:
                np.concatenate(xs, out=y)
        elif op == "broadcast":
            for y in ys:
                np.copyto(y, xs[0])
        elif op == "permute":
            for i, x in enumerate(xs):
                np.copyto(ys[(i + 1) % n], x)
        else:
            b = self.in_numel // n
            for i, x in enumerate(xs):
                for j, y in enumerate(ys):
                    np.copyto(y[i * b:(i + 1) * b], x[j * b:(j + 1) * b])

    def buffer_bytes(self):
        return 4 * (len(self.xs) * self.in_numel + len(self.ys) * self.out_numel)


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(op, n, mib, repeat=5, names=None):
    """Rows for every strategy of `op`: program and numpy runs alternate."""
    case = Case(op, n, mib * MIB // 4)
    case.numpy(case.ws)  # the reference result (and numpy's warm-up)
    progs, ok = {}, {}
    for s in names or strategies(op):
        progs[s] = cpu.compile(case.module(s), strategy=s)
        for y in case.ys:
            y.fill(np.nan)
        progs[s].run(case.xs, case.ys)  # warm-up; also the check
        ok[s] = all(np.allclose(y, w, rtol=1e-5, atol=1e-5 * n) for y, w in zip(case.ys, case.ws))
    t_prog = {s: [] for s in progs}
    t_np = {s: [] for s in progs}
    for _ in range(repeat):
        for s, prog in progs.items():
            t_prog[s].append(_timed(lambda: prog.run(case.xs, case.ys)))
            t_np[s].append(_timed(lambda: case.numpy(case.ws)))
    rows = []
    for s in progs:
        # The best of the interleaved runs is the one this shared machine
        # disturbed least (medians are kept too).
        tp, tn = min(t_prog[s]), min(t_np[s])
        mp, mn = float(np.median(t_prog[s])), float(np.median(t_np[s]))
        rows.append(dict(op=op, devices=n, mib=mib, strategy=s, ok=bool(ok[s]), time_s=tp,
                         numpy_s=tn, numpy_ratio=tp / tn, median_s=mp, numpy_median_s=mn,
                         median_ratio=mp / mn, buffer_bytes=case.buffer_bytes()))
    cpu.clear_cache()
    return rows


# -- the small allreduce: the cost model's pick against the fastest -----------

def small_allreduce(n=8, nbytes=4096, profile="cpu", rounds=15, inner=200):
    """{measured: {s: seconds}, pick, fastest, ratio}: every allreduce
    strategy (those without peer access) timed in `rounds` interleaved
    rounds (each the best of `inner` runs; the median over rounds), and
    what coll-choose-strategy{profile=...} picks for the same module."""
    numel = nbytes // 4
    with make_context():
        text = collective_module("all_reduce", n, [numel], "f32", kind="sum")
        m = ir.Module.parse(text)
        pick = choose_strategies(m.operation, profile=profile)[0]
    names = list(AllReduce.runnable(()))
    progs = {s: cpu.compile(text, strategy=s) for s in names}
    rng = np.random.default_rng(0)
    xs = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    ys = [np.empty(numel, np.float32) for _ in range(n)]
    times = {s: [] for s in names}
    for _ in range(rounds):
        for s, p in progs.items():
            times[s].append(min(p.time(xs, ys, inner)))
    measured = {s: float(np.median(t)) for s, t in times.items()}
    fastest = min(measured, key=measured.get)
    cpu.clear_cache()
    return dict(devices=n, bytes=nbytes, profile=profile, measured=measured, pick=pick,
                fastest=fastest, ratio=measured[pick] / measured[fastest])


# -- peak memory, in a child process -----------------------------------------

def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def child(op, n, mib, strategy, tile=-1):
    """Runs one op once; prints {rss, peak, buffer_bytes} as JSON. The
    peak is reset after compiling and making the buffers, so peak - rss is
    what the run itself adds: its scratch (`tile` as coll-to-cpu's)."""
    case = Case(op, n, mib * MIB // 4)
    prog = cpu.compile(case.module(strategy), strategy=strategy, tile=tile)
    for y in case.ys:
        y.fill(0)  # resident, as the inputs are
    case.ws = case.scratch = None
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    rss = _status("VmRSS")
    prog.run(case.xs, case.ys)
    print(json.dumps(dict(rss=rss, peak=_status("VmHWM"), buffer_bytes=case.buffer_bytes(),
                          static=static_scratch_bytes(case.module(strategy), strategy, tile))))


def static_scratch_bytes(text, strategy, tile=-1):
    """Bytes of the program's static scratch (lowering/cpu/scratch.py: the
    JIT makes it resident when it loads the program, before the peak is
    reset, so the run adds none of it)."""
    import re

    from coll.lowering import lower
    from coll.lowering.cpu.scratch import PREFIX
    with make_context():
        m = ir.Module.parse(text)
        lower(m.operation, "cpu", strategy, tile=tile)  # to the LLVM dialect
        found = re.findall(rf"llvm\.mlir\.global private @{PREFIX}\d+\(\).*: !llvm\.array<(\d+) x (\w+)>", str(m))
    bits = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64}
    return sum(int(k) * max(1, (bits.get(el) or int(el[1:])) // 8) for k, el in found)


def peak_memory(op, n, mib, strategy, tile=-1):
    """{scratch_bytes, bound_bytes, ...} from a child process running once."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", op, str(n), str(mib),
                          strategy, str(tile)], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    per_device = mib * MIB
    scratch = max(r["peak"] - r["rss"], 0) + r["static"]  # what the run adds, and what the program holds
    return dict(op=op, devices=n, mib=mib, strategy=strategy, buffer_bytes=r["buffer_bytes"],
                scratch_bytes=scratch, static_bytes=r["static"], bound_bytes=n * per_device,
                ok=scratch <= n * per_device)


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=count(1, MAX_DEVICES), nargs="+", default=[4, 8])
    p.add_argument("--mib", type=count(1, 1 << 20), nargs="+", default=[64])
    p.add_argument("--ops", nargs="+", default=list(NAMES), choices=NAMES)
    p.add_argument("--repeat", type=count(1, 10 ** 6), default=5)
    p.add_argument("--memory", action="store_true", help="also peak memory per op x strategy")
    p.add_argument("--small", action="store_true", help="also the 4 KB, N = 8 allreduce pick")
    p.add_argument("--profile", default="cpu", help="the profile of --small (default cpu)")
    p.add_argument("--json", type=output_path(), help="also write the rows to this file")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)  # OP N MIB STRATEGY [TILE]
    args = p.parse_args(argv)
    if args.small:
        try:
            load_profile(args.profile)
        except ValueError as e:
            p.error(f"--profile: {e}")
    if args.child:
        op, n, mib, s, *tile = args.child
        return child(op, int(n), int(mib), s, int(tile[0]) if tile else -1)

    print(f"{'op':<15} {'N':>2} {'MiB/dev':>7} {'strategy':<8} {'best ms':>9} {'numpy ms':>9} "
          f"{'prog/numpy':>10} {'median ms':>9} {'numpy ms':>9} {'prog/numpy':>10} check")
    rows, mem = [], []
    for n in args.devices:
        for mib in args.mib:
            for op in args.ops:
                for r in measure(op, n, mib, args.repeat):
                    rows.append(r)
                    print(f"{op:<15} {n:>2} {mib:>7} {r['strategy']:<8} {r['time_s'] * 1e3:>9.2f} "
                          f"{r['numpy_s'] * 1e3:>9.2f} {r['numpy_ratio']:>10.2f} "
                          f"{r['median_s'] * 1e3:>9.2f} {r['numpy_median_s'] * 1e3:>9.2f} "
                          f"{r['median_ratio']:>10.2f} {'ok' if r['ok'] else 'FAIL'}", flush=True)
    print("best strategy of each op against numpy, best runs (target <= 1.00):")
    for n in args.devices:
        for mib in args.mib:
            for op in args.ops:
                sel = [r for r in rows if (r["op"], r["devices"], r["mib"]) == (op, n, mib)]
                best = min(sel, key=lambda r: r["time_s"])
                print(f"  {op:<15} N={n} {mib} MiB: best {best['strategy']} at "
                      f"{best['numpy_ratio']:.2f}x numpy ({'met' if best['numpy_ratio'] <= 1 else 'MISSED'}; "
                      f"medians {best['median_ratio']:.2f}x)")
    if args.memory:
        print("peak memory of one run beyond its buffers (child VmHWM, and the static scratch held from load; "
              "bound: one buffer per device)")
        print(f"{'op':<15} {'N':>2} {'MiB/dev':>7} {'strategy':<8} {'buffers MiB':>11} "
              f"{'scratch MiB':>11} {'bound MiB':>9} ok")
        for n in args.devices:
            for mib in args.mib:
                for op in args.ops:
                    for s in strategies(op):
                        m = peak_memory(op, n, mib, s)
                        mem.append(m)
                        print(f"{op:<15} {n:>2} {mib:>7} {s:<8} {m['buffer_bytes'] / MIB:>11.1f} "
                              f"{m['scratch_bytes'] / MIB:>11.1f} {m['bound_bytes'] / MIB:>9.0f} "
                              f"{'ok' if m['ok'] else 'OVER'}", flush=True)
    small = None
    if args.small:
        small = small_allreduce(profile=args.profile)
        print(f"allreduce, N = {small['devices']}, {small['bytes']} B per device (median of interleaved "
              "rounds, each the best of 200 runs):")
        print("  " + "  ".join(f"{s} {t * 1e6:.2f} us" for s, t in small["measured"].items()))
        print(f"  coll-choose-strategy{{profile={args.profile}}} picks {small['pick']}; fastest "
              f"{small['fastest']}; pick / fastest = {small['ratio']:.2f} "
              f"({'met' if small['ratio'] <= 1.1 else 'MISSED'}: target <= 1.10)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows, memory=mem, small=small), f, indent=1)


if __name__ == "__main__":
    main()
