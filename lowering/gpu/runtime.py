"""Run coll programs on an NVIDIA GPU.

    prog = compile(text)              # any level: collective, explicit, gpu
    prog.run(inputs, outputs)         # numpy arrays; outputs written in place
    prog.time(inputs, outputs, 10)    # seconds per run

Same interface as lowering/cpu/runtime.py. compile() needs no GPU: it lowers the
module (coll-lower-all-reduce, coll-to-gpu, gpu-lower-to-nvvm-pipeline),
translates the host to LLVM IR and links a shared library against
libmlir_cuda_runtime.so (lowering/gpu/nvvm.py). run() and time() need a GPU:
the arrays are copied into device buffers (CUDA driver API), the library's
`_mlir_ciface_<entry>` is called on device pointers, and the outputs are
copied back. Logical devices all live on one GPU (`device`), each on its own
stream (see lowering/gpu/to_gpu.py for the limitation of the upstream wrappers).

Timing is a wall clock around the call, after warm-up: the program runs on
its own streams (made once, when the library loads) and returns after a
host sync, so events on the caller's stream would not bracket it; the clock
includes the host work of enqueueing, which is part of its cost.
"""
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mlir import ir

from ...core.tools import tool
from ...execution.measure import check_repeat
from ...execution.program import Program
from ...execution.signature import ArgSpec, _written, check_arrays, find_entry
from ..base import Backend
from ..driver import lower
from . import driver as cuda_driver
from .nvvm import compile_module, cuda_runtime_library

_DRIVERS: dict[int, cuda_driver.Driver] = {}


def available(device: int = 0) -> tuple[bool, str]:
    """(True, '') when programs can be compiled and run here, else why not."""
    ok, why = cuda_driver.available(device)
    if not ok:
        return False, why
    try:
        cuda_runtime_library()
        tool("mlir-translate")
        tool("llc")
    except (ImportError, FileNotFoundError) as e:
        return False, f"the GPU compile route is not installed: {e}"
    return True, ""


def driver(device: int = 0) -> cuda_driver.Driver:
    if device not in _DRIVERS:
        _DRIVERS[device] = cuda_driver.Driver(device)
    return _DRIVERS[device]


