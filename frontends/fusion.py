"""Fusion on tensors around upstream linalg-fuse-elementwise-ops (the
StableHLO route, frontends/stablehlo.py): coll-inits-as-inputs before it,
coll-transposes-into-producers after it.

coll-inits-as-inputs: an all-parallel linalg.generic on tensors that
reads its inits reads them as inputs instead.

Why: upstream's elementwise fusion (LLVM 22.1.8) fuses such a producer
into a consumer with reduction loops and keeps the producer's init as an
init of the fused op, whose body then adds into it once per iteration of
the consumer's reductions: a wrong result, silently. JAX makes such
producers of every dot_general with batch dimensions only (a fill of 0,
then out + a * b): an MoE's gate times its dispatch mask, whose product
feeds the combine's contraction. In an all-parallel op every element of an
init is read once, before it is written, so reading it as an input with
the same indexing map is the same computation; the init block argument is
then unused, which fusion handles right.
"""
from mlir import ir
from mlir.dialects import linalg, tensor

from ..core.registry import register
from ..ir.structured import structured
from ..ir.walk import find_ops


def _inits_as_inputs(op: ir.Operation) -> None:
    s = structured(op)
    if s is None or not all(isinstance(v.type, ir.RankedTensorType) for v in s.inits) or \
            any("parallel" not in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])):
        return
    n_in = len(s.inputs)
    outs_args = list(s.body.arguments)[n_in:]
    read = [k for k, a in enumerate(outs_args) if len(list(a.uses)) > 0]
    if not read:
        return
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    inits = list(s.inits)
    attrs = {name: op.attributes[name] for name in op.attributes}
    attrs["indexing_maps"] = ir.ArrayAttr.get(maps[:n_in] + [maps[n_in + k] for k in read] + maps[n_in:])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_in + len(read), len(inits)])
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in op.results],
                                  operands=list(s.inputs) + [inits[k] for k in read] + inits,
                                  attributes=attrs, regions=1)
    old_args = list(s.body.arguments)
    types = [a.type for a in old_args[:n_in]] + [outs_args[k].type for k in read] + [a.type for a in outs_args]
    block = new.regions[0].blocks.append(*types, arg_locs=[a.location for a in old_args[:n_in]]
                                         + [outs_args[k].location for k in read] + [a.location for a in outs_args])
    for k, a in enumerate(old_args[:n_in]):
        a.replace_all_uses_with(block.arguments[k])
    for j, k in enumerate(read):
        outs_args[k].replace_all_uses_with(block.arguments[n_in + j])
    for inner in list(s.body.operations):
        inner.detach_from_parent()
        ir.InsertionPoint(block).insert(inner)
    for old, res in zip(op.results, new.results):
        old.replace_all_uses_with(res)
    op.erase()


@register("coll-inits-as-inputs",
          "An all-parallel linalg.generic on tensors that reads its inits reads them as inputs instead "
          "(upstream's linalg-fuse-elementwise-ops, LLVM 22.1.8, miscompiles such a producer fused into a "
          "reduction)")
def inits_as_inputs(op: ir.Operation) -> None:
    with op.context:
        for generic in list(find_ops(op, "linalg.generic")):
            _inits_as_inputs(generic)


