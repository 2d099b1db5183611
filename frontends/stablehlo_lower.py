"""The StableHLO ops jaxlib 0.10.2's stablehlo-legalize-to-linalg leaves,
lowered in coll's MLIR before that pass runs (coll-stablehlo-to-linalg
calls `lower`), or refused at the op with the JAX calls behind it named:

- while -> scf.for when it counts (lax.fori_loop, lax.scan: a counter
  from a constant, below a constant, by one), else scf.while; the
  collectives in its body stay there (coll-spmd-to-mpi lowers them in
  the loop; for the single-process back ends coll-unroll-collective-loops
  unrolls it);
- case -> scf.index_switch (lax.cond, lax.switch);
- optimization_barrier -> its operands (jax.checkpoint);
- scatter -> a loop nest over the update elements that combines each
  into the operand with its region's kind (`.at[].set/add/mul/min/max`,
  the gradients of gathers: take_along_axis, indexing);
- sort -> a bubble sort of each line (jnp.sort, argsort, lax.top_k).

The ops left in the new regions are still StableHLO, for jaxlib. `OPS` is
the table of what works; docs/frontends.md shows it (`python -m
coll.frontends.stablehlo_lower` rewrites it there).
"""
import pathlib
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ..ir.walk import all_ops, clone_remapped
from .stablehlo import StableHLOError

# StableHLO op -> (who takes it: "jaxlib" (its stablehlo-legalize-to-linalg),
# "coll" (lowered here) or "refused" (a located error); to what, or why not;
# the JAX calls that emit it; an example over x: f32[8], m: f32[4,4],
# i: i32[3], which tests/unit/test_stablehlo_ops.py exports and compiles).
# docs/frontends.md's table is generated from it (`table`).
OPS = {
    "stablehlo.while": ("coll", "scf.for when it counts, else scf.while",
                        "lax.fori_loop, lax.scan, lax.while_loop", "lax.fori_loop(0, 3, lambda k, c: c * 2, x)"),
    "stablehlo.case": ("coll", "scf.index_switch", "lax.cond, lax.switch",
                       "lax.cond(x[0] > 0, lambda: x * 2, lambda: x + 1)"),
    "stablehlo.optimization_barrier": ("coll", "its operands", "jax.checkpoint",
                                       "jax.grad(jax.checkpoint(lambda y: jnp.sin(y).sum()))(x)"),
    "stablehlo.scatter": ("coll", "scf.for nest of tensor.extract/insert; one operand, the update region "
                          "set, add, multiply, maximum, minimum, and, or or xor",
                          "x.at[i].set/add/mul/min/max, gradients of indexing and jnp.take_along_axis",
                          "x.at[i].add(1.0)"),
    "stablehlo.gather": ("jaxlib", "linalg.generic", "x[i], jnp.take, jnp.take_along_axis", "x[i]"),
    "stablehlo.dynamic_slice": ("jaxlib", "tensor.extract_slice", "lax.dynamic_slice, x[k] in a loop",
                                "lax.dynamic_slice(x, (i[0],), (3,))"),
    "stablehlo.dynamic_update_slice": ("jaxlib", "tensor.insert_slice", "lax.dynamic_update_slice, lax.scan",
                                       "lax.dynamic_update_slice(x, x[:3], (i[0],))"),
    "stablehlo.reduce_window": ("jaxlib", "linalg.generic", "jnp.cumsum, lax.reduce_window, pooling",
                                "jnp.cumsum(x)"),
    "stablehlo.select_and_scatter": ("jaxlib", "linalg.generic", "the gradient of max pooling",
                                     "jax.grad(lambda y: lax.reduce_window(y, -jnp.inf, lax.max, (2,), (2,), "
                                     "'VALID').sum())(x)"),
    "stablehlo.rng_bit_generator": ("jaxlib", "linalg.generic", "lax.rng_bit_generator",
                                    "lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (8,), dtype=jnp.uint32)[1]"),
    "stablehlo.reduce": ("jaxlib", "linalg.reduce, linalg.generic", "jnp.sum, jnp.max, jnp.argmax", "jnp.argmax(x)"),
    "stablehlo.dot_general": ("jaxlib", "linalg.matmul, batch_matmul, generic", "@, jnp.einsum", "m @ m"),
    "stablehlo.convolution": ("jaxlib", "linalg.generic", "lax.conv_general_dilated, jnp.convolve",
                              "jnp.convolve(x, x[:3])"),
    "stablehlo.pad": ("jaxlib", "tensor.pad", "jnp.pad", "jnp.pad(x, 2)"),
    "stablehlo.concatenate": ("jaxlib", "linalg.generic", "jnp.concatenate, jnp.roll", "jnp.roll(x, 3)"),
    "stablehlo.iota": ("jaxlib", "linalg.generic", "jnp.arange, jax.nn.one_hot", "x + jnp.arange(8.0)"),
    "stablehlo.sort": ("coll", "a bubble sort of each line (scf.for, the comparator cloned)",
                       "jnp.sort, jnp.argsort, lax.top_k", "jnp.argsort(x[::-1])"),
    "stablehlo.custom_call": ("refused", "a call into XLA's runtime (LAPACK on the CPU)",
                              "jnp.linalg.cholesky, qr, eigh, svd, solve",
                              "jnp.linalg.cholesky(m @ m.T + 4 * jnp.eye(4))"),
    "stablehlo.fft": ("refused", "jaxlib leaves it", "jnp.fft", "jnp.fft.fft(x).real"),
}


