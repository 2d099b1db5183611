"""The SPMD frontend: one rank's view of a program.

An SPMD function holds one rank's buffers and carries `coll.ranks = N`
(the group size); its collectives name their group (`devices`, `groups`)
and read the rank where they need it (`mpi.comm_rank`). This module
detects that form and routes it: for the single-process back ends
coll-spmd-to-global expands a straight-line function into its global view
(argument i of rank r becomes argument i * N + r; local work around the
collectives becomes one clone per rank, coll.device = r); a back end of one
process per rank lowers each collective in place instead
(coll-spmd-to-mpi, the MPI back end's lowering/mpi/to_mpi.py). The
attributes of the per-rank form that the runtimes read are named here.
"""
from collections.abc import Callable, Sequence
from typing import Protocol

from mlir import ir

from ..core.errors import PassError
from ..core.registry import register
from ..core.routes import options_text
from ..ir.ops import COLLECTIVE_NAMES, DEVICE_ATTR, CollectiveOp, attr_int, attr_ints, segment_sizes, view
from ..ir.types import on_device
from ..ir.views import constant_int
from ..ir.walk import all_ops, clone_remapped, find_ops

RANKS_ATTR = "coll.ranks"
# Where each rank's arguments were in the global view: argument i of rank r
# is global argument GLOBAL_ARGS[r * k + i] (k arguments per rank), so a
# launcher can hand rank r its slice of the global view's arrays.
GLOBAL_ARGS_ATTR = "coll.global_args"
# How many leading arguments (slots) of a rank are inputs (only read).
RANK_INPUTS_ATTR = "coll.rank_inputs"

# A function op as the bindings give it: from a walk, or from a block's list.
FuncOp = ir.Operation | ir.OpView


def collective_of(op: ir.Operation | ir.OpView) -> CollectiveOp:
    """The op-layer view of collective `op` (a coll collective: its name is in COLLECTIVE_NAMES)."""
    c = view(op)
    assert isinstance(c, CollectiveOp), f"'{op.name}' is no collective"
    return c


class BackendFacts(Protocol):
    """What a frontend's route asks of the back end (lowering/base.py Backend)."""
    per_rank: bool


def ranks_of(func_op: FuncOp) -> int | None:
    """The group size of a function in SPMD form or projected, or None."""
    attrs = func_op.attributes
    return ir.IntegerAttr(attrs[RANKS_ATTR]).value if RANKS_ATTR in attrs else None


def spmd_groups(op: ir.Operation) -> list[list[int]]:
    """The groups an SPMD collective runs in, each a list of ranks in group
    order: `groups` cut into lists of len(devices) (the positions in a
    group), else [devices]."""
    devices = collective_of(op).devices
    flat = attr_ints(op, "groups")
    if flat is None:
        return [devices]
    return [flat[i:i + len(devices)] for i in range(0, len(flat), len(devices))]


def _global_attrs(op: ir.Operation, group: list[int]) -> dict[str, ir.Attribute]:
    """The attributes of `op`'s global-view collective for `group`: its
    devices, and root (with `groups`, a position in the group) as a rank."""
    attrs = {a: op.attributes[a] for a in op.attributes if a != "groups"}
    i64 = ir.IntegerType.get_signless(64)
    attrs["devices"] = ir.DenseI64ArrayAttr.get(group)
    root = attr_int(op, "root")
    if "groups" in op.attributes and "root" in attrs and root is not None:
        attrs["root"] = ir.IntegerAttr.get(i64, group[root])
    return attrs


def global_operands(op: ir.Operation, group: list[int], wide: Callable[[ir.Value, int], ir.Value]
                    ) -> tuple[list[ir.Value], list[ir.Value]]:
    """(inputs, outputs) of `op`'s global-view collective over `group`, from
    `wide(value, rank)`: that rank's buffer for this rank's `value`, on the
    ranks its placement names (a buffer on the root: the root's only)."""
    c = collective_of(op)
    ins, outs = c.placement(group, view_root(op, group), c.to_device)
    return [wide(c.inputs[0], r) for r in ins], [wide(c.outputs[0], r) for r in outs]


