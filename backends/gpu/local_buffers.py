"""coll-gpu-local-buffers: the local work's buffers on the GPU route.

The global view's local work (coll-spmd-to-global's clones, a frontend's
bufferized temporaries) allocates, frees and copies with memref ops, which
would run on the host over device memory. Here they become gpu.alloc,
gpu.dealloc and gpu.memcpy, each waited for at once (upstream gpu-to-llvm
lowers only their async forms; the host order is the program's, as for
the local kernels, see core/routes.py GPU_LOCAL_WORK).
"""
from mlir import ir
from mlir.dialects import gpu

from ...core.errors import PassError
from ...core.registry import register
from ...ir.views import VIEW_OPS
from ...ir.walk import find_ops

LOCAL_BUFFER_OPS = ("memref.alloc", "memref.dealloc", "memref.copy")


def _token():
    return ir.Type.parse("!gpu.async.token")


def _synchronous(make):
    """`make(deps)` as an async gpu op after a fresh token, then waited for."""
    start = gpu.WaitOp(_token(), []).result
    op = make([start])
    gpu.WaitOp(None, [op.results[-1]])
    return op


def _rewrite(op):
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
def gpu_local_buffers(op):
    for o in find_ops(op, lambda n: n in LOCAL_BUFFER_OPS):
        mt = ir.MemRefType(o.operands[0].type if o.name != "memref.alloc" else o.results[0].type)
        if mt.memory_space is None:  # placed buffers (#coll.device) are coll's own
            _rewrite(o)


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

