"""The GPU back end: logical devices on one NVIDIA GPU, one stream each
(coll-to-gpu: gpu.memcpy and combine kernels, events between streams), then
upstream's gpu-lower-to-nvvm-pipeline (PTX or cubin) and a host shared
library on upstream's CUDA runtime (nvvm.py). Compiling needs no GPU;
running needs one (runtime.py, driver.py). The logical devices share one
GPU's memory, so strategies that need peer access run here.

    from coll.lowering import gpu
    prog = gpu.compile(text)          # any level: collective, explicit, gpu
    prog.run(inputs, outputs)         # numpy arrays; outputs written in place
"""
from typing import TYPE_CHECKING, Any

from mlir import ir

from ...core.routes import options_text
from ...execution.program import Program
from ...ir.ops import PEER_ACCESS, SHARED_MEMORY
from ..base import Backend, Option
from .local_buffers import gpu_local_work

if TYPE_CHECKING:  # the runtime loads the CUDA driver's wrappers: imported on first use (RUNTIME_API)
    from .runtime import CudaProgram

# Local work around the collectives (linalg on each device's buffers, as
# coll-spmd-to-global clones it) as kernels of full blocks: each op's
# parallel loop collapsed to one dimension (coll-gpu-collapse-parallel, last
# dimension fastest: consecutive threads read consecutive elements), tiled
# by LOCAL_THREADS, tiles mapped to blocks and their elements to threads
# (upstream tiling and parallel-loop mapping), outlined. They run before
# coll-to-gpu, which puts their launches and local buffer ops on a stream
# of their own, each waited for in host order (between the collectives'
# waits and starts), with no stream made per call.
LOCAL_THREADS = 256
GPU_LOCAL_WORK = (
    "func.func(convert-linalg-to-parallel-loops)",
    "coll-gpu-collapse-parallel",
    f"func.func(scf-parallel-loop-tiling{{parallel-loop-tile-sizes={LOCAL_THREADS} no-min-max-bounds=true}},"
    "gpu-map-parallel-loops,convert-parallel-loops-to-gpu,canonicalize)",
    "gpu-kernel-outlining",
    "coll-gpu-kernel-names",
)


def route(device_map: str | None = None, chip: str | None = None, workspace: str | None = None,
          streams: str | None = None, local_work: bool = False, graph: bool | str | None = None,
          epilogues: bool | str | None = None) -> list[str]:
    """Explicit level -> gpu dialect: host ops on streams, combine kernels
    (`local_work`: and the module's linalg ops as kernels, its local
    buffers in device memory, the elementwise work after a collective's
    last combine in that combine's kernel unless `epilogues` is off,
    epilogue.py; `graph` false: each call enqueues its work op by op
    instead of replaying a CUDA graph, streams.py)."""
    graph = None if graph is None else ("true" if graph in (True, "true") else "false")
    opts = options_text(device_map=device_map, chip=chip, workspace=workspace, streams=streams, graph=graph)
    # (named elementwise ops, linalg.exp or linalg.add, as generics first)
    fuse = [] if epilogues in (False, "off") else ["func.func(linalg-generalize-named-ops)", "coll-gpu-fuse-epilogues"]
    local = [*fuse, "coll-gpu-local-buffers", *GPU_LOCAL_WORK] if local_work else []
    return local + [f"coll-to-gpu{opts}"]


class Gpu(Backend):
    name = "gpu"
    aliases = ("cuda",)
    capabilities = frozenset({PEER_ACCESS, SHARED_MEMORY})
    options = (Option("--chip", "chip", str, None, "the GPU to compile for (default sm_90)"),
               Option("--epilogues", "epilogues", str, None,
                      "the elementwise work right after a collective's last combine runs in its kernel "
                      "(default on)", ("on", "off")))

    def route(self, module_op: ir.Operation | ir.Module | None = None, device_map: str | None = None,
              chip: str | None = None, workspace: str | None = None, streams: str | None = None,
              local_work: bool | None = None, graph: bool | str | None = None,
              epilogues: bool | str | None = None, **_: Any) -> list[str]:
        if local_work is None:  # read on the global view
            local_work = gpu_local_work(module_op) if module_op is not None else False
        return route(device_map, chip, workspace, streams, local_work, graph, epilogues)

    def available(self, device: int = 0) -> tuple[bool, str]:
        from .runtime import available  # (the runtime on first use, RUNTIME_API)
        return available(device)

    def build(self, program: Program, strategy: str, threshold: int | None, chip: str | None = None,
              device_map: str | None = "", workspace: str = "arg", streams: str = "device", fmt: str = "auto",
              out_dir: str | None = None, epilogues: bool | str | None = None) -> "CudaProgram":
        """Lowers and links the shared library; `device_map` names the GPU
        of each logical device (default GPU 0); `epilogues` (False or
        "off"): the work after a collective's combine stays a kernel of its own."""
        from .runtime import build  # (the runtime on first use, RUNTIME_API)
        return build(self, program, strategy, threshold, chip, device_map, workspace,
                     streams, fmt, out_dir, epilogues)


BACKEND = Gpu()
compile = BACKEND.compile
clear_cache = BACKEND.clear_cache


available = BACKEND.available
# The runtime's own API (runtime.py), loaded on first use so that importing
# the back end's passes stays cheap.
RUNTIME_API = ("CudaProgram", "driver")


def __getattr__(name: str) -> Any:
    if name not in RUNTIME_API:
        raise AttributeError(name)  # (a submodule: the import system asks first)
    from . import runtime  # on first use (RUNTIME_API): ~30 ms to import
    return getattr(runtime, name)
