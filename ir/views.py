"""Views: ops whose result aliases (part of) their first operand.

The one list of them, and the walk from a view back to the buffer it views,
shared by the verifier, the order check, the task graph, the lowerings and
the runtimes.
"""
from mlir import ir

from .kinds import ELEMENTS

VIEW_OPS = (
    "memref.subview", "memref.reinterpret_cast", "memref.transpose", "memref.view",
    "memref.collapse_shape", "memref.expand_shape", "memref.cast",
    "memref.memory_space_cast", "memref.assume_alignment",
    # Also reads its shape operand (a memref of sizes): coll-check-order
    # counts that read.
    "memref.reshape",
)


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that defines `value`, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def view_op(value: ir.Value) -> ir.Operation | None:
    """The view op that defines `value`, or None."""
    op = defining_op(value)
    return op if op is not None and op.name in VIEW_OPS else None


def root_of(value: ir.Value) -> tuple[ir.Value, list[ir.Operation]]:
    """(root buffer, [view ops from the root down to `value`])."""
    chain: list[ir.Operation] = []
    op = view_op(value)
    while op is not None:
        chain.append(op)
        value = op.operands[0]
        op = view_op(value)
    chain.reverse()
    return value, chain


def constant_int(value: ir.Value) -> int | None:
    """The integer an arith.constant gives `value`, else None (a block
    argument, another op, a non-integer constant)."""
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(op.attributes["value"]).value
    except (ValueError, TypeError, KeyError):
        return None


def span(value: ir.Value) -> tuple[ir.Value, int, int] | None:
    """(root, first byte, end byte) of the root buffer that a row-major
    contiguous memref `value` covers, followed through every view op: the
    offset of its type, past the constant byte shifts of memref.view (the
    one view op that moves the aligned pointer), or, for a type whose layout
    is dynamic, that of the memref.cast it comes from. None when that is not
    static or `value` is not contiguous. Equal spans are the same elements
    in the same order (in place); overlapping unequal ones alias partly."""
    root, chain = root_of(value)
    shift = 0
    for op in chain:
        if op.name == "memref.view":
            k = constant_int(op.operands[1])
            if k is None:
                return None
            shift += k
    mt = ir.MemRefType(value.type)
    element = ELEMENTS.get(str(mt.element_type))
    if element is None:
        return None
    shape = list(mt.shape)
    if 0 in shape:  # no element: shares no memory
        return root, 0, 0
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    try:
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        return None
    if offset == dyn or dyn in strides or any(d < 0 for d in shape):
        if chain and chain[-1].name == "memref.cast":  # it forgot a static layout
            return span(chain[-1].operands[0])
        return None
    count, want = 1, 1
    for d, s in reversed(list(zip(shape, strides))):
        if d != 1 and s != want:
            return None
        want *= d
        count *= d
    start = shift + offset * element.bytes
    return root, start, start + count * element.bytes


def root_key(root: ir.Value) -> object:
    """What tells root buffers apart: a global's name (two memref.get_global
    of one global are one buffer: an outside attack's partial overlap
    through two of them passed the verifier, 2026-12-07), else the value."""
    op = defining_op(root)
    if op is not None and op.name == "memref.get_global":
        return "@" + ir.FlatSymbolRefAttr(op.attributes["name"]).value
    return root


# Ops whose memref result is one of several buffers: scf.if's, scf.for's
# (and a loop's iteration arguments), arith.select's, and the results of
# scf.index_switch and scf.execute_region (what their regions yield).
BRANCH_OPS = ("scf.if", "scf.index_switch", "scf.execute_region")
CHOICE_OPS = BRANCH_OPS + ("scf.for", "arith.select")


def sources(value: ir.Value) -> tuple[set[object], str | None]:
    """({root_key} of the buffers `value` may be, through views and the
    CHOICE_OPS, the name of the first such op it went through or None):
    a collective's operands are compared by it (a buffer yielded by scf.if
    or a loop was taken for a buffer of its own: an outside attack,
    2026-12-07, in place unknown to the lowering, wrong sums). A loop's
    iteration argument may be what the previous iteration yielded: a
    buffer allocated in the loop's body is then that iteration's, not the
    one this iteration allocates (the key ("previous", loop, key)). A
    buffer out of a region op it does not follow may be any (ANY_BUFFER)."""
    out: set[object] = set()
    through: str | None = None
    seen: list[tuple[ir.Value, tuple[ir.Operation, ...]]] = []
    stack: list[tuple[ir.Value, tuple[ir.Operation, ...]]] = [(value, ())]
    while stack:
        v, earlier = stack.pop()
        v = root_of(v)[0]
        if any(v == w and earlier == e for w, e in seen):
            continue
        seen.append((v, earlier))
        op = defining_op(v)
        more: list[tuple[ir.Value, tuple[ir.Operation, ...]]] = []
        if op is None:
            arg: ir.BlockArgument = ir.BlockArgument(v)
            owner = arg.owner.owner
            k = arg.arg_number - 1  # (scf.for's first argument: the induction variable)
            if owner is not None and owner.operation.name == "scf.for" and k >= 0:
                loop = owner.operation
                later = earlier if any(loop == e for e in earlier) else earlier + (loop,)
                more = [(loop.operands[3 + k], earlier), (_yielded(loop.regions[0], k), later)]
        elif op.name == "scf.for":
            k = ir.OpResult(v).result_number
            more = [(_yielded(op.regions[0], k), earlier), (op.operands[3 + k], earlier)]
        elif op.name in BRANCH_OPS:
            more = [(y, earlier) for y in branch_yields(op, ir.OpResult(v).result_number)]
        elif op.name == "arith.select":
            more = [(op.operands[1], earlier), (op.operands[2], earlier)]
        if more:
            through = through or (op.name if op is not None else "scf.for")
            stack += more
            continue
        hidden = _unfollowed(v, op)
        if hidden is not None:  # (scf.while, execute_region, affine.for, ...: what it yields is not followed)
            through = through or hidden
            out.add(ANY_BUFFER)
            continue
        key = root_key(v)
        at = op if op is not None else ir.BlockArgument(v).owner.owner
        for e in earlier:
            if _inside(at, e):
                key = ("previous", e, key)
        out.add(key)
    return out, through


