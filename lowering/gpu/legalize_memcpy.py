"""gpu.memcpy of slices: upstream gpu-to-llvm (LLVM 22) rejects a strided
source (leaving the op unconverted, silently) and ignores the destination's
offset, so coll-gpu-legalize-memcpy hands every slice over as an
identity-layout memref that starts at the slice, built on the memref
descriptor with llvm ops."""
from mlir import ir
from mlir.dialects import llvm

from ...core.errors import PassError
from ...core.registry import register
from ...ir.walk import find_ops
from ..stored_types import llvm_element

KDYNAMIC = -2147483648  # llvm.getelementptr: index taken from an operand
KDYNAMIC_LIMIT = 1 << 31  # constant indices are i32


def _descriptor_type(rank: int) -> ir.Type:
    arr = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arr})>")


def _identity_view(v: ir.Value) -> ir.Value:
    """`v` (a strided memref, maybe with an offset) as an identity-layout
    memref starting at its first element: its descriptor with the aligned
    pointer moved to the slice, offset 0 and, where they differ, the
    identity's strides (the sizes stay). reconcile-unrealized-casts folds
    the casts once memrefs are lowered. Few ops: a ring has one per slice
    copied, and every later stage pays for each."""
    mt = ir.MemRefType(v.type)
    strides, offset = mt.get_strides_and_offset()
    rank = mt.rank
    desc_t = _descriptor_type(rank)
    i64 = ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    d = ir.Operation.create("builtin.unrealized_conversion_cast", results=[desc_t],
                            operands=[v]).result
    aligned = llvm.extractvalue(ptr, d, ir.DenseI64ArrayAttr.get([1]))
    if mt.is_dynamic_stride_or_offset(offset):
        shift, index = [llvm.extractvalue(i64, d, ir.DenseI64ArrayAttr.get([2]))], [KDYNAMIC]
    elif offset >= KDYNAMIC_LIMIT:  # a constant index is an i32 (and not the dynamic marker)
        shift, index = [llvm.mlir_constant(ir.IntegerAttr.get(i64, offset))], [KDYNAMIC]
    else:
        shift, index = [], [offset]
    start = llvm.getelementptr(ptr, aligned, shift, ir.DenseI32ArrayAttr.get(index),
                               ir.TypeAttr.get(llvm_element(mt.element_type)),
                               ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))
    out = llvm.insertvalue(d, start, ir.DenseI64ArrayAttr.get([1]))
    out = llvm.insertvalue(out, llvm.mlir_constant(ir.IntegerAttr.get(i64, 0)),
                           ir.DenseI64ArrayAttr.get([2]))
    for k, want in enumerate(_canonical(mt)):
        if strides[k] != want:
            out = llvm.insertvalue(out, llvm.mlir_constant(ir.IntegerAttr.get(i64, want)),
                                   ir.DenseI64ArrayAttr.get([4, k]))
    ident = ir.MemRefType.get(mt.shape, mt.element_type, None, mt.memory_space)
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[ident],
                               operands=[out]).result


def _canonical(mt: ir.MemRefType) -> list[int]:
    """The identity layout's strides of shape `mt.shape`."""
    expect = 1
    out: list[int] = []
    for d in reversed(list(mt.shape)):
        out.append(expect)
        expect *= d
    return out[::-1]


def _needs_view(t: ir.Type) -> bool:
    """A layout upstream's gpu.memcpy lowering gets wrong: an offset, or
    strides that are not the identity's."""
    mt = ir.MemRefType(t)
    strides, offset = mt.get_strides_and_offset()
    return offset != 0 or list(strides) != _canonical(mt)


def legalize_memcpy(module_op: ir.Operation) -> int:
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
def legalize_memcpy_pass(module_op: ir.Operation) -> None:
    legalize_memcpy(module_op)
