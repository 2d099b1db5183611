"""coll-widen-contractions: contractions of 16-bit floats (bf16, f16)
accumulate in f32 and round once, as XLA computes a `dot_general` of them
on the CPU; upstream's linalg rounds every partial sum to the element type,
and over K terms that drifts from JAX's numbers by up to K roundings.

On tensors, before bufferization: a named contraction (linalg.matmul,
batch_matmul, matvec, ...) or a linalg.generic with a reduction whose body
is a multiply-accumulate (what jaxlib's legalization makes of a
dot_general) and whose result is bf16/f16 becomes

    %init32 = linalg.generic extf(%init)          f32
    %r32    = <the contraction>(ins...) outs(%init32)   products and sums in f32
    %r      = linalg.generic truncf(%r32)         one rounding

Named ops take the wider output as they are (their inputs are extended to
the output's type); a generic's body extends its 16-bit operands first.
"""
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ..core.registry import register
from ..ir.walk import find_ops

NARROW = ("bf16", "f16")
NAMED = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat", "linalg.dot",
         "linalg.batch_matvec", "linalg.batch_vecmat", "linalg.batch_reduce_matmul", "linalg.contract")
# The body of a generic contraction: products of the inputs summed into the output.
MAC = ("arith.mulf", "arith.addf", "arith.extf", "linalg.yield")


def _narrow_result(op: ir.Operation) -> ir.RankedTensorType | None:
    if len(op.results) != 1:
        return None
    t = op.results[0].type
    if not isinstance(t, ir.RankedTensorType):
        return None
    rt = ir.RankedTensorType(t)
    return rt if str(rt.element_type) in NARROW else None


def _map(value: ir.Value, t32: ir.Type, narrow: ir.Type | None, f32: ir.Type,
         fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """An elementwise linalg.generic of `value` into a new tensor of `t32`'s
    shape and element type `narrow` or `f32`, its body `fn(x)`."""
    shape = list(ir.RankedTensorType(t32).shape)
    out_t = ir.RankedTensorType.get(shape, narrow if narrow is not None else f32)
    empty = tensor.EmptyOp(shape, out_t.element_type).result
    rank = len(shape)
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    op = linalg.GenericOp([out_t], [value], [empty], ir.ArrayAttr.get([ident, ident]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank))
    in_t = ir.RankedTensorType(value.type).element_type
    block = op.regions[0].blocks.append(in_t, out_t.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([fn(block.arguments[0])])
    return op.results[0]


def _is_mac(op: ir.Operation) -> bool:
    if op.name != "linalg.generic":
        return False
    iters = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if not any("reduction" in a for a in iters):
        return False
    body = op.regions[0].blocks[0]
    names = [o.operation.name for o in body.operations]
    return all(n in MAC for n in names) and "arith.mulf" in names and "arith.addf" in names


def _widen(op: ir.Operation, t: ir.RankedTensorType) -> None:
    f32 = ir.F32Type.get()
    narrow = t.element_type
    n_out = 1  # _narrow_result: one result
    operands = list(op.operands)
    init = operands[-n_out]
    with ir.InsertionPoint(op), op.location:
        t32 = ir.RankedTensorType.get(list(t.shape), f32)
        init32 = _map(init, t32, None, f32, lambda x: arith.ExtFOp(f32, x).result)
        attrs = {a: op.attributes[a] for a in op.attributes}
        if op.name == "linalg.generic":
            ins = operands[:-n_out]
            new = linalg.GenericOp([t32], ins, [init32], attrs["indexing_maps"], attrs["iterator_types"])
            old = op.regions[0].blocks[0]
            block = new.regions[0].blocks.append(*[a.type for a in old.arguments][:-1], f32)
            mapping: dict[ir.Value, ir.Value] = {}
            with ir.InsertionPoint(block):
                for a, b in zip(old.arguments, block.arguments):
                    is_narrow = str(a.type) in NARROW
                    mapping[a] = arith.ExtFOp(f32, b).result if is_narrow and a != old.arguments[-1] else b
                for view in old.operations:
                    o = view.operation
                    args = [mapping[v] for v in o.operands]
                    if o.name == "linalg.yield":
                        linalg.YieldOp(args)
                    elif o.name == "arith.extf":
                        mapping[o.results[0]] = args[0] if str(args[0].type) == "f32" else \
                            arith.ExtFOp(f32, args[0]).result
                    else:  # mulf, addf: now on f32
                        mapping[o.results[0]] = ir.Operation.create(
                            o.name, results=[f32], operands=args,
                            attributes={a: o.attributes[a] for a in o.attributes}).results[0]
            wide = new.results[0]
        else:
            named = ir.Operation.create(op.name, results=[t32], operands=operands[:-n_out] + [init32],
                                        attributes=attrs, regions=1)
            # The named op's body, for its (now wider) output type; from the
            # bindings' C extension, which has no stub.
            linalg.fill_builtin_region(named)
            wide = named.results[0]
        result = _map(wide, t32, narrow, f32, lambda x: arith.TruncFOp(narrow, x).result)
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register("coll-widen-contractions",
          "Contractions of bf16/f16 tensors (named linalg contractions, multiply-accumulate generics) accumulate "
          "in f32 and round once, as XLA computes dot_general on the CPU")
def widen_contractions(op: ir.Operation) -> None:
    for o in find_ops(op, lambda n: n in NAMED or n == "linalg.generic"):
        t = _narrow_result(o)
        if t is not None and (o.name in NAMED or _is_mac(o)):
            _widen(o, t)
