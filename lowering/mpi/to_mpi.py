"""coll-to-mpi and coll-spmd-to-mpi: the per-rank projection of an explicit
program, with its messages in upstream's `mpi` dialect.

The input is a global view: one function over every device's buffers,
lowered to copies, combines and tokens (any collective, any strategy: they
all lower to these ops). The output is one function that holds one rank's
buffers and serves every rank; the rank is read at run time
(`mpi.comm_rank`) and selects its case of an `scf.index_switch`:

- rank r keeps the ops on device r, in step order (a valid order of the
  token graph, so every rank posts its messages in one global order of
  steps, which is what makes waiting deadlock-free), its receives first
  within a step;
- a `coll.copy` from device a to device b is an `mpi.isend` on a and an
  `mpi.irecv` on b, with a tag unique among the messages from a to b;
- a token becomes the request of the op on r that produced it; an op waits
  (`mpi.wait`) for the requests its dependencies reach on r and whose
  buffers it overlaps (see _Rank). A dependency on an op with no part on r
  (a join, another rank's op) is followed through to its own dependencies:
  what another rank did is ordered by the message that carries it, not by
  a local wait. Every request is waited for by the end of the case.
Combines, scratch and device-local copies stay coll ops for coll-to-cpu.
Local work around the collectives (linalg, memref, scf, ...) is cloned
into the case of each rank that needs it (local_work.py), at its place in
program order, after every request its rank posted before it. Each case
holds only its rank's ops, so the module is as large as the explicit
program (plus the copies' second halves), whatever N is.

The function gets `coll.ranks = N` (the group size the program is for) and
the module `dlti.map<"MPI:Implementation" = ...>`, which upstream's
MPI-to-LLVM lowering reads to choose the ABI.

coll-spmd-to-mpi lowers each collective of an SPMD function (the frontend,
frontends/spmd.py) in place to its rank's part: the collective alone, in
its global view, projected as above (_one_collective), on the rank's own
buffers, with the local work around it kept.
"""
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from mlir import ir

from ...analysis import taskgraph
from ...analysis.cost_model import Profile
from ...analysis.effects import Resolver, Unresolved
from ...analysis.order import argument_roles
from ...analysis.overlap import Prediction
from ...analysis.regions import box, overlaps
from ...core.errors import PassError
from ...core.registry import choice, register
from ...frontends.spmd import (
    GLOBAL_ARGS_ATTR,
    RANK_INPUTS_ATTR,
    RANKS_ATTR,
    global_collectives,
    ranks_of,
    refuse_if_called,
)
from ...ir import STRATEGIES, builders
from ...ir.ops import COLLECTIVE_NAMES, DATA_OPS, Copy, Implements, OpView, attr_ints, segment_sizes, view
from ...ir.types import contiguous, device_of, on_device
from ...ir.views import VIEW_OPS, constant_int, root_of, same_memory
from ...ir.walk import clone_remapped, find_ops
from ...passes.choose_strategy import DEFAULT_THRESHOLD, choose_strategies, load_profile
from ...passes.lower_collectives import lower_collectives
from . import overlap
from .local_work import Placement, is_local, used_values

# The largest MPI tag the program uses (the runtime checks it against the
# MPI's MPI_TAG_UB before any message).
MAX_TAG_ATTR = "coll.max_tag"
TAG_LIMIT = 32767  # the MPI standard's guaranteed minimum MPI_TAG_UB
IMPLEMENTATIONS = ("OpenMPI", "MPICH")
MPI_IMPLEMENTATION = "MPI:Implementation"


def _view(op: ir.Operation | ir.OpView) -> OpView:
    """view(op) of an op known to be coll's (the op layer's view, never None)."""
    v = view(op)
    assert v is not None, op.name
    return v


def _device(value: ir.Value) -> int | None:
    try:
        return device_of(value.type)
    except ValueError:  # not a memref
        return None


Slot = ir.BlockArgument | None  # a rank's argument in a slot, or a placeholder


