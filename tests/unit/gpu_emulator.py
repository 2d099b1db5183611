"""Run compiled coll GPU programs without a GPU (test helper).

The host shared library is built exactly as for a GPU (lowering/gpu/nvvm.py),
but linked against mgpu_emulator.c, a host-memory stand-in for
libmlir_cuda_runtime.so that defers queued work and runs it in a seeded
order when the host syncs (see the C file). Kernel launches run the
kernel's own body on the CPU (gpu_kernels.cpu_func_text, one call per
thread) with the very descriptors the host code passed.
"""
import ctypes
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


class Kernels:
    """CPU builds of the kernels, by name, compiled on first use."""

    def __init__(self):
        self.ctx = ir.Context()
        self.engines = {}
        self.launched = []

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
        buffer's element 0, then n; or strides and sizes)."""
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