# Ops taken to linalg whose linalg coll's back ends do not run yet: why.
LINALG_ONLY = {
    "stablehlo.select_and_scatter": "coll-check-order finds jaxlib's linalg reading a buffer nothing wrote",
}


def table() -> str:
    """The Markdown table of OPS (docs/frontends.md)."""
    rows = ["| StableHLO op | taken by | to | runs (cpu, mpi) | JAX calls that emit it |",
            "| --- | --- | --- | --- | --- |"]
    for name, (who, how, calls, _) in OPS.items():
        taken = {"jaxlib": "jaxlib's stablehlo-legalize-to-linalg", "coll": "coll (`frontends/stablehlo_lower.py`)",
                 "refused": "refused, located"}[who]
        runs = "no" if who == "refused" else f"not yet: {LINALG_ONLY[name]}" if name in LINALG_ONLY else "yes"
        rows.append(f"| `{name}` | {taken} | {how} | {runs} | {calls} |")
    return "\n".join(rows) + "\n"


def _refuse(op: ir.Operation, why: str) -> NoReturn:
    _, _, calls, _ = OPS[op.name]
    raise StableHLOError(f"'{op.name}' (from {calls}) {why}", op.location)


def _i(value: ir.Attribute) -> int:
    return ir.IntegerAttr(value).value


def _constant_of(value: ir.Value) -> int | None:
    """The integer a splat stablehlo.constant (or arith.constant) gives, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in ("stablehlo.constant", "arith.constant"):
        return None
    attr = owner.attributes["value"]
    try:
        dense = ir.DenseIntElementsAttr(attr)
        return int(dense[0]) if dense.is_splat or len(dense) == 1 else None
    except ValueError:
        try:
            return _i(attr)
        except ValueError:
            return None


# scf.ForOp(lb, ub, step, iter_args), scf.IfOp(cond, types, has_else=) and
# arith.ConstantOp(type, value) are the Python classes of scf.py and arith.py,
# which replace the ODS ones of the same name at import; mypy reads the ODS
# ones (hence the `type: ignore[call-arg]` at each call).


def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


# -- while -------------------------------------------------------------------

def _counted(op: ir.Operation) -> tuple[int, int] | None:
    """(lower, upper) when `op` counts: one carried value k starts at a
    constant, the condition is only `k < upper` (signed, upper a constant),
    and the body yields k + 1 at k; else None."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ret = cond.operations[len(cond.operations) - 1]
    c = ret.operands[0].owner
    if isinstance(c, ir.Block) or c.name != "stablehlo.compare":
        return None
    text = str(c.attributes["comparison_direction"])
    a, b = c.operands
    if "LT" not in text or not isinstance(a.owner, ir.Block) or a.owner != cond:
        return None
    if "compare_type" in c.attributes and "UNSIGNED" in str(c.attributes["compare_type"]):
        return None
    k, upper, lower = a.arg_number, _constant_of(b), _constant_of(op.operands[a.arg_number])
    if upper is None or lower is None:
        return None
    step = body.operations[len(body.operations) - 1].operands[k].owner
    if isinstance(step, ir.Block) or step.name != "stablehlo.add":
        return None
    x, y = step.operands
    arg = body.arguments[k]
    if not ((x == arg and _constant_of(y) == 1) or (y == arg and _constant_of(x) == 1)):
        return None
    return lower, upper


