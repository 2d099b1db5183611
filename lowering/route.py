"""Lowering a module down a route (core/routes.py), as runtimes, coll-run,
coll-build and benchmarks do: the explicit part first, so that the chosen
strategies and the explicit program's traffic can be read, then the back
end's part. Errors are ir.MLIRError with located diagnostics."""
from dataclasses import dataclass

from mlir import ir

from ..analysis.stats import traffic_bytes
from ..core import routes
from ..core.errors import PassError
from ..core.pipeline import run
from ..ir import peers
from ..ir.kinds import ELEMENTS
from ..ir.ops import COLLECTIVE_OPS, COLLECTIVES, DATA_OPS, PEER_ACCESS, SHARED_MEMORY, view
from ..ir.views import VIEW_OPS
from ..ir.walk import find_ops
from .bufferize import has_tensors
from .gpu_local import LOCAL_BUFFER_OPS
from .spmd import has_local_work, is_spmd


# What each back end offers the strategies (ir/ops.py): the CPU's simulated
# devices share one address space, and coll-to-gpu's logical devices (on one
# GPU) address each other's memory; MPI ranks share nothing.
CAPABILITIES = {"cpu": (PEER_ACCESS, SHARED_MEMORY), "gpu": (PEER_ACCESS,), "mpi": ()}
PEER_BACKENDS = tuple(b for b, caps in CAPABILITIES.items() if PEER_ACCESS in caps)


@dataclass
class Lowered:
    strategies: list   # one per collective, in program order
    traffic: object    # bytes the explicit program moves (None: input was below it)
    pipeline: str      # the whole route, as coll-opt --pass-pipeline text
    scratch: int = 0   # bytes of the explicit program's coll.alloc buffers (an upper bound)


def lower(module_op, backend, strategy=None, threshold=None, profile=None, check_order=True,
          check_semantics=None, **options):
    """Lowers `module_op` in place (the tensor form bufferized first,
    routes.bufferize) through the explicit route and then
    `routes.ROUTES[backend](**options)` (backend None: stop at the
    explicit level). A module that holds an explicit program we did not
    lower ourselves (alone or next to collectives) is checked by
    coll-check-order and coll-check-semantics before the back end
    (`check_order=False`: neither, for chaos tests that run a racy program
    on purpose; `check_semantics` None: as `check_order`). A peer strategy
    asked for (oneshot, twoshot) on a back end in PEER_BACKENDS sets
    coll.peer_access, which holds there; `auto` chooses among the
    strategies the back end's CAPABILITIES allow."""
    if check_semantics is None:
        check_semantics = check_order
    front = routes.bufferize() if has_tensors(module_op) else []
    if front:  # the tensor form: buffers first, then as any memref program
        run(module_op, routes.pipeline(front))
    collectives = find_ops(module_op, lambda name: name in COLLECTIVES)
    asked = [strategy] + [view(op).strategy for op in collectives]
    if backend in PEER_BACKENDS and any(PEER_ACCESS in cls.needs(s) for cls in COLLECTIVE_OPS for s in asked):
        peers.enable(module_op)
    explicit = find_ops(module_op, lambda name: name in DATA_OPS)
    theirs = bool(explicit)  # checked after our lowering, which the checks also pass
    spmd_funcs = [f for f in find_ops(module_op, "func.func") if is_spmd(f)]
    # With local work around its collectives an SPMD function stays SPMD on
    # the mpi back end (its collectives lower in place, per rank); the
    # single-process back ends take its global view (coll-spmd-to-global:
    # one clone of the local work per rank).
    local = [f for f in spmd_funcs if has_local_work(f)] if backend == "mpi" else []
    spmd = bool(spmd_funcs) and not local
    if local:  # coll-spmd-to-mpi chooses and lowers, collective by collective
        choose = [f"coll-spmd-to-mpi{routes._opts(strategy=strategy, threshold=threshold, profile=profile)}"]
        back = routes.ROUTES[backend](**options)
        run(module_op, routes.pipeline(choose, back))
        return Lowered([], None, routes.pipeline(front, choose, back))
    choose = routes.explicit(None if strategy == "auto" else strategy, threshold, profile,
                             check_order=check_order and theirs,
                             check_semantics=check_semantics and theirs, spmd=spmd,
                             capabilities=CAPABILITIES.get(backend, ()))
    first = 2 if spmd else 1  # through coll-choose-strategy
    choose, rest = choose[:first], choose[first:]
    strategies, traffic = [], None
    if collectives or explicit:
        run(module_op, routes.pipeline(choose))
        strategies = [view(op).strategy for op in find_ops(module_op, lambda n: n in COLLECTIVES)]
        run(module_op, routes.pipeline(rest))
        traffic = traffic_bytes(module_op)
    if backend == "gpu" and "local_work" not in options:  # read on the global view
        options["local_work"] = gpu_local_work(module_op)
    back = routes.ROUTES[backend](**options) if backend else []
    scratch = sum(_bytes(op.results[0].type) for op in find_ops(module_op, "coll.alloc"))
    if back:
        run(module_op, routes.pipeline(back))
    return Lowered(strategies, traffic, routes.pipeline(front, choose, rest, back), scratch)


# Local ops the GPU route runs (as kernels, or host scalars and views).
GPU_LOCAL_PREFIXES = ("linalg.", "arith.", "math.", "func.")
GPU_LOCAL_OPS = VIEW_OPS + ("memref.memory_space_cast",) + LOCAL_BUFFER_OPS


def gpu_local_work(module_op):
    """Whether the module has local work for the GPU route (linalg ops to
    launch as kernels, local buffers to place in device memory). Raises PassError at a local op that it cannot run there (it
    would touch device memory from the host)."""
    found = False
    for f in find_ops(module_op, "func.func"):
        for block in f.regions[0].blocks:
            for op in block.operations:
                name = op.operation.name
                if name.startswith("coll.") or name in GPU_LOCAL_OPS:
                    continue
                if not name.startswith(GPU_LOCAL_PREFIXES):
                    raise PassError(f"'{name}' has no GPU lowering: local work on the GPU route runs as "
                                    "kernels (linalg ops), device memory is not the host's; expected linalg, "
                                    "arith or math ops around the collectives", op.location)
                found = found or name.startswith("linalg.") or name in LOCAL_BUFFER_OPS
    return found


def _bytes(type_):
    mt = ir.MemRefType(type_)
    el = ELEMENTS.get(str(mt.element_type))
    size = el.bytes if el else 8
    for d in mt.shape:
        size *= max(d, 0)
    return size
