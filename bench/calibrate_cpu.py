"""Measures a cost-model profile of the CPU runtime (lowering/cpu/runtime.py) on this
machine and writes it as JSON (default: analysis/profiles/cpu.json, so that
`coll-lower-all-reduce{profile=cpu}` and `coll-predict{profile=cpu}` use it).

Every number comes from small explicit coll programs compiled and timed by
the CPU runtime itself, so it includes what the runtime adds (memref.copy,
the generated combine loop, malloc/free of scratch):
  call_overhead_s       an empty program
  link_latency_s        per copy, from 64 copies of 64 bytes (into permuted
                        slices, so that LLVM cannot merge them into one)
  kernel_launch_s       per combine, from 64 combines of 64 bytes
  alloc_s               per scratch buffer, from 64 allocs of 64 bytes
  alloc_bandwidth_Bps   its growth with size, from 64 allocs of 4 KB (malloc
                        and free of a page-sized buffer cost more than of a
                        line-sized one)
  pointer_level         the same three from 256 ops: a program of more than
                        lowering/cpu/to_cpu.py's SPLIT ops on small buffers runs at
                        the pointer level, scratch in one reused arena
                        (lowering/cpu/pointer_level.py), so its ops cost less
  memory_bandwidth_Bps  bytes touched per second (mean of copies and
                        combines) at several working sets, from 16 ops on
                        disjoint slices: cache-resident up to DRAM
  scratch_bandwidth_Bps that table at one tile of the runtime's tiling

  python bench/calibrate_cpu.py [-o PATH] [--quick]
"""
import datetime
import os
import platform
import sys

import numpy as np
from mlir import ir
from mlir.dialects import func, memref

from coll.analysis.cost_model import output_path_error, save_profile
from coll.ir import builders, make_context
from coll.ir.types import flat_type
from coll.lowering import cpu
from coll.lowering.cpu.fuse import TILE_BYTES  # scratch lives in one tile
from coll.lowering.cpu.pointer_level import MAX_BUFFER_BYTES
from coll.lowering.cpu.to_cpu import SPLIT
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "analysis", "profiles", "cpu.json")
OPS = 16           # ops per bandwidth program
SMALL_OPS = 64     # ops per overhead program (the memref path: <= SPLIT)
POINTER_OPS = 2 * SPLIT  # ops per overhead program at the pointer level
SMALL = 16         # elements (64 bytes) per overhead op
PAGE = 1024        # elements (4 KB) per op of the alloc-size program
WORKING_SETS = [1 << 14, 1 << 17, 1 << 20, 1 << 23, 1 << 26, 1 << 28]
QUICK_SETS = [1 << 14, 1 << 20, 1 << 26]