# coll-transposes-into-producers: a generic whose result's one use reads it
# through a permutation (a transpose, or an elementwise op that fusion made
# of one) writes it in that order instead, and the use reads it in order.
# Why: JAX's weight gradients are a contraction into (out, in), then a
# transpose into the parameter's (in, out) (in bf16, fused with the
# rounding); the transpose is a strided copy on loops (3.8 ms per 1024 x
# 1024 f32 here, half of a data-parallel step's local work), while the
# contraction with a permuted output is the same OpenBLAS call
# (coll-blas-contractions computes an output with a unit stride along m as
# out^T += b^T a^T) and the use becomes a contiguous loop, or nothing.
# Upstream's linalg-fuse-elementwise-ops (LLVM 22.1.8) fuses a producer
# into its consumer only when the producer is all-parallel, so a reduction
# producer keeps its transpose. Bitwise the same values: each element is
# computed as before, only written elsewhere.
def _new_init(producer: ir.Operation, ty: ir.RankedTensorType) -> ir.Value | None:
    """An init of type `ty` for the producer, built before it: an empty
    tensor where its body never reads its init, a fill of the same scalar
    where its init is a fill (linalg.fill, or a generic without inputs
    that yields a value from outside, as jaxlib writes a broadcast
    constant), else None."""
    init = producer.operands[len(producer.operands) - 1]
    out_arg = producer.regions[0].blocks[0].arguments[len(producer.operands) - 1]
    with ir.InsertionPoint(producer), producer.location:
        if len(list(out_arg.uses)) == 0:
            return tensor.EmptyOp(ty.shape, ty.element_type).result
        scalar = _fill_value(init)
        if scalar is not None:
            return linalg.fill(scalar, outs=[tensor.EmptyOp(ty.shape, ty.element_type).result])
    return None


def _fill_value(v: ir.Value) -> ir.Value | None:
    """The scalar every element of `v` is, where a fill makes it."""
    if not isinstance(v, ir.OpResult):
        return None
    op = v.owner
    if op.name == "linalg.fill":
        return op.operands[0]
    s = structured(op)
    if op.name != "linalg.generic" or s is None or s.inputs or len(s.inits) != 1:
        return None
    body = list(s.body.operations)
    if len(body) != 1 or len(body[0].operands) != 1:
        return None
    value = body[0].operands[0]
    if isinstance(value, ir.BlockArgument) and value.owner == s.body:
        return None
    return value


def _maps(op: ir.Operation | ir.OpView) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _set_maps(op: ir.Operation | ir.OpView, maps: list[ir.AffineMap]) -> None:
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _into_producer(producer: ir.Operation) -> None:
    s = structured(producer)
    if s is None or len(producer.results) != 1 or len(s.inits) != 1:
        return
    result = producer.results[0]
    uses = list(result.uses)
    if len(uses) != 1 or uses[0].owner.name != "linalg.generic":
        return
    user, k = uses[0].owner, uses[0].operand_number
    used = structured(user)
    if used is None or k >= len(used.inputs):  # an init's map is where the user writes: not ours to change
        return
    user_maps = _maps(user)
    read = user_maps[k]
    ty = ir.RankedTensorType(result.type)
    if not read.is_permutation or read == ir.AffineMap.get_identity(read.n_dims) or not ty.has_static_shape:
        return
    perm = [ir.AffineDimExpr(e).position for e in read.results]
    # The user's point t read the producer's element j, j_k = t_perm[k]:
    # the new result holds that element at t.
    shape = [0] * len(perm)
    for j, t in enumerate(perm):
        shape[t] = ty.shape[j]
    init = _new_init(producer, ir.RankedTensorType.get(shape, ty.element_type, loc=producer.location))
    if init is None:
        return
    maps = _maps(producer)
    written = list(maps[-1].results)
    maps[-1] = ir.AffineMap.get(maps[-1].n_dims, maps[-1].n_symbols, [written[perm.index(i)] for i in range(len(perm))])
    _set_maps(producer, maps)
    producer.operands[len(producer.operands) - 1] = init
    result.set_type(init.type)
    user_maps[k] = ir.AffineMap.get_identity(read.n_dims)
    _set_maps(user, user_maps)


@register("coll-transposes-into-producers",
          "A linalg.generic whose result's one use (a generic) reads it through a permutation writes it in that "
          "order instead (a contraction's transposed result is then its own output layout: upstream's "
          "linalg-fuse-elementwise-ops, LLVM 22.1.8, fuses only all-parallel producers)")
def transposes_into_producers(op: ir.Operation) -> None:
    with op.context:
        for generic in list(find_ops(op, "linalg.generic")):
            _into_producer(generic)
