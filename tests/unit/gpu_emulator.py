"""Run compiled coll GPU programs without a GPU (test helper).

The host shared library is built exactly as for a GPU (lowering/gpu/nvvm.py),
but linked against mgpu_emulator.c, a host-memory stand-in for
libmlir_cuda_runtime.so that defers queued work and runs it in a seeded
order when the host syncs (see the C file). Kernel launches run the
kernel's own body on the CPU (gpu_kernels.cpu_func_text, one call per
thread) with the very descriptors the host code passed.
"""
import ctypes
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager

from coll.lowering.cpu.fp8 import expand_fp8
from coll.lowering.gpu import driver as cuda_driver
from coll.lowering.gpu import kernels as gpu_kernels

HERE = Path(__file__).parent
SONAME = "libmlir_cuda_runtime.so"
CPU_PIPELINE = ("builtin.module(arith-expand{include-bf16=true},convert-vector-to-scf,"
                "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                "finalize-memref-to-llvm,convert-vector-to-llvm,convert-arith-to-llvm,"
                "convert-index-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
                "reconcile-unrealized-casts)")
COUNTS = ("streams", "events", "copies", "kernels", "allocs", "frees", "stream_waits", "syncs",
          "records", "captures", "instantiations", "graph_launches", "timing")

LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64),
                          ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                          ctypes.c_int64)


def build_emulator(directory, soname=SONAME, flags=()):
    """Compiles the emulator as `directory`/`soname` (with -DEMULATE_DRIVER:
    a host-memory libcuda.so.1 as well)."""
    out = Path(directory) / soname
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", *flags, "-o", str(out),
                    str(HERE / "mgpu_emulator.c"), f"-Wl,-soname,{soname}"], check=True)
    return out


def kernel_harness(kernel):
    """Text of a module running `kernel` (a gpu_kernels.Kernel) for every
    thread of a grid: @run(params..., bdim, gdim), all addresses, counts
    and strides as index."""
    params = [f"%{p}" for p in kernel.params()]
    sig = ", ".join(f"{a}: index" for a in params)
    types = ", ".join(["index"] * (len(params) + 4))
    call = ", ".join(params + ["%t", "%b", "%bdim", "%gdim"])
    return f"""module {{
{gpu_kernels.cpu_func_text(kernel)}
func.func @run({sig}, %bdim: index, %gdim: index) attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %b = %c0 to %gdim step %c1 {{
    scf.for %t = %c0 to %bdim step %c1 {{
      func.call @{kernel.name}({call}) : ({types}) -> ()
    }}
  }}
  return
}}
}}"""


# The module's own kernels (GPU_LOCAL_WORK's, outlined from its local
# work): their gpu.func made a func.func whose thread and block ids are
# arguments (x only: the local kernels are one-dimensional), run for every
# thread of the grid by run_<name>, lowered with math to libm.
LOCAL_PIPELINE = CPU_PIPELINE.replace("builtin.module(", "builtin.module(convert-math-to-llvm,", 1)
_ID = re.compile(r"^(\s*)(%[\w.$-]+) = gpu\.(thread_id|block_id|block_dim|grid_dim)\s+([xyz])\s*$")
_HEADER = re.compile(r"gpu\.func @([\w.$-]+)\((.*)\) kernel(?: attributes \{[^{}]*\})? \{")
_SCALARS = {"index": ctypes.c_int64, "i64": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16,
            "i8": ctypes.c_int8, "f32": ctypes.c_float, "f64": ctypes.c_double}


def local_kernel_text(func_text):
    """(name, the text of a CPU module for one gpu.func: @<name> with
    %coll_tid, %coll_bid, %coll_bdim, %coll_gdim, and @run_<name>(args...,
    bdim, gdim) over every thread)."""
    lines = func_text.strip().splitlines()
    head = _HEADER.match(lines[0].strip())
    if not head:
        raise ValueError(f"not an outlined kernel: {lines[0]!r}")
    name, args = head.group(1), head.group(2)
    ids = {"thread_id": "%coll_tid", "block_id": "%coll_bid", "block_dim": "%coll_bdim", "grid_dim": "%coll_gdim"}
    body = ["  %coll_c0 = arith.constant 0 : index"]
    for line in lines[1:]:
        m = _ID.match(line)
        if m:
            indent, res, what, axis = m.groups()
            value = (f"arith.addi {ids[what]}, %coll_c0 : index" if axis == "x" else
                     f"arith.constant {1 if what.endswith('dim') else 0} : index")
            body.append(f"{indent}{res} = {value}")
        else:
            body.append(line.replace("gpu.return", "func.return"))
    names = re.findall(r"(%arg\d+):", args)
    return name, (f"module {{\nfunc.func @{name}({args}, %coll_tid: index, %coll_bid: index, %coll_bdim: index, "
                  f"%coll_gdim: index) {{\n" + "\n".join(body) + "\n"
                  f"func.func @run_{name}({args}, %bdim: index, %gdim: index) {{\n"
                  "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
                  "  scf.for %b = %c0 to %gdim step %c1 {\n    scf.for %t = %c0 to %bdim step %c1 {\n"
                  f"      func.call @{name}({', '.join(names + ['%t', '%b', '%bdim', '%gdim'])}) : "
                  f"({', '.join(_arg_types(args) + ['index'] * 4)}) -> ()\n"
                  "    }\n  }\n  return\n}\n}\n")


