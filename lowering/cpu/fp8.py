"""coll-fp8-conversions: arith.extf/truncf between the fp8 types
(f8E4M3FN, f8E5M2) and f32 as integer bit arithmetic.

LLVM IR has no fp8 type, and upstream MLIR 22.1.8 lowers these conversions
nowhere: `arith-expand` expands only bf16, f8E8M0 and f4E2M1 (its options
include-bf16, include-f8e8m0, include-f4e2m1), and convert-arith-to-llvm
leaves an fp8 extf as it is. So the CPU route (route.py CPU_TO_LLVM, after
arith-emulate-unsupported-floats has put f32 around every other fp8 op) and
the GPU one (gpu/nvvm.py, before gpu-lower-to-nvvm-pipeline) run this pass.

Semantics are APFloat's (MLIR's folder) and ml_dtypes' (the reference):
truncf rounds to nearest even; an E4M3FN result beyond 448 (from 464 up)
and an infinity become NaN (S.1111.111: the format has no infinities), an
E5M2 one beyond 57344 (from 61440 up) becomes infinity; a NaN becomes the
quiet NaN of its sign (E4M3FN S.1111.111, E5M2 S.11111.10). extf is exact;
a NaN becomes f32's quiet NaN of its sign. Scalars and vectors alike. The
formats' facts (mantissa bits, bias, whether they have infinities) come
from the one table, ir/kinds.py.
"""
import math

from mlir import ir
from mlir.dialects import arith
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ...core.registry import register
from ...ir.kinds import ELEMENTS

FP8 = tuple(n for n, e in ELEMENTS.items() if not e.integer and e.bytes == 1)


class _Format:
    """An fp8 format's bit facts, from its Element row."""

    def __init__(self, name: str) -> None:
        e = ELEMENTS[name]
        self.m = -int(math.log2(e.eps))       # mantissa bits
        self.bias = 1 - int(math.log2(e.tiny))
        self.finite_only = not e.infinities   # E4M3FN
        # The first code past the finite ones (magnitude bits): infinity
        # (E5M2, S.11111.00), or NaN (E4M3FN, S.1111.111): where overflow goes.
        self.inf_code = 0x7F if self.finite_only else (0x7F >> self.m) << self.m
        self.max_code = self.inf_code - 1
        self.nan_code = 0x7F if self.finite_only else self.inf_code | 1 << (self.m - 1)  # quiet


def _like(t: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(t).shape, elem) if isinstance(t, ir.VectorType) else elem


