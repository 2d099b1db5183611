"""Where a global view's local work runs under MPI: each op on the ranks
that need it (coll-to-mpi, to_mpi.py, clones it into their cases).

A buffer that an explicit op works on is its device's (the lowering cast
it to #coll.device<d>). Walking the function backwards, a local op runs on
the rank of each device buffer it touches and on every rank that later
reads what it writes (a buffer, or a value it defines): work on inputs
that several devices read (a weight) runs on each rank that needs it, so
nothing moves between ranks outside the collectives. Work that touches no
device's buffer and that no rank needs (an output computed from inputs
alone) runs on rank 0, as does an argument nothing uses; a memref.dealloc
runs on every rank that has its buffer. Ops without effects (constants,
allocations, arith) are not placed: a rank clones them where it uses
them, and what they are computed from runs there too.

Refused, located at the op: a call that may touch memory its operands do
not name (its callee reads a global, or is a declaration: each rank would
have its own copy of what it writes), one that touches two devices' buffers, or one
device's buffer while another rank needs it (data moves between ranks only
through collectives), an argument written on several ranks (each would
write its own copy, and the global view has one), and a buffer that is
one device's in a collective and another's in the next.
"""
from mlir import ir

from ...analysis.effects import flat_effects, host_effects
from ...core.errors import PassError
from ...ir.types import device_of
from ...ir.views import CHOICE_OPS, VIEW_OPS, defining_op, root_of, sources
from ...ir.walk import symbol

# Top-level ops of an explicit program that are not local work.
_PROGRAM_OPS = ("func.return",)


def _device(value: ir.Value) -> int | None:
    try:
        return device_of(value.type)
    except ValueError:  # not a memref
        return None


def is_local(op: ir.Operation) -> bool:
    """Whether a top-level op of an explicit global view is local work to
    place (it touches memory, or holds regions, or is a call that may
    touch memory its operands do not name)."""
    name = op.name
    if name.startswith("coll.") or name in VIEW_OPS or name in _PROGRAM_OPS:
        return False
    return bool(len(op.regions)) or flat_effects(op) != ([], []) or reaches_beyond_operands(op) is not None


_CALLS = ("func.call", "func.call_indirect", "llvm.call")
_LLVM_VALUES = ("llvm.mlir.constant", "llvm.mlir.undef", "llvm.mlir.zero", "llvm.mlir.poison")


def reaches_beyond_operands(op: ir.Operation) -> ir.Operation | None:
    """`op` or the first op nested in it that may touch memory no memref
    operand names: a call whose callee (followed through the calls it
    makes) reads a global (memref's or LLVM's) or is not known (a
    declaration, an indirect call), or an LLVM op on pointers; None if
    there is none."""
    seen: set[str] = set()
    found: list[ir.Operation] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if _beyond(inner, seen):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0] if found else None


def _beyond(op: ir.Operation, seen: set[str]) -> bool:
    """reaches_beyond_operands for `op` alone (a call: through its callee)."""
    name = op.name
    if name.startswith("llvm."):
        return name not in _LLVM_VALUES
    if name != "func.call":
        return name in _CALLS
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    if callee in seen:
        return False  # (its body is being walked already)
    seen.add(callee)
    func = symbol(op, callee)
    if func is None or not len(func.regions[0].blocks):
        return True  # (a declaration: its body is elsewhere)
    found = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if inner.name == "memref.get_global" or _beyond(inner, seen):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def used_values(op: ir.Operation) -> list[ir.Value]:
    """The values `op` uses: its operands, then those its nested ops take
    from above it, each once."""
    inside: set[ir.Value] = set()
    used = list(op.operands)

    def define(inner: ir.Operation) -> ir.WalkResult:
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        if inner != op:
            inside.update(inner.results)
        return ir.WalkResult.ADVANCE

    def use(inner: ir.Operation) -> ir.WalkResult:
        if inner != op:
            used.extend(v for v in inner.operands if v not in inside)
        return ir.WalkResult.ADVANCE
    op.walk(define, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    op.walk(use, ir.WalkOrder.POST_ORDER)
    return list(dict.fromkeys(used))


def _roots(op: ir.Operation, v: ir.Value) -> list[ir.Value]:
    """The root buffers memref `v`, used by `op`, may be: through views, and
    through the ops that pick one of several (arith.select, scf.if, ...:
    each of them; a fill through a select was placed as if it touched no
    argument, and the argument it wrote was not read back: FAIL, 2026-12-08)."""
    root = root_of(v)[0]
    picker = defining_op(root)
    if picker is None or picker.name not in CHOICE_OPS:
        return [root]
    keys, through = sources(v)
    if not all(isinstance(k, ir.Value) for k in keys):
        raise PassError(f"'{op.name}' works on a buffer picked by '{through}' that may be any buffer (or a "
                        "global): under MPI local work is placed by the buffers it touches; expected buffers "
                        "picked from the function's arguments or allocations", op.location)
    return [k for k in keys if isinstance(k, ir.Value)]


def _touched(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]]:
    """(roots read, roots written) by local op `op`; every memref it uses
    both, when its effects are not known."""
    eff = host_effects(op)
    if eff is None:
        mems = [r for v in used_values(op) if isinstance(v.type, ir.MemRefType) for r in _roots(op, v)]
        return list(dict.fromkeys(mems)), list(dict.fromkeys(mems))
    reads, writes = ([r for v, _, _ in side for r in _roots(op, v)] for side in eff)
    # A write that does not cover the buffer keeps what it does not write:
    # the op needs the earlier writes too (as it needs what it reads).
    return list(dict.fromkeys(reads + writes)), list(dict.fromkeys(writes))


