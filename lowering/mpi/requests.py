"""coll-mpi-requests: mpi.isend/irecv/wait -> calls into the shim.

Upstream's `convert-to-llvm` (22.1.8) lowers comm_world, comm_rank,
init/finalize, send/recv and allreduce, for the ABI that the module's
`dlti.map<"MPI:Implementation" = ...>` names; it leaves isend, irecv and
wait in the IR and still succeeds. Those three become calls into
lowering/mpi/shim.c (built with the MPI's own mpicc, so it fits either
ABI: toolchain.py), before upstream runs.
"""
from mlir import ir
from mlir.dialects import arith, func, llvm, memref

from ...core.errors import PassError
from ...core.registry import register
from ...ir.kinds import ELEMENTS
from ...ir.types import contiguous, numel
from ...ir.walk import find_ops
from .abi import implementation_of

_SHIM_CALLS = {"mpi.isend": "coll_mpi_isend", "mpi.irecv": "coll_mpi_irecv", "mpi.wait": "coll_mpi_wait"}


def _pointer_and_bytes(buf: ir.Value, op: ir.Operation) -> tuple[ir.Value, ir.Value]:
    """(!llvm.ptr to the first element, i64 byte count) of a contiguous
    memref: a message is the buffer's bytes."""
    m = ir.MemRefType(buf.type)
    if not (m.has_static_shape and contiguous(m)):
        raise PassError(f"{op.name}: the buffer {m} is not a contiguous static memref; "
                        "expected one message per contiguous buffer or slice", op.location)
    element = ELEMENTS.get(str(m.element_type))
    if element is None:
        raise PassError(f"{op.name}: unsupported element type {m.element_type}", op.location)
    idx, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
    base = memref.ExtractAlignedPointerAsIndexOp(buf).result
    meta = memref.ExtractStridedMetadataOp(buf)
    size = arith.ConstantOp(idx, element.bytes).result
    addr = arith.AddIOp(base, arith.MulIOp(meta.offset, size).result).result
    ptr = llvm.IntToPtrOp(llvm.PointerType.get(), arith.IndexCastOp(i64, addr).result).result
    return ptr, arith.ConstantOp(i64, numel(m) * element.bytes).result


def hoist_rank_queries(module_op: ir.Operation) -> None:
    """Moves every mpi.comm_world and mpi.comm_rank to the start of its
    function's entry block: upstream's convert-to-llvm (22.1.8) lowers
    comm_rank with an llvm.alloca where the op stands, so one in a loop
    body grows the stack at every iteration (a collective in an scf.for of
    10^6 passes overflowed it). The rank of a process never changes, and
    neither has an operand but the communicator."""
    for f in find_ops(module_op, "func.func"):
        blocks = f.regions[0].blocks
        if not len(blocks):
            continue
        entry = blocks[0]
        found = [op.operation for op in find_ops(f, lambda n: n in ("mpi.comm_world", "mpi.comm_rank"))]
        prev = None
        for op in sorted(found, key=lambda o: o.name != "mpi.comm_world"):  # the communicators first
            comm = op.operands[0].owner if op.name == "mpi.comm_rank" else None
            comm = getattr(comm, "operation", comm)
            if comm is not None and (not isinstance(comm, ir.Operation) or comm.name != "mpi.comm_world"):
                continue  # (a communicator we did not hoist)
            if prev is not None:
                op.move_after(prev)
            elif op != entry.operations[0].operation:
                op.move_before(entry.operations[0])
            prev = op


def lower_requests(module_op: ir.Operation) -> None:
    """mpi.isend/irecv/wait -> func.call of the shim; requests are !llvm.ptr."""
    ops = find_ops(module_op, lambda n: n in _SHIM_CALLS)
    if not ops:
        return
    ptr, i32, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    requests: dict[ir.Value, ir.Value] = {}
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            if op.name == "mpi.wait":
                func.CallOp([i32], _SHIM_CALLS[op.name], [requests[op.operands[0]]])
                continue
            buf, tag, peer = op.operands[0], op.operands[1], op.operands[2]
            p, n = _pointer_and_bytes(buf, op)
            call = func.CallOp([ptr], _SHIM_CALLS[op.name], [p, n, peer, tag])
            requests[op.results[len(op.results) - 1]] = call.result
    for op in reversed(ops):  # waits (the users) first
        op.erase()
    body = module_op.regions[0].blocks[0]
    with ir.InsertionPoint(body), module_op.location:
        for name, args, res in (("coll_mpi_isend", [ptr, i64, i32, i32], [ptr]),
                                ("coll_mpi_irecv", [ptr, i64, i32, i32], [ptr]),
                                ("coll_mpi_wait", [ptr], [i32])):
            f = func.FuncOp(name, ir.FunctionType.get(args, res))
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")


@register("coll-mpi-requests",
          "Lower mpi.isend/irecv/wait (which upstream convert-to-llvm leaves in the IR) to calls into "
          "the MPI shim (lowering/mpi/shim.c); requests become !llvm.ptr", anchor="builtin.module")
def mpi_requests(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        if implementation_of(module_op) is None and find_ops(module_op, lambda n: n.startswith("mpi.")):
            raise PassError('the module needs dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI"> '
                            '(or "MPICH"): upstream picks the MPI ABI from it', module_op.location)
        hoist_rank_queries(module_op)
        lower_requests(module_op)
