"""gpu.memcpy of slices: upstream gpu-to-llvm (LLVM 22) rejects a strided
source (leaving the op unconverted, silently) and ignores the destination's
offset, so coll-gpu-legalize-memcpy hands every slice over as an
identity-layout memref that starts at the slice, built on the memref
descriptor with llvm ops."""
from mlir import ir
from mlir.dialects import llvm

from ..core.errors import PassError
from ..core.registry import register
from ..ir.walk import find_ops

KDYNAMIC = -2147483648  # llvm.getelementptr: index taken from an operand


def _descriptor_type(rank):
    arr = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arr})>")


def _identity_view(v):
    """`v` (a strided memref, maybe with an offset) as an identity-layout
    memref starting at its first element. Built on the memref descriptor;
    reconcile-unrealized-casts folds the casts once memrefs are lowered."""
    mt = ir.MemRefType(v.type)
    strides, _ = mt.get_strides_and_offset()
    rank = mt.rank
    desc_t = _descriptor_type(rank)
    i64 = ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    d = ir.Operation.create("builtin.unrealized_conversion_cast", results=[desc_t],
                            operands=[v]).result
    allocated = llvm.extractvalue(ptr, d, ir.DenseI64ArrayAttr.get([0]))
    aligned = llvm.extractvalue(ptr, d, ir.DenseI64ArrayAttr.get([1]))
    offset = llvm.extractvalue(i64, d, ir.DenseI64ArrayAttr.get([2]))
    start = llvm.getelementptr(ptr, aligned, [offset], ir.DenseI32ArrayAttr.get([KDYNAMIC]),
                               ir.TypeAttr.get(mt.element_type),
                               ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))
    out = llvm.mlir_poison(desc_t)
    out = llvm.insertvalue(out, allocated, ir.DenseI64ArrayAttr.get([0]))
    out = llvm.insertvalue(out, start, ir.DenseI64ArrayAttr.get([1]))
    out = llvm.insertvalue(out, llvm.mlir_constant(ir.IntegerAttr.get(i64, 0)),
                           ir.DenseI64ArrayAttr.get([2]))
    for k in range(rank):
        size = llvm.mlir_constant(ir.IntegerAttr.get(i64, mt.shape[k]))
        stride = llvm.mlir_constant(ir.IntegerAttr.get(i64, strides[k]))
        out = llvm.insertvalue(out, size, ir.DenseI64ArrayAttr.get([3, k]))
        out = llvm.insertvalue(out, stride, ir.DenseI64ArrayAttr.get([4, k]))
    ident = ir.MemRefType.get(mt.shape, mt.element_type, None, mt.memory_space)
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[ident],
                               operands=[out]).result


def _needs_view(t):
    """A layout upstream's gpu.memcpy lowering gets wrong: an offset, or
    strides that are not the identity's."""
    mt = ir.MemRefType(t)
    strides, offset = mt.get_strides_and_offset()
    expect, canonical = 1, []
    for d in reversed(list(mt.shape)):
        canonical.append(expect)
        expect *= d
    return offset != 0 or list(strides) != canonical[::-1]


def legalize_memcpy(module_op):
    """Rewrites gpu.memcpy operands with a non-identity layout in place."""
    copies = find_ops(module_op, "gpu.memcpy")
    with module_op.context, module_op.location:
        for op in copies:
            n_deps = len(op.operands) - 2
            for i in (n_deps, n_deps + 1):  # dst, src follow the async deps
                v = op.operands[i]
                if not _needs_view(v.type):
                    continue
                mt = ir.MemRefType(v.type)
                if any(d < 0 for d in mt.shape):
                    raise PassError("gpu.memcpy of a dynamically shaped slice is not supported",
                                    op.location)
                with ir.InsertionPoint(op), op.location:
                    op.operands[i] = _identity_view(v)
    return len(copies)


@register("coll-gpu-legalize-memcpy",
          "Make gpu.memcpy operands identity-layout (slices start at their first element)",
          anchor="builtin.module")
def legalize_memcpy_pass(module_op):
    legalize_memcpy(module_op)