def _owners(ops: list[ir.Operation]) -> dict[ir.Value, int]:
    """{root buffer: device} of the buffers explicit ops work on: what each
    cast to #coll.device<d> (and each coll.alloc) places."""
    owner: dict[ir.Value, int] = {}
    for op in ops:
        if op.name == "memref.memory_space_cast" or op.name == "coll.alloc":
            d = _device(op.results[0])
            if d is None:
                continue
            root = root_of(op.results[0] if op.name == "coll.alloc" else op.operands[0])[0]
            if owner.setdefault(root, d) != d:
                what = f"argument #{root.arg_number}" if isinstance(root.owner, ir.Block) else "this buffer"
                raise PassError(f"{what} is device {owner[root]}'s in an earlier collective and device {d}'s "
                                "here: under MPI each buffer lives on one rank; expected every buffer on one "
                                "device throughout", op.location)
    return owner


def _pure(value: ir.Value) -> ir.Operation | None:
    """The op without effects that defines `value` (cloned where it is
    used, to_mpi.py), or None."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    return None if is_local(op) else op


class Placement:
    """`ranks[op]`: the ranks local op `op` runs on; `arg_ranks[i]`: those
    that hold argument i (a device's, or an input several ranks read);
    `written`: the arguments local work writes."""

    def __init__(self, func_op: ir.Operation, ops: list[ir.Operation]) -> None:
        block = func_op.regions[0].blocks[0]
        owner = _owners(ops)
        local = [op for op in ops if is_local(op)]
        self.ranks: dict[ir.Operation, set[int]] = {}
        self.written: set[int] = set()
        need_root: dict[ir.Value, set[int]] = {}
        need_value: dict[ir.Value, set[int]] = {}
        touched: dict[ir.Value, set[int]] = {}
        frees = [op for op in local if op.name == "memref.dealloc"]
        for op in reversed(local):
            if op in frees:  # placed last: wherever its buffer is
                continue
            hidden = reaches_beyond_operands(op)
            if hidden is not None:
                raise PassError(f"'{hidden.name}' may touch memory its operands do not name (a call whose callee "
                                "reads a global or is not known, an LLVM op on pointers): under MPI each rank has "
                                "its own copy, and which ranks must run it cannot be told; expected local work on "
                                "its operands only, or the SPMD form (coll.ranks = N)", hidden.location)
            reads, writes = _touched(op)
            mine = {owner[b] for b in reads if b in owner}
            if len(mine) > 1:
                raise PassError(f"'{op.name}' works on the buffers of devices {sorted(mine)}: local work is on "
                                "one device's buffers (data moves between devices only through collectives); "
                                "expected each device's work on its own buffers", op.location)
            ranks = set(mine)
            for b in writes:
                ranks |= need_root.get(b, set())
            for res in op.results:
                ranks |= need_value.get(res, set())
            if mine and ranks != mine:
                other = sorted(ranks - mine)
                raise PassError(f"'{op.name}' works on device {min(mine)}'s buffers, and device(s) {other} "
                                "use what it writes: data moves between devices only through collectives; "
                                "expected each device's work on its own buffers", op.location)
            ranks = ranks or {0}
            self.ranks[op] = ranks
            for b in reads:
                need_root.setdefault(b, set()).update(ranks)
                touched.setdefault(b, set()).update(ranks)
            for v in used_values(op):
                self._need(v, ranks, need_value)
            for b in writes:
                if isinstance(b.owner, ir.Block) and b.owner == block:
                    self.written.add(b.arg_number)
        for op in frees:
            root = root_of(op.operands[0])[0]
            self.ranks[op] = touched.get(root) or ({owner[root]} if root in owner else {0})
        self.arg_ranks: dict[int, set[int]] = {}
        for a in block.arguments:
            held = set(touched.get(a, ()))
            if a in owner:
                held.add(owner[a])
            # An argument nothing uses is rank 0's, as work no device needs.
            self.arg_ranks[a.arg_number] = held or {0}
        for op in local:
            for b in _touched(op)[1]:
                if isinstance(b.owner, ir.Block) and len(self.arg_ranks.get(b.arg_number, ())) > 1:
                    raise PassError(f"'{op.name}' writes argument #{b.arg_number}, which ranks "
                                    f"{sorted(self.arg_ranks[b.arg_number])} hold (each would write its "
                                    "own copy, and the global view has one); expected an argument written "
                                    "by one device's work", op.location)

    @staticmethod
    def _need(value: ir.Value, ranks: set[int], need_value: dict[ir.Value, set[int]]) -> None:
        """Records that `ranks` use `value`, and what it is computed from
        through ops without effects (a scalar a load gives, through
        arith): the ops that define those run there too."""
        have = need_value.setdefault(value, set())
        if ranks <= have:
            return
        have |= ranks
        op = _pure(value)
        if op is not None:
            for v in used_values(op):
                Placement._need(v, ranks, need_value)
