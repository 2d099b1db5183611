"""coll-to-mpi: the per-rank projection of an explicit program, with its
messages in upstream's `mpi` dialect.

The input is a global view: one function over every device's buffers,
lowered to copies, combines and tokens (any collective, any strategy: they
all lower to these ops). The output is one function that holds one rank's
buffers and serves every rank; the rank is read at run time
(`mpi.comm_rank`) and selects its case of an `scf.index_switch`:

- rank r keeps the ops on device r, in program order (a valid order of the
  token graph, so every rank posts its messages in one global order, which
  is what makes waiting deadlock-free);
- a `coll.copy` from device a to device b is an `mpi.isend` on a and an
  `mpi.irecv` on b, with a tag unique to the copy (its index);
- a token becomes the request of the op on r that produced it; an op waits
  (`mpi.wait`) for the requests its dependencies reach on r and whose
  buffers it overlaps (see _Rank). A dependency on an op with no part on r
  (a join, another rank's op) is followed through to its own dependencies:
  what another rank did is ordered by the message that carries it, not by
  a local wait. Every request is waited for by the end of the case.
Combines, scratch and device-local copies stay coll ops for coll-to-cpu.
Each case holds only its rank's ops, so the module is as large as the
explicit program (plus the copies' second halves), whatever N is.

The function gets `coll.ranks = N` (the group size the program is for) and
the module `dlti.map<"MPI:Implementation" = ...>`, which upstream's
MPI-to-LLVM lowering reads to choose the ABI.
"""
from mlir import ir

from ..core.errors import PassError
from ..core.registry import choice, register
from ..ir.ops import COLLECTIVES, DATA_OPS, Copy, Implements, segment_sizes, view
from ..ir.walk import find_ops
from ..ir.types import device_of
from ..ir.views import VIEW_OPS, root_of
from ..analysis.regions import box, overlaps
from ..passes.check_order import Resolver, Unresolved

RANKS_ATTR = "coll.ranks"
# Where each rank's arguments were in the global view: argument i of rank r
# is global argument GLOBAL_ARGS[r * k + i] (k arguments per rank), so a
# launcher can hand rank r its slice of the global view's arrays.
GLOBAL_ARGS_ATTR = "coll.global_args"
# How many leading arguments of a rank are inputs (only read).
RANK_INPUTS_ATTR = "coll.rank_inputs"
IMPLEMENTATIONS = ("OpenMPI", "MPICH")
MPI_IMPLEMENTATION = "MPI:Implementation"


def ranks_of(func_op):
    """The group size of a function in SPMD form or projected, or None."""
    attrs = func_op.attributes
    return ir.IntegerAttr(attrs[RANKS_ATTR]).value if RANKS_ATTR in attrs else None


def _device(value):
    try:
        return device_of(value.type)
    except ValueError:  # not a memref
        return None


def _arg_ranks(func_op):
    """Per rank, the function arguments that live on it, in order: an
    argument's device is the memory space its memory_space_cast gives it."""
    args = list(func_op.regions[0].blocks[0].arguments)
    placed = {}
    for a in args:
        for use in a.uses:
            if use.owner.name == "memref.memory_space_cast":
                d = _device(use.owner.results[0])
                if d is not None:
                    placed.setdefault(a.arg_number, d)
    if len(placed) != len(args):
        raise PassError("every argument must be placed on a device "
                        "(memref.memory_space_cast to #coll.device<i>); lower the collectives first "
                        "(coll-lower-all-reduce)", func_op.location)
    ranks = sorted(set(placed.values()))
    if ranks != list(range(len(ranks))):
        raise PassError(f"the arguments are on devices {ranks}; expected devices 0..N-1, one rank each",
                        func_op.location)
    per_rank = [[a for a in args if placed[a.arg_number] == r] for r in ranks]
    types = [[a.type for a in group] for group in per_rank]
    if any(t != types[0] for t in types):
        counts = ", ".join(f"device {r}: {len(g)}" for r, g in enumerate(per_rank))
        raise PassError(f"every rank must hold the same buffers (an SPMD program); "
                        f"arguments per device: {counts} (a single-device output is not SPMD)",
                        func_op.location)
    return per_rank


def _op_ranks(op):
    """The ranks an op has a part on: a copy on both ends, a data op or
    view on its device, join/wait on none."""
    name = op.name
    if name == Copy.NAME:
        c = Copy.of(op)
        return {_device(c.source), _device(c.target)}
    if name in ("coll.join", "coll.wait", "func.return"):
        return set()
    if name == "coll.combine":
        return {view(op).device}
    if name == "coll.alloc" or name in VIEW_OPS:
        return {_device(op.results[0])}
    return None


