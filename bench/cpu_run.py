"""CPU runtime benchmark: the compiled allreduce against numpy and memcpy.

For N devices and B bytes per device (f32 sum), every strategy:
  - time of the compiled program (median of the runs);
  - effective bandwidth: bytes the explicit program reads plus writes / time,
    and its ratio to this machine's memcpy bandwidth (numpy copyto of a
    64 MiB buffer, read plus written, timed alongside each row);
  - the stricter algorithm bandwidth: only the bytes any allreduce must
    move (N inputs read, N outputs written) / time, and its ratio to memcpy.
    Tiling keeps scratch in cache, so the effective bandwidth can exceed
    memcpy; the algorithm bandwidth cannot;
  - numpy doing the same work (reduce, then a copy per output device), and
    program time / numpy time. Program, numpy and memcpy runs alternate, so
    all see the same machine load.
Then the compile time of the whole CPU pipeline (parse, lower, LLVM O3 JIT)
for N = 8 ring.
Targets, at >= 64 MiB per device: effective bandwidth >= 70% of memcpy;
the best strategy no slower than numpy; compile time < 2 s.

  python bench/cpu_run.py [--devices 4 8] [--mib 1 4 16 64 256] [--json out.json]
"""
import json
import time

import numpy as np

from coll.ir import (
    MAX_DEVICES,  # noqa: E402
    make_context,
)
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, output_path  # one validation for every script

STRATEGIES = ("naive", "ring", "all2all")
MIB = 1 << 20


def memcpy_bandwidth(nbytes=256 * MIB, repeat=5):
    """Bytes read plus written per second by numpy copyto."""
    a = np.ones(nbytes // 4, np.float32)
    b = np.empty_like(a)
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t0)
    return 2 * nbytes / float(np.median(times[1:]))


def numpy_allreduce(xs, ys):
    """The same work in numpy: y0 = sum of the inputs, copied to every y_j."""
    np.add(xs[0], xs[1], out=ys[0])
    for x in xs[2:]:
        np.add(ys[0], x, out=ys[0])
    for y in ys[1:]:
        np.copyto(y, ys[0])


def repeats(mib):
    return 15 if mib <= 1 else 7 if mib <= 16 else 3


def measure(n, mib):
    """Rows for every strategy; memcpy is timed alongside each, so every
    ratio compares runs under the same machine load."""
    numel = mib * MIB // 4
    src = np.ones(64 * MIB // 4, np.float32)
    dst = np.empty_like(src)
    rng = np.random.default_rng(0)
    xs = [rng.random(numel, dtype=np.float32) for _ in range(n)]
    ys = [np.empty(numel, np.float32) for _ in range(n)]
    want = np.sum(np.stack(xs[:2]), axis=0)
    for x in xs[2:]:
        want += x
    rows = []
    for strategy in STRATEGIES:
        with make_context():
            text = all_reduce_module(n, [numel], "f32", "sum", strategy=strategy)
        prog = cpu.compile(text, strategy=strategy)
        prog.run(xs, ys)  # warm-up; also the check
        ok = all(np.allclose(y, want, rtol=1e-5, atol=1e-5 * n) for y in ys)
        t_prog, t_np, t_cp = [], [], []
        for _ in range(repeats(mib)):
            t_prog += prog.time(xs, ys, 1)
            t0 = time.perf_counter()
            numpy_allreduce(xs, ys)
            t1 = time.perf_counter()
            np.copyto(dst, src)
            t_np.append(t1 - t0)
            t_cp.append(time.perf_counter() - t1)
        tp, tn = float(np.median(t_prog)), float(np.median(t_np))
        memcpy = 2 * src.nbytes / float(np.median(t_cp))
        bw = prog.traffic_bytes / tp
        alg = 2 * n * xs[0].nbytes / tp
        rows.append(dict(devices=n, mib=mib, strategy=strategy, ok=bool(ok), time_s=tp,
                         traffic_bytes=prog.traffic_bytes, bandwidth=bw, memcpy=memcpy,
                         bw_ratio=bw / memcpy, alg_bandwidth=alg, alg_ratio=alg / memcpy,
                         numpy_s=tn, numpy_ratio=tp / tn))
        cpu.clear_cache()
    return rows


def compile_time(n=8, mib=64, repeat=3):
    numel = mib * MIB // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum", strategy="ring")
    times = []
    for _ in range(repeat):
        cpu.clear_cache()
        t0 = time.perf_counter()
        cpu.compile(text, strategy="ring")
        times.append(time.perf_counter() - t0)
    cpu.clear_cache()
    return float(np.median(times))


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=count(1, MAX_DEVICES), nargs="+", default=[4, 8])
    p.add_argument("--mib", type=count(1, 1 << 20), nargs="+", default=[1, 4, 16, 64, 256])
    p.add_argument("--json", type=output_path(), help="also write the rows to this file")
    args = p.parse_args()

    memcpy = memcpy_bandwidth()
    print(f"memcpy bandwidth (numpy copyto, 256 MiB, read + written): {memcpy / 1e9:.1f} GB/s; "
          "each row's ratio uses a 64 MiB copyto timed alongside it")
    print(f"{'N':>2} {'MiB/dev':>7} {'strategy':<8} {'time ms':>9} {'eff GB/s':>9} {'memcpy':>7} "
          f"{'eff/memcpy':>10} {'alg GB/s':>9} {'alg/memcpy':>10} {'numpy ms':>9} {'prog/numpy':>10} check")
    rows = []
    for n in args.devices:
        for mib in args.mib:
            for r in measure(n, mib):
                rows.append(r)
                print(f"{n:>2} {mib:>7} {r['strategy']:<8} {r['time_s'] * 1e3:>9.2f} "
                      f"{r['bandwidth'] / 1e9:>9.1f} {r['memcpy'] / 1e9:>7.1f} {r['bw_ratio']:>10.2f} "
                      f"{r['alg_bandwidth'] / 1e9:>9.1f} {r['alg_ratio']:>10.2f} "
                      f"{r['numpy_s'] * 1e3:>9.2f} {r['numpy_ratio']:>10.2f} {'ok' if r['ok'] else 'FAIL'}",
                      flush=True)
    memcpy_end = memcpy_bandwidth()
    ct = compile_time()
    print(f"memcpy bandwidth at the end (256 MiB): {memcpy_end / 1e9:.1f} GB/s")
    print(f"compile time, N = 8 ring (parse + lower + LLVM O3 JIT): {ct:.2f} s (target < 2 s)")

    big = [r for r in rows if r["mib"] >= 64]
    if big:
        print("targets at >= 64 MiB per device:")
        for n in sorted({r["devices"] for r in big}):
            for mib in sorted({r["mib"] for r in big if r["devices"] == n}):
                sel = [r for r in big if r["devices"] == n and r["mib"] == mib]
                best = min(sel, key=lambda r: r["time_s"])
                over = [r["strategy"] for r in sel if r["bw_ratio"] >= 0.7]
                alg = [r["strategy"] for r in sel if r["alg_ratio"] >= 0.7]
                print(f"  N={n} {mib} MiB: best {best['strategy']} at {best['numpy_ratio']:.2f}x numpy time "
                      f"({'met' if best['numpy_ratio'] <= 1 else 'MISSED'}); "
                      f"eff/memcpy >= 0.7: {', '.join(over) or 'none'}; "
                      f"alg/memcpy >= 0.7: {', '.join(alg) or 'none'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(memcpy_bandwidth=memcpy, memcpy_bandwidth_end=memcpy_end,
                           compile_time_n8_ring_s=ct, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
