"""coll-static-local-buffers: a frontend's local buffers in static memory.

Bufferization gives every intermediate of a program's local work (a
matmul's result, a collective's output) a `memref.alloc`, freed at the end
of the function (coll-free-local-buffers). A large malloc is a fresh mmap,
so every call faulted each such buffer's pages in again: all_reduce +
residual + RMSNorm at 8 x 16 MiB spent 60 of its 123 ms per call in page
faults (bench/epilogue.py, unfused; 62 ms with glibc told to keep its
memory), and the JAX corpus 10-30% of its time. As the CPU route's scratch
(scratch.py) and XLA's buffer assignment do, each such buffer becomes a
`memref.global`, allocated once per compiled program; buffers of one type
whose lifetimes in the block do not overlap share one global, so the
static memory is about the peak of what was live at once.

A buffer's lifetime runs from its alloc to the last op of the block that
uses it or anything computed from it (a view, a pointer taken from it, a
request of a message into it, a value loaded from it: transitively), and
to the block's end where such a value is stored into memory or handed to
a call (ESCAPES: SSA no longer shows who holds it). Only allocations of a
one-block function's own block, with one dealloc there (they do not
escape) and static shapes without a layout, are taken, up to MAX_BYTES
each and MAX_TOTAL per module; i1 buffers stay (coll-to-cpu stores i1 as
i8 by rewriting the types it sees, which a global's would escape), and so
do the buffers of a function that may call itself (directly, through
others, or through a call of a function's address). A program runs one call at a time (the runtimes hold
a lock, an MPI rank is one process), as static scratch needs.
"""
from mlir import ir
from mlir.dialects import memref

from ...core.registry import register
from ...ir.ops import DEVICE_ATTR
from .kernels import buffer_bytes
from .scratch import Scratch

# Static memory is committed when the JIT loads the program (a heap buffer
# only as it is touched): a buffer larger than MAX_BYTES, or past MAX_TOTAL
# in one module, stays on the heap (an outside attack's 1 GiB buffer, of
# which it touched 256 bytes, took 1.2 GiB of memory; 64 GiB aborted LLVM).
MAX_BYTES = 256 << 20
MAX_TOTAL = 2 << 30


# Where a value computed from a buffer (its pointer, say) may be kept
# beyond what SSA shows: stored into memory, or handed to a function. The
# buffer then lives to the end of the block (an outside attack stored a
# pointer and read through it after the buffer's last visible use).
ESCAPES = ("memref.store", "llvm.store", "func.call", "func.call_indirect", "llvm.call", "memref.atomic_rmw",
           "memref.generic_atomic_rmw")


def _top(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """The op of `block` that holds `op` (op itself if it is in `block`);
    None if `block` does not hold it."""
    while op.block != block:
        parent = op.parent
        if parent is None or parent.name in ("func.func", "builtin.module"):
            return None
        op = parent
    return op


def _lifetimes(block: ir.Block) -> list[tuple[ir.Operation, ir.Operation, int, int]]:
    """(alloc, dealloc, first position, last position of a use) per buffer
    taken; a buffer whose pointer may escape lives to the block's end."""
    position = {op.operation: i for i, op in enumerate(block.operations)}
    end = len(position)
    last: dict[ir.Value, int] = {}

    def users(v: ir.Value) -> list[tuple[ir.Operation, int, list[ir.Value]]]:
        """(user, its position in the block, values computed from `v` there)
        per use: a nested user's results, and its top-level op's (what a
        region yields); the block's end where the value may escape."""
        out = []
        for use in v.uses:
            user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
            top = _top(user, block)
            stored_into = user.name in ("memref.store", "llvm.store") and use.operand_number != 0
            escapes = top is None or (user.name in ESCAPES and not stored_into)
            at = end if escapes or top is None else position[top]
            held = list(top.results) if top is not None and top != user else []
            out.append((user, at, list(user.results) + held))
        return out

    def reach(root: ir.Value, skip: ir.Operation) -> int:
        """The last position of an op that uses `root` or a value computed
        from it, `skip` (its dealloc) aside (iterative: chains are long)."""
        stack: list[tuple[ir.Value, bool]] = [(root, False)]
        while stack:
            v, done = stack.pop()
            if v in last:
                continue
            uses = [(u, at, rs) for u, at, rs in users(v) if u != skip]
            if not done:
                stack.append((v, True))
                stack.extend((r, False) for _, _, rs in uses for r in rs if r not in last)
                continue
            last[v] = max([-1] + [max([at] + [last.get(r, -1) for r in rs]) for _, at, rs in uses])
        return last[root]

    out = []
    for op in block.operations:
        if op.operation.name != "memref.alloc" or len(op.operands):
            continue
        t = ir.MemRefType(op.results[0].type)
        if not t.has_static_shape or str(t.element_type) == "i1" \
                or t != ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space):
            continue  # (a layout: the global's type would be another)
        deallocs = [u.owner.operation if isinstance(u.owner, ir.OpView) else u.owner
                    for u in op.results[0].uses if u.owner.operation.name == "memref.dealloc"]
        if len(deallocs) != 1 or deallocs[0].block != block:
            continue
        dealloc = deallocs[0]
        alloc = op.operation
        out.append((alloc, dealloc, position[alloc], reach(op.results[0], dealloc)))
    return out


