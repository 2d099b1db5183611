"""Large explicit programs on the CPU, emitted at the pointer level.

At 64 devices a program is ~12,000 copies and combines. Through memref
views every one of them costs ~40 ops in the LLVM-dialect conversion
(descriptors, subviews, casts) and a function with hundreds of memref
parameters costs LLVM superlinear time. Here each copy is a memcpy between
two pointers and each combine a call of the shared kernel on pointers
(cpu_shared.py), a few ops each, in functions of at most `limit` ops called
in program order; a function reads the base pointers it needs from one
table (entry arguments, then the scratch arena), so it has one parameter.

Scratch buffers live in one arena at offsets given by their lifetimes in
program order: a buffer's bytes are reused once its last reader has run.
Only straight-line blocks of contiguous static views (what
coll-lower-all-reduce emits) take this path; lowering/cpu/to_cpu.py does the rest.
"""
from collections.abc import Hashable

from mlir import ir
from mlir.dialects import arith, func, llvm, memref

from ..stored_types import llvm_element
from . import fuse as cpu_fuse
from .fuse import Access
from .kernels import buffer_bytes, combine_element, element_bytes
from .scratch import Scratch
from .shared import Kernels, create, i64, inline_entry, no_inline, ptr_type

Work = list[tuple[ir.Operation, list[Access]]]  # (copy or combine, its accesses)

ALIGN = 64
WORK = ("coll.copy", "coll.combine")
# Programs on buffers of at most this many bytes take this path when they
# are large (lowering/cpu/to_cpu.py); larger buffers are tiled (fuse.py).
MAX_BUFFER_BYTES = 4 << 20


def _plan(block: ir.Block, limit: int, max_bytes: int) -> tuple[list[ir.Operation], Work] | None:
    """(ops, accesses per work op) when `block` takes this path, else None."""
    ops = [op.operation for op in block.operations]
    work = [op for op in ops if op.name in WORK]
    if len(work) <= limit or ops[-1].operands:
        return None
    if any(op.name not in cpu_fuse.BENIGN_OPS + WORK for op in ops):
        return None
    accesses: list[list[Access]] = []
    memo: dict[ir.Value, tuple[ir.Value, int] | None] = {}
    for op in work:
        acc = cpu_fuse._accesses(op, memo)
        if acc is None or len({a.length for a in acc}) != 1:
            return None
        accesses.append(acc)
    roots = {a.root for acc in accesses for a in acc}
    if any(buffer_bytes(r.type) > max_bytes or buffer_bytes(r.type) >= 2**31 for r in roots):
        return None  # large buffers: tiling (cpu_fuse.py) pays off
    return ops, list(zip(work, accesses))


def _types(op: ir.Operation) -> list[ir.Type]:
    """The element type of each of `op`'s accesses (reads, then writes)."""
    return [ir.MemRefType(v.type).element_type for v in cpu_fuse._views(op)]


