"""Local work that LLVM's loop vectorizer can take: the CPU and MPI routes'
math and reductions (not the collectives' combines, which coll-to-cpu has
already made loops of explicit vectors by then).

coll-approximate-math: f32 math.exp and math.tanh -> inline arithmetic.
convert-math-to-libm makes each a libm call per element (17 ms for tanh
on 1024 x 1024), which no loop around it can vectorize. Upstream's
polynomial approximations (populateMathPolynomialApproximationPatterns)
are reached only by a test pass, not from the Python bindings (22.1.8), so
these are written here, with the same algorithms: exp by Cody-Waite range
reduction and Cephes' degree-6 polynomial, tanh by Eigen's rational
(13/6) on [-7.9988, 7.9988] that upstream's TanhApproximation uses. Only
mulf and addf (no fma: llc's generic x86-64 target, the MPI library's,
would call libm's fmaf), no floor (a libm call there too: the rounding is
a truncating fptosi of x + 0.5 * sign), so every target computes the
same bits. Against float64 numpy rounded to f32, on sweeps of 2^17
points (tests/unit/test_local_math.py): exp within 1 ulp (subnormal
results included), tanh within 6 ulp (4 near 0; 1 from |x| > 8.7 on,
where f32's tanh is +-1). NaN stays NaN; exp(inf) = inf, exp(-inf) = 0,
tanh(+-inf) = +-1. f64 keeps libm.

coll-reassociate-local-reductions: float arith ops in the body of a row
reduction (a linalg.generic reducing over its last loop, rows of at least
64 elements: row_reductions.row_length) get fastmath `reassoc`, so LLVM may
vectorize the row's loop (split its sum into lanes, added at the end): the
order of a local row sum changes, as XLA's own does. Each such row is added
by one outlined function per kind of row (coll-outline-row-reductions), so
the order is the same on every run and wherever the row comes from (a
fused epilogue's tile, the whole buffer). Other reductions stay in order:
LLVM could only reassociate them as their surroundings let it, and a
reduction over a leading loop vectorizes along its parallel inner loop
without it. Combines are not linalg ops: their device order, and bits,
are kept (tests/unit/test_determinism.py).
"""
import math
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ...core.registry import register
from .row_reductions import row_length

REASSOCIATED = ("arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf")

# Cephes expf: exp(r) = 1 + r + r^2 * P(r) on |r| <= ln2 / 2.
EXP_P = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4  # LN2_HI has 9 bits: k * LN2_HI is exact
EXP_LOW, EXP_HIGH = -104.0, 89.0  # exp below rounds to 0 in f32, above to inf
# Eigen's tanh (upstream's TanhApproximation): x * A(x^2) / B(x^2).
TANH_A = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
          1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
TANH_B = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)
TANH_CLAMP, TANH_TINY, TANH_ONE = 7.99881172180175781, 0.0004, 8.7


class _Build:
    """Arithmetic on values of one type (f32 or a vector of f32), emitted at
    the insertion point."""

    def __init__(self, t: ir.Type):
        self.t = t
        self.vector = isinstance(t, ir.VectorType)
        shape = ir.VectorType(t).shape if self.vector else []
        self.i32 = ir.IntegerType.get_signless(32)
        self.it = ir.VectorType.get(shape, self.i32) if self.vector else self.i32
        self.bt = ir.VectorType.get(shape, ir.IntegerType.get_signless(1)) if self.vector \
            else ir.IntegerType.get_signless(1)

    def const(self, v: float) -> ir.Value:
        f32 = ir.F32Type.get()
        attr = ir.DenseElementsAttr.get_splat(self.t, ir.FloatAttr.get(f32, v)) if self.vector \
            else ir.FloatAttr.get(f32, v)
        return arith.constant(self.t, attr)

    def iconst(self, v: int) -> ir.Value:
        attr = ir.DenseElementsAttr.get_splat(self.it, ir.IntegerAttr.get(self.i32, v)) if self.vector \
            else ir.IntegerAttr.get(self.i32, v)
        return arith.constant(self.it, attr)

    def horner(self, x: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
        p = self.const(coefficients[0])
        for c in coefficients[1:]:
            p = arith.addf(arith.mulf(p, x), self.const(c))
        return p

    def clamp(self, x: ir.Value, low: float, high: float) -> ir.Value:
        """x in [low, high]; NaN stays NaN (ordered compares are false)."""
        lo, hi = self.const(low), self.const(high)
        x = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, lo), lo, x)
        return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, hi), hi, x)

    def pow2(self, k: ir.Value) -> ir.Value:
        """2^k for i32 k in [-126, 127]: the exponent field."""
        bits = arith.shli(arith.addi(k, self.iconst(127)), self.iconst(23))
        return arith.bitcast(self.t, bits)


