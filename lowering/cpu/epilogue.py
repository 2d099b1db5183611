"""Epilogues fused into a collective on the CPU: the local work that reads a
collective's result (pmean's divide, a residual add, RMSNorm, a bias, an
activation) runs inside the collective's tiled loop (fuse.py), on the rows
of each tile right after the tile's last copy or combine, while they are
in cache, instead of reading the whole result back from memory afterwards.

An epilogue is the run of linalg ops right after a collective's copies and
combines (nothing between them but views, constants and allocations) that
are row-parallel: loop d0 is parallel and every memref operand is either
indexed by d0 as its leading dimension and by nothing else through it (a
row operand: rows [a, b) of the op touch rows [a, b) of it) or not indexed
by d0 at all and only read (a bias, a scale). Restricted to rows [a, b),
such an op is the same op on subviews [a, b) of its row operands: per row
the same loops and the same arithmetic (a row reduction too), so the fused
program computes the unfused one's bits (tests/unit/test_epilogue.py).

Legal where fuse.py attaches it: the collective's ops that touch the
epilogue's buffers form one group in which every such buffer's element i
is at place i of the group's range (anchors, shift 0) and the range is
exactly the rows; a tile holds whole rows. A tile's epilogue then runs
after every copy and combine of that tile's elements and touches no
element of another tile; the collective's later tiles read and write no
row the epilogue wrote before (shift 0: only their own elements), and
nothing in the group or the epilogue writes a broadcast operand.
"""
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import memref

from ...ir.types import contiguous
from ...ir.views import VIEW_OPS
from .row_reductions import row_length

Op = ir.Operation | ir.OpView

# What may sit between a collective's ops and its epilogue, or between the
# epilogue's ops: it touches no buffer's data.
PASSIVE = VIEW_OPS + ("arith.constant", "memref.alloc", "memref.alloca", "memref.get_global", "coll.wait",
                      "coll.join")
LINALG = ("linalg.generic", "linalg.fill")


@dataclass
class Epilogue:
    ops: list[Op]
    rows: int  # R: the leading dimension of every row operand
    row_operands: dict[int, list[int]] = field(default_factory=dict)  # per op (its index): operand numbers
    reads: dict[int, set[ir.Value]] = field(default_factory=dict)  # per op: its broadcast operands' buffers
    row_roots: set[ir.Value] = field(default_factory=set)
    read_only: set[ir.Value] = field(default_factory=set)

    def roots(self, k: int) -> set[ir.Value]:
        """The buffers op k touches."""
        return {self.ops[k].operands[n] for n in self.row_operands[k]} | self.reads[k]

    def part(self, keep: Sequence[int]) -> "Epilogue":
        """The epilogue of ops `keep` (indices, in order) alone."""
        e = Epilogue([self.ops[k] for k in keep], self.rows)
        for new, k in enumerate(keep):
            e.row_operands[new], e.reads[new] = self.row_operands[k], self.reads[k]
            e.row_roots |= self.roots(k) - self.reads[k]
            e.read_only |= self.reads[k]
        return e


def _buffer(v: ir.Value) -> ir.Value | str:
    """The buffer a root value is: a global by its name (two get_global ops
    of one global are two values of one buffer: an outside attack's case)."""
    owner = v.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "memref.get_global":
        return "@" + ir.FlatSymbolRefAttr(owner.operation.attributes["name"]).value
    return v


def _root(v: ir.Value) -> bool:
    """A whole buffer: a block argument, an allocation or a global
    (coll-static-local-buffers), static and row-major."""
    if not isinstance(v.type, ir.MemRefType):
        return False
    owner = v.owner
    if not isinstance(owner, ir.Block) \
            and owner.operation.name not in ("memref.alloc", "memref.alloca", "memref.get_global"):
        return False
    m = ir.MemRefType(v.type)
    return m.has_static_shape and m.rank > 0 and contiguous(m) and m.get_strides_and_offset()[1] == 0


def _uses_d0(expr: ir.AffineExpr) -> bool | None:
    """Whether a dimension-or-constant result is d0; None for anything else."""
    if isinstance(expr, ir.AffineDimExpr):
        return expr.position == 0
    if isinstance(expr, ir.AffineConstantExpr):
        return False
    return None


# Contractions whose loop d0 runs over the rows of their first input and of
# their output (named ops with their default maps; the MPI route's pieces
# take them, `match(contractions=True)`: a matmul on a gathered input is a
# sum of matmuls on its chunks). Each row of the output is the same
# computation on the same row of the input whatever rows are around it.
CONTRACTIONS = {"linalg.matmul": ("(m, n, k) -> (m, k)", "(m, n, k) -> (k, n)", "(m, n, k) -> (m, n)"),
                "linalg.matvec": ("(m, k) -> (m, k)", "(m, k) -> (k)", "(m, k) -> (m)")}


