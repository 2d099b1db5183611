"""Splitting long straight-line programs into functions of bounded size.

A 64-device program is ~12,000 copies and kernel calls in one block; some
upstream passes split blocks in time linear in what follows the split
(scf-to-cf: quadratic overall), and LLVM optimises and selects instructions
one function (and one basic block) at a time. So every block of more than
`limit` ops is cut into consecutive segments of at most `limit` ops, each
moved into a private function and called in its place, in order.

Buffers do not travel as arguments: a memref is 5+ scalars in the LLVM
calling convention, and LLVM's time grows faster than linearly with a few
hundred parameters. Instead each function keeps a table of buffer pointers
(allocated and aligned, as i64); a segment stores the buffers it creates
that others use and loads the ones it uses, rebuilding their descriptors
(static shape and layout). Views and constants are cloned where used (pure
and cheap; copies keep static types, i.e. memcpy). Other values (a loop's
induction variable) are arguments.
"""
from collections.abc import Collection

from mlir import ir
from mlir.dialects import arith, func, memref

from ...ir.ops import SLOT_ATTR
from ...ir.walk import is_public
from .shared import create as _create
from .shared import descriptor_type as _descriptor_type
from .shared import inline_entry, no_inline

PURE = ("memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast",
        "memref.reinterpret_cast", "arith.constant", "memref.extract_aligned_pointer_as_index",
        "memref.extract_strided_metadata", "memref.dim", "arith.addi", "arith.muli", "arith.index_cast",
        "llvm.inttoptr", "memref.get_global")


def _op(owner: ir.Operation | ir.OpView) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _weight(op: ir.Operation) -> int:
    if not len(op.regions):  # most ops: no walk (a Python call per op)
        return 1
    n = 0

    def visit(_: ir.Operation) -> ir.WalkResult:
        nonlocal n
        n += 1
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    return n


def _static(t: ir.Type) -> tuple[list[int], int, list[int]] | None:
    """Shape, offset and strides of a memref type when all are static."""
    if not isinstance(t, ir.MemRefType):
        return None
    m = ir.MemRefType(t)
    if not m.has_static_shape:
        return None
    try:
        strides, offset = m.get_strides_and_offset()
    except Exception:
        return None
    if m.is_dynamic_stride_or_offset(offset) or any(m.is_dynamic_stride_or_offset(s) for s in strides):
        return None
    return list(m.shape), offset, list(strides)


def split_module(module_op: ir.Operation, limit: int, skip: Collection[str] = ()) -> None:
    """Splits every public function (but those named in `skip`)."""
    body = module_op.regions[0].blocks[0]
    for f in [op.operation for op in body.operations]:
        if (f.name == "func.func" and f.regions[0].blocks and is_public(f)
                and ir.StringAttr(f.attributes["sym_name"]).value not in skip):
            _Splitter(f, limit).run()


def split_function(f: ir.Operation, limit: int, pure: Collection[str] = PURE) -> None:
    """Splits func.func `f`, its parts placed after it (it stays the
    module's first function); `pure`: the ops cloned where used (the GPU
    route adds its handle loads and descriptor building, lowering/gpu/to_gpu.py)."""
    _Splitter(f, limit, pure, after=True).run()


