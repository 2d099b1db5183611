"""coll-inits-as-inputs: an all-parallel linalg.generic on tensors that
reads its inits reads them as inputs instead, before upstream
linalg-fuse-elementwise-ops (the StableHLO route, frontends/stablehlo.py).

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