def _arena(work: Work) -> tuple[dict[ir.Value, int], int]:
    """Byte offset of every scratch buffer in one arena, and its size:
    first fit among the freed blocks of the same size, else a new block."""
    first: dict[ir.Value, int] = {}
    last: dict[ir.Value, int] = {}
    for i, (_, acc) in enumerate(work):
        for a in acc:
            if not isinstance(a.root.owner, ir.Block):
                first.setdefault(a.root, i)
                last[a.root] = i
    ends: dict[int, list[ir.Value]] = {}
    for r, i in last.items():
        ends.setdefault(i, []).append(r)
    offsets: dict[ir.Value, int] = {}
    free: dict[int, list[int]] = {}
    top = 0
    starts: dict[int, list[ir.Value]] = {}
    for r, i in first.items():
        starts.setdefault(i, []).append(r)
    for i in range(len(work)):
        for r in starts.get(i, ()):
            size = -(-buffer_bytes(r.type) // ALIGN) * ALIGN
            if free.get(size):
                offsets[r] = free[size].pop()
            else:
                offsets[r], top = top, top + size
        for r in ends.get(i, ()):
            size = -(-buffer_bytes(r.type) // ALIGN) * ALIGN
            free.setdefault(size, []).append(offsets[r])
    return offsets, top


def lower(func_op: ir.Operation, kernels: Kernels, limit: int, max_bytes: int, scratch: Scratch) -> list[str]:
    """Emits `func_op`'s program at the pointer level in place of its coll
    ops, its arena allocated by `scratch` (a scratch.Scratch); returns the
    names of the functions it made, [] (nothing changed) when it does not
    take this path. Raises ValueError (with the op) for a kind its element type has not."""
    block = func_op.regions[0].blocks[0]
    plan = _plan(block, limit, max_bytes)
    if plan is None:
        return []
    ops, work = plan
    for op, acc in work:  # every kernel exists before anything is emitted
        if op.name == "coll.combine":
            kind = ir.StringAttr(op.attributes["kind"]).value
            try:
                elem, mixed = combine_element(cpu_fuse._views(op))
                kernels.function(kind, elem, len(acc) - 1, types=_types(op) if mixed else ())
            except ValueError as e:
                raise ValueError(str(e), op) from None
    offsets, arena_bytes = _arena(work)
    roots = {x.root for _, acc in work for x in acc}
    args = [a for a in block.arguments if a in roots]
    slots = {a: k for k, a in enumerate(args)}
    name = ir.StringAttr(func_op.attributes["sym_name"]).value
    with func_op.location:
        with ir.InsertionPoint(ops[0]):
            table = memref.alloca(ir.MemRefType.get([len(args) + 1], i64()), [], [])
            for a, k in slots.items():
                _store_ptr(a, table, k)
            arena = None
            if arena_bytes:
                arena = scratch.buffer(ir.MemRefType.get([arena_bytes], ir.IntegerType.get_signless(8)))
                _store_ptr(arena, table, len(args))
            addr = arith.index_cast(i64(), memref.extract_aligned_pointer_as_index(table))
            (tptr,) = create("llvm.inttoptr", [ptr_type()], [addr])
        parts = [work[i:i + limit] for i in range(0, len(work), limit)]
        for k, part in enumerate(parts):
            pname = f"{name}_part{k}"
            with ir.InsertionPoint(func_op):
                f = func.FuncOp(pname, ir.FunctionType.get([ptr_type()], []), visibility="private")
                no_inline(f, optimize=False)
                entry = f.add_entry_block()
            with ir.InsertionPoint(entry):
                _Part(entry.arguments[0], slots, offsets, len(args), kernels).emit(part)
                func.ReturnOp([])
            with ir.InsertionPoint(ops[0]):
                func.call([], ir.FlatSymbolRefAttr.get(pname), [tptr])
        if arena is not None:
            with ir.InsertionPoint(ops[-1]):
                scratch.free(arena)
    for op in reversed(ops[:-1]):
        op.erase()
    inline_entry(func_op)
    return [f"{name}_part{k}" for k in range(len(parts))]


def _store_ptr(buf: ir.Value, table: ir.Value, k: int) -> None:
    addr = arith.index_cast(i64(), memref.extract_aligned_pointer_as_index(buf))
    memref.store(addr, table, [arith.constant(ir.IndexType.get(), k)])


class _Part:
    """Emits the copies and combines of one function on pointers."""

    def __init__(self, table: ir.Value, slots: dict[ir.Value, int], offsets: dict[ir.Value, int],
                 arena_slot: int, kernels: Kernels) -> None:
        self.table, self.slots, self.offsets = table, slots, offsets
        self.arena_slot, self.kernels = arena_slot, kernels
        self.bases: dict[Hashable, ir.Value] = {}  # slot k, or ("arena", offset)
        self.consts: dict[int, ir.Value] = {}

    def _gep(self, base: ir.Value, k: int, elem: ir.Type) -> ir.Value:
        return llvm.getelementptr(ptr_type(), base, [], ir.DenseI32ArrayAttr.get([k]), llvm_element(elem),
                                  llvm.GEPNoWrapFlags.inbounds if hasattr(llvm, "GEPNoWrapFlags") else 0)

    def _slot(self, k: int) -> ir.Value:
        if k not in self.bases:
            at = self._gep(self.table, k, i64()) if k else self.table
            self.bases[k] = llvm.load(ptr_type(), at)
        return self.bases[k]

    def _const(self, v: int) -> ir.Value:
        if v not in self.consts:
            (self.consts[v],) = create("llvm.mlir.constant", [i64()], [], value=ir.IntegerAttr.get(i64(), v))
        return self.consts[v]

    def _at(self, a: Access, elem: ir.Type) -> ir.Value:
        root = a.root
        if root in self.slots:
            base = self._slot(self.slots[root])
        else:
            base = self._slot(self.arena_slot)
            off = self.offsets[root]
            if off:
                key = ("arena", off)
                if key not in self.bases:
                    self.bases[key] = self._gep(base, off, ir.IntegerType.get_signless(8))
                base = self.bases[key]
        return self._gep(base, a.start, elem) if a.start else base

    def emit(self, work: Work) -> None:
        for op, acc in work:
            with op.location:
                types = _types(op)  # per access (a 16-bit chain's partials are f32)
                ptrs = [self._at(a, t) for a, t in zip(acc, types)]
                n = acc[0].length
                if op.name == "coll.copy":
                    self.kernels.copy(ptrs[1], ptrs[0], self._const(n * element_bytes(types[0])))
                else:
                    kind = ir.StringAttr(op.attributes["kind"]).value
                    elem, mixed = combine_element(cpu_fuse._views(op))
                    self.kernels.call_ptrs(kind, elem, ptrs, self._const(n), types=types if mixed else ())