class CudaProgram:
    """A compiled entry function in a shared library. `specs`: one ArgSpec
    per argument; `n_inputs`: how many leading arguments are inputs;
    `strategies`: what coll-lower-all-reduce chose; `traffic_bytes`: bytes
    the explicit program reads plus writes; `workspace_bytes`: scratch the
    runtime passes (workspace=arg)."""
    # Set by build and Backend.compile (lowering/base.py).
    pipeline: str
    written: Any
    _ctx: ir.Context

    def __init__(self, path: str | Path, entry: str, specs: list[ArgSpec], n_inputs: int | None,
                 strategies: list[str], traffic: int | None, workspace: int | None,
                 compile_seconds: float | None, device: int = 0) -> None:
        self.path, self.entry = Path(path), entry
        self.specs, self.n_inputs = specs, n_inputs
        self.strategies, self.traffic_bytes = strategies, traffic
        self.workspace_bytes = workspace
        self.compile_seconds = compile_seconds
        self.device = device
        self._lib: cuda_driver.Program | None = None
        self._buffers: list[int] = []  # (device pointers, while loaded)

    def _loaded(self) -> cuda_driver.Program:
        """The library, loaded and its buffers allocated on first use."""
        if self._lib is None:
            drv = driver(self.device)
            self._lib = cuda_driver.Program(self.path, self.entry, self.device,
                                            cuda_runtime_library().parent)
            sizes = [max(s.nbytes, 1) for s in self.specs]
            if self.workspace_bytes is not None:
                sizes.append(self.workspace_bytes)
            self._buffers = [drv.alloc(n) for n in sizes]
            shapes = [s.shape for s in self.specs]
            if self.workspace_bytes is not None:
                shapes.append((self.workspace_bytes,))
            self._args = self._lib.bind(self._buffers, shapes)
        return self._lib

    def _upload(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        arrays = check_arrays(self.specs, self.n_inputs, inputs, outputs, getattr(self, "written", ()))
        self._loaded()
        drv = driver(self.device)
        for ptr, a in zip(self._buffers, arrays):
            drv.upload(ptr, a)
        return arrays[len(list(inputs)):]

    def _download(self, outputs: Sequence[np.ndarray]) -> None:
        drv = driver(self.device)
        start = len(self.specs) - len(outputs)
        for ptr, o in zip(self._buffers[start:], outputs):
            tmp = np.empty_like(o) if not o.flags.c_contiguous else o
            drv.download(tmp, ptr)
            if tmp is not o:
                o[...] = tmp

    in_place: Sequence[int] = ()  # the inputs the program also writes (in-place collectives)

    def run(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        """Runs once; writes `outputs` (and in-place inputs) in place."""
        outs = self._upload(inputs, outputs)
        self._loaded().call(self._args)
        self._download(outs)
        drv = driver(self.device)
        for i in self.in_place:
            drv.download(inputs[i], self._buffers[i])

    def time(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], repeat: int = 10) -> list[float]:
        """Seconds of each of `repeat` runs (after warm-up); writes `outputs`."""
        repeat = check_repeat(repeat)
        outs = self._upload(inputs, outputs)
        times = self._loaded().time_calls(self._args, repeat)
        self._download(outs)
        return times

    def close(self) -> None:
        if self._lib is not None:
            drv = driver(self.device)
            drv.synchronize()
            for p in self._buffers:
                drv.free(p)
            self._lib.close()
            self._lib, self._buffers = None, []


def build(backend: Backend, program: Program, strategy: str, threshold: int | None, chip: str | None,
          device_map: str | None, workspace: str, streams: str, fmt: str, out_dir: str | Path | None,
          epilogues: bool | str | None = None) -> CudaProgram:
    """The CudaProgram of `program` (read, in the current Context)."""
    module, name, specs, n_inputs = program.parsed, program.entry, program.specs, program.n_inputs
    laid = [i for i, s in enumerate(specs) if s.layout is not None]
    if laid:  # the CPU and MPI runtimes stage these (descriptors.staged); this one not yet
        raise ValueError(f"argument #{laid[0]} has a strided layout with an offset ({specs[laid[0]].layout}); "
                         "--backend=gpu takes identity layouts only for now (the CPU and MPI backends "
                         "take both)")
    args = list(find_entry(module, name).regions[0].blocks[0].arguments)
    in_place = [i for i, a in enumerate(args[:n_inputs or 0]) if _written(a)]
    low = lower(program, backend, strategy, threshold, device_map=device_map,
                chip=chip, workspace=workspace, streams=streams, epilogues=epilogues)
    func = find_entry(module, name)
    ws_attr = func.attributes["coll.workspace_bytes"] if "coll.workspace_bytes" in func.attributes else None
    ws = ir.IntegerAttr(ws_attr).value if ws_attr is not None else None
    gpu_id = ir.IntegerAttr(func.attributes["coll.gpu"]).value if "coll.gpu" in func.attributes else 0
    ours = out_dir is None
    out_dir = Path(out_dir or tempfile.mkdtemp(prefix="coll-cuda-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"lib{name}.so"
    try:
        compile_module(module.operation, lib, chip, fmt, rpaths=("$ORIGIN", str(cuda_runtime_library().parent)))
    except BaseException:
        if ours:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    prog = CudaProgram(lib, name, specs, n_inputs, low.strategies, low.traffic, ws, None, gpu_id)
    if ours:  # the folder we made goes with the program (a loaded library stays mapped)
        weakref.finalize(prog, shutil.rmtree, str(out_dir), True)
    prog.pipeline = low.pipeline
    prog.in_place = in_place
    return prog
