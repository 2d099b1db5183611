"""The routes: named pipelines from any level down to what a back end runs.

A route is pipeline text: print it, diff it, replay it with
`coll-opt --pass-pipeline=...`. Runtimes, coll-run, coll-build, benchmarks
and tests all lower through these, with core/pipeline.py.

  bufferize tensor form -> memref form (first, when the module has tensors)
  explicit  collective level -> explicit level (strategy chosen, lowered)
  cpu       explicit level -> LLVM dialect for the ExecutionEngine
  gpu       explicit level -> gpu dialect (host ops + kernels)
  nvvm      gpu dialect -> LLVM dialect host + gpu.binary (PTX or cubin)
  mpi       explicit level -> one per-rank program (mpi dialect), LLVM dialect
  shard     tensor program annotated with upstream shard.shard -> its SPMD
            function on memrefs (partitioned, coll collectives, bufferized)
Each starts from any level at or above its own: passes with nothing to do
leave the IR alone.
"""
from .pipeline import text_of, _element

# Upstream passes from memref/scf/vector/arith/func, and what frontends put
# around a collective (linalg on memrefs, affine, math), to the LLVM dialect.
# arith-expand{include-bf16} turns bf16 conversions into integer arithmetic so
# that no compiler-rt helper (__truncsfbf2) is needed at JIT time;
# expand-strided-metadata emits affine.apply, hence lower-affine after it.
CPU_TO_LLVM = (
    "canonicalize",
    "cse",
    "convert-linalg-to-loops",
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


def _opts(**values):
    """'{a=1 b=x}' for the options that are set (None: the pass default)."""
    items = [f"{k.replace('_', '-')}={v}" for k, v in values.items() if v is not None and v != ""]
    return "{" + " ".join(items) + "}" if items else ""


def bufferize():
    """Tensor form -> memref form: coll-bufferize, then upstream's
    one-shot-bufferize over whole functions (plain memrefs at their
    boundaries, as the collectives need contiguous buffers; a collective
    on loop-carried tensors yields its own buffer), then memref
    results as out-parameters (the entry convention: inputs, then outputs),
    the static allocations of returned buffers becoming those parameters;
    the other allocations freed at the function's end."""
    return ["coll-bufferize",
            "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
            "allow-return-allocs-from-loops}",
            "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
            "coll-free-local-buffers"]


def explicit(strategy=None, threshold=None, profile=None, check_order=False, check_semantics=False,
             spmd=False, capabilities=()):
    """Collective level -> explicit level. `strategy` (not auto) overrides
    every collective's own; otherwise coll-choose-strategy decides, among
    the strategies the back end's `capabilities` (names) allow. The
    checks prove an explicit program ordered (coll-check-order) and that it
    computes what its coll.implements claims (coll-check-semantics). `spmd`:
    SPMD functions are expanded into their global view first."""
    elems = ["coll-spmd-to-global"] if spmd else []
    caps = None if strategy not in (None, "auto") else ",".join(capabilities) or None  # nothing to choose
    elems += [f"coll-choose-strategy{_opts(strategy=strategy, threshold=threshold, profile=profile, capabilities=caps)}",
              "coll-lower-collectives"]
    if check_order:
        elems.append("coll-check-order")
    if check_semantics:
        elems.append("coll-check-semantics")
    return elems


def cpu(tile=None, shuffle_seed=None, scratch=None, nontemporal=None):
    """Explicit level -> LLVM dialect for CPU-simulated devices (`scratch`:
    static, the default, or heap; `nontemporal`: bytes from which results
    are streamed; coll-to-cpu's options)."""
    elems = [] if shuffle_seed is None else [f"coll-shuffle{_opts(seed=shuffle_seed)}"]
    return elems + [f"coll-to-cpu{_opts(tile=tile, scratch=scratch, nontemporal=nontemporal)}",
                    "coll-ieee-minmax"] + list(CPU_TO_LLVM)


# Local work around the collectives (linalg on each device's buffers, as
# coll-spmd-to-global clones it) as kernels: upstream's parallel-loop
# mapping, one synchronous launch per op (host order keeps it between the
# collectives' waits and starts).
GPU_LOCAL_WORK = (
    "func.func(convert-linalg-to-parallel-loops,gpu-map-parallel-loops,convert-parallel-loops-to-gpu)",
    "gpu-kernel-outlining",
)


def gpu(device_map=None, chip=None, workspace=None, streams=None, local_work=False):
    """Explicit level -> gpu dialect: host ops on streams, combine kernels
    (`local_work`: and the module's linalg ops as kernels, its local
    buffers in device memory)."""
    return ((["coll-gpu-local-buffers"] if local_work else [])
            + [f"coll-to-gpu{_opts(device_map=device_map, chip=chip, workspace=workspace, streams=streams)}"]
            + (list(GPU_LOCAL_WORK) if local_work else []))


def nvvm(chip="sm_90", features="+ptx80", fmt="isa", opt_level=3):
    """gpu dialect -> LLVM dialect host + gpu.binary (upstream's pipeline)."""
    return ["coll-gpu-legalize-memcpy",
            f"gpu-lower-to-nvvm-pipeline{{cubin-chip={chip} cubin-features={features} "
            f"cubin-format={fmt} opt-level={opt_level}}}"]


# CPU_TO_LLVM with its dialect conversions replaced by convert-to-llvm, the
# one pass that knows the mpi dialect (it reads the module's dlti.map for
# the ABI); math-to-libm first, as convert-to-llvm would inline nothing.
MPI_TO_LLVM = CPU_TO_LLVM[:CPU_TO_LLVM.index("finalize-memref-to-llvm")] + (
    "convert-math-to-libm",
    "convert-to-llvm",
    "reconcile-unrealized-casts",
)


def mpi(implementation=None, shuffle_seed=None, tag_limit=None):
    """Explicit level -> the per-rank projection (coll-to-mpi: one module for
    every rank), its combines for the CPU, then the LLVM dialect. An SPMD
    function still here (local work around its collectives) has each
    collective lowered in place to its rank's part (coll-spmd-to-mpi). With
    `shuffle_seed` the explicit program is put in another valid order first
    (coll-shuffle): the projection posts every rank's messages in it."""
    elems = [] if shuffle_seed is None else [f"coll-shuffle{_opts(seed=shuffle_seed)}"]
    return elems + (["coll-spmd-to-mpi", f"coll-to-mpi{_opts(implementation=implementation, tag_limit=tag_limit)}",
                     "coll-mpi-static-scratch", "coll-to-cpu{tile=0}",
                     "coll-mpi-requests"] + list(MPI_TO_LLVM) + ["coll-mpi-abi"])


def shard(partition=True):
    """A tensor program annotated with shard.shard on a shard.grid -> its SPMD
    function on memrefs: upstream partitioning (coll-shard-partition; not
    with `partition=False`, for a program partitioned already), coll
    collectives (coll-from-shard), bufferized (coll-bufferize, then
    upstream's one-shot-bufferize); then `mpi` runs it."""
    return (["coll-shard-partition"] if partition else []) + [
        "coll-from-shard", "canonicalize", "cse", *bufferize(), "canonicalize", "cse"]


ROUTES = {"explicit": explicit, "cpu": cpu, "gpu": gpu, "nvvm": nvvm, "mpi": mpi, "shard": shard}


def pipeline(*parts):
    """'builtin.module(...)' of route parts (lists of elements)."""
    return text_of([_element(e) for part in parts for e in part])