class _Splitter:
    size: ir.Value  # the table's length (set with the table)
    stores_at: ir.Operation  # the last store of an entry argument's pointers

    def __init__(self, f: ir.Operation, limit: int, pure: Collection[str] = PURE, after: bool = False) -> None:
        self.f = f
        self.limit = limit
        self.pure = pure
        self.last: ir.Operation | None = f if after else None  # parts go after it, else before f
        self.name = ir.StringAttr(f.attributes["sym_name"]).value
        self.count = 0
        self.slots: dict[ir.Value, int] = {}  # buffer -> k: its pointers are at 2k, 2k + 1
        self.pending: dict[ir.Value, ir.Operation] = {}  # buffers with a slot, not stored yet -> their op
        self.table: ir.Value | None = None  # memref<?xi64>, allocated at entry when needed
        self.entry = f.regions[0].blocks[0]
        self.moved: dict[ir.Value, int] = {}  # results of moved ops used outside their part -> slot

    def run(self) -> None:
        self.block(self.entry)
        if self.table is None:
            return
        for v in list(self.pending):  # defined by an op that stayed in place
            op = self.pending.pop(v)
            with ir.InsertionPoint.after(op), self.f.location:
                _store(v, self.table, self.slots[v])
        self.size.owner.attributes["value"] = ir.IntegerAttr.get(ir.IndexType.get(), 2 * len(self.slots))
        inline_entry(self.f)

    def _table(self) -> ir.Value:
        if self.table is None:
            with ir.InsertionPoint.at_block_begin(self.entry), self.f.location:
                self.size = arith.constant(ir.IndexType.get(), 0)
                t = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(64))
                self.table = memref.alloc(t, [self.size], [])
            with ir.InsertionPoint.at_block_terminator(self.entry), self.f.location:
                memref.dealloc(self.table)
            self.stores_at = _op(self.table.owner)
        return self.table

    def _slot(self, v: ir.Value) -> int:
        """The slot of buffer `v`; an entry argument is stored at entry,
        other buffers when their op is moved (or at the end)."""
        if v not in self.slots:
            self.slots[v] = len(self.slots)
            table = self._table()
            if isinstance(v.owner, ir.Block):
                with ir.InsertionPoint.after(self.stores_at), self.f.location:
                    self.stores_at = _op(_store(v, table, self.slots[v]))
            else:
                self.pending[v] = _op(v.owner)
        return self.slots[v]

    def block(self, block: ir.Block) -> int:
        """Splits `block` (first the loops in it that are too big); returns
        its weight afterwards."""
        ops = [op.operation for op in block.operations][:-1]
        weights = []
        for op in ops:
            w = _weight(op)
            if w > self.limit and op.name == "scf.for":
                w = 1 + self.block(op.regions[0].blocks[0])
            weights.append(w)
        total = sum(weights)
        mine = self._mine()
        pure = self.pure
        if total <= self.limit or not all(op.name in pure or op in mine or _static_results(op) for op in ops):
            return total
        segments: list[list[ir.Operation]] = []
        seg: list[ir.Operation] = []
        size = 0
        for op, w in zip(ops, weights):
            if op.name in pure or op in mine:
                continue
            if seg and size + w > self.limit:
                segments.append(seg)
                seg, size = [], 0
            seg.append(op)
            size += w
        if seg:
            segments.append(seg)
        for s in segments:
            self._outline(s)
        self._reload()
        _erase_dead(block, self._mine(), pure)
        return len(segments)

    def _reload(self) -> None:
        """A buffer a part made and an op left in this function uses (the
        func.return of a function that returns memrefs): loaded from the
        table before that op (before the table is freed, for the return)."""
        table = self.table
        assert table is not None  # (the parts made it)
        term = self.entry.operations[len(self.entry.operations) - 1].operation
        free = next((_op(u.owner) for u in table.uses if _op(u.owner).name == "memref.dealloc"), None)
        for r, k in list(self.moved.items()):
            for u in list(r.uses):
                user = _op(u.owner)
                if not _within(user, self.f):
                    continue
                at = free if user == term and free is not None else user
                with ir.InsertionPoint(at), user.location:
                    user.operands[u.operand_number] = _load(table, k, r.type)

    def _mine(self) -> set[ir.Operation]:
        """Ops of the table, which stay in the entry block."""
        if self.table is None:
            return set()
        ops: set[ir.Operation] = set()
        op = _op(self.table.owner)
        ops.add(_op(self.size.owner))
        ops.add(op)
        for u in self.table.uses:
            user = _op(u.owner)
            if user.block == self.entry:
                ops.add(user)
                for o in user.operands:  # a store's value and index
                    if not isinstance(o.owner, ir.Block):
                        _chain(_op(o.owner), ops)
        return ops

    def _outline(self, segment: list[ir.Operation]) -> None:
        table = self._table()
        inside: set[ir.Operation | ir.Value] = set()
        for op in segment:
            _defined(op, inside)
        used: list[tuple[ir.Value, ir.Operation]] = []
        seen: set[ir.Value] = set()
        for op in segment:
            _uses(op, inside, used, seen)
        args = [table]
        clones: list[tuple[ir.Operation, ir.Operation]] = []
        loads: list[tuple[ir.Value, int]] = []
        done = {table}

        def need(v: ir.Value, at: ir.Operation) -> None:
            if v in done or v in inside:
                return
            done.add(v)
            owner = v.owner
            if not isinstance(owner, ir.Block) and _op(owner).name in self.pure:
                for o in _op(owner).operands:
                    need(o, at)
                clones.append((_op(owner), at))  # before its first user: it may view a buffer made here
            elif _static(v.type) is not None and (not isinstance(owner, ir.Block) or owner == self.entry):
                loads.append((v, self._slot(v)))
            else:
                args.append(v)
        for v, at in used:
            need(v, at)
        for op in segment:
            for r in op.results:
                if any(_op(u.owner) not in inside for u in r.uses):
                    self.moved[r] = self._slot(r)
        name = f"{self.name}_part{self.count}"
        self.count += 1
        first = segment[0]
        where = ir.InsertionPoint(self.f) if self.last is None else ir.InsertionPoint.after(self.last)
        with where, first.location:
            fn = func.FuncOp(name, ir.FunctionType.get([a.type for a in args], []), visibility="private")
            if self.last is not None:
                self.last = fn.operation
            no_inline(fn)
            entry = fn.add_entry_block()
        mapping = dict(zip(args, entry.arguments))
        with ir.InsertionPoint(entry), first.location:
            for v, k in loads:
                mapping[v] = _load(entry.arguments[0], k, v.type)
            ret = func.ReturnOp([])
        with ir.InsertionPoint(first), first.location:
            func.call([], ir.FlatSymbolRefAttr.get(name), args)
        for op in segment:
            op.move_before(ret)
            for r in op.results:
                if r in self.pending:
                    del self.pending[r]
                    with ir.InsertionPoint(ret), op.location:
                        _store(r, entry.arguments[0], self.slots[r])
        for c, at in clones:
            new = c.clone(ip=ir.InsertionPoint(at))
            _remap(new, mapping, shallow=True)
            for old_r, new_r in zip(c.results, new.results):
                mapping[old_r] = new_r
        for op in segment:
            _remap(op, mapping)