def view_root(op: ir.Operation, group: list[int]) -> int | None:
    root = attr_int(op, "root")
    if root is not None and "groups" in op.attributes:
        return group[root]
    return root


def global_collectives(before: ir.Operation, op: ir.Operation, wide: Callable[[ir.Value, int], ir.Value],
                       deps: Sequence[ir.Value] = ()) -> list[ir.Value]:
    """Builds (before op `before`) the global-view collectives of SPMD
    collective `op`, one per group; returns their tokens."""
    tokens = []
    for group in spmd_groups(op):
        ins, outs = global_operands(op, group, wide)
        attrs = _global_attrs(op, group)
        attrs["operandSegmentSizes"] = segment_sizes(ins, outs, deps)
        with ir.InsertionPoint(before), op.location:
            new = ir.Operation.create(op.name, results=[op.results[0].type],
                                      operands=ins + outs + list(deps), attributes=attrs)
        tokens.append(new.results[0])
    return tokens


def _expand(func_op: ir.Operation, n: int) -> None:
    """An SPMD function (one rank's buffers, collectives naming their group)
    -> its global view: argument i of rank r becomes argument i * n + r
    (x0..x{n-1}, y0..y{n-1}), and every collective becomes one global-view
    collective per group (devices = the group), joined."""
    block = func_op.regions[0].blocks[0]
    args = list(block.arguments)
    k, loc = len(args), func_op.location
    wide = [[block.add_argument(a.type, loc) for _ in range(n)] for a in args]

    def widen(value: ir.Value, r: int) -> ir.Value:
        return wide[value.arg_number][r]

    for op in [o.operation for o in block.operations]:
        if op.name not in COLLECTIVE_NAMES:
            continue
        c = collective_of(op)
        if any(not (isinstance(v.owner, ir.Block) and v.owner == block) for v in c.inputs + c.outputs):
            raise PassError("coll-spmd-to-global expands collectives on the SPMD function's own arguments; "
                            "a collective on another buffer (local work around collectives) lowers in place "
                            "with coll-spmd-to-mpi", op.location)
        tokens = global_collectives(op, op, widen, collective_of(op).deps)
        with ir.InsertionPoint(op), op.location:
            token = tokens[0] if len(tokens) == 1 else ir.Operation.create(
                "coll.join", results=[op.results[0].type], operands=tokens).results[0]
        op.results[0].replace_all_uses_with(token)
        op.erase()
    for a in args:
        for use in a.uses:
            raise PassError(f"'{use.owner.name}' uses a buffer of an SPMD function; expected only "
                            "collectives on the function's own arguments (local work around collectives "
                            "lowers in place with coll-spmd-to-mpi)", use.owner.location)
    for i in reversed(range(k)):
        block.erase_argument(i)
    # A rank's buffer that no collective touches (a broadcast's input off
    # its root, a reduce's output off it) is still that rank's: placed, so
    # that the projection (coll-to-mpi) knows whose argument it is.
    first = block.operations[0]
    for group in wide:
        for r, a in enumerate(group):
            if not any(True for _ in a.uses) and isinstance(a.type, ir.MemRefType):
                with ir.InsertionPoint(first), loc:
                    ir.Operation.create("memref.memory_space_cast", results=[on_device(a.type, r)], operands=[a])
    ft = ir.FunctionType.get([a.type for a in block.arguments], [])
    func_op.attributes["function_type"] = ir.TypeAttr.get(ft)
    del func_op.attributes[RANKS_ATTR]


# Ops that read the rank: in rank r's clone, the constant r.
RANK_OPS = ("mpi.comm_rank",)
# Ops of the SPMD form that hold one value for every rank (once, not cloned).
SHARED_OPS = ("coll.wait", "coll.join", "mpi.comm_world")


