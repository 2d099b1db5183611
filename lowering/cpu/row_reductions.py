"""coll-outline-row-reductions: a local row reduction runs row by row
through one function per kind of row, the same machine code wherever the
row comes from.

coll-reassociate-local-reductions lets LLVM add a row in lanes, and LLVM
picks the lanes and their order by what it knows around the loop: the same
RMSNorm row sum, on 40 rows of 64 or on a tile of 32 of them, came out an
ulp apart in a quarter of the rows (tests/unit/test_epilogue.py). So an
epilogue fused into a collective's tiles (epilogue.py) would not compute
the unfused program's bits. Here every linalg reduction over its last loop
(the others parallel) of rows of at least ROW_MIN elements becomes loops
over the rows that call a function taking one row (noinline and public:
neither inlined nor specialized to its callers), so LLVM compiles each kind
of row once, its association fixed by the row's type alone, fused or not.
Shorter rows stay loops (a call per row would cost more than the row).
"""
from mlir import ir
from mlir.dialects import func, memref, scf

from ...core.registry import register
from .kernels import index

ROW_MIN = 64
PREFIX = "coll_row_reduction_"


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _dims(m: ir.AffineMap) -> list[int] | None:
    out = []
    for e in m.results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        out.append(e.position)
    return out


def row_length(op: ir.Operation | ir.OpView) -> int | None:
    """The row length of a linalg.generic on static memrefs that reduces over
    its last loop only, every operand indexed by plain loops, the rows read
    along their last dimension (or a value per row) and written one value
    per row; None for any other op."""
    op = op.operation
    if op.name != "linalg.generic" or len(op.results):
        return None
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    n = len(iterators)
    if n < 2 or "reduction" not in iterators[-1] or any("parallel" not in i for i in iterators[:-1]):
        return None
    n_in = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
    length = None
    for k, (v, m) in enumerate(zip(op.operands, _maps(op))):
        if not isinstance(v.type, ir.MemRefType) or not ir.MemRefType(v.type).has_static_shape:
            return None
        dims = _dims(m)
        if dims is None or len(set(dims)) != len(dims) or dims != sorted(dims):
            return None
        if n - 1 in dims:
            if k >= n_in or dims[-1] != n - 1:
                return None  # an output per element of the row, or a row read across
            length = ir.MemRefType(v.type).shape[-1]
    if length is None or length < ROW_MIN or _captured(op) is None:
        return None
    return length


def _captured(op: ir.Operation) -> list[ir.Value] | None:
    """The constants from outside that the body of `op` uses (cloned into the
    outlined function); None when it uses anything else from outside, has
    regions, or reads its loop indices (linalg.index: one loop is left)."""
    body = op.regions[0].blocks[0]
    inside = {o.operation for o in body.operations}
    out: list[ir.Value] = []
    for o in body.operations:
        if o.operation.name == "linalg.index" or len(o.operation.regions):
            return None
        for v in o.operands:
            if isinstance(v.owner, ir.Block):
                if v.owner != body:
                    return None
            elif v.owner.operation not in inside:
                if v.owner.operation.name != "arith.constant":
                    return None
                if v not in out:
                    out.append(v)
    return out


def _row_type(t: ir.MemRefType, keep_last: bool) -> ir.MemRefType:
    """One row of `t` (its last dimension, or one element), offset dynamic."""
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides[-1:] if keep_last else [])
    return ir.MemRefType.get(t.shape[-1:] if keep_last else [], t.element_type, layout, t.memory_space)


