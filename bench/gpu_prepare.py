"""Build everything the GPU benchmark needs into one small folder.

    python bench/gpu_prepare.py [--out build/gpu] [--quick] [--jobs N]

The GPU machine has numpy and torch but no MLIR wheels, so everything is
compiled here (no GPU needed) and carried there: one shared library per
program, libmlir_cuda_runtime.so with an empty libLLVM.so stub beside it
(docs/toolchain.md), backends/gpu/driver.py and bench/gpu_run.py, and
manifest.json describing every program (its arguments, workspace, traffic,
and the explicit schedule, which gpu_run.py replays with torch ops as the
"same schedule in torch" reference). See bench/README-gpu.md.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ("naive", "ring", "all2all", "oneshot", "twoshot")
# Logical devices on one GPU address each other's memory (coll.peer_access).
PEER = ("oneshot", "twoshot")
DEVICES = (2, 4, 8)
SIZES = {"1MB": 1 << 20, "64MB": 64 << 20, "1GB": 1 << 30}   # bytes per device
# Lowering variants: the default (a stream per device, scratch pool made at
# load), scratch passed by the caller, and one stream.
VARIANTS = {
    "dev-alloc": {"streams": "device", "workspace": "alloc"},
    "dev-arg": {"streams": "device", "workspace": "arg"},
    "single-arg": {"streams": "single", "workspace": "arg"},
}
# Kernel checks at odd sizes (scalar head/tail, misaligned slices) for
# every element type.
DTYPE_CHECKS = [("f32", "sum"), ("f16", "sum"), ("bf16", "max"), ("f64", "prod"),
                ("i1", "xor"), ("i8", "min"), ("i16", "or"), ("i32", "and"), ("i64", "sum")]
DTYPE_NUMELS = (1001, 100003)
# Run under compute-sanitizer (racecheck, memcheck) on the GPU machine: every
# strategy at N = 4, a small odd size (uneven chunks, scalar tails).
SANITIZE = {"n": 4, "numel": 4099}
ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2,
              "i32": 4, "i64": 8}
CARRY_LIMIT = 64 << 20


def jobs(quick=False):
    """Every program to build: dicts with the fields of a manifest entry."""
    out = []
    sizes = {"1MB": SIZES["1MB"]} if quick else SIZES
    for label, nbytes in sizes.items():
        for n in DEVICES:
            for strategy in STRATEGIES:
                for variant, opts in VARIANTS.items():
                    out.append(dict(set="perf", size=label, n=n, numel=nbytes // 4, dtype="f32",
                                    kind="sum", strategy=strategy, variant=variant, **opts))
    for dtype, kind in DTYPE_CHECKS:
        for numel in DTYPE_NUMELS[:1] if quick else DTYPE_NUMELS:
            for strategy in STRATEGIES:
                out.append(dict(set="dtype", size=str(numel), n=3, numel=numel, dtype=dtype,
                                kind=kind, strategy=strategy, variant="dev-arg",
                                **VARIANTS["dev-arg"]))
    for strategy in STRATEGIES:
        out.append(dict(set="sanitize", size=str(SANITIZE["numel"]), n=SANITIZE["n"],
                        numel=SANITIZE["numel"], dtype="f32", kind="sum", strategy=strategy,
                        variant="dev-alloc", **VARIANTS["dev-alloc"]))
    for j in out:
        j["file"] = (f"{j['set']}_{j['strategy']}_n{j['n']}_{j['numel']}_{j['dtype']}_{j['kind']}"
                     f"_{j['variant']}.so")
    return out


# -- the explicit schedule, for the torch replay ---------------------------------

def _root(value, n):
    """(buffer, element offset) of a memref value of the explicit level:
    buffer is an argument index or a coll.alloc result."""
    from mlir import ir
    # Views keep the layout offset of their allocation: the value's own.
    _, offset = ir.MemRefType(value.type).get_strides_and_offset()
    while not isinstance(value.owner, ir.Block):
        op = value.owner
        if op.name == "coll.alloc":
            return op.results[0], offset
        value = op.operands[0]
    i = value.arg_number
    return (f"x{i}" if i < n else f"y{i - n}"), offset


def schedule(func, n):
    """The copies and combines of an explicit-level function, in order:
    {"buffers": {name: elements}, "ops": [["copy", src, dst] |
    ["combine", kind, [inputs], out]]}, each operand [buffer, offset, size]."""
    from mlir import ir
    from coll.ir.ops import Combine
    from coll.ir.types import numel
    names, buffers, ops = {}, {}, []

    def ref(v):
        buf, off = _root(v, n)
        if not isinstance(buf, str):  # scratch: named in order of allocation
            buf = names[buf]
        return [buf, off, numel(v.type)]

    for op in func.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "coll.alloc":
            names[op.results[0]] = f"s{len(names)}"
            buffers[names[op.results[0]]] = numel(op.results[0].type)
        elif op.name == "coll.copy":
            ops.append(["copy", ref(op.operands[0]), ref(op.operands[1])])
        elif op.name == "coll.combine":
            c = Combine.of(op)
            ops.append(["combine", c.kind, [ref(v) for v in c.inputs], ref(c.out)])
    return {"buffers": buffers, "ops": ops}


def build(job, out_dir):
    """Builds one program; returns its manifest entry."""
    from mlir import ir
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.analysis.stats import analyze
    from coll.core import routes
    from coll.core.pipeline import run
    from coll.backends.gpu.nvvm import compile_module
    from coll.backends import gpu, lower

    t0 = time.perf_counter()
    entry = dict(job)
    with make_context():
        text = all_reduce_module(job["n"], [job["numel"]], job["dtype"], job["kind"],
                                 strategy=job["strategy"], peer_access=job["strategy"] in PEER)
        module = ir.Module.parse(text)
        low = lower(module.operation, None, job["strategy"])
        func = module.body.operations[0]
        if job["set"] == "perf":
            entry["schedule"] = schedule(func, job["n"])
        entry["traffic_bytes"] = low.traffic
        entry["stats"] = analyze(module.operation)[job.get("entry", "all_reduce")]
        run(module.operation, routes.pipeline(gpu.route(streams=job["streams"],
                                                      workspace=job["workspace"])))
        func = module.body.operations[0]
        ws = func.attributes["coll.workspace_bytes"] if "coll.workspace_bytes" in func.attributes else None
        entry["workspace_bytes"] = ir.IntegerAttr(ws).value if ws is not None else 0
        entry["entry"] = ir.StringAttr(func.attributes["sym_name"]).value
        llvm_ir = compile_module(module.operation, Path(out_dir) / job["file"], fmt="auto")
        # Per call (the entry function; streams, events, pool: at load).
        body = llvm_ir.split(f"define void @{entry['entry']}(", 1)[1].split("\n}\n", 1)[0]
        entry["mgpu_calls"] = {name: len(re.findall(rf"call \w+ @{name}\(", body)) for name in (
            "mgpuMemcpy", "mgpuLaunchKernel", "mgpuStreamCreate", "mgpuEventCreate", "mgpuMemAlloc",
            "mgpuEventRecord", "mgpuStreamWaitEvent", "mgpuStreamSynchronize")}
    entry["build_seconds"] = round(time.perf_counter() - t0, 3)
    return entry


def _build_one(args):
    job, out_dir = args
    try:
        return build(job, out_dir)
    except Exception as e:  # reported, the build fails at the end
        return {**job, "error": f"{type(e).__name__}: {e}"}


def bundle_support(out_dir):
    """Copies the runtime pieces next to the programs."""
    from coll.backends.gpu.nvvm import cuda_runtime_library
    out_dir = Path(out_dir)
    shutil.copy2(cuda_runtime_library(), out_dir / "libmlir_cuda_runtime.so")
    # libmlir_cuda_runtime.so lists libLLVM.so but uses none of its symbols.
    r = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-o", str(out_dir / "libLLVM.so"),
                        "-Wl,-soname,libLLVM.so", "-x", "c", "-"],
                       input="", capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"building the libLLVM.so stub failed: {r.stderr.strip()}")
    shutil.copy2(ROOT / "backends" / "gpu" / "driver.py", out_dir / "cuda_driver.py")
    shutil.copy2(ROOT / "bench" / "gpu_run.py", out_dir / "gpu_run.py")


def folder_bytes(out_dir):
    return sum(p.stat().st_size for p in Path(out_dir).rglob("*") if p.is_file())


def prepare(out_dir, quick=False, workers=None, job_filter=None):
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    todo = [j for j in jobs(quick) if job_filter is None or job_filter(j)]
    workers = workers or os.cpu_count() or 1
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            entries = list(pool.map(_build_one, [(j, out_dir) for j in todo]))
    else:
        entries = [_build_one((j, out_dir)) for j in todo]
    failed = [e for e in entries if "error" in e]
    bundle_support(out_dir)
    import platform
    manifest = {"created": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
                "sizes": SIZES, "programs": entries}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    total = folder_bytes(out_dir)
    return entries, failed, total


def main(argv=None):
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "build" / "gpu"))
    p.add_argument("--quick", action="store_true", help="1 MB programs and one odd size only")
    p.add_argument("--jobs", type=int, default=None)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    entries, failed, total = prepare(args.out, args.quick, args.jobs)
    for e in failed:
        print(f"FAILED {e['file']}: {e['error']}", file=sys.stderr)
    print(f"{len(entries) - len(failed)} programs in {args.out} ({total / 2**20:.1f} MiB) "
          f"in {time.perf_counter() - t0:.0f} s")
    if total > CARRY_LIMIT:
        print(f"error: {total / 2**20:.1f} MiB is over the {CARRY_LIMIT >> 20} MiB carry limit",
              file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
