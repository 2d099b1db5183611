"""coll-lower-collectives: every collective -> the explicit level.

The one table of lowerings (LOWERINGS: op name -> strategy -> function);
the names are those of ir/ops.py (`<Op>.STRATEGIES`). all_reduce lowers as
in passes/lower_all_reduce.py, reduce and broadcast through
passes/lower_rooted.py; the blocked collectives are here, each along its
axis: a block of a non-leading axis is several contiguous runs, moved as
one part (passes/emit.py).
"""
from mlir import ir

from ..core.errors import PassError
from ..core.registry import choice, register
from ..ir import STRATEGIES as ALL_STRATEGIES
from ..ir.ops import (OPS, AllGather, AllReduce, AllToAll, Broadcast, COLLECTIVES, Reduce,
                      ReduceScatter, view)
from ..ir.types import numel
from ..ir.walk import find_ops
from . import lower_all_reduce, lower_rooted
from .emit import (Emitter, axis_block, block_pairs, claim, replace, require_global_view,
                   require_memref_form, whole)
from .lower_all_reduce import DEFAULT_THRESHOLD, MAX_OPS


def _scatter_blocks(e, axis):
    """[(region of block c in the inputs, region in output c)] for each c."""
    shape, out = list(e.in_type.shape), list(e.out_type.shape)
    return [block_pairs(axis_block(shape, axis, c, e.n), whole(out)) for c in range(e.n)]


def reduce_scatter(e, how):
    """Block c is reduced into y_c: `direct` copies every other device's
    block to device c; `ring` passes the partial from c+1 around to c."""
    n, devs = e.n, e.devices
    for c, (xs, ys) in enumerate(_scatter_blocks(e, e.c.axis("scatter_axis"))):
        if not xs:
            continue
        sizes, out = [size for _, size in ys], e.pieces(e.y[c], ys)
        mine = lambda i: e.pieces(e.x[i], xs)
        if n == 1:
            e.copy(mine(0), out)
        elif how == "direct":  # own block read in place (IRDL: rhs of one type)
            recv = [e.scratch(devs[c], sizes) for i in range(n) if i != c]
            deps = [e.copy(mine(i), r) for i, r in zip([i for i in range(n) if i != c], recv)]
            e.combine(mine(c), recv, out, deps)
        else:
            part, tok = mine((c + 1) % n), None
            for k in range(2, n + 1):
                i = (c + k) % n
                r = e.scratch(devs[i], sizes)
                tok = e.copy(part, r, [tok])
                dst = out if i == c else r
                tok = e.combine(r, [mine(i)], dst, [tok])
                part = dst


def all_gather(e, how):
    """x_i goes into block i of every output: `direct` from device i to
    each; `ring` hop by hop from i around the ring."""
    n = e.n
    for i in range(n):
        ys, xs = block_pairs(axis_block(list(e.out_type.shape), e.c.axis("gather_axis"), i, n),
                             whole(list(e.in_type.shape)))
        if not xs:
            continue
        src = e.pieces(e.x[i], xs)
        if how == "direct":
            for j in range(n):
                e.copy(src, e.pieces(e.y[j], ys))
            continue
        e.copy(src, e.pieces(e.y[i], ys))
        prev, tok = src, None
        for k in range(1, n):
            dst = e.pieces(e.y[(i + k) % n], ys)
            tok = e.copy(prev, dst, [tok])
            prev = dst


def all_to_all(e, how):
    """Block j (along split_axis) of x_i goes straight into block i (along
    concat_axis) of y_j."""
    n, ins, outs = e.n, list(e.in_type.shape), list(e.out_type.shape)
    split, concat = e.c.axis("split_axis"), e.c.axis("concat_axis")
    for i in range(n):
        for j in range(n):
            xs, ys = block_pairs(axis_block(ins, split, j, n), axis_block(outs, concat, i, n))
            e.copy(e.pieces(e.x[i], xs), e.pieces(e.y[j], ys))