def _rank_slots(func_op: ir.Operation, written: set[int],
                placement: Placement) -> tuple[list[ir.Type], int, list[list[Slot]]]:
    """Rank r's arguments, in slots every rank shares: the arguments only
    read first, then the written ones, each in global order, matched to
    slots by type (_slots). Slot i of rank r holds a global argument, or
    None where r has none there (a rooted op's root holds a buffer the
    others lack, as MPI_Reduce's recvbuf is significant only at the root:
    the runtime hands r a placeholder). An
    argument is on the device its memory_space_cast gives it, and an input
    local work reads on every rank that reads it (local_work.py).
    Returns (slot types, number of read-only slots, table[r][i])."""
    args = list(func_op.regions[0].blocks[0].arguments)
    placed = placement.arg_ranks
    if len(placed) != len(args):
        a = next(a for a in args if a.arg_number not in placed)
        lowered = not find_ops(func_op, lambda n: n in COLLECTIVE_NAMES)
        raise PassError(f"argument #{a.arg_number} is placed on no device (memref.memory_space_cast to "
                        "#coll.device<i>): "
                        + ("nothing uses it; every argument of a global-view program is a device's buffer"
                           if lowered else "lower the collectives first (coll-lower-collectives)"),
                        func_op.location)
    ranks = sorted(set[int]().union(*placed.values()))
    if ranks != list(range(len(ranks))):
        raise PassError(f"the arguments are on devices {ranks}; expected devices 0..N-1, one rank each",
                        func_op.location)
    groups = [([a for a in args if r in placed[a.arg_number] and a.arg_number not in written],
               [a for a in args if r in placed[a.arg_number] and a.arg_number in written]) for r in ranks]
    ro_types, ro = _slots([g[0] for g in groups])
    wr_types, wr = _slots([g[1] for g in groups])
    table = [a + b for a, b in zip(ro, wr)]
    types, k_ro = ro_types + wr_types, len(ro_types)
    return types, k_ro, table


def _slots(held: list[list[ir.BlockArgument]]) -> tuple[list[ir.Type], list[list[Slot]]]:
    """(slot types, table[r][i]) of the arguments each rank holds
    (`held[r]`, in order): each in the first slot of its type that rank has
    not filled, a new slot where there is none. Ranks that hold the same
    types in the same order (an SPMD program) fill the same slots; the
    others leave placeholders (None) where they lack a buffer."""
    types: list[ir.Type] = []
    table: list[list[Slot]] = []
    for args in held:
        row: list[Slot] = []
        for a in args:
            i = next((i for i, t in enumerate(types) if t == a.type and (i >= len(row) or row[i] is None)), None)
            if i is None:
                types.append(a.type)
                i = len(types) - 1
            row += [None] * (i + 1 - len(row))
            row[i] = a
        table.append(row)
    return types, [row + [None] * (len(types) - len(row)) for row in table]


def _op_ranks(op: ir.Operation) -> set[int | None] | None:
    """The ranks an op has a part on: a copy on both ends, a data op or
    view on its device, join/wait on none."""
    name = op.name
    if name == Copy.NAME:
        c = Copy.of(op)
        return {_device(c.source), _device(c.target)}
    if name in ("coll.join", "coll.wait", "func.return"):
        return set()
    if name == "coll.combine":
        return {_view(op).device}
    if name == "coll.alloc" or name in VIEW_OPS:
        return {_device(op.results[0])}
    return None


def _step_order(ops: list[ir.Operation],
                local: Collection[ir.Operation] = ()) -> list[tuple[int, ir.Operation]]:
    """[(step, op)] of the data ops by step (longest token path from the
    start), then program order: a topological order of the token graph that
    every rank follows, in which step k of every chunk comes before step
    k + 1 of any, so a ring's chunks travel together instead of one after
    the other. A local op (`local`, local_work.py) is a step of its own after
    every op before it, and the ops after it come after it: program order
    orders local work and the explicit ops around it."""
    depth: dict[ir.Operation, int] = {}
    order: list[tuple[int, int, ir.Operation]] = []
    base = 0
    for i, op in enumerate(ops):
        if op in local:
            base = max((d for d, _, _ in order), default=base) + 1
            order.append((base, i, op))
            continue
        v = view(op)
        if v is None or op.name in ("coll.alloc", "coll.wait"):
            continue
        d = max([depth[x.owner] for x in v.deps] + [base])
        depth[op] = d + 1 if op.name in DATA_OPS else d
        if op.name in DATA_OPS:
            order.append((depth[op], i, op))
    return [(d, op) for d, _, op in sorted(order, key=lambda t: t[:2])]