def _straight_line(func_op: ir.Operation) -> None:
    """Refuses what one clone per rank cannot express: several blocks,
    collectives in control flow (counted loops are unrolled before:
    _unroll_collective_loops), results. Regions without collectives are local work,
    cloned whole."""
    blocks = func_op.regions[0].blocks
    if len(blocks) != 1:
        raise PassError("coll-spmd-to-global expands straight-line SPMD functions; this one has "
                        f"{len(blocks)} blocks (control flow)", func_op.location)
    for o in blocks[0].operations:
        op = o.operation
        if len(op.regions) and find_ops(op, lambda n: n in COLLECTIVE_NAMES):
            raise PassError(f"'{op.name}' holds collectives in its regions (control flow that may depend on the "
                            "data or the rank); coll-spmd-to-global expands collectives at the top level and in "
                            "scf.for loops with constant bounds (unrolled): lower it in place with the mpi route "
                            "(coll-spmd-to-mpi)", op.location)
        if op.name in COLLECTIVE_NAMES and collective_of(op).is_tensor:
            raise PassError(f"'{op.name}' is in the tensor form; bufferize the SPMD function first "
                            "(coll-bufferize, one-shot-bufferize)", op.location)
        if op.name == "func.return" and len(op.operands):
            raise PassError("an SPMD function returns values; expected its results as output arguments "
                            "(buffer-results-to-out-params)", op.location)


# Most iterations coll-spmd-to-global unrolls, over all loops of a function.
MAX_UNROLLED = 4096


def _unroll_collective_loops(func_op: ir.Operation) -> None:
    """Each scf.for with constant bounds whose body holds a collective,
    outermost first, replaced by one copy of its body per iteration: the
    global view is straight code (the explicit level has no loops around
    its copies), as `lax.fori_loop(..., unroll=True)` would give."""
    budget = MAX_UNROLLED
    while True:
        # all_ops lists an outer loop before the ones in it: each clone of an
        # inner loop is then unrolled (and counted) on its own.
        loops = [op for op in all_ops(func_op)
                 if op.name == "scf.for" and find_ops(op, lambda n: n in COLLECTIVE_NAMES)]
        if not loops:
            return
        loop = loops[0]
        lo, hi, step = (constant_int(v) for v in list(loop.operands)[:3])
        if lo is None or hi is None or step is None or step <= 0:
            return  # _straight_line refuses it, located
        trips = range(lo, hi, step)
        budget -= len(trips)
        if budget < 0:
            raise PassError(f"'scf.for' of {len(trips)} iterations around collectives: the global view unrolls "
                            f"at most {MAX_UNROLLED} iterations in all; expected fewer, or the mpi route "
                            "(coll-spmd-to-mpi keeps the loop)", loop.location)
        body = loop.regions[0].blocks[0]
        ops = [o.operation for o in body.operations]
        current = list(loop.operands)[3:]
        for i in trips:
            with ir.InsertionPoint(loop), loop.location:
                iv = ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                         attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), i)})
            mapping = {body.arguments[0]: iv.results[0]}
            mapping.update(zip(list(body.arguments)[1:], current))
            for op in ops[:-1]:
                clone_remapped(op, ir.InsertionPoint(loop), mapping)
            current = [mapping.get(v, v) for v in ops[-1].operands]
        for old, new in zip(loop.results, current):
            old.replace_all_uses_with(new)
        loop.erase()


@register("coll-unroll-collective-loops",
          "Unroll every scf.for with constant bounds around a collective in SPMD functions (coll.ranks), "
          "tensors or memrefs: what coll-spmd-to-global does first, run on tensors so that canonicalize folds "
          "the loop counters (the GPU route takes no host-side local work)",
          anchor="builtin.module")
def unroll_collective_loops(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        for f in find_ops(module_op, "func.func"):
            if ranks_of(f) is not None and len(f.regions[0].blocks):
                _unroll_collective_loops(f)


def _clone_for(op: ir.Operation, mapping: dict[ir.Value, ir.Value], r: int) -> None:
    """Rank r's clone of local-work op `op` (before it), on rank r's values;
    a read of the rank in its regions (a loop's body) is the constant r."""
    new = clone_remapped(op, ir.InsertionPoint(op), mapping)
    new.attributes[DEVICE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), r)
    for g in find_ops(new, "memref.get_global"):
        _own_global(g, r)
    for rank in find_ops(new, lambda n: n in RANK_OPS):
        with ir.InsertionPoint(rank), rank.location:
            c = ir.Operation.create("arith.constant", results=[rank.results[0].type],
                                    attributes={"value": ir.IntegerAttr.get(rank.results[0].type, r)})
        rank.results[0].replace_all_uses_with(c.results[0])
        rank.erase()


