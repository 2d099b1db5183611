"""Compile-time benchmark of the CPU route, stage by stage, against N.

For each strategy and N: ops emitted by coll-lower-all-reduce, copies and
kernels, then the time and peak RSS of each stage, each in its own child
process (the stages hand each other MLIR text, whose parsing is timed apart):

  lower  parse the collective module, coll-lower-all-reduce + verifier
  route  coll-to-cpu + coll-cpu-to-llvm (to the JIT-ready LLVM dialect)
  jit    ExecutionEngine (opt level 3) + entry lookup
  run    the first run, checked against numpy
  e2e    all of it in one process, like `coll-run` (lowering/cpu/runtime.py)
  gpu    the GPU route from the explicit module to the shared library, like
         `coll-build --emit=so` (coll-to-gpu, gpu-lower-to-nvvm-pipeline
         with PTX, mlir-translate, llc, cc); needs no GPU. Its peak RSS is
         the larger of the Python process and its largest tool.

Peak RSS is VmHWM, reset (clear_refs) after parsing a stage's input.
A GPU route over the stage limit is shown as such, and larger N of that
strategy skip it (the CPU stages go on).

  python bench/compile_time.py [--ns 8,16,32] [--strategies ring] [--numel 4096]
                               [--limit 600] [--quick] [--no-gpu | --gpu-only] [--json out.json]
"""
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time

from coll.collectives import AllReduce
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, output_path, seconds  # one validation for every script

# Every allreduce strategy but the peer ones (they need GPUs that share memory).
STRATEGIES = AllReduce.runnable(())
NS = (8, 16, 32, 64, 128, 256)
QUICK_NS = (4, 8)
STAGES = ("lower", "route", "jit", "run")