def _rank_order(order: list[tuple[int, ir.Operation]], r: int,
                local: Mapping[ir.Operation, set[int]] | None = None) -> list[ir.Operation]:
    """Rank r's ops of `order`, its receives first within each step: the
    ops of one step do not wait for each other, and a message whose
    receive is posted is not held as unexpected (eager) or left waiting
    for the receiver to match it (rendezvous). Waits still only follow
    earlier steps, so every rank posting in this order stays
    deadlock-free."""
    local = local or {}

    def receive(op: ir.Operation) -> bool:
        if op.name != Copy.NAME:  # (local work has no view)
            return False
        v = _view(op)
        return _device(v.target) == r != _device(v.source)
    mine = [(d, i, op) for i, (d, op) in enumerate(order)
            if r in (local[op] if op in local else _op_ranks(op) or ())]
    return [op for _, _, op in sorted(mine, key=lambda t: (t[0], not receive(t[2]), t[1]))]


def _written_args(ops: list[ir.Operation]) -> set[int]:
    """Indices of the arguments that some op writes (through views)."""
    found: set[int] = set()
    for op in ops:
        v = view(op)
        for value in (v.writes if v is not None else ()):
            root = root_of(value)[0]
            if isinstance(root.owner, ir.Block):
                found.add(root.arg_number)
    return found


Regions = list[tuple[ir.Value | str, Any]] | None  # (root, byte box) per region; None: not static


def _regions(op: ir.Operation, r: int, resolver: Resolver) -> Regions:
    """(root, byte box) of every buffer region op's part on rank r touches;
    None when one is not static (then it overlaps everything)."""
    v = _view(op)
    if op.name == Copy.NAME:
        values = [x for x in (v.source, v.target) if _device(x) == r]
    else:
        values = v.reads + v.writes
    found = []
    try:
        for x in values:
            lay = resolver.layout(x)
            z = lay.esize
            b = box(lay.shift + z * lay.offset, [(n, st * z) for n, st in zip(lay.shape, lay.strides)], z)
            if b is not None:
                found.append((lay.root, b))
    except Unresolved:
        return None
    return found


def _overlap(a: Regions, b: Regions) -> bool:
    if a is None or b is None:
        return True
    return any(ra == rb and overlaps(ba, bb) for ra, ba in a for rb, bb in b)


class _Rank:
    """Rank r's case: the values it maps, its requests and what they touch.

    An op waits only for the requests of earlier ops on r that its token
    dependencies reach and whose regions overlap its own: a receive into a
    free slice is posted at once, not after an unrelated send completes. A
    reached request it does not wait for is deferred to it: whoever waits
    for the op inherits it, so an ordering that runs through an op still
    reaches the ops before it."""

    def __init__(self, r: int, args: Mapping[ir.Value, ir.Value], comm: ir.Value, location: ir.Location,
                 resolver: Resolver) -> None:
        self.r, self.comm, self.location, self.resolver = r, comm, location, resolver
        self.values: dict[ir.Value, ir.Value] = dict(args)  # global value -> value in this case
        self.done: dict[ir.Operation, ir.Value | None] = {}  # global op -> request (None: finished in place)
        self.regions: dict[ir.Operation, Regions] = {}  # global op -> its regions on r
        self.deferred: dict[ir.Operation, list[ir.Operation]] = {}  # global op -> reached ops it did not wait for
        self.pending: list[ir.Value] = []  # requests not waited for yet, in order
        self.unpack: dict[ir.Value, tuple[ir.Value, ir.Value]] = {}  # receive -> (packed, strided view)
        self._reach: dict[ir.Operation, list[ir.Operation]] = {}

    def reach(self, op: ir.Operation) -> list[ir.Operation]:
        """The ops with a part on r that `op`'s token stands for on r."""
        if op in self._reach:
            return self._reach[op]
        if op in self.done:
            found = [op] + self.deferred.get(op, [])
        else:
            found = []
            for d in _view(op).deps:
                found += [o for o in self.reach(d.owner) if o not in found]
        self._reach[op] = found
        return found

    def wait(self, req: ir.Value) -> None:
        """mpi.wait of `req`, then the unpacking of what it received, if any."""
        self.pending.remove(req)
        _mpi("mpi.wait", [], [req])
        if req in self.unpack:
            builders.copy(*self.unpack.pop(req))

    def wait_for(self, op: ir.Operation) -> None:
        """mpi.wait for what `op` (about to be emitted on r) must follow."""
        mine = self.regions[op] = _regions(op, self.r, self.resolver)
        deferred: list[ir.Operation] = []
        for d in _view(op).deps:
            for o in self.reach(d.owner):
                req = self.done[o]
                if req is None or req not in self.pending:
                    continue
                if _overlap(self.regions[o], mine):
                    self.wait(req)
                elif o not in deferred:
                    deferred.append(o)
        self.deferred[op] = deferred

    def wait_all(self) -> None:
        for req in list(self.pending):
            self.wait(req)