def program(kind, ops, size, permute=False):
    """Text of an explicit program: `ops` times `kind` on f32 slices of
    `size` elements. copy: a(d0) -> b(d1) slice by slice (`permute`: slice i
    into slice 5i mod ops, an odd step, so no two copies are adjacent in
    both buffers and LLVM keeps every one). scratch: a slice
    into a fresh coll.alloc on d1. combine: b = a + c on d0. none: nothing."""
    total = ops * size
    with make_context(), ir.Location.unknown():
        m = ir.Module.create()
        f32 = ir.F32Type.get()
        plain = ir.MemRefType.get([total], f32)
        n_args = {"copy": 2, "scratch": 1, "combine": 3, "none": 2}[kind]
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("f", ir.FunctionType.get([plain] * n_args, []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            with ir.InsertionPoint(f.add_entry_block()):
                args = list(f.entry_block.arguments)
                dev = {"copy": [0, 1], "scratch": [0], "combine": [0, 0, 0], "none": [0, 0]}[kind]
                if kind == "combine":  # inputs first, output last: b = a + c
                    args = [args[0], args[2], args[1]]
                placed = [memref.memory_space_cast(flat_type(f32, total, d), a) for a, d in zip(args, dev)]

                def sl(buf, d, i):
                    return memref.subview(buf, [i * size], [size], [1],
                                          result_type=flat_type(f32, size, d, offset=i * size))
                toks = []
                for i in range(ops if kind != "none" else 0):
                    if kind == "copy":
                        j = (5 * i) % ops if permute else i
                        toks.append(builders.copy(sl(placed[0], 0, i), sl(placed[1], 1, j)))
                    elif kind == "scratch":
                        r = builders.alloc(flat_type(f32, size, 1))
                        toks.append(builders.copy(sl(placed[0], 0, i), r))
                    else:
                        toks.append(builders.combine(sl(placed[0], 0, i), [sl(placed[2], 0, i)],
                                                     sl(placed[1], 0, i), "sum"))
                if toks:
                    builders.wait([builders.join(toks)])
                func.ReturnOp([])
        return str(m), n_args


def seconds(kind, ops, size, budget=0.15, permute=False):
    """Best time of one run of program(kind, ops, size, permute)."""
    text, n_args = program(kind, ops, size, permute)
    prog = cpu.compile(text)
    arrays = [np.random.rand(ops * size).astype(np.float32) for _ in range(n_args)]
    n_in = prog.n_inputs if prog.n_inputs is not None else n_args
    one = min(prog.time(arrays[:n_in], arrays[n_in:], 1))
    repeat = int(min(max(budget / max(one, 1e-7), 3), 2000))
    return min(prog.time(arrays[:n_in], arrays[n_in:], repeat))


def calibrate(working_sets=WORKING_SETS, log=print):
    base = seconds("none", 0, 1)
    per_op, pointer = {}, {}
    for kind in ("copy", "combine", "scratch"):
        per_op[kind] = max(seconds(kind, SMALL_OPS, SMALL, permute=True) - base, 0.0) / SMALL_OPS
        pointer[kind] = max(seconds(kind, POINTER_OPS, SMALL, permute=True) - base, 0.0) / POINTER_OPS
    # The cost of a scratch buffer by its size: copies into fresh scratch
    # against copies into an argument, at 64 B and at 4 KB.
    alloc_page = max(seconds("scratch", SMALL_OPS, PAGE) - seconds("copy", SMALL_OPS, PAGE, permute=True),
                     0.0) / SMALL_OPS
    alloc_small = max(per_op["scratch"] - per_op["copy"], 0.0)
    grow = alloc_page - alloc_small
    alloc_bw = (PAGE - SMALL) * 4 / grow if grow > 0 else None
    log(f"scratch buffer: {alloc_small * 1e9:.1f} ns at {SMALL * 4} B, {alloc_page * 1e9:.1f} ns at {PAGE * 4} B")
    for name, d in (("memref path", per_op), ("pointer level", pointer)):
        log(f"call {base * 1e6:.2f} us; per op ({name}): copy {d['copy'] * 1e9:.1f} ns, "
            f"combine {d['combine'] * 1e9:.1f} ns, copy into new scratch {d['scratch'] * 1e9:.1f} ns")
    table, measured = [], []
    for ws in working_sets:
        # The same working set for both: a copy streams 2 buffers, a combine 3.
        size2, size3 = ws // (2 * 4 * OPS), ws // (3 * 4 * OPS)
        t_copy = seconds("copy", OPS, size2) - base - OPS * per_op["copy"]
        t_comb = seconds("combine", OPS, size3) - base - OPS * per_op["combine"]
        copy_bw = OPS * size2 * 4 * 2 / max(t_copy, 1e-9)   # bytes touched / s
        comb_bw = OPS * size3 * 4 * 3 / max(t_comb, 1e-9)
        # One bandwidth for both: they differ by ~10-20%, and one number
        # per working set keeps the model a roofline.
        table.append([ws, (copy_bw + comb_bw) / 2])
        measured.append({"working_set": ws, "copy_touched_Bps": copy_bw, "combine_touched_Bps": comb_bw})
        log(f"working set {ws / 2**20:8.3f} MiB: bytes touched/s: copy {copy_bw / 1e9:6.1f} GB/s, "
            f"combine {comb_bw / 1e9:6.1f} GB/s")
    prof = {
        "name": "cpu",
        "description": "CPU-simulated devices (lowering/cpu/runtime.py), measured by bench/calibrate_cpu.py",
        "measured_on": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, "
                       f"{datetime.date.today().isoformat()}",
        "assumptions": [
            "host: the runtime runs every op on one thread, one after the other: the time is the sum of op costs",
            "copies are memcpys: no link, they cost their bytes touched (2 x bytes) like a combine",
            "memory_bandwidth_Bps is a table by the program's working set (bytes of all its buffers), "
            "log-log interpolated: cache-resident programs are faster",
            f"scratch stays in cache: the runtime runs the ops that share data tile by tile "
            f"(lowering/cpu/fuse.py, {TILE_BYTES >> 20} MiB tiles), so scratch bytes cost the bandwidth "
            f"at a {TILE_BYTES >> 20} MiB working set and malloc hands out no fresh pages",
            f"pointer_level: programs of more than {SPLIT} copies and combines on buffers of at most "
            f"{MAX_BUFFER_BYTES >> 20} MiB run at the pointer level (lowering/cpu/pointer_level.py): a memcpy or a "
            "kernel call per op, scratch in one arena allocated once",
        ],
        "resources": "host",
        "order": "program",
        "call_overhead_s": base,
        "link_latency_s": per_op["copy"],
        "kernel_launch_s": per_op["combine"],
        "alloc_s": alloc_small,
        "alloc_bandwidth_Bps": alloc_bw,
        "pointer_level": {"min_ops": SPLIT + 1, "max_buffer_bytes": MAX_BUFFER_BYTES,
                          "link_latency_s": pointer["copy"], "kernel_launch_s": pointer["combine"],
                          "alloc_s": max(pointer["scratch"] - pointer["copy"], 0.0)},
        "link_bandwidth_Bps": None,
        "memory_bandwidth_Bps": table,
        "measured": measured,
    }
    from coll.analysis.cost_model import profile_from_dict
    prof["scratch_bandwidth_Bps"] = profile_from_dict(prof).value("memory_bandwidth_Bps", TILE_BYTES)
    return prof


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", dest="output", default=DEFAULT_OUT)
    p.add_argument("--quick", action="store_true", help="three working sets instead of six")
    args = p.parse_args(argv)
    why = output_path_error(args.output)
    if why:
        raise SystemExit(f"calibrate_cpu: {why}")
    prof = calibrate(QUICK_SETS if args.quick else WORKING_SETS,
                     log=lambda s: print(s, file=sys.stderr, flush=True))
    save_profile(prof, args.output)
    print(args.output)


if __name__ == "__main__":
    main()