def _arg_types(args):
    """The types of a signature's `%argN: type` list (types may hold commas)."""
    out, depth, cur = [], 0, ""
    for ch in args + ",":
        if ch == "," and depth == 0:
            out.append(cur.split(":", 1)[1].strip())
            cur = ""
            continue
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        cur += ch
    return out


def _ctypes_of(t):
    """The C arguments one kernel argument of type `t` becomes (a memref:
    its descriptor's fields, as gpu-to-llvm passes them)."""
    if isinstance(t, ir.MemRefType):
        return [ctypes.c_int64] * (3 + 2 * t.rank)
    return [_SCALARS[str(t)]]


class Kernels:
    """CPU builds of the kernels, by name, compiled on first use; the
    module's own kernels (add_local) by their gpu.func's text."""

    def __init__(self):
        self.ctx = ir.Context()
        self.engines = {}
        self.launched = []
        self.local = {}  # name -> (engine, function, C argument types)

    def add_local(self, gpu_text):
        """Builds every outlined kernel of a gpu-dialect module (text) for
        the CPU (coll's own kernel module is built from the names)."""
        from coll.ir import make_context
        with make_context():
            m = ir.Module.parse(gpu_text)
            for mod in m.body.operations:
                if mod.operation.name != "gpu.module" or \
                        ir.StringAttr(mod.operation.attributes["sym_name"]).value == gpu_kernels.KERNEL_MODULE:
                    continue
                for f in mod.regions[0].blocks[0].operations:
                    if f.operation.name == "gpu.func":
                        self._build_local(str(f))

    def _build_local(self, func_text):
        name, text = local_kernel_text(func_text)
        with self.ctx:
            m = ir.Module.parse(text)
            fn_type = ir.FunctionType(ir.TypeAttr(m.body.operations[0].attributes["function_type"]).value)
            argtypes = [c for t in fn_type.inputs[:-4] for c in _ctypes_of(t)]
            PassManager.parse(LOCAL_PIPELINE).run(m.operation)
            eng = ExecutionEngine(m, opt_level=2)
            # (raw_lookup finds the packed wrapper, _mlir_run_<name>(void **args))
            fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))(eng.raw_lookup(f"run_{name}"))
        self.local[name] = (eng, fn, argtypes)

    def engine(self, name):
        if name not in self.engines:
            kernel = gpu_kernels.Kernel.parse(name)
            with self.ctx:
                m = ir.Module.parse(kernel_harness(kernel))
                expand_fp8(m.operation)  # as nvvm.lower_to_llvm does
                PassManager.parse(CPU_PIPELINE).run(m.operation)
                self.engines[name] = (ExecutionEngine(m, opt_level=2), len(kernel.params()))
        return self.engines[name]

    def run(self, name, params, grid, block):
        """params: as Kernel.params() names them (the address of every
        buffer's element 0, then n; or strides and sizes); for a local
        kernel, each argument's 8 bytes as the host passed them."""
        if name in self.local:
            _, fn, argtypes = self.local[name]
            if len(params) != len(argtypes):
                raise ValueError(f"{name} takes {len(argtypes)} parameters, got {len(params)}")
            vals = [t.from_buffer_copy(struct.pack("<q", v)[:ctypes.sizeof(t)]) for t, v in zip(argtypes, params)]
            vals += [ctypes.c_int64(block), ctypes.c_int64(grid)]
            fn((ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals]))
            return
        eng, count = self.engine(name)
        if len(params) != count:
            raise ValueError(f"{name} takes {count} parameters, got {len(params)}")
        args = [ctypes.pointer(ctypes.c_int64(v)) for v in list(params) + [block, grid]]
        eng.invoke("run", *args)

    def run_thread(self, name, params, tid, bid, bdim, gdim):
        """Runs one thread of a kernel (the others do nothing)."""
        eng, _ = self.engine(name)
        args = [ctypes.pointer(ctypes.c_int64(v)) for v in list(params) + [tid, bid, bdim, gdim]]
        eng.invoke(name, *args)

    def run_one(self, name, buffers, offsets, n, grid=2, block=32):
        """Runs a kernel on numpy buffers viewed at element `offsets`."""
        params = [b.ctypes.data + off * b.itemsize for b, off in zip(buffers, offsets)]
        self.run(name, params + [n], grid, block)

    def run_strided(self, name, buffers, views, sizes, grid=2, block=32):
        """Runs a strided kernel on flat numpy buffers, each viewed as
        `views`' (offset, s0, s1) over the index space `sizes` (d0, d1, w)."""
        params = [b.ctypes.data + off * b.itemsize for b, (off, _, _) in zip(buffers, views)]
        strides = [s for _, s0, s1 in views for s in (s0, s1)]
        self.run(name, params + strides + list(sizes), grid, block)