def _step_order(ops):
    """The data ops by step (longest token path from the start), then
    program order: a topological order of the token graph that every rank
    follows, in which step k of every chunk comes before step k + 1 of any,
    so a ring's chunks travel together instead of one after the other."""
    depth, order = {}, []
    for i, op in enumerate(ops):
        v = view(op)
        if v is None or op.name in ("coll.alloc", "coll.wait"):
            continue
        d = max((depth[x.owner] for x in v.deps), default=0)
        depth[op] = d + 1 if op.name in DATA_OPS else d
        if op.name in DATA_OPS:
            order.append((depth[op], i, op))
    return [op for _, _, op in sorted(order, key=lambda t: t[:2])]


def _written_args(ops):
    """Indices of the arguments that some op writes (through views)."""
    found = set()
    for op in ops:
        v = view(op)
        for value in (v.writes if v is not None else ()):
            root = root_of(value)[0]
            if isinstance(root.owner, ir.Block):
                found.add(root.arg_number)
    return found


def _regions(op, r, resolver):
    """(root, byte box) of every buffer region op's part on rank r touches;
    None when one is not static (then it overlaps everything)."""
    v = view(op)
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


def _overlap(a, b):
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

    def __init__(self, r, args, comm, location, resolver):
        self.r, self.comm, self.location, self.resolver = r, comm, location, resolver
        self.values = dict(args)   # global value -> value in this case
        self.done = {}             # global op -> request (None: finished in place)
        self.regions = {}          # global op -> its regions on r
        self.deferred = {}         # global op -> reached ops it did not wait for
        self.pending = []          # requests not waited for yet, in order
        self._reach = {}

    def reach(self, op):
        """The ops with a part on r that `op`'s token stands for on r."""
        if op in self._reach:
            return self._reach[op]
        if op in self.done:
            found = [op] + self.deferred.get(op, [])
        else:
            found = []
            for d in view(op).deps:
                found += [o for o in self.reach(d.owner) if o not in found]
        self._reach[op] = found
        return found

    def wait_for(self, op):
        """mpi.wait for what `op` (about to be emitted on r) must follow."""
        mine = self.regions[op] = _regions(op, self.r, self.resolver)
        deferred = []
        for d in view(op).deps:
            for o in self.reach(d.owner):
                req = self.done[o]
                if req is None or req not in self.pending:
                    continue
                if _overlap(self.regions[o], mine):
                    self.pending.remove(req)
                    _mpi("mpi.wait", [], [req])
                elif o not in deferred:
                    deferred.append(o)
        self.deferred[op] = deferred

    def wait_all(self):
        for req in self.pending:
            _mpi("mpi.wait", [], [req])
        self.pending = []


def _mpi(name, results, operands, attrs=None):
    return ir.Operation.create(name, results=results, operands=operands, attributes=attrs or {})


def _value(rank, v):
    """`v` in rank r's case: an argument, or a view, cast or scratch buffer
    cloned there at its first use (with what it is built from)."""
    if v in rank.values:
        return rank.values[v]
    op = v.owner
    if isinstance(op, ir.Block):
        raise PassError("a buffer of another rank is used on this rank", rank.location)
    op = op.operation
    operands = [_value(rank, x) for x in op.operands]
    new = op.clone()
    for i, x in enumerate(operands):
        new.operands[i] = x
    for old, res in zip(op.results, new.results):
        rank.values[old] = res
    return rank.values[v]


def _emit(op, rank, tags):
    """Rank r's part of data op `op` at the end of its case."""
    name, r = op.name, rank.r
    v = view(op)
    rank.wait_for(op)
    if name == "coll.combine" or _device(v.source) == _device(v.target):
        # Its waits are done: the data operands only.
        data = [_value(rank, x) for x in list(op.operands)[:len(op.operands) - len(v.deps)]]
        attrs = {a: op.attributes[a] for a in op.attributes}
        if v.segmented:  # the same groups, without the deps
            attrs["operandSegmentSizes"] = segment_sizes(*v.groups[:-1], [])
        ir.Operation.create(name, results=[x.type for x in op.results], operands=data, attributes=attrs)
        rank.done[op] = None
        return
    # A copy between ranks: this rank's half.
    i32 = ir.IntegerType.get_signless(32)
    const = lambda x: _mpi("arith.constant", [i32], [], {"value": ir.IntegerAttr.get(i32, x)}).results[0]
    send = _device(v.source) == r
    buf = _value(rank, v.source if send else v.target)
    peer = _device(v.target if send else v.source)
    req = _mpi("mpi.isend" if send else "mpi.irecv", [ir.Type.parse("!mpi.request")],
               [buf, const(tags[op]), const(peer), rank.comm]).results[0]
    rank.pending.append(req)
    rank.done[op] = req