def _exp(b: _Build, x0: ir.Value) -> ir.Value:
    x = b.clamp(x0, EXP_LOW, EXP_HIGH)
    # k = round(x / ln2): truncate x / ln2 + 0.5 * sign(x)
    t = arith.mulf(x, b.const(1 / math.log(2)))
    half = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, t, b.const(0.0)), b.const(-0.5), b.const(0.5))
    k = arith.fptosi(b.it, arith.addf(t, half))
    kf = arith.sitofp(b.t, k)
    r = arith.subf(arith.subf(x, arith.mulf(kf, b.const(LN2_HI))), arith.mulf(kf, b.const(LN2_LO)))
    y = arith.addf(arith.addf(arith.mulf(b.horner(r, EXP_P), arith.mulf(r, r)), r), b.const(1.0))
    # 2^k as two factors (k in [-150, 129]: each half an exponent field)
    k1 = arith.shrsi(k, b.iconst(1))
    y = arith.mulf(arith.mulf(y, b.pow2(k1)), b.pow2(arith.subi(k, k1)))
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x0, x0), x0, y)


def _tanh(b: _Build, x0: ir.Value) -> ir.Value:
    x = b.clamp(x0, -TANH_CLAMP, TANH_CLAMP)
    x2 = arith.mulf(x, x)
    p = arith.mulf(x, b.horner(x2, TANH_A))
    q = b.horner(x2, TANH_B)
    negative = arith.cmpf(arith.CmpFPredicate.OLT, x, b.const(0.0))
    absx0 = arith.select(negative, arith.negf(x0), x0)
    tiny = arith.cmpf(arith.CmpFPredicate.OLT, absx0, b.const(TANH_TINY))
    y = arith.select(tiny, x, arith.divf(p, q))
    # The rational reaches 1 - 3 ulp at the clamp; f32 tanh is 1 from 8.7 on
    one = arith.select(negative, b.const(-1.0), b.const(1.0))
    return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, absx0, b.const(TANH_ONE)), one, y)


APPROXIMATIONS: dict[str, Callable[[_Build, ir.Value], ir.Value]] = {"math.exp": _exp, "math.tanh": _tanh}


def _is_f32(t: ir.Type) -> bool:
    if isinstance(t, ir.VectorType):
        t = ir.VectorType(t).element_type
    return isinstance(t, ir.F32Type)


def _approximate(op: ir.Operation, rewriter: PatternRewriter) -> None:
    t = op.results[0].type
    if not _is_f32(t):
        return  # f64 (and what math-extend-to-supported-types left): libm
    with ir.InsertionPoint(op), op.location:
        value = APPROXIMATIONS[op.name](_Build(t), op.operands[0])
    rewriter.replace_op(op, [value])


def _patterns() -> FrozenRewritePatternSet:
    s = RewritePatternSet()
    for name in APPROXIMATIONS:
        s.add(name, _approximate)
    return s.freeze()


@register("coll-approximate-math",
          "Replace f32 math.exp/math.tanh by inline arithmetic that LLVM vectorizes (not libm calls; "
          "exp within 1 ulp, tanh within 6)")
def approximate_math(module_op: ir.Operation) -> None:
    walk_and_apply_patterns(module_op, _patterns())


def _reassoc(op: ir.Operation) -> ir.WalkResult:
    """Only the accumulation (an op on an output's block argument): the
    other arithmetic keeps its order ((x * 1e30) * 1e-30 must not fold
    into x, an outside attack's case)."""
    if row_length(op) is not None:
        reassoc = ir.Attribute.parse("#arith.fastmath<reassoc>")
        block = op.regions[0].blocks[0]
        n_out = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[1]
        accumulators = list(block.arguments)[len(block.arguments) - n_out:]
        for inner in block.operations:
            if inner.operation.name in REASSOCIATED and any(v in accumulators for v in inner.operands):
                inner.operation.attributes["fastmath"] = reassoc
    return ir.WalkResult.ADVANCE


@register("coll-reassociate-local-reductions",
          "Mark the float arithmetic of linalg row reductions (over the last loop, rows of at least 64, "
          "which coll-outline-row-reductions outlines) fastmath<reassoc>, so that LLVM vectorizes their "
          "loops (local work only: combines keep their order)")
def reassociate_local_reductions(module_op: ir.Operation) -> None:
    module_op.walk(_reassoc, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