_LOADED = []


class Emulator:
    """The loaded emulator; runs compiled programs on numpy buffers.

    One per process: programs find libmlir_cuda_runtime.so by soname, so a
    second copy loaded from another path would never be called."""

    def __new__(cls, directory, build=True):
        if not _LOADED:
            _LOADED.append(super().__new__(cls))
            _LOADED[0]._init(directory, build)
        return _LOADED[0]

    def __init__(self, directory, build=True):
        pass

    def _init(self, directory, build):
        self.dir = Path(directory)  # programs link against the emulator here
        path = build_emulator(directory) if build else self.dir / SONAME
        self.lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        self.lib.mgpuEmuError.restype = ctypes.c_char_p
        self.lib.mgpuEmuCount.restype = ctypes.c_int64
        self.lib.mgpuEmuPending.restype = ctypes.c_int64
        self.lib.mgpuEmuReset.argtypes = [ctypes.c_uint64, LAUNCH]
        self.kernels = Kernels()
        self.error = None
        self.launches = []  # (kernel, parameters, grid, block) of the last run, in run order

        def on_launch(name, grid, block, params, nparams):
            try:
                vals = [params[i] for i in range(nparams)]
                self.launches.append((name.decode(), vals, tuple(grid[:3]), tuple(block[:3])))
                self.kernels.run(name.decode(), vals, grid[0] * grid[1] * grid[2],
                                 block[0] * block[1] * block[2])
            except Exception as e:  # keep going; reported by run()
                self.error = self.error or f"kernel {name.decode()}: {e!r}"
        self._cb = LAUNCH(on_launch)

    def counts(self):
        return {k: self.lib.mgpuEmuCount(i) for i, k in enumerate(COUNTS)}

    def run(self, so_path, entry, arrays, seed=0, calls=1, more=(), graphs=True, timing=False):
        """Loads the library, calls `_mlir_ciface_<entry>` `calls` times on
        host arrays (one per argument), then once on each array list of
        `more`, unloads it. `graphs=False`: the library's calls enqueue op
        by op (coll_set_graphs(0)); None: as the library decides from the
        environment; `timing`: events around each call.
        Returns the emulator's counts over all of it (load and unload
        included), with `per_call`: the counts of each call alone, and
        `graph_counts` (the library's own) and `device_seconds` (of the last
        call) where the library has graph controls. Raises on any misuse it
        recorded, on work still queued when a call returns, and on a stream,
        event, graph or allocation still alive after the unload."""
        self.error = None
        self.launches = []
        self.lib.mgpuEmuReset(seed, self._cb)
        prog = cuda_driver.Program(so_path, entry)
        per_call = []
        extra = {}
        try:
            if prog.has_graphs():
                if graphs is not None:  # None: as the library decides (COLL_CUDA_GRAPHS)
                    prog.set_graphs(graphs)
                prog.set_timing(timing)
            bound = [arrays] * calls + list(more)
            keep = [a for arrs in bound for a in arrs]  # noqa: F841 (alive during the calls)
            for arrs in bound:
                args = prog.bind([a.ctypes.data for a in arrs], [a.shape for a in arrs])
                before = self.counts()
                prog.call(args)
                after = self.counts()
                per_call.append({k: after[k] - before[k] for k in COUNTS})
                queued = self.lib.mgpuEmuPending()
                if queued and not self.error:
                    self.error = f"{queued} ops still queued when the call returned"
            if prog.has_graphs():
                extra = {"graph_counts": prog.graph_counts(), "device_seconds": prog.device_seconds()}
        finally:
            prog.close()
        err = self.lib.mgpuEmuError().decode()
        if err or self.error:
            raise AssertionError(f"emulated run failed: {err or self.error}")
        return dict(self.counts(), per_call=per_call, **extra)


def reference(kind, arrays):
    """numpy reduction of `arrays` (float16/bf16 bits handled by the caller)."""
    fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    out = arrays[0].copy()
    for a in arrays[1:]:
        out = fn(out, a)
    return out