def _own_global(get: ir.Operation, r: int) -> None:
    """Rank r's memref.get_global of a mutable global reads its own copy
    (`@g_rank<r>`, made once, same initial value; rank 0 keeps `@g`): each
    rank is a process of its own, with its own globals (an outside attack's
    scratch global, written by every rank's clone, gave every rank the last
    one's values). A constant global stays shared."""
    if r == 0:
        return
    name = ir.FlatSymbolRefAttr(get.attributes["name"]).value
    module = get.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return
    table = ir.SymbolTable(module)
    try:
        glob = table[name]
    except KeyError:
        return
    if "constant" in glob.attributes:
        return
    own = f"{name}_rank{r}"
    try:
        table[own]
    except KeyError:
        copy = glob.clone(ir.InsertionPoint.after(glob))
        copy.attributes["sym_name"] = ir.StringAttr.get(own)
    get.attributes["name"] = ir.FlatSymbolRefAttr.get(own)


def _expand_local(func_op: ir.Operation, n: int) -> None:
    """An SPMD function with local work around its collectives (straight
    line) -> its global view: argument i of rank r becomes argument i * n + r
    as in _expand, each local op becomes one clone per rank on that rank's
    values (marked coll.device = r), each collective one global-view
    collective per group on every rank's buffers, joined; waits and joins
    stay one (tokens are global)."""
    _straight_line(func_op)
    block = func_op.regions[0].blocks[0]
    args = list(block.arguments)
    k, loc = len(args), func_op.location
    wide = [[block.add_argument(a.type, loc) for _ in range(n)] for a in args]
    mapping = [{a: wide[i][r] for i, a in enumerate(args)} for r in range(n)]
    tokens: dict[ir.Value, ir.Value] = {}  # an SPMD token -> the global view's
    i32 = ir.IntegerType.get_signless(32)
    ops = [o.operation for o in block.operations]
    for op in ops[:-1]:
        name = op.name
        if name in COLLECTIVE_NAMES:
            deps = [tokens.get(d, d) for d in collective_of(op).deps]
            made = global_collectives(op, op, lambda v, r: mapping[r][v], deps)
            with ir.InsertionPoint(op), op.location:
                tokens[op.results[0]] = made[0] if len(made) == 1 else ir.Operation.create(
                    "coll.join", results=[op.results[0].type], operands=made).results[0]
        elif name in SHARED_OPS:
            for i, v in enumerate(op.operands):
                op.operands[i] = tokens.get(v, v)
        elif name in RANK_OPS:
            for r in range(n):
                with ir.InsertionPoint(op), op.location:
                    c = ir.Operation.create("arith.constant", results=[i32],
                                            attributes={"value": ir.IntegerAttr.get(i32, r)})
                mapping[r][op.results[0]] = c.results[0]
        else:
            for r in range(n):
                _clone_for(op, mapping[r], r)
    for op in reversed(ops[:-1]):  # users first; an mpi.comm_world goes when nothing reads it now
        if op.name not in SHARED_OPS or (op.name == "mpi.comm_world" and not list(op.results[0].uses)):
            op.erase()
    for i in reversed(range(k)):
        block.erase_argument(i)
    ft = ir.FunctionType.get([a.type for a in block.arguments], [])
    func_op.attributes["function_type"] = ir.TypeAttr.get(ft)
    del func_op.attributes[RANKS_ATTR]


def is_spmd(func_op: FuncOp) -> bool:
    """Whether `func_op` is in SPMD form to expand: with collectives, or
    over several ranks without one (a batch split that XLA's partitioner
    made: every rank runs its block, and nothing moves)."""
    ranks = ranks_of(func_op)
    return ranks is not None and len(func_op.regions[0].blocks) > 0 and (
        ranks > 1 or bool(find_ops(func_op, lambda n: n in COLLECTIVE_NAMES)))  # nested ones too (a loop)


