"""Measures the cost-model profile of the MPI runtime on this machine.

It writes it as JSON (default: analysis/profiles/mpi.json, the profile
`coll-run --backend=mpi` and the mpi route choose `auto` by; the runtime is
lowering/mpi/runtime.py).

Every number comes from small explicit coll programs on 2 ranks, projected
by coll-to-mpi and timed by the MPI runtime itself (one mpirun, every
program interleaved, the median of each), so it includes what MPI and the
machine add (eager and rendezvous protocols, shared-memory copies, ranks
that share cores and yield when idle):
  link_latency_s        per message, from chains of 8 and 64 dependent
                        64-byte messages bouncing between the two ranks
  call_overhead_s       the rest of a chain's time (the call, its waits)
  link_bandwidth_Bps    bytes per second of one message at several sizes,
                        from chains of 4 (a table by working set)
  memory_bandwidth_Bps  bytes touched per second by combines as every
                        strategy runs them: on both ranks at once, each
                        adding what it just received to its input (a
                        reduce step less an exchange step of the same
                        size; where that is under a quarter of the step,
                        combines alone), keyed by the working set the
                        cost model reads for that combine (a table)
  wakeup_s              what a dependent step of messages costs beyond
                        the model's prediction when there are more ranks
                        than cores (the receiver must be scheduled), from
                        steps of pairwise exchanges on the fewest ranks
                        (a power of 2) that outnumber the cores; a table
                        by message size (eager and rendezvous differ)
  flops_per_s           one rank's rate on a contraction of local work
                        (OpenBLAS's sgemm, the route's coll-blas-contractions,
                        on every rank at once: 2 ranks, MATMUL's shape), for
                        local work around a collective (analysis/overlap.py)
  copy_cores            target when two messages in opposite directions
                        at once take under 1.5x one alone (each is copied
                        by its receiver's core; the median over the
                        sizes), else both

  python bench/calibrate_mpi.py [-o PATH] [--quick] [--repeat R] [--only flops_per_s]

`--only flops_per_s` measures that one number and writes it into the
profile at -o (the rest kept).
"""
import datetime
import json
import os
import platform
import sys

import numpy as np
from mlir import ir
from mlir.dialects import func, memref

from coll.analysis import taskgraph
from coll.analysis.cost_model import (
    COPY_CORES,
    TARGET_CORE,
    output_path_error,
    profile_from_dict,
    save_profile,
    simulate,
)
from coll.ir import builders, make_context
from coll.ir.types import flat_type
from coll.lowering import mpi
from coll.lowering.mpi.toolchain import find
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count  # one validation for every script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "analysis", "profiles", "mpi.json")
SMALL = 16                      # elements (64 bytes) per latency message
SIZES = [1 << 9, 1 << 10, 1 << 14, 1 << 18, 1 << 21, 1 << 23]   # f32 elements per message
QUICK_SIZES = [1 << 10, 1 << 18, 1 << 22]
CHAIN = 4                       # messages per bandwidth chain
WAKE_SIZES = [1 << 4, 1 << 9, 1 << 12, 1 << 15]  # f32 elements per message of the wakeup steps
WAKE_STEPS = (8, 32)            # steps of the two wakeup programs (their difference is measured)
BATCH_BELOW = 1 << 20           # bytes: programs below this run 16 calls per timed run


