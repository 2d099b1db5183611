"""coll-ieee-minmax: arith.maximumf/minimumf -> llvm.intr.maximum/minimum.

Upstream `arith-expand` (which the CPU route needs for bf16 conversions)
expands maximumf/minimumf into compare-and-select, which returns -0 for
max(-0, +0); the LLVM intrinsics keep the IEEE 754-2019 semantics that the
arith ops define (NaN propagates, -0 < +0), so every device and the
reference agree bit for bit.
"""
from mlir import ir

from ...core.registry import register
from ...ir.walk import find_ops

INTRINSICS = {"arith.maximumf": "llvm.intr.maximum", "arith.minimumf": "llvm.intr.minimum"}


@register("coll-ieee-minmax",
          "Replace arith.maximumf/minimumf by llvm.intr.maximum/minimum (IEEE semantics, "
          "which arith-expand would lose)")
def ieee_minmax(module_op):
    for op in find_ops(module_op, lambda name: name in INTRINSICS):
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(INTRINSICS[op.name], results=[op.results[0].type],
                                      operands=list(op.operands))
        op.results[0].replace_all_uses_with(new.results[0])
        op.erase()