@register("coll-spmd-to-global",
          "Expand every SPMD function (one rank's buffers, coll.ranks = N, collectives naming their "
          "group) into its global view, one buffer per device, for the explicit lowering; straight-line "
          "local work around the collectives becomes one clone per rank (coll.device = r)",
          anchor="builtin.module")
def spmd_to_global(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        for op in module_op.regions[0].blocks[0].operations:
            f = op.operation
            if f.name != "func.func" or ranks_of(f) is None:
                continue
            _unroll_collective_loops(f)
            if is_spmd(f) or (len(f.regions[0].blocks) > 1 and find_ops(f, lambda n: n in COLLECTIVE_NAMES)):
                _straight_line(f)  # refuses, located, what one clone per rank cannot express
            ranks = ranks_of(f)
            if is_spmd(f) and ranks is not None:  # (is_spmd: it is)
                refuse_if_called(module_op, f, "coll-spmd-to-global gives it every device's buffers",
                                 " (coll-spmd-to-mpi, the mpi back end, runs it as it is)")
                (_expand_local if has_local_work(f) else _expand)(f, ranks)


def refuse_if_called(module_op: ir.Operation, f: ir.Operation, change: str, advice: str = "") -> None:
    """Refuses, at the call, function `f` (one that holds collectives) when
    another calls it: a pass that rewrites its signature (`change`, what it
    does to it) would break the call (it failed the verifier: outside
    attacks, 2026-12-07, coll-to-mpi and coll-spmd-to-global; upstream's
    inliner leaves coll's ops, an IRDL dialect, in LLVM 22)."""
    name = ir.StringAttr(f.attributes["sym_name"]).value
    # (a func.constant of it: call_indirect's; coll-to-mpi broke its type)
    for call in find_ops(module_op, lambda n: n in ("func.call", "func.constant")):
        if ir.FlatSymbolRefAttr(call.attributes["callee" if call.name == "func.call" else "value"]).value == name:
            raise PassError(f"'@{name}' holds collectives and is called: {change}, which changes its signature; "
                            f"expected the collectives in the function that runs, not in one it calls{advice}",
                            call.location, [(f.location, f"@{name} is here")])


def has_local_work(func_op: FuncOp) -> bool:
    """Whether SPMD function `func_op` does more than collectives on its
    own arguments (what coll-spmd-to-global can expand)."""
    block = func_op.regions[0].blocks[0]
    for o in block.operations:
        op = o.operation
        if op.name in COLLECTIVE_NAMES:
            c = collective_of(op)
            if any(not (isinstance(v.owner, ir.Block) and v.owner == block) for v in c.inputs + c.outputs):
                return True
        elif op.name not in ("coll.wait", "coll.join", "func.return"):
            return True
    return False


# -- the frontend (frontends/__init__.py) --------------------------------------
NAME = "spmd"
# its arguments are every rank's (argument i of rank r: i * N + r).
GLOBAL = False


def detect(module_op: ir.Operation) -> bool:
    """Whether the module holds an SPMD function (is_spmd)."""
    return any(is_spmd(f) for f in find_ops(module_op, "func.func"))


def route(module_op: ir.Operation | None = None, backend: BackendFacts | None = None, strategy: str | None = None,
          threshold: int | None = None, profile: str | None = None, **_: object) -> list[str]:
    """The global view for the single-process back ends
    (coll-spmd-to-global: one clone of the local work per rank). A back end
    of one process per rank (`backend.per_rank`) runs an SPMD function with
    local work as it is: coll-spmd-to-mpi chooses and lowers each collective
    in place, to its rank's part."""
    funcs = [f for f in find_ops(module_op, "func.func") if is_spmd(f)] if module_op is not None else []
    if backend is not None and backend.per_rank and any(has_local_work(f) for f in funcs):
        return [f"coll-spmd-to-mpi{options_text(strategy=strategy, threshold=threshold, profile=profile)}"]
    return ["coll-spmd-to-global"]