def _within(op: ir.Operation | None, f: ir.Operation) -> bool:
    """Whether `op` is (nested) in function `f`."""
    while op is not None:
        if op == f:
            return True
        op = op.parent
    return False


def _static_results(op: ir.Operation) -> bool:
    """Results a table slot can hold (static memrefs), or that nothing uses
    (a gpu.memcpy's token when its stream orders it)."""
    return all(_static(r.type) or not list(r.uses) for r in op.results)


def _chain(op: ir.Operation, ops: set[ir.Operation]) -> None:
    ops.add(op)
    for o in op.operands:
        if not isinstance(o.owner, ir.Block):
            _chain(_op(o.owner), ops)


def _defined(op: ir.Operation, inside: set[ir.Operation | ir.Value]) -> None:
    def visit(view: ir.Operation) -> ir.WalkResult:
        o = _op(view)
        inside.add(o)
        for r in o.results:
            inside.add(r)
        for region in o.regions:
            for b in region.blocks:
                for a in b.arguments:
                    inside.add(a)
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.POST_ORDER)


def _uses(op: ir.Operation, inside: set[ir.Operation | ir.Value], used: list[tuple[ir.Value, ir.Operation]],
          seen: set[ir.Value]) -> None:
    """Appends (value from outside, `op`) for each first use under `op`."""
    def visit(o: ir.Operation) -> ir.WalkResult:
        for v in o.operands:
            if v not in inside and v not in seen:
                seen.add(v)
                used.append((v, op))
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.POST_ORDER)


def _remap(op: ir.Operation, mapping: dict[ir.Value, ir.Value], shallow: bool = False) -> None:
    def fix(o: ir.Operation) -> None:
        for i, v in enumerate(o.operands):
            new = mapping.get(v)
            if new is not None:
                o.operands[i] = new
    if shallow:
        fix(op)
        return

    def visit(o: ir.Operation) -> ir.WalkResult:
        fix(o)
        return ir.WalkResult.ADVANCE
    op.walk(visit, ir.WalkOrder.POST_ORDER)


def _erase_dead(block: ir.Block, keep: set[ir.Operation], pure: Collection[str] = PURE) -> None:
    for op in reversed([op.operation for op in block.operations]):
        if op.name in pure and all(not list(r.uses) for r in op.results) and op not in keep:
            op.erase()


# -- the table: buffers as (allocated, aligned) pointers ---------------------

def _store(v: ir.Value, table: ir.Value, k: int) -> ir.OpView:
    """Stores buffer `v`'s pointers in slot k; returns the last op."""
    i64, ptr = ir.IntegerType.get_signless(64), ir.Type.parse("!llvm.ptr")
    (d,) = _create("builtin.unrealized_conversion_cast", [_descriptor_type(ir.MemRefType(v.type).rank)], [v])
    for field in (0, 1):
        (p,) = _create("llvm.extractvalue", [ptr], [d], position=ir.DenseI64ArrayAttr.get([field]))
        (x,) = _create("llvm.ptrtoint", [i64], [p])
        last = memref.store(x, table, [arith.constant(ir.IndexType.get(), 2 * k + field)])
    return last


def _load(table: ir.Value, k: int, t: ir.Type) -> ir.Value:
    i64, ptr = ir.IntegerType.get_signless(64), ir.Type.parse("!llvm.ptr")
    static = _static(t)
    assert static is not None  # (only static buffers get a slot)
    shape, offset, strides = static
    dt = _descriptor_type(len(shape))
    (d,) = _create("llvm.mlir.poison", [dt], [])
    for field in (0, 1):
        x = memref.load(table, [arith.constant(ir.IndexType.get(), 2 * k + field)])
        (p,) = _create("llvm.inttoptr", [ptr], [x])
        (d,) = _create("llvm.insertvalue", [dt], [d, p], position=ir.DenseI64ArrayAttr.get([field]))
    consts = [([2], offset)] + [([3, i], s) for i, s in enumerate(shape)] + \
             [([4, i], s) for i, s in enumerate(strides)]
    for pos, value in consts:
        (c,) = _create("llvm.mlir.constant", [i64], [], value=ir.IntegerAttr.get(i64, value))
        (d,) = _create("llvm.insertvalue", [dt], [d, c], position=ir.DenseI64ArrayAttr.get(pos))
    (m,) = _create("builtin.unrealized_conversion_cast", [t], [d])
    m.owner.attributes[SLOT_ATTR] = ir.IntegerAttr.get(i64, k)
    return m
