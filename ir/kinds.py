"""The one table of reduction kinds and element types.

A new reduction kind is one `Kind(...)` row here; every lowering, runtime
and check reads this table, and the dialect's kind constraint is generated
from it (collectives/irdl.py).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    bitwise: bool      # integers and i1 only
    float_op: str      # the arith op that combines two floats ('' if none)
    int_op: str        # the arith op that combines two integers
    numpy: str         # the numpy ufunc of the reference
    # x (+) x == x: a contribution counted twice is still exact (max, min,
    # and, or); coll-check-semantics compares such values as sets.
    idempotent: bool = False
    # On floats each step rounds, so how the contributions associate changes
    # the bits (sum, prod): what the order contract (ir/ops.py ORDERS) fixes.
    rounds: bool = False

    def arith_op(self, element: str) -> str:
        """'arith.addf', ... for an element type name; ValueError if the kind
        does not apply to it."""
        op = self.int_op if ELEMENTS[element].integer else self.float_op
        if not op:
            raise ValueError(f"reduction kind '{self.name}' is not valid for element type {element}")
        return op


# max/min on floats are arith.maximumf/minimumf: IEEE maximum/minimum, NaN
# propagates and -0 < +0, so the result never depends on operand order.
KINDS = {k.name: k for k in (
    Kind("sum", False, "arith.addf", "arith.addi", "add", rounds=True),
    Kind("prod", False, "arith.mulf", "arith.muli", "multiply", rounds=True),
    Kind("max", False, "arith.maximumf", "arith.maxsi", "maximum", idempotent=True),
    Kind("min", False, "arith.minimumf", "arith.minsi", "minimum", idempotent=True),
    Kind("and", True, "", "arith.andi", "bitwise_and", idempotent=True),
    Kind("or", True, "", "arith.ori", "bitwise_or", idempotent=True),
    Kind("xor", True, "", "arith.xori", "bitwise_xor"),
)}
BITWISE_KINDS = tuple(k for k, v in KINDS.items() if v.bitwise)


@dataclass(frozen=True)
class Element:
    name: str
    bytes: int         # bytes per element in memory (i1: one byte, like numpy bool)
    numpy: str         # numpy dtype of the arrays (bf16, fp8: their unsigned-integer bit patterns)
    integer: bool
    eps: float = 0.0   # unit roundoff (floats)
    tiny: float = 0.0  # smallest normal (floats)
    compute: str = ""  # the type a kernel combines it in ('' = itself)
    max_exponent: int = 0  # floats: the largest finite value is (2 - eps) * 2^max_exponent ...
    largest: float = 0.0   # ... unless given here (f8E4M3FN: 448, its all-ones pattern is NaN)
    infinities: bool = True  # floats: whether it has them (f8E4M3FN: overflow is NaN)
    # The ml_dtypes type of the same bits, where numpy has none: an array of
    # it is taken as its bit patterns, and the reference rounds with it.
    ml_dtype: str = ""

    @property
    def max_finite(self) -> float:
        return self.largest or (2 - self.eps) * 2.0 ** self.max_exponent

    @property
    def stored(self) -> str:
        """The element type a buffer holds in memory: i1 is stored as i8."""
        return "i8" if self.name == "i1" else self.name

    @property
    def llvm(self) -> str:
        """The LLVM IR type that holds it: LLVM has no fp8 type, so fp8
        is loaded and stored as i8 (and bitcast); the stored type else."""
        return "i8" if not self.integer and self.bytes == 1 else self.stored


ELEMENTS = {e.name: e for e in (
    Element("f16", 2, "float16", False, 2.0 ** -10, 2.0 ** -14, "f32", 15),
    Element("bf16", 2, "uint16", False, 2.0 ** -7, 2.0 ** -126, "f32", 127, ml_dtype="bfloat16"),
    # OCP fp8: E4M3FN has no infinities (overflow and inf round to NaN,
    # S.1111.111), E5M2 is IEEE-like. Combined in f32, rounded once.
    Element("f8E4M3FN", 1, "uint8", False, 2.0 ** -3, 2.0 ** -6, "f32", 8, 448.0, False, "float8_e4m3fn"),
    Element("f8E5M2", 1, "uint8", False, 2.0 ** -2, 2.0 ** -14, "f32", 15, ml_dtype="float8_e5m2"),
    Element("f32", 4, "float32", False, 2.0 ** -23, 2.0 ** -126, "", 127),
    Element("f64", 8, "float64", False, 2.0 ** -52, 2.0 ** -1022, "", 1023),
    Element("i1", 1, "bool", True),
    Element("i8", 1, "int8", True),
    Element("i16", 2, "int16", True),
    Element("i32", 4, "int32", True),
    Element("i64", 8, "int64", True),
)}
ELEMENT_TYPES = tuple(ELEMENTS)


def order_matters(kind: str, element: str) -> bool:
    """Whether the association of the contributions changes the bits: a
    rounding kind on floats (integers wrap exactly; max, min and the bitwise
    kinds never depend on it)."""
    return KINDS[kind].rounds and not ELEMENTS[element].integer


def partials_round(kind: str, element: str) -> bool:
    """Whether a partial result passed between devices would round once
    more than the order contract's one rounding: an order that matters on
    an element combined in a wider type (f16, bf16, fp8 in f32) while buffers
    hold the element type."""
    return order_matters(kind, element) and bool(ELEMENTS[element].compute)