def reduce(e, how):
    if e.numel:
        lower_rooted.REDUCE[how](e, e.x, e.devices, e.y[0], e.c.root)


def broadcast(e, how):
    if e.numel:
        lower_rooted.BROADCAST[how](e, e.x[0], e.c.root, e.y, e.devices)


def _each(fn, names):
    return {s: (lambda e, s=s: fn(e, s)) for s in names}


# The one table: op -> strategy -> the function that emits it (all_reduce's
# own entry point, lower_all_reduce.lower_op, adds its threshold and size rules).
LOWERINGS = {
    AllReduce.NAME: lower_all_reduce.STRATEGIES,
    ReduceScatter.NAME: _each(reduce_scatter, ReduceScatter.STRATEGIES),
    AllGather.NAME: _each(all_gather, AllGather.STRATEGIES),
    AllToAll.NAME: _each(all_to_all, AllToAll.STRATEGIES),
    Reduce.NAME: _each(reduce, Reduce.STRATEGIES),
    Broadcast.NAME: _each(broadcast, Broadcast.STRATEGIES),
}


def reference_rule(name, n, size, threshold=DEFAULT_THRESHOLD):
    """The default strategy of collective `name` over n devices and `size`
    elements per input: ring when large (N > 2, size > threshold), else
    direct (tree for reduce and broadcast at N > 2)."""
    if name == AllReduce.NAME:
        return lower_all_reduce.reference_rule(n, size, threshold)
    strategies = OPS[name].STRATEGIES
    if n > 2 and size > threshold and "ring" in strategies:
        return "ring"
    if n > 2 and "tree" in strategies:
        return "tree"
    return "direct"


def check_size(op, c):
    """Refuses a lowering that would exhaust memory: at most N^2 blocks
    (or chunks) of at most `runs` pieces each, a few ops per piece."""
    n, shape = len(c.devices), list(ir.MemRefType(c.inputs[0].type).shape)
    axis = min([c.axis(a) for a in c.AXES] or [0])
    runs = 1
    for d in shape[:axis]:
        runs *= d
    size = 4 * n * n * max(runs, 1)
    if size > MAX_OPS:
        raise PassError(f"lowering this {op.name} ({n} devices, {runs} pieces per block) would emit "
                        f"about {size} ops, above the limit of {MAX_OPS}; use fewer devices or a "
                        f"leading axis", op.location)


def lower_op(op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Replaces one collective with its explicit program; returns the
    strategy used (the op's own, else `strategy`, auto: the default rule)."""
    if op.name == AllReduce.NAME:
        return lower_all_reduce.lower_op(op, strategy, threshold)
    require_memref_form(op)
    require_global_view(op)
    c = view(op)
    lower_all_reduce.check_global_form(op, c)
    chosen = c.strategy if c.strategy not in (None, "auto") else strategy
    if chosen in (None, "auto"):
        t = c.threshold if c.threshold is not None else threshold
        chosen = reference_rule(op.name, len(c.devices), numel(c.inputs[0].type), t)
    table = LOWERINGS[op.name]
    if chosen not in table:
        raise PassError(f"unknown strategy '{chosen}' for {op.name}; expected one of: "
                        f"{', '.join(table)}", op.location)
    check_size(op, c)
    with ir.InsertionPoint(op), op.location:
        e = Emitter(op)
        table[chosen](e)
        final = e.finish()
        claim(c, final)  # what the program computes, for coll-check-semantics
    replace(op, final)
    return chosen


def lower_collectives(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    """Lowers every collective under module_op, in program order."""
    return [lower_op(op, strategy, threshold)
            for op in find_ops(module_op, lambda name: name in COLLECTIVES)]


@register("coll-lower-collectives",
          "Lower every collective (all_reduce, reduce_scatter, all_gather, reduce, broadcast, "
          "all_to_all) to explicit copies, combines and tokens, by its strategy attribute "
          "(ops without one: strategy=S, or the default rule for auto)",
          strategy=(choice(*ALL_STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD))
def lower_collectives_pass(op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    lower_collectives(op, strategy, threshold)