def _hwm_reset():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _hwm():
    """Peak resident set of this process, bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _count(module):
    from mlir import ir
    counts = {"ops": 0, "copies": 0, "kernels": 0}

    def visit(op):
        counts["ops"] += 1
        if op.name == "coll.copy":
            counts["copies"] += 1
        elif op.name == "coll.combine":
            counts["kernels"] += 1
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return counts


def _parse(path):
    from mlir import ir
    t0 = time.perf_counter()
    with open(path) as f:
        m = ir.Module.parse(f.read())
    return m, time.perf_counter() - t0


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(fn, cpu=None):
    """fn(), wall seconds, peak RSS; CPU seconds into cpu[0] if given (on a
    shared machine wall time includes waiting for a core)."""
    _hwm_reset()
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    secs = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(_cpu() - c0)
    return out, secs, _hwm()


def stage_lower(d, n, strategy, numel):
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.ir.verifier import verify
    from coll.passes.lower_collectives import lower_collectives
    with make_context():
        from mlir import ir
        m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", strategy=strategy))
        before = _count(m)["ops"]

        def work():
            lower_collectives(m.operation)
            findings = verify(m.operation)
            assert not findings, findings[:3]
        cpu = []
        _, secs, rss = _timed(work, cpu)
        counts = _count(m)
        with open(os.path.join(d, "explicit.mlir"), "w") as f:
            f.write(str(m))
    return {"ops": counts["ops"] - before, "copies": counts["copies"], "kernels": counts["kernels"],
            "lower_s": secs, "lower_rss": rss, "lower_cpu": cpu[0]}


def stage_route(d):
    from coll.ir import make_context
    from coll.lowering import lower
    with make_context():
        m, parse_s = _parse(os.path.join(d, "explicit.mlir"))
        cpu = []
        # Our own lowering: the checks of hand-written input are not timed here.
        _, secs, rss = _timed(lambda: lower(m.operation, "cpu", check_order=False), cpu)
        with open(os.path.join(d, "llvm.mlir"), "w") as f:
            f.write(str(m))
    return {"route_s": secs, "route_rss": rss, "route_cpu": cpu[0], "route_parse_s": parse_s}


def _problem(n, numel, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    # Small integers: every summation order gives the exact sum.
    xs = [rng.integers(-8, 8, numel).astype(np.float32) for _ in range(n)]
    ys = [np.zeros(numel, np.float32) for _ in range(n)]
    return xs, ys, np.sum(xs, axis=0, dtype=np.float32)


def _check(ys, ref):
    import numpy as np
    bad = [j for j, y in enumerate(ys) if not np.array_equal(y, ref)]
    assert not bad, f"wrong result on devices {bad[:8]}"


def stage_jit_run(d, n, numel):
    from mlir.execution_engine import ExecutionEngine

    from coll.execution.signature import ArgSpec
    from coll.ir import make_context
    from coll.lowering.cpu.runtime import OPT_LEVEL, CpuProgram, _runner_utils
    with make_context():
        m, parse_s = _parse(os.path.join(d, "llvm.mlir"))

        def jit():
            engine = ExecutionEngine(m, opt_level=OPT_LEVEL, shared_libs=_runner_utils())
            return CpuProgram(engine, "all_reduce", [ArgSpec((numel,), "f32")] * (2 * n), n, [], None, 0)
        cpu = []
        prog, jit_s, jit_rss = _timed(jit, cpu)
        xs, ys, ref = _problem(n, numel)
        _, run_s, run_rss = _timed(lambda: prog.run(xs, ys), cpu)
        _check(ys, ref)
    return {"jit_s": jit_s, "jit_rss": jit_rss, "jit_cpu": cpu[0], "jit_parse_s": parse_s,
            "run_s": run_s, "run_rss": run_rss, "run_cpu": cpu[1]}


def stage_e2e(d, n, strategy, numel):
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.lowering import cpu as runtime
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum", strategy=strategy)
    xs, ys, ref = _problem(n, numel)

    def work():
        runtime.compile(text, strategy=strategy).run(xs, ys)
    cpu = []
    _, secs, rss = _timed(work, cpu)
    _check(ys, ref)
    return {"e2e_s": secs, "e2e_rss": rss, "e2e_cpu": cpu[0]}


def stage_gpu(d):
    from coll.ir import make_context
    from coll.lowering import lower
    from coll.lowering.gpu import nvvm
    with make_context():
        m, parse_s = _parse(os.path.join(d, "explicit.mlir"))
        cpu = []

        def work():
            lower(m.operation, "gpu", check_order=False)
            nvvm.lower_to_llvm(m.operation, None, "isa")
            text = nvvm.host_llvm_ir(m.operation)
            nvvm.build_shared_library(text, os.path.join(d, "libprog.so"))
            return len(text)
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ir_bytes, secs, rss = _timed(work, cpu)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    tools = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
    return {"gpu_route_s": secs, "gpu_route_cpu": cpu[0] + tools, "gpu_route_parse_s": parse_s,
            "gpu_route_rss": max(rss, c1.ru_maxrss * 1024), "gpu_host_ir_mb": ir_bytes / 2**20}


def gpu_available():
    try:
        from coll.core.tools import tool
        tool("mlir-translate")
        tool("llc")
        return True
    except Exception:
        return False


def _child(q, fn, args):
    try:
        q.put(("ok", fn(*args)))
    except BaseException as e:  # reported by the parent
        q.put(("error", f"{type(e).__name__}: {e}"[:500]))


def in_child(fn, args, limit):
    """fn(*args) in a fresh process: (result dict, None) or (None, why)."""
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q, fn, args))
    p.start()
    deadline = time.monotonic() + limit
    while True:
        try:
            status, value = q.get(timeout=1)
            break
        except Exception:
            if time.monotonic() > deadline:
                p.kill()
                p.join()
                return None, f"over {limit:g} s"
            if not p.is_alive() and q.empty():
                return None, f"died (exit {p.exitcode})"
    p.join()
    return (value, None) if status == "ok" else (None, value)


def measure_point(n, strategy, numel=4096, limit=600, e2e=True, gpu=True, cpu=True):
    """One row: every stage of `strategy` on `n` devices."""
    row = {"strategy": strategy, "n": n, "numel": numel, "gpu_route_s": None}
    with tempfile.TemporaryDirectory() as d:
        out, why = in_child(stage_lower, (d, n, strategy, numel), limit)
        if out is None:
            row["error"] = f"stage_lower: {why}"
            return row
        row.update(out)
        if gpu:  # from the same explicit module
            out, why = in_child(stage_gpu, (d,), limit)
            if out is None:
                row["gpu_error"] = why
            else:
                row.update(out)
        steps = [(stage_route, (d,)), (stage_jit_run, (d, n, numel))] if cpu else []
        if cpu and e2e:
            steps.append((stage_e2e, (d, n, strategy, numel)))
        for fn, args in steps:
            out, why = in_child(fn, args, limit)
            if out is None:
                row["error"] = f"{fn.__name__}: {why}"
                break
            row.update(out)
    return row


def measure(n, strategy, numel):
    """(ops emitted, lowering + verification seconds), in this process."""
    with tempfile.TemporaryDirectory() as d:
        r = stage_lower(d, n, strategy, numel)
    return r["ops"], r["lower_s"]


def per_item(row, key):
    v = row.get(key)
    return None if v is None else v / (row["copies"] + row["kernels"])


def _fmt_s(v):
    return "-" if v is None else f"{v:.2f}"


def _fmt_mb(v):
    return "-" if v is None else f"{v / 2**20:.0f}"


COLUMNS = [("ops", "ops"), ("copies", "copies"), ("kernels", "kernels"),
           ("lower_s", "lower s"), ("route_s", "route s"), ("jit_s", "jit s"), ("run_s", "run s"),
           ("e2e_s", "e2e s"), ("e2e_cpu", "e2e cpu s"), ("lower_rss", "lower MB"), ("route_rss", "route MB"),
           ("jit_rss", "jit MB"), ("run_rss", "run MB"), ("e2e_rss", "e2e MB"), ("gpu_route_s", "gpu route"),
           ("gpu_route_cpu", "gpu cpu s"), ("gpu_route_rss", "gpu MB")]


def cells(row):
    out = [row["strategy"], str(row["n"])]
    for key, _ in COLUMNS:
        v = row.get(key)
        if key in ("ops", "copies", "kernels"):
            out.append("-" if v is None else str(v))
        elif key.endswith("_rss"):
            out.append(_fmt_mb(v))
        else:
            out.append(_fmt_s(v))
    return out


def heads():
    return ["strategy", "N"] + [h for _, h in COLUMNS]


def targets(rows):
    """Lines stating each target of the issue and whether it is met."""
    by = {(r["strategy"], r["n"]): r for r in rows}
    lines = []

    def e2e(r):
        return None if r is None or "e2e_s" not in r else (r["e2e_s"], r["e2e_rss"])
    r = e2e(by.get(("ring", 64)))
    if r:
        lines.append(f"N=64 ring end to end {r[0]:.1f} s (< 10 s), {r[1] / 2**30:.2f} GB (< 1 GB): "
                     + ("ok" if r[0] < 10 and r[1] < 2**30 else "MISSED"))
    r = by.get(("ring", 256))
    if r and r.get("lower_s") is not None:
        lines.append(f"N=256 ring lowered and verified {r['lower_s']:.1f} s, {r['lower_cpu']:.1f} CPU s (< 5 s): "
                     + ("ok" if r["lower_s"] < 5 else "MISSED"))
    r = by.get(("ring", 64))
    if r and r.get("gpu_route_s") is not None:
        t = r["lower_s"] + r["gpu_route_s"]
        lines.append(f"N=64 ring to the shared library (lower + gpu route, as coll-build --emit=so) "
                     f"{t:.1f} s, {r['lower_cpu'] + r['gpu_route_cpu']:.1f} CPU s (< 30 s): "
                     + ("ok" if t < 30 else "MISSED"))
    for n, secs, gb in ((128, 40, None), (256, 180, 4)):
        for s in STRATEGIES:
            row = by.get((s, n))
            if row is None:
                continue
            r = e2e(row)
            if r is None and "error" not in row:
                continue  # the CPU stages were not run (--gpu-only)
            if r is None:
                lines.append(f"N={n} {s}: {row.get('error', 'not measured')}: MISSED")
                continue
            ok = r[0] < secs and (gb is None or r[1] < gb * 2**30)
            lines.append(f"N={n} {s} end to end {r[0]:.1f} s (< {secs} s)"
                         + (f", {r[1] / 2**30:.2f} GB (< {gb} GB)" if gb else "") + (": ok" if ok else ": MISSED"))
    for s in STRATEGIES:
        lo = by.get((s, 16))
        if lo is None:
            continue
        for stage in ("lower", "route", "jit", "gpu_route"):
            key = f"{stage}_cpu" if f"{stage}_cpu" in lo else f"{stage}_s"  # CPU time: the machine is shared
            hi = max((r for r in rows if r["strategy"] == s and r.get(key) is not None), key=lambda r: r["n"],
                     default=None)
            if hi is None or hi is lo:
                continue
            a, b = per_item(lo, key), per_item(hi, key)
            if a and b:
                ratio = b / a
                lines.append(f"{s} {stage} ({key}) per copy+kernel N={hi['n']} vs N=16: {ratio:.2f}x "
                             "(within 2x): " + ("ok" if ratio <= 2 else "MISSED"))
    return lines


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ns", default=None, help="comma-separated device counts")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--numel", type=count(1, 1 << 40), default=4096)
    p.add_argument("--limit", type=seconds(), default=600, help="seconds per stage")
    p.add_argument("--no-e2e", action="store_true")
    p.add_argument("--no-gpu", action="store_true", help="skip the GPU route column")
    p.add_argument("--gpu-only", action="store_true", help="only lowering and the GPU route")
    p.add_argument("--quick", action="store_true", help=f"N in {QUICK_NS}, 256 elements")
    p.add_argument("--json", type=output_path(), default=None)
    args = p.parse_args(argv)
    ns = QUICK_NS if args.quick else NS
    if args.ns is not None:
        try:
            ns = [int(x) for x in args.ns.split(",")]
        except ValueError:
            p.error(f"--ns must be comma-separated device counts, got '{args.ns}'")
        if not all(1 <= n <= 1024 for n in ns):
            p.error(f"--ns counts must be 1..1024, got '{args.ns}'")
    unknown = [s for s in args.strategies.split(",") if s not in STRATEGIES]
    if unknown:
        p.error(f"unknown strategy '{unknown[0]}'; expected some of: {', '.join(STRATEGIES)}")
    numel = 256 if args.quick else args.numel
    rows = []
    print(f"f32 sum, {numel} elements per device, {os.cpu_count()} cpus; seconds, MB peak RSS")
    print(" ".join(f"{h:>9}" for h in heads()), flush=True)
    gpu = not args.no_gpu and gpu_available()
    for s in args.strategies.split(","):
        gpu_s = gpu
        for n in ns:
            row = measure_point(n, s, numel, args.limit, not args.no_e2e, gpu_s, not args.gpu_only)
            rows.append(row)
            notes = [f"gpu route: {row['gpu_error']}"] if "gpu_error" in row else []
            notes += [row["error"]] if "error" in row else []
            print(" ".join(f"{c:>9}" for c in cells(row)) + "".join(f"  {x}" for x in notes), flush=True)
            if "gpu_error" in row:
                gpu_s = False  # larger N take longer still
            if "error" in row:
                break
    print("\n".join(targets(rows)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all("error" not in r or "over" in r["error"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