def _project(func_op):
    """Replaces the body of a global-view explicit function by its per-rank
    projection (in place)."""
    block = func_op.regions[0].blocks[0]
    per_rank = _arg_ranks(func_op)
    n = len(per_rank)
    ops = [op.operation for op in block.operations]
    tags, unknown = {}, []
    for op in ops:
        if op.name == Copy.NAME:
            tags[op] = len(tags)
        if op.name not in ("memref.memory_space_cast", "arith.constant") and _op_ranks(op) is None:
            unknown.append(op)
    if unknown:
        raise PassError(f"'{unknown[0].name}' has no per-rank projection; expected only coll "
                        "ops, views and memref.memory_space_cast (lower the collectives first)",
                        unknown[0].location)
    for op in ops:
        if op.name in DATA_OPS or op.name == "coll.alloc":
            for r in _op_ranks(op):
                if r is None or not 0 <= r < n:
                    raise PassError(f"'{op.name}' is on a device outside 0..{n - 1} "
                                    "(every device is a rank holding arguments)", op.location)

    order = _step_order(ops)
    resolver = Resolver(func_op)  # where each global buffer value points

    # The new signature: rank 0's arguments (every rank's have these types).
    loc = func_op.location
    global_args = [a.arg_number for group in per_rank for a in group]
    written = _written_args(ops)
    n_in = next((i for i, a in enumerate(per_rank[0]) if a.arg_number in written), len(per_rank[0]))
    n_old = len(block.arguments)
    new_args = [block.add_argument(a.type, loc) for a in per_rank[0]]
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
        args = {old: new for old, new in zip(per_rank[r], new_args)}
        rank = _Rank(r, args, comm, loc, resolver)
        with ir.InsertionPoint(case.operations[0]), loc:
            for op in order:
                if r in _op_ranks(op):
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


def _set_implementation(module_op, implementation):
    module_op.attributes["dlti.map"] = ir.Attribute.parse(
        f'#dlti.map<"{MPI_IMPLEMENTATION}" = "{implementation}">')


def _add_init_finalize(module_op):
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


def _expand(func_op, n):
    """An SPMD function (one rank's buffers, collectives naming their group)
    -> its global view: argument i of rank r becomes argument i * n + r
    (x0..x{n-1}, y0..y{n-1}), and every collective takes the n ranks'
    buffers in place of one."""
    block = func_op.regions[0].blocks[0]
    args = list(block.arguments)
    k, loc = len(args), func_op.location
    wide = [[block.add_argument(a.type, loc) for _ in range(n)] for a in args]
    for op in [o.operation for o in block.operations]:
        if op.name not in COLLECTIVES:
            continue
        v = view(op)
        new_groups = []
        for g in v.groups:
            if any(isinstance(v.owner, ir.Block) and v.owner == block for v in g):
                new_groups.append([w for v in g for w in wide[v.arg_number]])
            else:
                new_groups.append(g)
        attrs = {a: op.attributes[a] for a in op.attributes}
        if v.segmented:
            attrs["operandSegmentSizes"] = segment_sizes(*new_groups)
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                      operands=[v for g in new_groups for v in g], attributes=attrs)
        for old, res in zip(op.results, new.results):
            old.replace_all_uses_with(res)
        op.erase()
    for a in args:
        for use in a.uses:
            raise PassError(f"'{use.owner.name}' uses a buffer of an SPMD function; expected only "
                            "collectives on the function's own arguments", use.owner.location)
    for i in reversed(range(k)):
        block.erase_argument(i)
    ft = ir.FunctionType.get([a.type for a in block.arguments], [])
    func_op.attributes["function_type"] = ir.TypeAttr.get(ft)
    del func_op.attributes[RANKS_ATTR]


def is_spmd(func_op):
    """Whether `func_op` is in SPMD form with collectives to expand."""
    return ranks_of(func_op) is not None and len(func_op.regions[0].blocks) > 0 and any(
        op.operation.name in COLLECTIVES for op in func_op.regions[0].blocks[0].operations)


@register("coll-spmd-to-global",
          "Expand every SPMD function (one rank's buffers, coll.ranks = N, collectives naming their "
          "group) into its global view, one buffer per device, for the explicit lowering",
          anchor="builtin.module")
def spmd_to_global(module_op):
    with module_op.context, module_op.location:
        for op in module_op.regions[0].blocks[0].operations:
            if op.operation.name == "func.func" and is_spmd(op.operation):
                _expand(op.operation, ranks_of(op.operation))


@register("coll-to-mpi",
          "Project an explicit global-view program onto one rank (one module for every rank, the rank "
          "read at run time): copies between devices become mpi.isend/mpi.irecv, tokens mpi.wait",
          anchor="builtin.module", implementation=(choice(*IMPLEMENTATIONS), "OpenMPI"))
def to_mpi(module_op, implementation="OpenMPI"):
    """Projects every function that holds explicit ops, in place."""
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
            if any(op.name.startswith("coll.") for op in f.regions[0].blocks[0].operations):
                _project(f)
                projected = True
        if projected:
            _set_implementation(module_op, implementation)
            _add_init_finalize(module_op)
