"""A block's strided copies and combines, row by row, for coll-to-gpu.

The explicit level moves a block along a non-leading axis as one op on
strided views (collectives/emit.py). gpu.memcpy and the combine kernels
take contiguous buffers only, so before coll-to-gpu each such op becomes
one op per contiguous row of its views (rank-1 subviews), all after the
op's own dependencies, joined into the token it had. The GPU program then
grows with the rows again, as every back end's did before; a strided copy
kernel (or cuMemcpy2DAsync) would keep it at one launch.
"""
import itertools

from mlir import ir

from ...ir import builders
from ...ir.ops import Combine, Copy
from ...ir.types import contiguous
from ...ir.walk import find_ops


def _row(v: ir.Value, idx: tuple[int, ...]) -> ir.Value:
    """Row `idx` (indices of every dimension but the last) of strided `v`."""
    t = ir.MemRefType(v.type)
    strides, offset = t.get_strides_and_offset()
    start = offset + sum(i * s for i, s in zip(idx, strides))
    width = t.shape[-1]
    rt = ir.MemRefType.get([width], t.element_type, ir.StridedLayoutAttr.get(start, [1]), t.memory_space)
    return ir.Operation.create("memref.subview", results=[rt], operands=[v], attributes={
        "static_offsets": ir.DenseI64ArrayAttr.get(list(idx) + [0]),
        "static_sizes": ir.DenseI64ArrayAttr.get([1] * len(idx) + [width]),
        "static_strides": ir.DenseI64ArrayAttr.get([1] * (len(idx) + 1)),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0])}).result


def split_rows(module_op: ir.Operation) -> None:
    """Every coll.copy and coll.combine with a non-contiguous operand -> one
    per row, joined (in place)."""
    for op in find_ops(module_op, lambda n: n in (Copy.NAME, Combine.NAME)):
        if op.name == Copy.NAME:
            c = Copy.of(op)
            bufs, deps = [c.source, c.target], list(c.deps)
        else:
            m = Combine.of(op)
            bufs, deps = m.inputs + [m.out], list(m.deps)
        if all(contiguous(b.type) for b in bufs):
            continue
        shape = ir.MemRefType(bufs[-1].type).shape
        with ir.InsertionPoint(op), op.location:
            tokens = []
            for idx in itertools.product(*(range(d) for d in shape[:-1])):
                rows = [_row(b, idx) for b in bufs]
                if op.name == Copy.NAME:
                    tokens.append(builders.copy(rows[0], rows[1], deps))
                else:
                    tokens.append(builders.combine(rows[0], rows[1:-1], rows[-1], Combine.of(op).kind, deps))
            op.results[0].replace_all_uses_with(builders.join(tokens) if tokens else builders.join(deps))
        op.erase()
