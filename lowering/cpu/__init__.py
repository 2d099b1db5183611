"""The CPU back end: N simulated devices are N host buffers; copies become
memref copies, combines vector loops (coll-to-cpu), and the upstream
ExecutionEngine runs the result. Devices share one address space, so
strategies that need peer access run here.

    from coll.lowering import cpu
    prog = cpu.compile(text)          # any level: collective, explicit, memref
    prog.run(inputs, outputs)         # numpy arrays; outputs written in place
    prog.time(inputs, outputs, 10)    # seconds per run
"""
from typing import TYPE_CHECKING, Any

from mlir import ir

from ...execution.program import Program
from ...ir.ops import PEER_ACCESS, SHARED_MEMORY
from ..base import Backend, Option
from .route import CPU_TO_LLVM, route  # noqa: F401 - the route is the back end's

if TYPE_CHECKING:  # the runtime loads the ExecutionEngine: imported on first use (RUNTIME_API)
    from .runtime import CpuProgram


class Cpu(Backend):
    name = "cpu"
    capabilities = frozenset({PEER_ACCESS, SHARED_MEMORY})
    # The cost-model profile `auto` chooses by (analysis/profiles/cpu.json,
    # measured by bench/calibrate_cpu.py), among every strategy it runs.
    profile = "cpu"
    options = (Option("--blas", "blas", str, None, "f32/f64 contractions through OpenBLAS (default on)",
                      ("on", "off")),
               Option("--epilogues", "epilogues", str, None,
                      "the local work right after a collective runs in its tiles (default on)", ("on", "off")),
               Option("--parallel", "parallel", str, None,
                      "the simulated devices' local work, and the tiles of a collective's large groups, "
                      "on every core (default on)", ("on", "off")),
               Option("--profile", "split", bool, None, "time the collectives apart from the local work "
                      "(printed after each run; epilogues run unfused)", const=True))

    def route(self, module_op: ir.Operation | ir.Module | None = None, tile: int | None = None,
              shuffle_seed: int | None = None, scratch: str | None = None, nontemporal: int | None = None,
              blas: bool | str | None = True, epilogues: bool | str | None = None, split: bool | None = None,
              parallel: bool | str | None = None, **_: Any) -> list[str]:
        return route(tile, shuffle_seed, scratch, nontemporal, blas, epilogues, split, parallel)

    def available(self) -> tuple[bool, str]:
        from .runtime import available  # (the runtime on first use, RUNTIME_API)
        return available()

    def build(self, program: Program, strategy: str, threshold: int | None, tile: int | None = -1,
              shuffle_seed: int | None = None, check_order: bool = True, scratch: str | None = None,
              nontemporal: int | None = None, profile: str | None = None,
              blas: bool | str | None = True, epilogues: bool | str | None = None,
              split: bool | None = None, parallel: bool | str | None = None) -> "CpuProgram":
        """`tile` (-1: coll-to-cpu's default), `shuffle_seed` (another valid
        order: chaos testing of the ordering), `check_order=False`: an
        explicit-level input runs unchecked (for tests of racy programs);
        `scratch` (static: allocated once per program, heap: at every call),
        `nontemporal` (bytes from which results are streamed; None: this
        machine's last-level cache, 0: never), `profile` (None: `profile`,
        "": the reference rule) are coll-to-cpu's and auto's; `blas` (True or
        "on", False or "off"): f32/f64 contractions through OpenBLAS;
        `epilogues` (False or "off"): local work after a collective is not
        fused into its tiles; `split`: the program counts the time in its
        collectives (CpuProgram.split, coll-run --profile); `parallel` (False
        or "off"): the devices' local work (coll-parallel-devices) and a
        collective's tiles (coll-to-cpu's workers) on one core."""
        from .runtime import build  # (the runtime on first use, RUNTIME_API)
        return build(self, program, strategy, threshold, tile, shuffle_seed, check_order,
                     scratch, nontemporal, profile, blas, epilogues, split, parallel)


BACKEND = Cpu()
compile = BACKEND.compile
clear_cache = BACKEND.clear_cache


available = BACKEND.available
# The runtime's own API (runtime.py), loaded on first use so that importing
# the back end's passes stays cheap.
RUNTIME_API = ("CpuProgram", "OPT_LEVEL", "NONTEMPORAL")


def __getattr__(name: str) -> Any:
    if name not in RUNTIME_API:
        raise AttributeError(name)  # (a submodule: the import system asks first)
    from . import runtime  # on first use (RUNTIME_API): ~3 ms, and NONTEMPORAL reads the caches
    return getattr(runtime, name)