# What a buffer is that comes out of a region op sources() does not follow:
# it may be any buffer.
ANY_BUFFER = "any buffer"


def _unfollowed(v: ir.Value, op: ir.Operation | None) -> str | None:
    """The op (name) a buffer comes out of whose regions sources() does not
    follow: a result of a region op other than scf.if and scf.for, or an
    argument of a block that is not a function's entry nor scf.for's body
    (scf.while's, affine.for's, a cf successor's). None otherwise (an
    allocation, a global, a function's argument, another op's result).
    An outside attack passed one buffer through scf.while,
    scf.index_switch, scf.execute_region, affine.for/affine.if and
    memref.alloca_scope, in place unknown to the lowering (2026-12-07)."""
    if op is not None:
        return op.name if len(op.regions) else None
    block = ir.BlockArgument(v).owner
    owner = block.owner
    if owner is None:
        return None
    name = owner.operation.name
    if name == "func.func":
        return None if block == owner.regions[0].blocks[0] else "a block's argument"
    return name


def _inside(op: ir.Operation | ir.OpView | None, loop: ir.Operation) -> bool:
    at = op.operation if op is not None else None
    while at is not None:
        if at == loop:
            return True
        at = at.parent
    return False


def distinct_each_iteration(a: ir.Value, b: ir.Value) -> bool:
    """Whether roots `a` and `b`, two iteration arguments of one scf.for,
    are distinct buffers in every iteration: their loop yields its memref
    iteration arguments themselves, each to another one (a rotation of the
    buffers, double buffering), and their first values are distinct."""
    if not (isinstance(a, ir.BlockArgument) and isinstance(b, ir.BlockArgument)):
        return False
    a, b = ir.BlockArgument(a), ir.BlockArgument(b)
    owner = a.owner.owner
    if owner is None or owner.operation.name != "scf.for" or b.owner != a.owner or a.arg_number == b.arg_number \
            or min(a.arg_number, b.arg_number) < 1:
        return False
    loop = owner.operation
    body = loop.regions[0].blocks[0]
    args = list(body.arguments)
    yields = list(list(body.operations)[-1].operands)
    memrefs = [k for k in range(1, len(args)) if isinstance(args[k].type, ir.MemRefType)]
    to = []
    for k in memrefs:
        y = yields[k - 1]
        j = next((j for j in memrefs if y == args[j]), None)
        if j is None:
            return False  # (a view of one, another buffer: not followed)
        to.append(j)
    if len(set(to)) != len(to):
        return False
    firsts = [sources(loop.operands[3 + k - 1])[0] for k in memrefs]
    return all(not (firsts[i] & firsts[j]) for i in range(len(firsts)) for j in range(i))


def forwarded(op: ir.Operation, k: int) -> list[ir.Value]:
    """The values through which `op` hands its operand #k on unchanged, the
    forward direction of sources(): scf.for's initial value to its
    iteration argument and result, scf.yield's value (in scf.for or a
    BRANCH_OPS op) to the result (and the next iteration's argument),
    arith.select's choices to its result. [] for any other op or operand."""
    parent = op.parent.operation if op.parent is not None else None
    if op.name == "scf.for" and k >= 3:
        return [op.regions[0].blocks[0].arguments[k - 2], op.results[k - 3]]
    if op.name == "scf.yield" and parent is not None and parent.name in ("scf.for",) + BRANCH_OPS:
        nxt = [parent.regions[0].blocks[0].arguments[k + 1]] if parent.name == "scf.for" else []
        return [parent.results[k]] + nxt
    if op.name == "arith.select" and k in (1, 2):
        return [op.results[0]]
    return []


def _yielded(region: ir.Region, k: int) -> ir.Value:
    return list(region.blocks[0].operations)[-1].operands[k]


def branch_yields(op: ir.Operation, k: int) -> list[ir.Value]:
    """The values a BRANCH_OPS op's result #k may be: operand #k of each
    scf.yield that ends a block of its regions."""
    out: list[ir.Value] = []
    for region in op.regions:
        for block in region.blocks:
            ops = list(block.operations)
            if ops and ops[-1].name == "scf.yield":
                out.append(ops[-1].operands[k])
    return out


def same_memory(a: ir.Value, b: ir.Value) -> bool:
    """Whether memref values `a` and `b` are the same elements in the same
    order (one is a view of the other that moves nothing, e.g. a
    memref.cast, or two memref.get_global of one global): equal spans."""
    if a == b:
        return True
    sa, sb = span(a), span(b)
    return sa is not None and sb is not None and root_key(sa[0]) == root_key(sb[0]) and sa[1:] == sb[1:] \
        and sa[1] < sa[2]