def _move_body(block: ir.Block, into: ir.Block, args: Sequence[ir.Value],
               terminator: Callable[[list[ir.Value]], object]) -> None:
    """The ops of `block` moved to the end of `into`, its arguments
    replaced by `args`, its return by `terminator(operands)`."""
    for old, new in zip(block.arguments, args):
        old.replace_all_uses_with(new)
    ops = [o.operation for o in block.operations]
    for o in ops[:-1]:
        o.detach_from_parent()
        ir.InsertionPoint(into).insert(o)
    with ir.InsertionPoint(into), ops[-1].location:
        terminator(list(ops[-1].operands))
    ops[-1].erase()


def _while(op: ir.Operation) -> None:
    types = [r.type for r in op.results]
    counted = _counted(op)
    loop: Any  # an scf.for or scf.while (the dialect builders are not type-checked, pyproject.toml)
    with ir.InsertionPoint(op), op.location:
        if counted is not None:
            lower, upper = counted
            loop = scf.ForOp(_index(lower), _index(max(lower, upper)), _index(1), list(op.operands))
            _move_body(op.regions[1].blocks[0], loop.body, list(loop.inner_iter_args),
                       lambda vs: scf.YieldOp(vs))
        else:
            loop = ir.Operation.create("scf.while", results=types, operands=list(op.operands), regions=2)
            before = loop.regions[0].blocks.append(*types)
            after = loop.regions[1].blocks.append(*types)

            def condition(vs: list[ir.Value]) -> None:
                flag = tensor.ExtractOp(vs[0], []).result
                ir.Operation.create("scf.condition", operands=[flag, *before.arguments])
            _move_body(op.regions[0].blocks[0], before, list(before.arguments), condition)
            _move_body(op.regions[1].blocks[0], after, list(after.arguments), lambda vs: scf.YieldOp(vs))
    for old, new in zip(op.results, loop.results):
        old.replace_all_uses_with(new)
    op.erase()


# -- case, optimization_barrier ------------------------------------------------

def _case(op: ir.Operation) -> None:
    """case(index) -> scf.index_switch: index i < n-1 runs branch i, any
    other the last (StableHLO's clamp to the default)."""
    n = len(op.regions)
    types = [r.type for r in op.results]
    with ir.InsertionPoint(op), op.location:
        i = tensor.ExtractOp(op.operands[0], []).result
        i = arith.IndexCastOp(ir.IndexType.get(), i).result
        switch = ir.Operation.create("scf.index_switch", results=types, operands=[i], regions=n,
                                     attributes={"cases": ir.DenseI64ArrayAttr.get(list(range(n - 1)))})
    # regions[0] is the default (the last branch), then case 0..n-2.
    for k, region in enumerate(op.regions):
        into = switch.regions[0 if k == n - 1 else k + 1].blocks.append()
        _move_body(region.blocks[0], into, [], lambda vs: scf.YieldOp(vs))
    for old, new in zip(op.results, switch.results):
        old.replace_all_uses_with(new)
    op.erase()


def _barrier(op: ir.Operation) -> None:
    for old, new in zip(op.results, op.operands):
        old.replace_all_uses_with(new)
    op.erase()


