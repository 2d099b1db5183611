"""The CPU back end's route: explicit level -> LLVM dialect (its own module,
so that its passes can read CPU_TO_LLVM without loading the runtime)."""
import os

from ...core.routes import options_text
from ...passes.blas_contractions import library

# Upstream passes from memref/scf/vector/arith/func, and what frontends put
# around a collective (linalg on memrefs, affine, math), to the LLVM dialect.
# bf16 local work computes in f32 (math-extend-to-supported-types for math
# ops, arith-emulate-unsupported-floats for arith ops: within one linalg
# body the ops' values stay f32 and round once, at the store; an outside
# attack, 2026-12-07: `a * 0.3 + b` in one body rounds once, in two bodies
# twice) and arith-expand{include-bf16} turns the
# conversions into integer arithmetic: no compiler-rt helper (__truncsfbf2,
# which GCC 12's libgcc lacks) is called, by the JIT or a linked library;
# fp8 (f8E4M3FN, f8E5M2) likewise, but no upstream pass of LLVM 22 lowers
# its conversions: coll-fp8-conversions (fp8.py) does, as integer arithmetic.
# expand-strided-metadata emits affine.apply, hence lower-affine after it.
# Local work is left to LLVM's loop vectorizer (local_math.py): named ops
# generalized (a linalg.reduce is a generic like the rest), row reductions
# marked reassoc and outlined one function per kind of row before their
# loops exist (row_reductions.py: one order, fused or not), f32 exp/tanh as
# inline arithmetic instead of libm calls once bf16 math is f32.
# (A coll pass among them: run with core.pipeline.build, not PassManager.parse.)
CPU_TO_LLVM = (
    "canonicalize",
    "cse",
    "linalg-generalize-named-ops",
    "coll-reassociate-local-reductions",
    "coll-outline-row-reductions",
    "convert-linalg-to-loops",
    "math-extend-to-supported-types",
    "coll-approximate-math",
    "arith-emulate-unsupported-floats{source-types=bf16,f8E4M3FN,f8E5M2 target-type=f32}",
    "coll-fp8-conversions",
    "arith-expand{include-bf16=true}",
    "convert-vector-to-scf",
    "lower-affine",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",
    "finalize-memref-to-llvm",
    "convert-vector-to-llvm",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
)

# coll-parallel-devices' async.execute ops, and the scf.parallel of the
# workers that share a collective's tiles (coll-to-cpu's workers,
# fuse.py), run on the MLIR async runtime's thread pool
# (libmlir_async_runtime.so, one worker per core), lowered as upstream's
# integration tests do (mlir/test/Integration/Dialect/Async/CPU); one
# block per worker (min-task-size=1). After the row reductions are
# outlined, before linalg's loops.
PARALLEL_AFTER = "coll-outline-row-reductions"


def async_to_llvm(workers: int) -> list[str]:
    """The async lowering, for `workers` threads."""
    return [f"async-parallel-for{{async-dispatch=true num-workers={workers} min-task-size=1}}",
            "async-to-async-runtime", "async-runtime-ref-counting", "async-runtime-ref-counting-opt",
            "convert-async-to-llvm"]


# A collective's tiles go to at most this many workers: each holds scratch
# tiles of its own (static memory: up to 2 MiB a group per worker), and a
# few cores already draw most of a socket's memory bandwidth (two reach
# 1.7x one here). Not measured beyond this 2-core VM.
MAX_WORKERS = 16


def cores() -> int:
    """The cores this process may run on: the threads the simulated
    devices' local work is shared among."""
    return len(os.sched_getaffinity(0))


def workers() -> int:
    """The threads a collective's tiles are shared among (coll-to-cpu's
    workers)."""
    return min(cores(), MAX_WORKERS)


def cpu_to_llvm(parallel: bool) -> list[str]:
    """CPU_TO_LLVM, with the async runtime's lowering where `parallel`."""
    passes = list(CPU_TO_LLVM)
    if parallel:
        at = passes.index(PARALLEL_AFTER) + 1
        passes[at:at] = async_to_llvm(workers())
    return passes


def blas_elements(blas: bool | str | None = True) -> list[str]:
    """coll-blas-contractions (f32/f64 contractions as OpenBLAS calls) unless
    `blas` is False or "off" (the opt-out: coll-run --blas=off), or the
    library is not installed."""
    return ["coll-blas-contractions"] if blas not in (False, "off") and library() is not None else []


def off(flag: bool | str | None) -> str | None:
    """"off" where `flag` is False or "off"; None (the default) otherwise."""
    return "off" if flag in (False, "off") else None


def route(tile: int | None = None, shuffle_seed: int | None = None, scratch: str | None = None,
          nontemporal: int | None = None, blas: bool | str | None = True,
          epilogues: bool | str | None = None, split: bool | None = None,
          parallel: bool | str | None = None) -> list[str]:
    """Explicit level -> LLVM dialect for CPU-simulated devices (with
    `shuffle_seed`, the explicit program first put in another valid order
    of its token graph: coll-shuffle; `scratch`: static, the default, or
    heap; `nontemporal`: bytes from which results are streamed; `epilogues`
    (False or "off": local work after a collective runs after it, not in
    its tiles); coll-to-cpu's options; `blas`: contractions through
    OpenBLAS, blas_elements; `split`: the time in collectives counted,
    coll-profile-collectives; `parallel` (False or "off": the simulated
    devices' local work and a collective's tiles on one thread, not
    coll-parallel-devices and coll-to-cpu's workers; on a machine of one
    core, always))."""
    elems = [] if shuffle_seed is None else [f"coll-shuffle{options_text(seed=shuffle_seed)}"]
    threads = off(parallel) is None and cores() > 1
    to_cpu = options_text(tile=tile, scratch=scratch, nontemporal=nontemporal, epilogues=off(epilogues),
                          workers=workers() if threads else None)
    profiled = ["coll-profile-collectives"] if split else []
    return elems + ["coll-static-local-buffers"] + profiled + [f"coll-to-cpu{to_cpu}",
                    "coll-ieee-minmax"] + blas_elements(blas) + (["coll-parallel-devices"] if threads else []) + \
        cpu_to_llvm(threads)
