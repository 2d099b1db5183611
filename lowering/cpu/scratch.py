"""Scratch buffers of CPU programs: static (allocated once per compiled
program) or on the heap (allocated and freed at every call).

A fresh malloc of a large buffer is a fresh mmap: every call faults its
pages in again (untiled rhd on 8 x 64 MiB: 114,000 faults per call). Static
scratch is a `memref.global` per buffer (uninitialized: the JIT zero-fills
it once, when it loads the program, so even the first call faults none in),
as the MPI back end keeps its own (lowering/mpi/toolchain.py,
coll-mpi-static-scratch). Scratch is only read after it
is written (coll-check-order), so what one call leaves there is never seen
by the next. A buffer is its block's: reusing it on every pass of a loop
is what the heap form does too. What a static buffer cannot do is serve
two calls at once, so a program runs one call at a time (the CPU runtime
holds a lock around each call), and no function that holds scratch may
call itself.
"""
from mlir import ir
from mlir.dialects import memref

from ...ir.walk import symbol

ALIGNMENT = 64
MODES = ("static", "heap")
PREFIX = "coll_cpu_scratch_"
MADE_ATTR = "coll.made"  # on the memref.global ops `Scratch.buffer` makes


class Scratch:
    """Allocates the scratch buffers of one module (`mode`: MODES; heap
    needs no module)."""

    def __init__(self, module_op: ir.Operation | None, mode: str = "static") -> None:
        self.static = mode == "static"
        body = module_op.regions[0].blocks[0] if self.static and module_op is not None else None
        self.body = body
        self.taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in body.operations
                      if "sym_name" in op.attributes} if body is not None else set()
        self.count = 0
        self.last: ir.OpView | None = None  # the last global made: the next goes after it

    def buffer(self, memref_type: ir.Type) -> ir.Value:
        """A buffer of `memref_type`, at the current insertion point."""
        t = ir.MemRefType(memref_type)
        if not (self.static and t.has_static_shape):
            return memref.alloc(t, [], [], alignment=ALIGNMENT)
        assert self.body is not None  # (static: made with its module)
        name = f"{PREFIX}{self.count}"
        while name in self.taken:
            self.count += 1
            name = f"{PREFIX}{self.count}"
        self.taken.add(name)
        if self.last is not None:
            ip = ir.InsertionPoint.after(self.last)
        else:
            first = next(iter(self.body.operations), None)
            ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(self.body)
        with ip:
            self.last = memref.GlobalOp(name, ir.TypeAttr.get(t), sym_visibility="private",
                                        initial_value=ir.UnitAttr.get(),
                                        alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), ALIGNMENT))
            self.last.attributes[MADE_ATTR] = ir.UnitAttr.get()
        return memref.get_global(t, name)

    @staticmethod
    def made_here(get_global: ir.Operation) -> bool:
        """Whether a memref.get_global names a buffer made by `buffer`
        (MADE_ATTR): scratch, or a local buffer (local_buffers.py), whose
        value nothing reads before writing it; not a global of the user's,
        whose value lives on between uses and calls."""
        glob = symbol(get_global, ir.FlatSymbolRefAttr(get_global.attributes["name"]).value)
        return glob is not None and MADE_ATTR in glob.attributes

    @staticmethod
    def unmark(module_op: ir.Operation) -> None:
        """Drops MADE_ATTR from the module's globals (read by coll-to-cpu's
        tiling only: nothing of coll is left after it)."""
        for op in module_op.regions[0].blocks[0].operations:
            if op.operation.name == "memref.global" and MADE_ATTR in op.operation.attributes:
                del op.operation.attributes[MADE_ATTR]

    @staticmethod
    def free(buf: ir.Value) -> None:
        """Frees `buf` at the current insertion point if it is on the heap."""
        if not isinstance(buf.owner, ir.Block) and buf.owner.name == "memref.alloc":
            memref.dealloc(buf)