def _scalar(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


class _Builder:
    """Integer and float constants and ops shaped like one value (a scalar
    or a vector)."""

    def __init__(self, t: ir.Type) -> None:
        self.t = t
        self.i8 = _like(t, ir.IntegerType.get_signless(8))
        self.i32 = _like(t, ir.IntegerType.get_signless(32))
        self.f32 = _like(t, ir.F32Type.get())

    def c(self, v: int | float, t: ir.Type | None = None) -> ir.Value:
        t = t or self.i32
        s = _scalar(t)
        a = ir.FloatAttr.get(s, float(v)) if isinstance(s, ir.F32Type) else ir.IntegerAttr.get(s, int(v))
        if isinstance(t, ir.VectorType):
            return arith.constant(t, ir.DenseElementsAttr.get_splat(t, a))
        return arith.constant(t, a)


def _extend(x: ir.Value, fmt: _Format, b: _Builder) -> ir.Value:
    """fp8 value -> f32 value, exact."""
    bits = arith.extui(b.i32, arith.bitcast(b.i8, x))
    sign = arith.shli(arith.andi(bits, b.c(0x80)), b.c(24))
    mag = arith.andi(bits, b.c(0x7F))
    normal = arith.addi(arith.shli(mag, b.c(23 - fmt.m)), b.c((127 - fmt.bias) << 23))
    # exponent field 0: mag * 2^(1 - bias - m), exact in f32 (normal there)
    tiny = arith.mulf(arith.uitofp(b.f32, mag), b.c(2.0 ** (1 - fmt.bias - fmt.m), b.f32))
    out = arith.select(arith.cmpi(arith.CmpIPredicate.ult, mag, b.c(1 << fmt.m)),
                       arith.bitcast(b.i32, tiny), normal)
    special = b.c(0x7FC00000)  # quiet NaN
    if not fmt.finite_only:
        special = arith.select(arith.cmpi(arith.CmpIPredicate.eq, mag, b.c(fmt.inf_code)), b.c(0x7F800000), special)
    out = arith.select(arith.cmpi(arith.CmpIPredicate.ugt, mag, b.c(fmt.max_code)), special, out)
    return arith.bitcast(b.f32, arith.ori(out, sign))


def _truncate(x: ir.Value, fmt: _Format, b: _Builder, result: ir.Type) -> ir.Value:
    """f32 value -> fp8 value, rounded to nearest even."""
    u = arith.bitcast(b.i32, x)
    sign = arith.andi(arith.shrui(u, b.c(24)), b.c(0x80))
    a = arith.andi(u, b.c(0x7FFFFFFF))
    # Normal in fp8: drop 23 - m mantissa bits, rounding to nearest even (a
    # carry moves into the exponent), rebias; past the largest finite value
    # it reaches the infinity (E5M2) or NaN (E4M3FN) code.
    sh = 23 - fmt.m
    lsb = arith.andi(arith.shrui(a, b.c(sh)), b.c(1))
    r = arith.shrui(arith.addi(a, arith.addi(b.c((1 << (sh - 1)) - 1), lsb)), b.c(sh))
    normal = arith.minui(arith.subi(r, b.c((127 - fmt.bias) << fmt.m)), b.c(fmt.inf_code))
    # Subnormal in fp8 (or zero): the significand (implicit bit set) shifted
    # right by s to units of 2^(1 - bias - m), rounded to nearest even; a
    # carry to 2^m is the smallest normal's code.
    e = arith.shrui(a, b.c(23))
    m = arith.ori(arith.andi(a, b.c(0x7FFFFF)), b.c(0x800000))
    s = arith.minui(arith.subi(b.c(151 - fmt.bias - fmt.m), e), b.c(31))
    q = arith.shrui(m, s)
    rem = arith.andi(m, arith.subi(arith.shli(b.c(1), s), b.c(1)))
    half = arith.shli(b.c(1), arith.subi(s, b.c(1)))
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(q, b.c(1)), b.c(0))
    up = arith.ori(arith.cmpi(arith.CmpIPredicate.ugt, rem, half),
                   arith.andi(arith.cmpi(arith.CmpIPredicate.eq, rem, half), odd))
    sub = arith.addi(q, arith.extui(b.i32, up))
    out = arith.select(arith.cmpi(arith.CmpIPredicate.ult, a, b.c((128 - fmt.bias) << 23)), sub, normal)
    out = arith.select(arith.cmpi(arith.CmpIPredicate.ugt, a, b.c(0x7F800000)), b.c(fmt.nan_code), out)
    return arith.bitcast(result, arith.trunci(b.i8, arith.ori(out, sign)))


def _extf(op: ir.Operation, rewriter: PatternRewriter) -> bool | None:
    src, dst = op.operands[0].type, op.results[0].type
    name = str(_scalar(src))
    if name not in FP8:
        return True
    with ir.InsertionPoint(op), op.location:
        b = _Builder(src)
        v = _extend(op.operands[0], _Format(name), b)
        if _scalar(dst) != ir.F32Type.get():  # f64: exactly, from f32
            v = arith.extf(dst, v)
    rewriter.replace_op(op, [v])
    return None


def _truncf(op: ir.Operation, rewriter: PatternRewriter) -> bool | None:
    src, dst = op.operands[0].type, op.results[0].type
    name = str(_scalar(dst))
    if name not in FP8:
        return True
    s = _scalar(src)
    # From f64 through f32 would round twice: left as it is (no lowering).
    if not isinstance(s, ir.F32Type | ir.F16Type | ir.BF16Type):
        return True
    with ir.InsertionPoint(op), op.location:
        b = _Builder(dst)
        x = op.operands[0] if isinstance(s, ir.F32Type) else arith.extf(b.f32, op.operands[0])  # exact
        v = _truncate(x, _Format(name), b, dst)
    rewriter.replace_op(op, [v])
    return None


def _patterns() -> FrozenRewritePatternSet:
    s = RewritePatternSet()
    s.add("arith.extf", _extf)
    s.add("arith.truncf", _truncf)
    return s.freeze()


def expand_fp8(module_op: ir.Operation) -> None:
    """Every fp8 <-> f32 conversion in `module_op` (and in its gpu.modules)
    as integer arithmetic, in place."""
    walk_and_apply_patterns(module_op, _patterns())


@register("coll-fp8-conversions",
          "Expand arith.extf/truncf between f8E4M3FN/f8E5M2 and f32 into integer arithmetic "
          "(round to nearest even; upstream 22.1.8 lowers them nowhere)")
def fp8_conversions(module_op: ir.Operation) -> None:
    expand_fp8(module_op)