# -- scatter -----------------------------------------------------------------

# The one op of an update region, on (current, update) -> arith op by element class.
_COMBINE = {"stablehlo.add": (arith.AddFOp, arith.AddIOp), "stablehlo.multiply": (arith.MulFOp, arith.MulIOp),
            "stablehlo.maximum": (arith.MaximumFOp, arith.MaxSIOp),
            "stablehlo.minimum": (arith.MinimumFOp, arith.MinSIOp),
            "stablehlo.and": (None, arith.AndIOp), "stablehlo.or": (None, arith.OrIOp),
            "stablehlo.xor": (None, arith.XOrIOp)}


def _update_kind(op: ir.Operation) -> str:
    """'set' when the region returns the update, else the one op of
    _COMBINE it applies to (current, update)."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    cur, upd = block.arguments
    ret = ops[-1]
    if len(ops) == 1 and ret.operands[0] == upd:
        return "set"
    if len(ops) == 2 and ops[0].name in _COMBINE and set(ops[0].operands) == {cur, upd} \
            and ret.operands[0] == ops[0].results[0]:
        return ops[0].name
    _refuse(op, f"updates with {[o.name for o in ops[:-1]]}; expected a region that returns the update or "
                f"applies one of {', '.join(n.split('.')[1] for n in _COMBINE)}")


def _dims(op: ir.Operation) -> dict[str, Any]:
    """scatter_dimension_numbers read from its text (opaque to 22.1.8):
    lists of dimensions, and `ivd` the index vector dimension."""
    text = str(op.attributes["scatter_dimension_numbers"])

    def field(name: str) -> list[int]:
        m = re.search(rf"\b{name}\s*=\s*\[([^\]]*)\]", text)
        return [int(x) for x in m.group(1).split(",") if x.strip()] if m else []
    m = re.search(r"index_vector_dim\s*=\s*(\d+)", text)
    return {"window": field("update_window_dims"), "inserted": field("inserted_window_dims"),
            "batch": field("input_batching_dims"), "index_batch": field("scatter_indices_batching_dims"),
            "to_operand": field("scatter_dims_to_operand_dims"), "ivd": int(m.group(1)) if m else 0}


def _scatter(op: ir.Operation) -> None:
    """StableHLO's scatter, element by element: for every index U of the
    updates, the operand index is the start its scatter index gives (plus
    the batch position) plus U's window part; a window outside the operand
    is skipped whole (XLA's rule, which JAX's default mode relies on)."""
    if len(op.operands) != 3:
        _refuse(op, f"on {len(op.operands) // 2} operands; expected one operand (a tuple scatter is not lowered)")
    operand, indices, updates = op.operands
    kind = _update_kind(op)
    d = _dims(op)
    ot, it, ut = (ir.RankedTensorType(v.type) for v in (operand, indices, updates))
    elem = ot.element_type
    if not (ot.has_static_shape and it.has_static_shape and ut.has_static_shape):
        _refuse(op, "on dynamic shapes; expected static shapes")
    if not isinstance(it.element_type, ir.IntegerType) or it.element_type.is_unsigned:
        _refuse(op, f"with indices of type {it.element_type}; expected signless integers")
    is_float = not isinstance(elem, ir.IntegerType)
    if kind != "set" and _COMBINE[kind][0 if is_float else 1] is None:
        _refuse(op, f"combines with {kind} on {elem}")
    if str(ir.RankedTensorType(op.results[0].type).element_type) != str(elem) or \
            str(ut.element_type) != str(elem):
        _refuse(op, "with element types that differ; expected one")
    oshape, ishape, ushape = ot.shape, it.shape, ut.shape
    ivd = d["ivd"]
    scatter_dims = [k for k in range(len(ushape)) if k not in d["window"]]
    # Window extent along each operand dim (1 where inserted or batched).
    window_of = [k for k in range(len(oshape)) if k not in d["inserted"] and k not in d["batch"]]
    extent = [1] * len(oshape)
    for w, k in zip(d["window"], window_of):
        extent[k] = ushape[w]
    def element(acc: ir.Value, ivs: list[ir.Value]) -> ir.Value:
        """One update element combined into `acc` at its operand index."""
        upos = [ivs[k] for k in scatter_dims]  # U's scatter dims: where its index vector is

        def index_at(j: int) -> ir.Value:
            pos = list(upos)
            if ivd < len(ishape):
                pos.insert(ivd, _index(j))
            return arith.IndexCastOp(ir.IndexType.get(), tensor.ExtractOp(indices, pos).result).result
        start = [_index(0)] * len(oshape)
        for j, k in enumerate(d["to_operand"]):
            start[k] = index_at(j)
        for b, ib in zip(d["batch"], d["index_batch"]):
            start[b] = upos[ib if ib < ivd else ib - 1]
        full = list(start)
        for k, w in zip(window_of, d["window"]):
            full[k] = arith.AddIOp(start[k], ivs[w]).result
        ok: ir.Value | None = None  # the whole window inside the operand (batch positions are)
        for k in sorted(set(d["to_operand"])):
            lo = arith.CmpIOp(arith.CmpIPredicate.sge, start[k], _index(0)).result
            hi = arith.CmpIOp(arith.CmpIPredicate.sle, start[k], _index(oshape[k] - extent[k])).result
            both = arith.AndIOp(lo, hi).result
            ok = both if ok is None else arith.AndIOp(ok, both).result

        def combine() -> ir.Value:
            new = tensor.ExtractOp(updates, list(ivs)).result
            if kind != "set":
                combine_op = _COMBINE[kind][0 if is_float else 1]
                assert combine_op is not None  # refused above
                new = combine_op(tensor.ExtractOp(acc, full).result, new).result
            return tensor.InsertOp(new, acc, full).result
        if ok is None:
            return combine()
        # An scf.if, not a select: an insert out of bounds writes past the buffer.
        guard = scf.IfOp(ok, [acc.type], has_else=True)
        with ir.InsertionPoint(guard.then_block):
            scf.YieldOp([combine()])
        with ir.InsertionPoint(guard.else_block):
            scf.YieldOp([acc])
        return guard.results[0]

    def nest(acc: ir.Value, ivs: list[ir.Value]) -> ir.Value:
        if len(ivs) == len(ushape):
            return element(acc, ivs)
        loop = scf.ForOp(_index(0), _index(ushape[len(ivs)]), _index(1), [acc])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([nest(loop.inner_iter_args[0], ivs + [loop.induction_variable])])
        return loop.results[0]

    with ir.InsertionPoint(op), op.location:
        result = nest(operand, [])
    op.results[0].replace_all_uses_with(result)
    op.erase()


# -- sort --------------------------------------------------------------------

def _sort(op: ir.Operation) -> None:
    """sort along `dimension`: a bubble sort of every line, which swaps
    neighbours only when the comparator says the right one comes first
    (stable, as JAX's is_stable asks; n^2 / 2 comparisons a line). The
    comparator region is cloned on 0-d tensors of the two elements, as
    StableHLO for jaxlib, and its tensor<i1> read."""
    values = list(op.operands)
    shape = ir.RankedTensorType(values[0].type).shape
    if not ir.RankedTensorType(values[0].type).has_static_shape:
        _refuse(op, "on dynamic shapes; expected static shapes")
    dim = _i(op.attributes["dimension"]) % len(shape)
    n = shape[dim]
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]

    def first(right: list[ir.Value | None], left: list[ir.Value | None], at: list[ir.Value]) -> ir.Value:
        """Whether the element at `right` comes before the one at `left`."""
        mapping: dict[ir.Value, ir.Value] = {}
        for k, v in enumerate(at):
            for pos, arg in ((right, block.arguments[2 * k]), (left, block.arguments[2 * k + 1])):
                scalar = tensor.ExtractOp(v, pos).result
                mapping[arg] = tensor.FromElementsOp(arg.type, [scalar]).result
        for o in ops[:-1]:
            clone_remapped(o, ir.InsertionPoint.current, mapping)
        return tensor.ExtractOp(mapping.get(ops[-1].operands[0], ops[-1].operands[0]), []).result

    def line(accs: list[ir.Value], pos: list[ir.Value | None]) -> list[ir.Value]:
        """The bubble sort of the line through `pos` (pos[dim] unused)."""
        outer = scf.ForOp(_index(0), _index(max(n - 1, 0)), _index(1), accs)
        with ir.InsertionPoint(outer.body):
            end = arith.SubIOp(_index(n - 1), outer.induction_variable).result
            inner = scf.ForOp(_index(0), end, _index(1), list(outer.inner_iter_args))
            with ir.InsertionPoint(inner.body):
                j = inner.induction_variable
                cur = list(inner.inner_iter_args)
                left = pos[:dim] + [j] + pos[dim + 1:]
                right = pos[:dim] + [arith.AddIOp(j, _index(1)).result] + pos[dim + 1:]
                swap = scf.IfOp(first(right, left, cur), [v.type for v in cur], has_else=True)
                with ir.InsertionPoint(swap.then_block):
                    swapped: list[ir.Value] = []
                    for v in cur:
                        a, b = tensor.ExtractOp(v, left).result, tensor.ExtractOp(v, right).result
                        swapped.append(tensor.InsertOp(a, tensor.InsertOp(b, v, left).result, right).result)
                    scf.YieldOp(swapped)
                with ir.InsertionPoint(swap.else_block):
                    scf.YieldOp(cur)
                scf.YieldOp(list(swap.results))
            scf.YieldOp(list(inner.results))
        return list(outer.results)

    def nest(accs: list[ir.Value], pos: list[ir.Value | None], k: int) -> list[ir.Value]:
        if k == len(shape):
            return line(accs, pos)
        if k == dim:
            return nest(accs, pos + [None], k + 1)
        loop = scf.ForOp(_index(0), _index(shape[k]), _index(1), accs)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(nest(list(loop.inner_iter_args), pos + [loop.induction_variable], k + 1))
        return list(loop.results)

    with ir.InsertionPoint(op), op.location:
        results = nest(values, [], 0)
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


# -- the driver ----------------------------------------------------------------

_LOWER = {"stablehlo.while": _while, "stablehlo.case": _case, "stablehlo.optimization_barrier": _barrier,
          "stablehlo.scatter": _scatter, "stablehlo.sort": _sort}


def lower(module_op: ir.Operation) -> None:
    """Every op of `_LOWER` in `module_op` lowered (outermost first: a
    loop's body moves as it is, its own loops after); what it cannot
    lower raises StableHLOError at the op."""
    with module_op.context:
        # Listed before any change: lowering erases ops (returns, regions).
        for op in [o for o in all_ops(module_op) if o.name in _LOWER]:
            _LOWER[op.name](op)


def refusal(op: ir.Operation) -> str:
    """Why `op`, which jaxlib left, has no coll form: the message of the
    located error, naming the JAX calls that emit it."""
    how, why, calls, _ = OPS.get(op.name, ("refused", "", "", ""))
    what = f"'{op.name}'" + (f" (from {calls})" if calls else "")
    if op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes:
        what += f" calling {ir.StringAttr(op.attributes['call_target_name']).value}"
    return (f"{what} has no linalg form (jaxlib's stablehlo-legalize-to-linalg left it"
            + (f": {why}" if why else "") + "); the ops that work: docs/frontends.md")


if __name__ == "__main__":  # docs/frontends.md's table, rewritten in place
    doc = pathlib.Path(__file__).resolve().parents[1] / "docs" / "frontends.md"
    text = doc.read_text()
    begin, end = "<!-- stablehlo ops: begin -->\n", "<!-- stablehlo ops: end -->\n"
    doc.write_text(text[:text.index(begin) + len(begin)] + table() + text[text.index(end):])
