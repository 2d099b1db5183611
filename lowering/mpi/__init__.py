"""The MPI back end: one process per rank under mpirun (OpenMPI or MPICH).
The explicit program's per-rank projection (coll-to-mpi: copies between
ranks become matched mpi.isend/mpi.irecv), its combines for the CPU, the
LLVM dialect, a shared library linked with mpicc (toolchain.py); each run
starts `mpirun` with one worker per rank (runtime.py, worker.py). Ranks
share no memory: no strategy that needs peer access runs here.

    from coll.lowering import mpi
    prog = mpi.compile(text)          # global view, SPMD form, or per-rank
    prog.run(inputs, outputs)         # numpy arrays of the global view
"""
from typing import TYPE_CHECKING, Any

from mlir import ir

from ...core.routes import options_text
from ...execution.program import Program
from ..base import Backend, Option
from ..cpu.route import CPU_TO_LLVM, blas_elements, off

if TYPE_CHECKING:  # the runtime finds and runs mpirun: imported on first use (RUNTIME_API)
    from .runtime import MpiProgram

DEFAULT_TIMEOUT = 120.0

# CPU_TO_LLVM with its dialect conversions replaced by convert-to-llvm, the
# one pass that knows the mpi dialect (it reads the module's dlti.map for
# the ABI); the math conversions first, as CPU_TO_LLVM has them (math-to-llvm
# before math-to-libm: it expands what libm lacks, rsqrt), since
# convert-to-llvm would inline nothing.
MPI_TO_LLVM = CPU_TO_LLVM[:CPU_TO_LLVM.index("finalize-memref-to-llvm")] + (
    "convert-vector-to-llvm",  # (convert-to-llvm left vector ops in local work: mlir-translate refused them)
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-to-llvm",
    "reconcile-unrealized-casts",
)


def route(implementation: str | None = None, shuffle_seed: int | None = None, tag_limit: int | None = None,
          blas: bool | str | None = True, split: bool | None = None,
          epilogues: bool | str | None = None) -> list[str]:
    """Explicit level -> the per-rank projection (coll-to-mpi: one module for
    every rank), its combines for the CPU, then the LLVM dialect. An SPMD
    function still here (local work around its collectives) has each
    collective lowered in place to its rank's part (coll-spmd-to-mpi). With
    `shuffle_seed` the explicit program is put in another valid order first
    (coll-shuffle): the projection posts every rank's messages in it.
    `blas`: contractions through OpenBLAS (cpu.route.blas_elements);
    `split`: each rank counts the time in its collectives, their messages
    and waits included (coll-profile-collectives); `epilogues` (False or
    "off"; and with `split`, whose clock reads bracket the collectives'
    ops): the local work before and after a collective runs apart from it,
    not in tiles among its messages (coll-mpi-overlap); "on": among them
    whatever the ranks; None or "auto": where the cost model predicts it
    pays (lowering/mpi/overlap.py `pays`; without a prediction, where the
    ranks have a core each: the MPI profile's `cores`)."""
    elems = [] if shuffle_seed is None else [f"coll-shuffle{options_text(seed=shuffle_seed)}"]
    to_mpi = f"coll-to-mpi{options_text(implementation=implementation, tag_limit=tag_limit)}"
    profiled = ["coll-profile-collectives"] if split else []
    fused = [] if split or off(epilogues) else [
        "coll-mpi-overlap" if epilogues in (True, "on") else f"coll-mpi-overlap{options_text(cores=_cores())}"]
    return elems + (["coll-spmd-to-mpi", to_mpi] + fused + ["coll-mpi-static-scratch", "coll-static-local-buffers"]
                    + profiled
                    + ["coll-to-cpu{tile=0}", "coll-ieee-minmax", "coll-mpi-requests"]
                    + blas_elements(blas) + list(MPI_TO_LLVM) + ["coll-mpi-abi"])



def _cores() -> int:
    """The cores of the MPI profile's machine (0: not known)."""
    from ...analysis.cost_model import load_profile
    return int(load_profile(Mpi.profile).params.get("cores") or 0)


class Mpi(Backend):
    name = "mpi"
    capabilities = frozenset()
    # The cost-model profile `auto` chooses by (analysis/profiles/mpi.json,
    # measured by bench/calibrate_mpi.py): messages between ranks, not memcpys.
    profile = "mpi"
    per_rank = True
    keep_local_work = True
    options = (Option("--ranks", "ranks", int, None,
                      "the number of ranks (default: one per device of the program)"),
               Option("--timeout", "timeout", float, None,
                      f"seconds a run may take before it is killed (default {DEFAULT_TIMEOUT:g})"),
               Option("--blas", "blas", str, None, "f32/f64 contractions through OpenBLAS (default on)",
                      ("on", "off")),
               Option("--epilogues", "epilogues", str, None,
                      "the local work right before and after a collective runs in tiles among its messages "
                      "(default auto: where the cost model predicts it pays)", ("auto", "on", "off")),
               Option("--profile", "split", bool, None, "time the collectives apart from the local work "
                      "(printed after each run; per rank on mpi; epilogues run unfused)", const=True))

    def route(self, module_op: ir.Operation | ir.Module | None = None, implementation: str | None = None,
              shuffle_seed: int | None = None, tag_limit: int | None = None, blas: bool | str | None = True,
              split: bool | None = None, epilogues: bool | str | None = None, **_: Any) -> list[str]:
        return route(implementation, shuffle_seed, tag_limit, blas, split, epilogues)

    def available(self) -> tuple[bool, str]:
        from .runtime import available  # (the runtime on first use, RUNTIME_API)
        return available()

    def build(self, program: Program, strategy: str, threshold: int | None, timeout: float = DEFAULT_TIMEOUT,
              out_dir: str | None = None, executable: str | None = None, shuffle_seed: int | None = None,
              profile: str | None = None, blas: bool | str | None = True,
              split: bool | None = None, epilogues: bool | str | None = None) -> "MpiProgram":
        """One shared library for every rank (and with `executable`, a path,
        a program for the user's own mpirun); a run not finished within
        `timeout` seconds is killed. `split`: the program counts the time in
        its collectives (MpiProgram.split, coll-run --profile); `epilogues`
        (False or "off"): the local work after a collective is not fused
        among its messages (coll-mpi-overlap)."""
        from .runtime import build  # (the runtime on first use, RUNTIME_API)
        return build(self, program, strategy, threshold, timeout, out_dir, executable,
                     shuffle_seed, profile, blas, split, epilogues)


BACKEND = Mpi()
compile = BACKEND.compile
clear_cache = BACKEND.clear_cache


available = BACKEND.available
# The runtime's own API (runtime.py), loaded on first use so that importing
# the back end's passes stays cheap.
RUNTIME_API = ("MpiProgram", "MpiError", "launch", "mpirun_command")


def __getattr__(name: str) -> Any:
    if name not in RUNTIME_API:
        raise AttributeError(name)  # (a submodule: the import system asks first)
    from . import runtime  # on first use (RUNTIME_API): ~55 ms to import
    return getattr(runtime, name)