def _mpi(name: str, results: Sequence[ir.Type], operands: Sequence[ir.Value],
         attrs: dict[str, ir.Attribute] | None = None) -> ir.Operation:
    return ir.Operation.create(name, results=results, operands=operands, attributes=attrs or {})


def _value(rank: _Rank, v: ir.Value, user: ir.Operation | None = None) -> ir.Value:
    """`v` in rank r's case: an argument, or a view, cast, constant or
    buffer cloned there at its first use (with what it is built from);
    `user`: the op that uses it, where an error is located."""
    if v in rank.values:
        return rank.values[v]
    owner = v.owner
    if isinstance(owner, ir.Block):
        where = f" by this '{user.name}'" if user is not None else ""
        raise PassError(f"a buffer of another rank (argument #{ir.BlockArgument(v).arg_number} of the function) "
                        f"is used on rank {rank.r}{where}; expected each op to touch one rank's buffers",
                        user.location if user is not None else rank.location)
    op = owner.operation
    if is_local(op):  # placed (local_work.py), on other ranks
        raise PassError(f"a value '{op.name}' defines on another rank is used on rank {rank.r}", op.location)
    operands = [_value(rank, x, op) for x in op.operands]
    new = op.clone()
    for i, x in enumerate(operands):
        new.operands[i] = x
    for old, res in zip(op.results, new.results):
        rank.values[old] = res
    return rank.values[v]


def _emit_local(op: ir.Operation, rank: _Rank) -> None:
    """Rank r's clone of local op `op` at the end of its case, after every
    request so far (local work waits for the messages before it: it may
    read or write their buffers)."""
    rank.wait_all()
    for v in used_values(op):
        _value(rank, v, op)
    clone_remapped(op, ir.InsertionPoint.current, rank.values)


def _emit(op: ir.Operation, rank: _Rank, tags: dict[ir.Operation, int]) -> None:
    """Rank r's part of data op `op` at the end of its case."""
    name, r = op.name, rank.r
    v = _view(op)
    rank.wait_for(op)
    if name == "coll.combine" or _device(v.source) == _device(v.target):
        # Its waits are done: the data operands only.
        data = [_value(rank, x, op) for x in list(op.operands)[:len(op.operands) - len(v.deps)]]
        attrs = {a: op.attributes[a] for a in op.attributes}
        if v.segmented:  # the same groups, without the deps
            attrs["operandSegmentSizes"] = segment_sizes(*v.groups[:-1], [])
        ir.Operation.create(name, results=[x.type for x in op.results], operands=data, attributes=attrs)
        rank.done[op] = None
        return
    # A copy between ranks: this rank's half.
    i32 = ir.IntegerType.get_signless(32)

    def const(x: int) -> ir.Value:
        return _mpi("arith.constant", [i32], [], {"value": ir.IntegerAttr.get(i32, x)}).results[0]
    send = _device(v.source) == r
    buf = _value(rank, v.source if send else v.target, op)
    peer = _device(v.target if send else v.source)
    assert peer is not None  # (a copy between ranks: both ends are a device's)
    message = buf
    if not contiguous(buf.type):
        # A block's strided view (collectives/emit.py): one message of it
        # packed into scratch, unpacked once its receive is waited for.
        t = ir.MemRefType(buf.type)
        message = builders.alloc(ir.MemRefType.get(t.shape, t.element_type, None, t.memory_space))
        if send:
            builders.copy(buf, message)
    req = _mpi("mpi.isend" if send else "mpi.irecv", [ir.Type.parse("!mpi.request")],
               [message, const(tags[op]), const(peer), rank.comm]).results[0]
    if message is not buf and not send:
        rank.unpack[req] = (message, buf)
    rank.pending.append(req)
    rank.done[op] = req


