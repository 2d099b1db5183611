"""coll-ieee-minmax: arith.maximumf/minimumf -> llvm.intr.maximum/minimum.

Upstream `arith-expand` (which the CPU route needs for bf16 conversions)
expands maximumf/minimumf into compare-and-select, which returns -0 for
max(-0, +0); the LLVM intrinsics keep the IEEE 754-2019 semantics that the
arith ops define (NaN propagates, -0 < +0), so every device and the
reference agree bit for bit.
"""
from mlir import ir
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ...core.registry import register

INTRINSICS = {"arith.maximumf": "llvm.intr.maximum", "arith.minimumf": "llvm.intr.minimum"}


def _to_intrinsic(op: ir.Operation, rewriter: PatternRewriter) -> None:
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(INTRINSICS[op.name], results=[op.results[0].type], operands=list(op.operands))
    rewriter.replace_op(op, [new.results[0]])


def _patterns() -> FrozenRewritePatternSet:
    s = RewritePatternSet()
    for name in INTRINSICS:
        s.add(name, _to_intrinsic)
    return s.freeze()


@register("coll-ieee-minmax",
          "Replace arith.maximumf/minimumf by llvm.intr.maximum/minimum (IEEE semantics, "
          "which arith-expand would lose)")
def ieee_minmax(module_op: ir.Operation) -> None:
    walk_and_apply_patterns(module_op, _patterns())
