"""The timed call: coll-run's CPU time against the same compiled code on
pre-faulted buffers, scratch on the heap (before) and static (after).

For N devices and B bytes per device (f32 sum allreduce), every strategy is
compiled twice: with `coll-to-cpu{scratch=heap}` (a malloc and free of every
scratch buffer at each call, what the CPU route did before) and with static
scratch (allocated once per compiled program, the default). In one process,
in interleaved rounds:
  - coll-run's way, both programs: `CpuProgram.time` on fresh copies of the
    inputs and fresh zeroed outputs, on cache lines (what tools/coll_run.py
    times);
  - pre-faulted, the reference: the static program's compiled function
    called directly on one mapping of 2N rows (inputs, then outputs),
    madvise(MADV_HUGEPAGE) and written before the first call, its scratch
    faulted in by an earlier call: no page is faulted in while it runs.
Printed per row: the best of the rounds, coll-run's / the reference for heap (before)
and static (after) scratch (target: within 1.2x), and the minor page faults
of one direct call of each program (getrusage; 0: none faulted in).

  python bench/timed_call.py [--devices 8] [--mib 16 64] [--strategies ...] [--rounds 5] [--json F]

Run from a checkout before static scratch (no scratch option: one form,
"as-is", its own program as the reference) it times the code before.
"""
import ctypes
import json
import mmap
import os
import resource
import time

import numpy as np

from coll.collectives import AllReduce
from coll.execution.descriptors import descriptor
from coll.execution.signature import aligned_copy, aligned_zeros  # (as coll-run allocates)
from coll.ir import make_context
from coll.ir.generate import all_reduce_module

try:
    from coll.lowering import cpu
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import count, output_path
except ImportError:  # a checkout from before lowering/: to time the code before a change
    from coll.lowering import cpu
    from coll.tools.cl import ArgumentParser

    def count(lo=1, hi=None):
        return int

    def output_path():
        return str

MIB = 1 << 20
MAX_DEVICES = 64   # every strategy's program at once: more would only measure compile time
MAX_MIB = 4096     # per device
HUGE = 2 * MIB
MODES = ("heap", "static")  # before, after


def compile_as(text, strategy, mode):
    """The program with scratch `mode`; a checkout without the option has
    one form, its own (mode "as-is")."""
    if mode == "as-is":
        return cpu.compile(text, strategy=strategy)
    return cpu.compile(text, strategy=strategy, scratch=mode)


def modes():
    try:
        with make_context():
            cpu.compile(all_reduce_module(2, [4], "f32", "sum"), strategy="naive", scratch="heap")
        return MODES
    except TypeError:
        return ("as-is",)


def faults():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_minflt + r.ru_majflt


STAGGER = 4096 + 64  # bytes between rows beyond their own: no two rows at one cache set


def stacked(rows, numel):
    """`rows` f32 arrays of `numel` one after the other in an anonymous
    mapping advised to use huge pages, every page written (faulted in)
    already. Rows at multiples of 2 MiB would put the 2N streams of a
    combine in the same cache sets (measured 1.1-1.4x slower), so each row
    starts STAGGER bytes after the last one ends."""
    row = numel * 4 + STAGGER
    m = mmap.mmap(-1, rows * row + HUGE)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    skip = (-base) % HUGE
    out = [np.frombuffer(m, np.float32, numel, skip + i * row) for i in range(rows)]
    for a in out:
        a[...] = 1.0
    return out, m


def prefaulted_call(prog, arrays):
    """A zero-argument call of `prog`'s compiled function on `arrays`
    (the program's own argument convention, no checks or staging)."""
    descs = [descriptor(a) for a in arrays]
    ptrs = [ctypes.pointer(d) for d in descs]
    packed = (ctypes.c_void_p * len(ptrs))()
    for i, p in enumerate(ptrs):
        packed[i] = ctypes.cast(ctypes.pointer(p), ctypes.c_void_p)
    keep = (descs, ptrs, packed)
    return lambda: prog._fn(keep[2])