class _Outliner:
    def __init__(self, module_op: ir.Operation) -> None:
        self.body = module_op.regions[0].blocks[0]
        self.made: dict[str, str] = {}  # the function's text without its name -> its name
        self.taken = {ir.StringAttr(o.attributes["sym_name"]).value for o in self.body.operations
                      if "sym_name" in o.attributes}

    def rewrite(self, op: ir.Operation) -> None:
        maps, n = _maps(op), len(ir.ArrayAttr(op.attributes["iterator_types"]))
        rows = [n - 1 in (_dims(m) or []) for m in maps]
        types = [ir.MemRefType(v.type) for v in op.operands]
        callee = self._function(op, [_row_type(t, r) for t, r in zip(types, rows)], rows)
        bounds: list[int] = [0] * (n - 1)
        for t, m in zip(types, maps):
            for d, size in zip(_dims(m) or [], t.shape):
                if d < n - 1:
                    bounds[d] = size
        ivs: list[ir.Value] = []

        def nest(k: int) -> None:
            """Loops over the rows (parallel loops k..), the call innermost."""
            if k < n - 1:
                loop = scf.ForOp(index(0), index(bounds[k]), index(1))
                with ir.InsertionPoint(loop.body):
                    ivs.append(loop.induction_variable)
                    nest(k + 1)
                    scf.YieldOp([])
                return
            args = []
            for v, t, m, r in zip(op.operands, types, maps, rows):
                dims = _dims(m) or []
                offsets: list[ir.Value | int] = [ivs[d] if d < n - 1 else 0 for d in dims]
                sizes = [t.shape[-1] if d == n - 1 else 1 for d in dims]
                row = _row_type(t, r)
                if all(isinstance(o, int) for o in offsets):  # (a row every call reads: a static offset, cast)
                    strides, base = t.get_strides_and_offset()
                    at = base + sum(o * s for o, s in zip(offsets, strides))
                    fixed = ir.MemRefType.get(row.shape, t.element_type, ir.StridedLayoutAttr.get(
                        at, strides[-1:] if r else []), t.memory_space)
                    args.append(memref.cast(row, memref.subview(v, offsets, sizes, [1] * len(dims),
                                                                result_type=fixed)))
                else:
                    args.append(memref.subview(v, offsets, sizes, [1] * len(dims), result_type=row))
            func.CallOp([], callee, args)
        with ir.InsertionPoint(op), op.location:
            nest(0)
        op.erase()

    def _function(self, op: ir.Operation, arg_types: list[ir.Type], rows: list[bool]) -> str:
        """The name of the function that runs `op` on one row of each operand."""
        with ir.InsertionPoint(self.body), op.location:
            f = func.FuncOp("coll_row_reduction", (arg_types, []))
            entry = f.add_entry_block()
            with ir.InsertionPoint(entry):
                constants = {c: c.owner.operation.clone().results[0] for c in _captured(op) or []}
                clone = op.clone()
                for k, a in enumerate(entry.arguments):
                    clone.operands[k] = a
                for inner in clone.regions[0].blocks[0].operations:
                    for k, v in enumerate(inner.operands):
                        if v in constants:
                            inner.operands[k] = constants[v]
                one = ir.AffineMap.get(1, 0, [ir.AffineDimExpr.get(0)])
                none = ir.AffineMap.get(1, 0, [])
                clone.attributes["indexing_maps"] = ir.ArrayAttr.get(
                    [ir.AffineMapAttr.get(one if r else none) for r in rows])
                clone.attributes["iterator_types"] = ir.ArrayAttr.get(
                    [ir.Attribute.parse("#linalg.iterator_type<reduction>")])
                func.ReturnOp([])
        f.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        key = str(f.operation)
        name = self.made.get(key)
        if name is not None:
            f.operation.erase()
            return name
        name = f"{PREFIX}{len(self.made)}"
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        f.attributes["sym_name"] = ir.StringAttr.get(name)
        self.made[key] = name
        return name


def outline_row_reductions(module_op: ir.Operation) -> None:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if row_length(op) is not None:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)
    outliner = _Outliner(module_op)
    for op in found:
        outliner.rewrite(op)


@register("coll-outline-row-reductions",
          "A linalg reduction over rows of at least 64 elements (its last loop; the others parallel) "
          "becomes loops calling one function per kind of row (noinline), so that LLVM adds every such "
          "row in the same order, whatever surrounds it (a tile of an epilogue, the whole buffer)",
          anchor="builtin.module")
def outline_row_reductions_pass(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        outline_row_reductions(module_op)