INDIRECT = ""  # (the callee of an indirect call: no symbol has this name)


def _recursive(functions: list[ir.Operation]) -> set[str]:
    """The functions that may call themselves (through others too): a
    static buffer would serve every activation at once."""
    calls: dict[str, set[str]] = {}
    taken: set[str] = set()  # functions whose address is taken: any indirect call may reach them

    def callees_of(f: ir.Operation) -> set[str]:
        found: set[str] = set()

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in ("func.call", "llvm.call") and "callee" in op.attributes:
                found.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            elif op.name in ("func.call_indirect", "llvm.call"):
                found.add(INDIRECT)
            elif op.name == "func.constant":
                taken.add(ir.FlatSymbolRefAttr(op.attributes["value"]).value)
            elif op.name == "llvm.mlir.addressof":
                taken.add(ir.FlatSymbolRefAttr(op.attributes["global_name"]).value)
            return ir.WalkResult.ADVANCE
        f.walk(visit, ir.WalkOrder.POST_ORDER)
        return found
    for f in functions:
        calls[ir.StringAttr(f.attributes["sym_name"]).value] = callees_of(f)
    for callees in calls.values():
        if INDIRECT in callees:
            callees |= taken
    out = set()
    for name in calls:
        seen, todo = set(), list(calls[name])
        while todo:
            c = todo.pop()
            if c == name:
                out.add(name)
                break
            if c not in seen:
                seen.add(c)
                todo.extend(calls.get(c, ()))
    return out


def static_local_buffers(module_op: ir.Operation) -> None:
    """Every function's own static, non-escaping local buffers -> globals,
    shared between buffers of one type whose lifetimes do not overlap;
    not in a function that may call itself."""
    scratch = Scratch(module_op, "static")
    functions = [f.operation for f in module_op.regions[0].blocks[0].operations if f.operation.name == "func.func"]
    recursive = _recursive(functions)
    total = 0
    for f in functions:
        if len(f.regions[0].blocks) != 1 or ir.StringAttr(f.attributes["sym_name"]).value in recursive:
            continue  # (several blocks: control flow may come back; lifetimes are the entry block's)
        block = f.regions[0].blocks[0]
        # (type, device) -> (end of its last user, global's name): buffers of
        # two devices never share (coll-parallel-devices runs devices at once)
        free: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for alloc, dealloc, start, end in _lifetimes(block):
            t = ir.MemRefType(alloc.results[0].type)
            plain = ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space)
            key = (str(plain), str(alloc.attributes[DEVICE_ATTR]) if DEVICE_ATTR in alloc.attributes else "")
            pool = free.setdefault(key, [])
            reuse = next((i for i, (busy_until, _) in enumerate(pool) if busy_until < start), None)
            size = buffer_bytes(plain)
            if reuse is None and (size > MAX_BYTES or total + size > MAX_TOTAL):
                continue  # (static memory is committed when the program loads: this one stays on the heap)
            with ir.InsertionPoint(alloc), alloc.location:
                if reuse is None:
                    total += size
                    buf = scratch.buffer(plain)
                    pool.append((end, ir.FlatSymbolRefAttr(buf.owner.attributes["name"]).value))
                else:
                    buf = memref.get_global(plain, pool[reuse][1])
                    pool[reuse] = (end, pool[reuse][1])
                if buf.type != t:
                    buf = memref.cast(t, buf)
            alloc.results[0].replace_all_uses_with(buf)
            dealloc.erase()
            alloc.erase()


@register("coll-static-local-buffers",
          "Every function's own local buffers (memref.alloc of a static shape, freed in its block) become "
          "static memory (memref.global), allocated once per program and shared between buffers of one "
          "type whose lifetimes do not overlap, instead of a fresh malloc whose pages each call faults in",
          anchor="builtin.module")
def static_local_buffers_pass(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        static_local_buffers(module_op)