def measure(n, mib, strategies, rounds, forms=MODES):
    numel = mib * MIB // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    rng = np.random.default_rng(0)
    pristine = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    want = np.sum(pristine, axis=0, dtype=np.float64)
    buf, keep = stacked(2 * n, numel)
    for b, x in zip(buf, pristine):
        b[...] = x
    rows = []
    for s in strategies:
        progs = {m: compile_as(text, s, m) for m in forms}
        calls = {m: prefaulted_call(p, buf) for m, p in progs.items()}
        ok = True
        for m, p in progs.items():
            ys = [np.zeros(numel, np.float32) for _ in range(n)]
            p.run([x.copy() for x in pristine], ys)
            ok = ok and all(np.allclose(y, want, rtol=1e-4) for y in ys)
        t = {(m, w): [] for m in forms for w in ("coll-run", "prefaulted")}
        flt = {m: [] for m in forms}
        for m in forms:
            calls[m]()  # warm-up: faults in static scratch
        for _ in range(rounds):
            for m, p in progs.items():
                # coll-run's way: fresh copies, fresh outputs, time() (one warm-up call).
                t[m, "coll-run"] += p.time([aligned_copy(x) for x in pristine],
                                           [aligned_zeros(numel, np.float32) for _ in range(n)], 1)
                calls[m]()  # as time() does: one call before the timed one (the caches as coll-run has them)
                f0 = faults()
                t0 = time.perf_counter()
                calls[m]()
                t[m, "prefaulted"].append(time.perf_counter() - t0)
                flt[m].append(faults() - f0)
        # The best of the rounds, both ways: on a loaded machine a median
        # says more about the other processes than about the call.
        med = {k: float(np.min(v)) for k, v in t.items()}
        ref = med[forms[-1], "prefaulted"]
        row = dict(devices=n, mib=mib, strategy=s, ok=bool(ok), prefaulted_s=ref)
        for m in forms:
            row[m] = dict(coll_run_s=med[m, "coll-run"], ratio=med[m, "coll-run"] / ref,
                          faults_per_call=int(np.median(flt[m])))
        rows.append(row)
        print(f"{n:>2} {mib:>5} {s:<8} {ref * 1e3:9.2f}  " + "  ".join(
            f"{row[m]['coll_run_s'] * 1e3:9.2f} {row[m]['ratio']:6.2f} {row[m]['faults_per_call']:>7}"
            for m in forms) + f"  {'ok' if ok else 'FAIL'}", flush=True)
        cpu.clear_cache()
    del buf, keep  # (the mapping goes once no row views it)
    return rows


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=count(1, MAX_DEVICES), nargs="+", default=[8])
    p.add_argument("--mib", type=count(1, MAX_MIB), nargs="+", default=[16, 64])
    p.add_argument("--strategies", nargs="+", default=list(AllReduce.STRATEGIES),
                   choices=list(AllReduce.STRATEGIES))
    p.add_argument("--rounds", type=count(1), default=5, help="interleaved timed rounds (median)")
    p.add_argument("--json", type=output_path(), help="also write the rows to this file")
    args = p.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus)")
    print("ms per call, best of", args.rounds, "interleaved rounds; ratio = coll-run's time / the "
          "pre-faulted reference; faults = minor page faults of one call")
    forms = modes()
    print(f"{'N':>2} {'MiB':>5} {'strategy':<8} {'prefault':>9}  " + "  ".join(
        f"{m + ' coll-run':>14} {'ratio':>6} {'faults':>7}" for m in forms))
    rows = []
    for n in args.devices:
        for mib in args.mib:
            rows += measure(n, mib, args.strategies, args.rounds, forms)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for m in forms:
        worst = max(rows, key=lambda r: r[m]["ratio"])
        hit = sum(r[m]["ratio"] <= 1.2 for r in rows)
        print(f"scratch={m}: coll-run within 1.2x of pre-faulted at {hit} of {len(rows)} rows; worst "
              f"{worst[m]['ratio']:.2f} ({worst['strategy']}, N={worst['devices']}, {worst['mib']} MiB)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