def _project(func_op: ir.Operation, tag_limit: int = TAG_LIMIT, counts: dict[tuple, int] | None = None,
             per_value: int | None = None) -> None:
    """Replaces the body of a global-view explicit function by its per-rank
    projection (in place). `counts` (copies so far per pair of ranks, updated)
    lets the tags of several projections inlined into one function run on.
    With `per_value` (arguments of one SPMD value are per_value apart) an
    argument written on one rank is a written slot on every rank, so that
    every rank's slot i is the same SPMD value."""
    block = func_op.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    for op in ops:
        if op.name in COLLECTIVE_NAMES:
            raise PassError(f"'{op.name}' has no per-rank projection: lower the collectives first "
                            "(coll-lower-collectives)", op.location)
        if op.name == "func.return" and len(op.operands):
            raise PassError("a global-view function that returns values; expected its results as output "
                            "arguments (buffer-results-to-out-params)", op.location)
    placement = Placement(func_op, ops)
    written = _written_args(ops) | placement.written
    if per_value:
        values = {a // per_value for a in written}
        written = {a.arg_number for a in block.arguments if a.arg_number // per_value in values}
    types, n_in, table = _rank_slots(func_op, written, placement)
    n = len(table)
    for op in ops:
        if op.name in DATA_OPS or op.name == "coll.alloc":
            for r in _op_ranks(op) or ():  # (never None for these)
                if r is None or not 0 <= r < n:
                    raise PassError(f"'{op.name}' is on a device outside 0..{n - 1} "
                                    "(every device is a rank holding arguments)", op.location)

    steps = _step_order(ops, placement.ranks)
    order = [op for _, op in steps]
    tags = _tags(order, tag_limit, counts)
    resolver = Resolver(func_op)  # where each global buffer value points

    # The new signature: the slots (every rank's arguments have these types).
    loc = func_op.location
    global_args = [-1 if a is None else a.arg_number for slots in table for a in slots]
    n_old = len(block.arguments)
    new_args = [block.add_argument(t, loc) for t in types]
    with ir.InsertionPoint(ops[0]), loc:  # before the old body, which goes
        comm = _mpi("mpi.comm_world", [ir.Type.parse("!mpi.comm")], []).results[0]
        rank_i32 = _mpi("mpi.comm_rank", [ir.IntegerType.get_signless(32)], [comm]).results[0]
        rank_idx = _mpi("arith.index_cast", [ir.IndexType.get()], [rank_i32]).results[0]
        switch = ir.Operation.create("scf.index_switch", results=[], operands=[rank_idx],
                                     attributes={"cases": ir.DenseI64ArrayAttr.get(list(range(n)))},
                                     regions=n + 1)
        for region in switch.regions:
            with ir.InsertionPoint(region.blocks.append()):
                _mpi("scf.yield", [], [])
        ir.Operation.create("func.return", results=[], operands=[])
    for r in range(n):
        case = switch.regions[r + 1].blocks[0]  # regions[0] is the default
        args = {old: new for old, new in zip(table[r], new_args) if old is not None}
        rank = _Rank(r, args, comm, loc, resolver)
        with ir.InsertionPoint(case.operations[0]), loc:
            for op in _rank_order(steps, r, placement.ranks):
                if op in placement.ranks:
                    _emit_local(op, rank)
                else:
                    _emit(op, rank, tags)
            rank.wait_all()
    for op in reversed(ops):
        op.erase()
    for i in reversed(range(n_old)):
        block.erase_argument(i)
    ft = ir.FunctionType.get([a.type for a in new_args], [])
    func_op.attributes["function_type"] = ir.TypeAttr.get(ft)
    func_op.attributes[RANKS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
    func_op.attributes[GLOBAL_ARGS_ATTR] = ir.DenseI64ArrayAttr.get(global_args)
    func_op.attributes[RANK_INPUTS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n_in)
    func_op.attributes[MAX_TAG_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                          max(tags.values(), default=0))


def _tags(order: list[ir.Operation], limit: int, count: dict[tuple, int] | None = None) -> dict[ir.Operation, int]:
    """The tag of each copy between ranks: its index among the copies from
    the same source to the same target, in the step order every rank posts
    them in. MPI matches a message by (source, tag), so this is unique per
    copy where it matters, and tags stay small: a ring sends 2(N-1)
    messages along each edge, where one index per copy would pass MPI's
    guaranteed MPI_TAG_UB (32767) at N = 129. A program that needs a tag above `limit`
    is refused at that copy."""
    tags: dict[ir.Operation, int] = {}
    count = {} if count is None else count
    for op in order:
        if op.name != Copy.NAME:
            continue
        c = Copy.of(op)
        pair = (_device(c.source), _device(c.target))
        if pair[0] == pair[1]:
            continue
        tags[op] = count[pair] = count.get(pair, -1) + 1
        if tags[op] > limit:
            raise PassError(f"this copy from rank {pair[0]} to rank {pair[1]} needs MPI tag {tags[op]} "
                            f"(one per message between two ranks), above tag-limit={limit}; expected at "
                            f"most {limit + 1} copies from one rank to another (MPI guarantees only "
                            f"MPI_TAG_UB >= {TAG_LIMIT})", op.location)
    return tags


def _set_implementation(module_op: ir.Operation, implementation: str) -> None:
    module_op.attributes["dlti.map"] = ir.Attribute.parse(
        f'#dlti.map<"{MPI_IMPLEMENTATION}" = "{implementation}">')


def _add_init_finalize(module_op: ir.Operation) -> None:
    """@coll_mpi_init / @coll_mpi_finalize: MPI_Init and MPI_Finalize, for
    the runtime to call around the entry. They return 0: MPI's default
    error handler aborts the job on failure. The !mpi.retval result is
    there because upstream's lowering crashes without one."""
    body = module_op.regions[0].blocks[0]
    names = {ir.StringAttr(op.attributes["sym_name"]).value for op in body.operations
             if "sym_name" in op.attributes}
    i32 = ir.IntegerType.get_signless(32)
    for fn, opname in (("coll_mpi_init", "mpi.init"), ("coll_mpi_finalize", "mpi.finalize")):
        if fn in names:
            continue
        with ir.InsertionPoint(body), module_op.location:
            f = ir.Operation.create("func.func", attributes={
                "sym_name": ir.StringAttr.get(fn),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get([], [i32]))}, regions=1)
            with ir.InsertionPoint(f.regions[0].blocks.append()):
                _mpi(opname, [ir.Type.parse("!mpi.retval")], [])
                zero = _mpi("arith.constant", [i32], [], {"value": ir.IntegerAttr.get(i32, 0)}).results[0]
                ir.Operation.create("func.return", results=[], operands=[zero])


@register("coll-to-mpi",
          "Project an explicit global-view program onto one rank (one module for every rank, the rank "
          "read at run time): copies between devices become mpi.isend/mpi.irecv, tokens mpi.wait",
          anchor="builtin.module", implementation=(choice(*IMPLEMENTATIONS), "OpenMPI"),
          **{"tag-limit": (int, TAG_LIMIT)})
def to_mpi(module_op: ir.Operation, implementation: str = "OpenMPI", **options: Any) -> None:
    """Projects every function that holds explicit ops, in place."""
    if options.get("tag-limit", TAG_LIMIT) < 0:
        raise PassError(f"tag-limit must be a tag (>= 0), got {options['tag-limit']}")
    with module_op.context, module_op.location:
        for claim in find_ops(module_op, Implements.NAME):
            claim.erase()  # about the global view (checked by coll-check-semantics); it runs nothing
        funcs = [op.operation for op in module_op.regions[0].blocks[0].operations
                 if op.operation.name == "func.func"]
        projected = False
        for f in funcs:
            if ranks_of(f) is not None or not len(f.regions[0].blocks):
                projected = projected or ranks_of(f) is not None
                continue
            nested = [op for op in find_ops(f, lambda n: n.startswith("coll."))
                      if op.parent is not None and op.parent.operation != f]
            if nested:
                op = nested[0]
                assert op.parent is not None  # (nested: it has one)
                raise PassError(f"'{op.name}' inside '{op.parent.name}' (a collective in a loop, lowered): "
                                "coll-to-mpi projects a straight-line global-view program; expected coll ops at "
                                "the top level of the function (unroll "
                                "the loop, or write the function in SPMD form, coll.ranks = N: coll-spmd-to-mpi "
                                "lowers each collective where it is, loops included)", op.location,
                                [(op.parent.location, f"this {op.parent.name}")])
            if any(op.operation.name.startswith("coll.") for op in f.regions[0].blocks[0].operations):
                refuse_if_called(module_op, f, "coll-to-mpi projects it to one rank's buffers")
                _project(f, options.get("tag-limit", TAG_LIMIT))
                projected = True
        if projected:
            _set_implementation(module_op, implementation)
            _add_init_finalize(module_op)


def _one_collective(op: ir.Operation, n: int, strategy: str, threshold: int, profile: str,
                    tag_counts: dict[tuple, int], model: Profile | None = None
                    ) -> tuple[ir.Module, ir.Operation, list[ir.Value], list[str], Prediction | None]:
    """The per-rank projection of SPMD collective `op` alone, in a module
    of its own: (module, projected function, [this rank's value per
    argument], strategies, with `model` (the profile `profile`, loaded)
    the prediction of the runs around it in tiles or not, overlap.predict). The global view holds every rank's copy of
    each of `op`'s buffers (all ranks hold all of them, so that every rank
    has the same arguments), then it is lowered and projected as any
    global-view program is."""
    c = _view(op)
    values: list[ir.Value] = []
    canon: dict[ir.Value, ir.Value] = {}
    for v in c.inputs + c.outputs:
        # In place through a view moving nothing (a memref.cast of the
        # input) is in place: one argument, as the lowering sees it.
        same = next((u for u in values if same_memory(u, v)), None)
        if same is None:
            values.append(v)
        canon[v] = same or v
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        f = ir.Operation.create("func.func", attributes={
            "sym_name": ir.StringAttr.get("one"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))}, regions=1)
    block = f.regions[0].blocks.append(*[v.type for v in values for _ in range(n)])

    def arg(v: ir.Value, r: int) -> ir.Value:
        return block.arguments[values.index(canon[v]) * n + r]

    with ir.InsertionPoint(block):
        for v in values:  # placed, used or not: _arg_ranks reads the placement
            for r in range(n):
                ir.Operation.create("memref.memory_space_cast", results=[on_device(v.type, r)],
                                    operands=[arg(v, r)])
        ret = ir.Operation.create("func.return", results=[], operands=[])
    with ir.InsertionPoint(ret):
        marker = ir.Operation.create("coll.join", results=[op.results[0].type], operands=[])
    tokens = global_collectives(marker, op, arg)
    with ir.InsertionPoint(ret):
        ir.Operation.create("coll.wait", results=[], operands=tokens)
    marker.erase()
    chosen = choose_strategies(module.operation, strategy, threshold, profile)
    lower_collectives(module.operation)
    for claim in find_ops(module.operation, Implements.NAME):
        claim.erase()
    predicted = None if model is None else overlap.predict(
        op, taskgraph.from_function(f), lambda v, r: values.index(canon[v]) * n + r if v in canon else None, model)
    _project(f, counts=tag_counts, per_value=n)
    # Slot i holds the same value on every rank (per_value): rank 0's says which.
    global_args = attr_ints(f, GLOBAL_ARGS_ATTR)
    assert global_args is not None  # (_project sets it)
    slots = [values[g // n] for g in global_args[:len(f.regions[0].blocks[0].arguments)]]
    return module, f, slots, chosen[:1], predicted


def _lower_in_place(func_op: ir.Operation, n: int, strategy: str, threshold: int, profile: str) -> list[str]:
    """Each collective of SPMD function `func_op` -> its rank's part, where
    it was, on this rank's own buffers; the local work around it stays.
    The inlined parts run to completion (every request waited for), so
    program order orders them: tokens and waits go."""
    chosen: list[str] = []
    tags: dict[tuple, int] = {}
    # Nested ones too: a collective in a loop body becomes its rank's part
    # there, run to completion in each iteration (so the tags can repeat).
    collectives = find_ops(func_op, lambda n: n in COLLECTIVE_NAMES)
    model = load_profile(profile) if collectives else None  # (once: every collective's prediction reads it)
    for op in collectives:
        _same_on_every_rank(op, func_op)
        if _view(op).inputs and not isinstance(_view(op).inputs[0].type, ir.MemRefType):
            raise PassError(f"'{op.name}' on tensors: bufferize first (coll-bufferize, one-shot-bufferize)",
                            op.location)
        # Tags run on across the collectives: no message of one can match a
        # receive of the next, whatever MPI's ordering guarantees.
        module, f, values, strategies, predicted = _one_collective(op, n, strategy, threshold, profile, tags, model)
        chosen += strategies
        body = f.regions[0].blocks[0]
        if predicted is not None:
            for switch in (o.operation for o in body.operations if o.operation.name == "scf.index_switch"):
                overlap.mark(switch, predicted)
        for a, v in zip(body.arguments, values):
            a.replace_all_uses_with(v)
        for o in [o.operation for o in body.operations]:
            if o.name == "func.return":
                break
            o.move_before(op)
        with ir.InsertionPoint(op), op.location:
            done = ir.Operation.create("coll.join", results=[op.results[0].type], operands=[])
        op.results[0].replace_all_uses_with(done.results[0])
        op.erase()
    for op in find_ops(func_op, "coll.wait"):
        op.erase()
    for op in reversed(find_ops(func_op, "coll.join")):
        if op.name == "coll.join":
            if any(True for _ in op.results[0].uses):
                raise PassError("a collective's token is used by a non-collective op", op.location)
            op.erase()
    return chosen


def _same_on_every_rank(op: ir.Operation, func_op: ir.Operation) -> None:
    """A collective in a region runs on every rank the same number of
    times only in loops whose bounds are constants (an scf.if, or a loop
    bounded by the rank, would leave some ranks waiting forever): refused,
    at the region, otherwise."""
    parent = op.parent
    while parent is not None and parent.operation != func_op:
        p = parent.operation
        bounds = list(p.operands)[:3] if p.name == "scf.for" else None
        if bounds is None or any(constant_int(v) is None for v in bounds):
            what = "an scf.for whose bounds are not constants" if p.name == "scf.for" else f"'{p.name}'"
            raise PassError(f"'{op.name}' inside {what}: every rank must run every collective as often as the "
                            "others; expected it at the top level or in scf.for loops with constant bounds",
                            op.location, [(p.location, f"this {p.name}")])
        parent = p.parent


def _rank_inputs(func_op: ir.Operation) -> int:
    """How many leading arguments the rank only reads (the slots a run
    need not read back; an input written in place is not one of them:
    its values are given as any input's, analysis/order.py
    argument_roles). Read on the SPMD function, before its collectives
    are lowered."""
    roles = argument_roles(func_op)
    return next((i for i, role in enumerate(roles) if role is None or role[1]), len(roles))


@register("coll-spmd-to-mpi",
          "Lower each collective of an SPMD function (coll.ranks = N) in place to this rank's part of its "
          "projection (mpi.isend/irecv, combines), on the rank's own buffers, keeping the local work "
          "around it (linalg, memref); the strategy as coll-choose-strategy chooses it",
          anchor="builtin.module", strategy=(choice(*STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          profile=(str, ""))
def spmd_to_mpi(module_op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                profile: str = "") -> None:
    with module_op.context, module_op.location:
        for f in find_ops(module_op, "func.func"):
            n = ranks_of(f)
            if n is None or not len(f.regions[0].blocks) or GLOBAL_ARGS_ATTR in f.attributes:
                continue
            inputs = _rank_inputs(f)
            _lower_in_place(f, n, strategy, threshold, profile)
            k = len(f.regions[0].blocks[0].arguments)
            f.attributes[GLOBAL_ARGS_ATTR] = ir.DenseI64ArrayAttr.get(
                [i * n + r for r in range(n) for i in range(k)])
            f.attributes[RANK_INPUTS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), inputs)


def overlap_predictions(text: str, strategy: str = "auto", profile: str = "mpi") -> list[Prediction]:
    """The predictions of the runs around each collective of the SPMD
    functions in `text`, in order, as coll-spmd-to-mpi makes them for
    coll-mpi-overlap (overlap.predict); for benchmarks, to set beside what
    they measure."""
    from ...ir import make_context
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        spmd_to_mpi(module.operation, strategy, DEFAULT_THRESHOLD, profile)
        found = (overlap.prediction_of(s) for s in find_ops(module.operation, "scf.index_switch"))
        return [p for p in found if p is not None]