def _explicit(n, k, size, body):
    """Text of an explicit program on devices 0..n-1 (x0.. read, y0..
    written, k * size f32 each): `body(x, y, sl)` builds its ops on the
    device views x[d], y[d] (sl(buf, d, i): slice i of `size` elements)
    and returns the tokens the program waits for."""
    total = k * size
    with make_context(), ir.Location.unknown():
        m = ir.Module.create()
        f32 = ir.F32Type.get()
        plain = ir.MemRefType.get([total], f32)
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("f", ir.FunctionType.get([plain] * (2 * n), []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            with ir.InsertionPoint(f.add_entry_block()):
                a = list(f.entry_block.arguments)
                x = [memref.memory_space_cast(flat_type(f32, total, d), a[d]) for d in range(n)]
                y = [memref.memory_space_cast(flat_type(f32, total, d), a[n + d]) for d in range(n)]

                def sl(buf, d, i):
                    return memref.subview(buf, [i * size], [size], [1],
                                          result_type=flat_type(f32, size, d, offset=i * size))
                toks = body(x, y, sl)
                builders.wait([builders.join(toks)] if len(toks) > 1 else toks)
                func.ReturnOp([])
        return str(m)


def program(kind, k, size):
    """Text of an explicit program on devices 0 and 1 (x0, x1 read, y0, y1
    written, k * size f32 each). chain: k dependent copies of `size`
    elements bouncing 0 -> 1 -> 0 ..., message i into slice i of the
    receiver's y. exchange: k steps of two copies at once, 0 -> 1 and
    1 -> 0, slice i of x into slice i of the other's y. reduce: k steps of
    the exchange into scratch, then on both devices y = x + received (slice
    i), each step after the one before. combine: on both devices at once,
    y = x + x, k slices."""
    def body(x, y, sl):
        if kind == "combine":
            return [builders.combine(sl(x[d], d, i), [sl(x[d], d, i)], sl(y[d], d, i), "sum")
                    for d in (0, 1) for i in range(k)]
        if kind == "reduce":
            s = [builders.alloc(flat_type(ir.F32Type.get(), k * size, d)) for d in (0, 1)]
            tok = []
            for i in range(k):
                got = [builders.copy(sl(x[1 - d], 1 - d, i), sl(s[d], d, i), tok) for d in (0, 1)]
                tok = [builders.combine(sl(x[d], d, i), [sl(s[d], d, i)], sl(y[d], d, i), "sum",
                                        [got[d]]) for d in (0, 1)]
            return [builders.join(tok)]
        if kind == "exchange":
            tok = None
            for i in range(k):
                deps = [tok] if tok is not None else []
                there = builders.copy(sl(x[0], 0, i), sl(y[1], 1, i), deps)
                back = builders.copy(sl(x[1], 1, i), sl(y[0], 0, i), deps)
                tok = builders.join([there, back])
            return [tok]
        src, tok = sl(x[0], 0, 0), None
        for i in range(k):
            d = (i + 1) % 2  # the receiver
            dst = sl(y[d], d, i)
            tok = builders.copy(src, dst, [tok] if tok is not None else [])
            src = dst
        return [tok]
    return _explicit(2, k, size, body)


def wakeup_ranks(cores):
    """The fewest ranks, a power of 2, that outnumber `cores`."""
    return 1 << cores.bit_length()


def steps_program(n, k, size):
    """Text of an explicit program on n devices (a power of 2; x0.. read,
    y0.. written, k * size f32 each): k dependent steps, in step i every
    device d receives `size` elements from d ^ 2^(i mod log2 n), what that
    device received the step before, as recursive doubling pairs ranks."""
    bits = max(n.bit_length() - 1, 1)

    def body(x, y, sl):
        tok = [None] * n
        for i in range(k):
            mask = 1 << (i % bits)
            tok = [builders.copy(sl(y[d ^ mask], d ^ mask, i - 1) if i else sl(x[d ^ mask], d ^ mask, 0),
                                 sl(y[d], d, i), [t for t in (tok[d ^ mask], tok[d]) if t is not None])
                   for d in range(n)]
        return [builders.join(tok)]
    return _explicit(n, k, size, body)


def _programs(programs):
    """(kind, k, size) -> (text, n inputs + outputs, elements each)."""
    for kind, k, size in programs:
        if kind == "steps":
            n = wakeup_ranks(os.cpu_count())
            yield steps_program(n, k, size), 2 * n, k * size
        else:
            yield program(kind, k, size), 4, k * size


def measure(programs, repeat, calls=1):
    """(median, fastest) seconds per call of each (kind, k, size), all in
    one mpirun, `calls` calls in a row per timed run."""
    runs = []
    for text, n_bufs, numel in _programs(programs):
        prog = mpi.compile(text, timeout=600)
        arrays = [np.random.rand(numel).astype(np.float32) for _ in range(n_bufs)]
        runs.append((prog, arrays[:prog.n_inputs], arrays[prog.n_inputs:]))
    times = mpi.launch(runs, repeat, calls=calls)
    return [(float(np.median(t)), float(np.min(t))) for t in times]


def _table(points):
    """[[working set, bytes per second]] from (working set, bytes, seconds,
    measured total). Where the part measured is under a quarter of the
    total, a difference of medians is noise: such a point counts a quarter
    of the total, a rate no faster than the measurement can tell (dropping
    it would hold the next point's rate flat across the protocol change:
    OpenMPI's 2 KiB eager messages would cost as much per byte as its 4
    KiB rendezvous ones)."""
    return [[ws, b / max(sec, 0.25 * total, 1e-12)] for ws, b, sec, total in points]


def combine_key(kind, size):
    """The working set at which the cost model reads memory_bandwidth_Bps
    for a combine of program `kind` (reduce or combine) of `size` elements
    (its data-sharing group: analysis/taskgraph.py)."""
    with make_context():
        module = ir.Module.parse(program(kind, CHAIN, size))
        g = taskgraph.from_function(module.body.operations[0])
    return min(min(t.group_set for t in g.tasks if t.kind == "combine"), g.working_set)


def derive(t, sizes):
    """Profile numbers from the medians `t[(kind, k, size)]`."""
    alpha = max(t["chain", 64, SMALL] - t["chain", 8, SMALL], 0.0) / 56
    base = max(t["chain", 8, SMALL] - 8 * alpha, 0.0)
    link, mem = [], []
    for s in sizes:
        b, chain = s * 4, t["chain", CHAIN, s]
        send = max(chain - base, 0.0) / CHAIN - alpha       # a message's bytes
        link.append((2 * b, b, send, chain / CHAIN))
        # A combine as strategies run it (after a receive, on what arrived):
        # a reduce step less an exchange step. Where that is under a quarter
        # of the step (too small a part to measure), the data is in cache
        # anyway: the combines alone (which read x twice, physically once:
        # not used where the reduce step measures). Neither: no point, but
        # the largest size always has one.
        step = t["reduce", CHAIN, s] / CHAIN
        comb = max(t["reduce", CHAIN, s] - t["exchange", CHAIN, s], 0.0) / CHAIN
        alone = max(t["combine", CHAIN, s] - base, 0.0) / CHAIN
        point = [(combine_key("reduce", s), 3 * b, comb, step),
                 (combine_key("combine", s), 3 * b, alone, t["combine", CHAIN, s] / CHAIN)]
        got = next((p for p in point if p[2] >= 0.25 * p[3]), point[0] if s == sizes[-1] else None)
        if got:
            mem.append(got)
    return alpha, base, _table(link), [[ws, b / sec] for ws, b, sec, _ in sorted(mem)]


def wakeup_table(t, profile, sizes=WAKE_SIZES):
    """wakeup_s by working set: per size, the wakeup under which `profile`
    predicts the steps programs' measured time per step (the medians
    `t[("steps", k, size)]`), by bisection: the prediction grows with it,
    not in proportion (a step's messages wait at once, not each, and a
    longer wait can move a message past another's)."""
    n, (k0, k1) = wakeup_ranks(profile["cores"]), WAKE_STEPS
    table = []
    for s in sizes:
        graphs = []
        for k in (k0, k1):
            with make_context():
                module = ir.Module.parse(steps_program(n, k, s))
                graphs.append(taskgraph.from_function(module.body.operations[0]))

        def per_step(wakeup):
            model = profile_from_dict(dict(profile, wakeup_s=wakeup))
            return (simulate(graphs[1], model).total - simulate(graphs[0], model).total) / (k1 - k0)
        measured = (t["steps", k1, s] - t["steps", k0, s]) / (k1 - k0)
        lo, hi = 0.0, max(measured, 1e-9)
        while per_step(hi) < measured and hi < 1.0:
            lo, hi = hi, 2 * hi
        if per_step(lo) >= measured:
            hi = lo
        for _ in range(40):  # to a 1e-12 of the step
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if per_step(mid) < measured else (lo, mid)
        table.append([2 * 4 * s, hi])
    return table


def exchange_ratio(t, sizes):
    """Time of two messages at once in opposite directions over one alone
    (the chain's per message time at the same size), the median over every
    size: about 1 when each is copied by one rank's core, about 2 when a
    message takes both ranks'. (From 1 MiB the two copies also share the
    memory bandwidth: 1.4-1.65 here where 64 KiB measures 0.75; the median
    over those sizes alone sat at the threshold and flipped between runs.)"""
    return float(np.median([t["exchange", CHAIN, s] / max(t["chain", CHAIN, s], 1e-12) for s in sizes]))


MATMUL = (2048, 1024, 64)  # (m, k, n) of a rank's matmul: a tensor-parallel layer's tile


def flops_per_s(repeat=21):
    """Each rank's sgemm rate: a fill and an m x k x n matmul on 2 ranks
    at once (an SPMD function with no collective), the median call."""
    m, k, n = MATMUL
    text = f"""func.func @mm(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>, %c: memref<{m}x{n}xf32>)
    attributes {{coll.ranks = 2 : i64}} {{
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<{m}x{n}xf32>)
  linalg.matmul ins(%a, %b : memref<{m}x{k}xf32>, memref<{k}x{n}xf32>) outs(%c : memref<{m}x{n}xf32>)
  return
}}"""
    prog = mpi.compile(text, timeout=600)
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(s, dtype=np.float32) for s in ((m, k), (m, k), (k, n), (k, n))]
    outs = [np.empty((m, n), np.float32) for _ in range(2)]
    return 2.0 * m * k * n / float(np.median(prog.time(ins, outs, repeat)))


def calibrate(sizes=SIZES, repeat=21, log=print):
    progs = [("chain", 8, SMALL), ("chain", 64, SMALL)]
    progs += [("chain", CHAIN, s) for s in sizes]
    progs += [(kind, CHAIN, s) for s in sizes for kind in ("exchange", "reduce", "combine")]
    # Short programs 16 calls in a row per timed run (bench/mpi_run.py does
    # the same), so that the barrier's skew between ranks does not swamp them.
    short = [p for p in progs if p[1] * p[2] * 4 < BATCH_BELOW]
    long_ = [p for p in progs if p not in short]
    both = dict(zip(short, measure(short, repeat, calls=16)))
    both.update(zip(long_, measure(long_, repeat)))
    # More ranks than cores: one mpirun of their own (a launch is of one
    # group size), 3x the rounds (ranks that share cores are noisier).
    wake = [("steps", k, s) for s in WAKE_SIZES for k in WAKE_STEPS]
    both.update(zip(wake, measure(wake, 3 * repeat, calls=16)))
    t = {key: med for key, (med, _) in both.items()}
    for (kind, k, size), (med, low) in both.items():
        log(f"{kind:8} {k:3} x {size * 4 / 2**10:9.1f} KiB: median {med * 1e3:9.3f} ms, fastest {low * 1e3:9.3f} ms")
    alpha, base, link, mem = derive(t, sizes)
    both_ways = exchange_ratio(t, sizes)
    copy_cores = TARGET_CORE if both_ways < 1.5 else COPY_CORES[0]
    log(f"per message {alpha * 1e6:.1f} us, call {base * 1e6:.1f} us; message GB/s by working set "
        f"{[(ws, round(v / 1e9, 3)) for ws, v in link]}; "
        f"combine (touched) {[(ws, round(v / 1e9, 3)) for ws, v in mem]}; two messages at once take "
        f"{both_ways:.2f}x one: a message holds {'its target' if copy_cores == TARGET_CORE else 'both'} "
        "rank's core")
    load = os.getloadavg()
    prof = {
        "name": "mpi",
        "description": "per-rank programs under mpirun (lowering/mpi/runtime.py), measured by bench/calibrate_mpi.py",
        "measured_on": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, "
                       f"{find().implementation} ({find().mpirun}), 2 ranks, median of {repeat} "
                       f"(programs under {BATCH_BELOW >> 20} MiB: of 16 calls in a row), "
                       f"load average {load[0]:.1f}, {datetime.date.today().isoformat()}",
        "assumptions": [
            "ports: a rank sends one message and receives one at a time and runs one combine at a time; "
            "ranks run in parallel",
            f"cores: the ranks share this machine's {os.cpu_count()} cores (any idle one: ranks are not "
            f"pinned when there are more of them); a combine holds its rank's core, a message its target's (copy_cores "
            "target: the receiver copies it, so two messages in opposite directions run at once) or both "
            "ranks' (copy_cores both), whichever the exchange program measured",
            "ready: a rank posts its messages in step order (lowering/mpi/to_mpi.py), receives first within a "
            "step, not program order: a message goes as soon as what it waits for is done and its ports "
            "are free",
            "a message costs link_latency_s + bytes / link_bandwidth_Bps; link_latency_s is what a dependent "
            "message costs here with a core per rank",
            f"wakeup_s: with more ranks than cores, a dependent step of messages that more ranks than "
            f"cores take part in first waits this long for its receiver to be scheduled (measured on "
            f"{wakeup_ranks(os.cpu_count())} ranks)",
            "link_bandwidth_Bps and memory_bandwidth_Bps are tables by working set (a message's: twice "
            "its bytes), log-log interpolated, flat beyond their ends",
            "scratch is static (coll-mpi-static-scratch): no allocation or first touch per call",
            "combines run the CPU kernels of coll-to-cpu, on both ranks at once, on what they just received",
        ],
        "resources": "ports",
        "cores": os.cpu_count(),
        "copy_cores": copy_cores,
        "order": "ready",
        "call_overhead_s": base,
        "link_latency_s": alpha,
        "kernel_launch_s": 0.0,
        "alloc_s": 0.0,
        "link_bandwidth_Bps": link,
        "alloc_bandwidth_Bps": None,
        "memory_bandwidth_Bps": mem,
        "measured": [{"program": kind, "messages_or_ops": k, "bytes": size * 4, "median_s": med,
                      "fastest_s": low} for (kind, k, size), (med, low) in both.items()],
    }
    prof["wakeup_s"] = wakeup_table(t, prof)
    prof["flops_per_s"] = flops_per_s(repeat)
    log(f"sgemm {prof['flops_per_s'] / 1e9:.1f} GFLOP/s a rank")
    log(f"more ranks than cores: a dependent step waits {[(ws, round(v * 1e6, 2)) for ws, v in prof['wakeup_s']]} "
        "us (working set, us) for its receiver")
    return prof


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", dest="output", default=DEFAULT_OUT)
    p.add_argument("--quick", action="store_true", help="three message sizes instead of six")
    p.add_argument("--repeat", type=count(1, 10 ** 6), default=21)
    p.add_argument("--only", choices=["flops_per_s"], help="measure this number alone into the profile at -o")
    args = p.parse_args(argv)
    why = output_path_error(args.output)
    if why:
        raise SystemExit(f"calibrate_mpi: {why}")
    ok, why = mpi.available()
    if not ok:
        raise SystemExit(f"calibrate_mpi: {why}")
    if args.only:
        with open(args.output) as f:
            prof = json.load(f)
        prof[args.only] = flops_per_s(args.repeat)
        prof["measured_on"] += f"; {args.only} {datetime.date.today().isoformat()}, load {os.getloadavg()[0]:.1f}"
    else:
        prof = calibrate(QUICK_SIZES if args.quick else SIZES, args.repeat,
                         log=lambda s: print(s, file=sys.stderr, flush=True))
    save_profile(prof, args.output)
    print(args.output)


if __name__ == "__main__":
    main()