def _shape(op: Op, contractions: bool = False) -> tuple[list[ir.AffineMap], list[bool], int] | None:
    """(indexing map per memref operand, whether it is written, n_loops) of
    a linalg.generic or fill on memrefs whose loop d0 is parallel (with
    `contractions`, or a CONTRACTIONS op)."""
    if contractions and op.name in CONTRACTIONS:
        maps = [ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{m}>")).value for m in CONTRACTIONS[op.name]]
        given = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])] \
            if "indexing_maps" in op.attributes else maps
        if len(op.results) or len(op.operands) != 3 or given != maps:
            return None  # (on tensors, or transposed or broadcast by its maps)
        return maps, [False, False, True], maps[0].n_dims
    if op.name == "linalg.fill":
        out = op.operands[1]
        if not isinstance(out.type, ir.MemRefType) or ir.MemRefType(out.type).rank == 0:
            return None
        rank = ir.MemRefType(out.type).rank
        return [ir.AffineMap.get_identity(rank)], [True], rank
    if len(op.results):
        return None
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if not iterators or "parallel" not in iterators[0]:
        return None
    if any("reduction" in i for i in iterators) and row_length(op) is None:
        return None  # (LLVM would add its rows in an order that depends on the tile: row_reductions.py)
    if _reads_beyond_its_rows(op):
        return None  # (cut to rows [a, b), it would compute something else: BODY_OPS)
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    n_in = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
    if len(maps) != len(op.operands):
        return None
    return maps, [i >= n_in for i in range(len(maps))], len(iterators)


# What the body of an op cut into rows may hold: values of its elements
# and of its loops' indices but d0's (`linalg.index 0` would count from
# each tile's first row), nothing with an effect (a load from a buffer no
# operand names, a call that counts: an outside attack's cases).
BODY_PREFIXES = ("arith.", "math.", "complex.", "index.")
BODY_OPS = ("linalg.yield", "linalg.index", "scf.if", "scf.yield", "ub.poison")


def _reads_beyond_its_rows(op: Op) -> bool:
    """Whether the body of a linalg.generic holds an op other than
    BODY_PREFIXES' and BODY_OPS, or `linalg.index 0`, anywhere in it."""
    found = False

    def visit(inner: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if inner != op.operation and (
                (inner.name == "linalg.index" and ir.IntegerAttr(inner.attributes["dim"]).value == 0)
                or not (inner.name.startswith(BODY_PREFIXES) or inner.name in BODY_OPS)):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _operands(op: Op) -> list[ir.Value]:
    return [op.operands[1]] if op.name == "linalg.fill" else list(op.operands)


def match(ops: Sequence[Op], start: int, contractions: bool = False) -> Epilogue | None:
    """The epilogue that begins at ops[start] (the first op after a
    collective's copies and combines), or None; with `contractions`, it
    may hold CONTRACTIONS ops too."""
    found: Epilogue | None = None
    i = start
    while i < len(ops):
        op = ops[i]
        i += 1
        if op.operation.name in PASSIVE:  # (.operation: a get_global's .name is its global)
            continue
        if op.operation.name not in LINALG and not (contractions and op.operation.name in CONTRACTIONS):
            break
        shape = _shape(op, contractions)
        if shape is None:
            break
        maps, writes, _ = shape
        rows: set[int] = set()
        row_numbers: list[int] = []
        read_only: set[ir.Value] = set()
        ok = True
        base = 1 if op.name == "linalg.fill" else 0
        for k, (v, m, w) in enumerate(zip(_operands(op), maps, writes)):
            if not isinstance(v.type, ir.MemRefType):
                continue  # a scalar operand
            kinds = [_uses_d0(e) for e in m.results]
            if not _root(v) or None in kinds:
                ok = False
            elif kinds[:1] == [True] and not any(kinds[1:]):
                rows.add(ir.MemRefType(v.type).shape[0])
                row_numbers.append(base + k)
            elif not any(kinds) and not w:
                read_only.add(v)
            else:
                ok = False
        if not ok or len(rows) != 1 or (found is not None and rows != {found.rows}):
            break
        if found is None:
            found = Epilogue([], rows.pop())
        found.row_operands[len(found.ops)] = row_numbers
        found.reads[len(found.ops)] = read_only
        found.ops.append(op)
        found.row_roots.update(op.operands[n] for n in row_numbers)
        found.read_only |= read_only
    if found is None or {_buffer(v) for v in found.row_roots} & {_buffer(v) for v in found.read_only}:
        return None  # (a buffer both written by rows and read whole)
    return found


def emit_rows(ep: Epilogue, row0: ir.Value | int, count: ir.Value | int, tiles: dict[ir.Value, ir.Value]) -> None:
    """Every op of `ep` on rows [row0, row0 + count), at the insertion point
    (a static count where it is one: the ops keep static shapes); a buffer
    in `tiles` is its tile, whose rows start at 0."""
    dyn = ir.ShapedType.get_dynamic_size()
    dyn_offset = ir.ShapedType.get_dynamic_stride_or_offset()
    views: dict[ir.Value, ir.Value] = {}
    for k, op in enumerate(ep.ops):
        for n in ep.row_operands[k]:
            v = op.operands[n]
            if v in views:
                continue
            m = ir.MemRefType(v.type)
            strides, _ = m.get_strides_and_offset()
            tile = tiles.get(v)
            if tile is not None and count == ir.MemRefType(tile.type).shape[0]:
                views[v] = tile
                continue
            first = 0 if tile is not None else row0  # (a tile's rows start at 0)
            offset = first * strides[0] if isinstance(first, int) else dyn_offset
            t = ir.MemRefType.get([count if isinstance(count, int) else dyn] + list(m.shape[1:]), m.element_type,
                                  ir.StridedLayoutAttr.get(offset, strides), m.memory_space)
            views[v] = memref.subview(tile if tile is not None else v, [first] + [0] * (m.rank - 1),
                                      [count] + list(m.shape[1:]), [1] * m.rank, result_type=t)
        clone = op.operation.clone()
        for n in ep.row_operands[k]:
            clone.operands[n] = views[op.operands[n]]
