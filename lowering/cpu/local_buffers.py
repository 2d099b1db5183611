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
request of a message into it, a value loaded from it: transitively, so no
alias outlives it unseen). Only allocations of the function's own block
with one dealloc there (they do not escape) and static shapes are taken;
i1 buffers stay (coll-to-cpu stores i1 as i8 by rewriting the types it
sees, which a global's would escape), and so do the buffers of a function
that may call itself. A program runs one call at a time (the runtimes hold
a lock, an MPI rank is one process), as static scratch needs.
"""
from mlir import ir
from mlir.dialects import memref

from ...core.registry import register
from .scratch import Scratch


def _top(op: ir.Operation, block: ir.Block) -> ir.Operation:
    """The op of `block` that holds `op` (op itself if it is in `block`)."""
    while op.block != block:
        parent = op.parent
        assert parent is not None  # (op is nested in block)
        op = parent
    return op


def _lifetimes(block: ir.Block) -> list[tuple[ir.Operation, ir.Operation, int, int]]:
    """(alloc, dealloc, first position, last position of a use) per buffer taken."""
    position = {op.operation: i for i, op in enumerate(block.operations)}
    last: dict[ir.Value, int] = {}

    def users(v: ir.Value) -> list[tuple[ir.Operation, list[ir.Value]]]:
        """(top-level position holder, values computed from `v` there) per use:
        a nested user's results, and its top-level op's (what a region yields)."""
        out = []
        for use in v.uses:
            user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
            top = _top(user, block)
            out.append((user, list(user.results) + (list(top.results) if top != user else [])))
        return out

    def reach(root: ir.Value, skip: ir.Operation) -> int:
        """The last position of an op that uses `root` or a value computed
        from it, `skip` (its dealloc) aside (iterative: chains are long)."""
        stack: list[tuple[ir.Value, bool]] = [(root, False)]
        while stack:
            v, done = stack.pop()
            if v in last:
                continue
            uses = [(u, rs) for u, rs in users(v) if u != skip]
            if not done:
                stack.append((v, True))
                stack.extend((r, False) for _, rs in uses for r in rs if r not in last)
                continue
            last[v] = max([-1] + [max([position[_top(u, block)]] + [last.get(r, -1) for r in rs])
                                  for u, rs in uses])
        return last[root]

    out = []
    for op in block.operations:
        if op.operation.name != "memref.alloc" or len(op.operands):
            continue
        t = ir.MemRefType(op.results[0].type)
        if not t.has_static_shape or str(t.element_type) == "i1":
            continue
        deallocs = [u.owner.operation if isinstance(u.owner, ir.OpView) else u.owner
                    for u in op.results[0].uses if u.owner.operation.name == "memref.dealloc"]
        if len(deallocs) != 1 or deallocs[0].block != block:
            continue
        dealloc = deallocs[0]
        alloc = op.operation
        out.append((alloc, dealloc, position[alloc], reach(op.results[0], dealloc)))
    return out


def _recursive(functions: list[ir.Operation]) -> set[str]:
    """The functions that may call themselves (through others too): a
    static buffer would serve every activation at once."""
    calls: dict[str, set[str]] = {}
    def callees_of(f: ir.Operation) -> set[str]:
        found: set[str] = set()

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in ("func.call", "llvm.call") and "callee" in op.attributes:
                found.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            return ir.WalkResult.ADVANCE
        f.walk(visit, ir.WalkOrder.POST_ORDER)
        return found
    for f in functions:
        calls[ir.StringAttr(f.attributes["sym_name"]).value] = callees_of(f)
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
    for f in functions:
        if not f.regions[0].blocks or ir.StringAttr(f.attributes["sym_name"]).value in recursive:
            continue
        block = f.regions[0].blocks[0]
        free: dict[str, list[tuple[int, str]]] = {}  # type -> (end of its last user, global's name)
        for alloc, dealloc, start, end in _lifetimes(block):
            t = ir.MemRefType(alloc.results[0].type)
            plain = ir.MemRefType.get(t.shape, t.element_type, memory_space=t.memory_space)
            key = str(plain)
            pool = free.setdefault(key, [])
            reuse = next((i for i, (busy_until, _) in enumerate(pool) if busy_until < start), None)
            with ir.InsertionPoint(alloc), alloc.location:
                if reuse is None:
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
