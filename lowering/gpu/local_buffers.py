"""The local work's buffers and loops on the GPU route.

coll-gpu-local-buffers: the global view's local work (coll-spmd-to-global's
clones, a frontend's bufferized temporaries) allocates, frees and copies
with memref ops, which would run on the host over device memory. Here they
become gpu.alloc, gpu.dealloc and gpu.memcpy, each waited for at once
(upstream gpu-to-llvm lowers only their async forms; coll-to-gpu then puts
them on its local stream, in the program's host order, as the local
kernels; see lowering/gpu/__init__.py GPU_LOCAL_WORK).

coll-gpu-collapse-parallel: the local kernels' loops in one dimension, so
that one tiling gives every kernel full blocks whatever its rank.
"""
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, gpu

from ...core.errors import PassError
from ...core.registry import register
from ...ir.views import VIEW_OPS
from ...ir.walk import find_ops

LOCAL_BUFFER_OPS = ("memref.alloc", "memref.dealloc", "memref.copy")


def _token() -> ir.Type:
    return ir.Type.parse("!gpu.async.token")


def _synchronous(make: Callable[[list[ir.Value]], ir.OpView]) -> ir.OpView:
    """`make(deps)` as an async gpu op after a fresh token, then waited for."""
    start = gpu.WaitOp(_token(), []).result
    op = make([start])
    gpu.WaitOp(None, [op.results[-1]])
    return op


def _rewrite(op: ir.Operation) -> None:
    name = op.name
    with ir.InsertionPoint(op), op.location:
        if name == "memref.alloc":
            if len(op.operands):
                return  # dynamic sizes: left for the check to refuse
            new = _synchronous(lambda deps: gpu.AllocOp(op.results[0].type, _token(), deps, [], []))
            op.results[0].replace_all_uses_with(new.results[0])
        elif name == "memref.dealloc":
            _synchronous(lambda deps: gpu.DeallocOp(_token(), deps, op.operands[0]))
        else:
            _synchronous(lambda deps: gpu.MemcpyOp(_token(), deps, op.operands[1], op.operands[0]))
    op.erase()


@register("coll-gpu-local-buffers",
          "On the GPU route, the local work's memref.alloc, memref.dealloc and memref.copy become "
          "gpu.alloc, gpu.dealloc and gpu.memcpy (device memory), each waited for at once")
def gpu_local_buffers(op: ir.Operation) -> None:
    for o in find_ops(op, lambda n: n in LOCAL_BUFFER_OPS):
        mt = ir.MemRefType(o.operands[0].type if o.name != "memref.alloc" else o.results[0].type)
        if mt.memory_space is None:  # placed buffers (#coll.device) are coll's own
            _rewrite(o)


# -- the local kernels' iteration spaces ---------------------------------------------

def _collapse(loop: ir.Operation) -> None:
    """A multi-dimensional scf.parallel as a 1-D one over the linearized
    iteration space (last dimension fastest), its indices recovered by
    division: then every rank tiles the same way and consecutive threads
    walk the innermost (contiguous) dimension."""
    index = ir.IndexType.get()
    op = loop.operation
    rank = len(op.regions[0].blocks[0].arguments)
    lbs, ubs, steps = (list(op.operands)[k * rank:(k + 1) * rank] for k in range(3))
    with ir.InsertionPoint(op), op.location:
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
        extents: list[ir.Value] = []
        for lb, ub, step in zip(lbs, ubs, steps):
            extents.append(arith.ceildivui(arith.subi(ub, lb), step))
        total = extents[0]
        for e in extents[1:]:
            total = arith.muli(total, e)
        new = ir.Operation.create(
            "scf.parallel", operands=[zero, total, one],
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])}, regions=1)
    body = new.regions[0].blocks.append(index, arg_locs=[op.location])
    old = op.regions[0].blocks[0]
    with ir.InsertionPoint(body), op.location:
        rest = body.arguments[0]
        ivs: dict[int, ir.Value] = {}  # per dimension, its index
        for k in reversed(range(rank)):
            i = arith.remui(rest, extents[k]) if k else rest
            if k:
                rest = arith.divui(rest, extents[k])
            ivs[k] = arith.addi(lbs[k], arith.muli(i, steps[k]))
    for k in range(rank):
        old.arguments[k].replace_all_uses_with(ivs[k])
    for inner in list(old.operations):  # the body, its scf.reduce terminator last
        inner.operation.move_after(body.operations[len(body.operations) - 1])
    op.erase()


@register("coll-gpu-collapse-parallel",
          "Collapse every multi-dimensional scf.parallel without reductions into one dimension "
          "(last dimension fastest), so that scf-parallel-loop-tiling gives every local kernel "
          "full blocks whatever its rank")
def gpu_collapse_parallel(op: ir.Operation) -> None:
    for loop in find_ops(op, "scf.parallel"):
        o = loop.operation
        rank = len(o.regions[0].blocks[0].arguments)
        if rank > 1 and not len(o.results) and not _nested_in_parallel(o):
            _collapse(o)


def _nested_in_parallel(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.parallel":
            return True
        parent = parent.parent
    return False

# Local ops the GPU route runs (as kernels, or host scalars and views).
GPU_LOCAL_PREFIXES = ("linalg.", "arith.", "math.", "func.")
GPU_LOCAL_OPS = VIEW_OPS + ("memref.memory_space_cast",) + LOCAL_BUFFER_OPS


def gpu_local_work(module_op: ir.Operation | ir.Module) -> bool:
    """Whether the module has local work for the GPU route (linalg ops to
    launch as kernels, local buffers to place in device memory). Raises
    PassError at a local op that it cannot run there (it would touch device memory from the host)."""
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



# -- the local kernels' names --------------------------------------------------------

@register("coll-gpu-kernel-names",
          "Name every outlined kernel after its gpu.module (gpu-kernel-outlining names each after the "
          "function it came from: several kernels of one function share a name)",
          anchor="builtin.module")
def gpu_kernel_names(op: ir.Operation) -> None:
    """A kernel's name is what a profiler, a sanitizer and coll's GPU
    emulator (tests/unit/gpu_emulator.py) see of it; outlining names every
    kernel of @step `step_kernel`, each in its own module (step_kernel,
    step_kernel_0, ...). Renamed to the module's name, launches included."""
    renamed: dict[tuple[str, str], str] = {}
    for module in find_ops(op, "gpu.module"):
        mod = ir.StringAttr(module.attributes["sym_name"]).value
        funcs = [f for f in module.regions[0].blocks[0].operations if f.operation.name == "gpu.func"]
        if len(funcs) != 1 or "gpu.kernel" not in funcs[0].operation.attributes:
            continue  # (coll's own kernel module, or one not outlined)
        f = funcs[0].operation
        old = ir.StringAttr(f.attributes["sym_name"]).value
        if old != mod:
            f.attributes["sym_name"] = ir.StringAttr.get(mod)
            renamed[(mod, old)] = mod
    for launch in find_ops(op, "gpu.launch_func"):
        ref = ir.SymbolRefAttr(launch.attributes["kernel"])
        path = list(ref.value)
        if len(path) == 2 and (path[0], path[1]) in renamed:
            launch.attributes["kernel"] = ir.SymbolRefAttr.get([path[0], renamed[(path[0], path[1])]])
