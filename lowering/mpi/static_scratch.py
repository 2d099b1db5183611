"""coll-mpi-static-scratch: a per-rank program's scratch in static memory."""
from mlir import ir
from mlir.dialects import memref

from ...core.registry import register
from ...ir.walk import find_ops


def static_scratch(module_op: ir.Operation) -> None:
    """Every coll.alloc of a per-rank program -> a buffer of its own in the
    module's static memory (memref.global, uninitialized: zero pages until
    touched, and only the rank whose case uses one touches it). MPI
    libraries keep their buffers too: a fresh malloc per call would fault
    in every page of a message received into it each call (measured here at
    under 1 GB/s, slower than the message itself). Scratch is only read
    after it is written (coll-check-order), so what a call leaves in it is
    never seen. A rank runs one call at a time. i1 scratch stays a
    coll.alloc: coll-to-cpu stores i1 as i8 by rewriting the types it
    sees, which a global's would escape."""
    allocs = [op for op in find_ops(module_op, "coll.alloc")
              if str(ir.MemRefType(op.results[0].type).element_type) != "i1"]
    body = module_op.regions[0].blocks[0]
    for i, op in enumerate(allocs):
        t = ir.MemRefType(op.results[0].type)
        plain = ir.MemRefType.get(t.shape, t.element_type)
        name = f"coll_scratch_{i}"
        with ir.InsertionPoint.at_block_begin(body), op.location:
            memref.GlobalOp(name, ir.TypeAttr.get(plain), sym_visibility="private",
                            initial_value=ir.UnitAttr.get(),
                            alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64))
        with ir.InsertionPoint(op), op.location:
            buf = memref.get_global(plain, name)
            op.results[0].replace_all_uses_with(memref.memory_space_cast(t, buf))
        op.erase()


@register("coll-mpi-static-scratch",
          "Per-rank programs: every coll.alloc becomes a static buffer (memref.global), kept across "
          "calls as MPI keeps its own, instead of a fresh malloc whose pages each call faults in",
          anchor="builtin.module")
def mpi_static_scratch(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        static_scratch(module_op)
