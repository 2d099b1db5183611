"""coll-mpi-overlap: the local work right before and right after a
collective runs, under MPI, in tiles of rows among the collective's
messages in each rank's case: a tile of what comes after (an epilogue) as
soon as the collective has finished its rows, a tile of what comes before
(a prologue) only when the collective first needs its rows, while the
rank's other messages are in flight.

The pieces are the CPU route's epilogues (lowering/cpu/epilogue.py,
`match`), with contractions too: runs of linalg ops whose loop d0 is
parallel and runs over the leading dimension of every buffer they touch by
rows (a residual add, RMSNorm, a bias, pmean's divide; a matmul's input
and output rows, its weights read whole). Restricted to rows [a, b), such
an op is the same op on those rows (`emit_rows`), so the tiles compute the
unfused program's bits, in whatever order they run among themselves; but
for f32/f64 contractions through OpenBLAS (coll-blas-contractions), whose
sgemm rounds a tile of rows differently from the whole matrix (its kernels
and blocking follow the shape; measured with numpy's OpenBLAS too): there
the tiles agree with the unfused program to rounding, and give the same
bits from call to call (tests/unit/test_mpi_overlap.py). So a
matmul on a gathered input runs chunk by chunk as the chunks arrive, and a
matmul whose result is reduce-scattered computes first the chunk sent
first (the collective matmul of XLA and PyTorch's async TP, here from the
order the collective's own steps give).

Where a tile may go: an epilogue's tile after the last op before it in the
rank's case that touches its rows in a way that orders them (writes rows
the tile reads or writes, reads rows it writes, writes a buffer it reads
whole), then past the messages posted next that leave its rows alone; a
prologue's tile before the first op after it that does, then above the
waits just before that op (it computes while their messages arrive). An
isend or irecv touches its buffer until its mpi.wait: both count. After or
before any op whose accesses are not known (a call, an unresolved view).
The accesses are the analysis coll-check-order orders by
(analysis/effects.py), as hulls in rows: a tile never crosses an op that
touches its rows. Tiles hold whole rows, 2 MiB of the run's buffers (the
CPU route's budget, fuse.py).

When: by default (`coll-run --epilogues=auto`, the pass's `cores` > 0)
where the cost model predicts the tiles faster by MARGIN: coll-spmd-to-mpi
(given a profile, as the mpi route gives it) puts on each collective's
rank switch the predicted time of its runs in tiles and whole (PREDICTED,
`predict`: the collective's explicit task graph with the local work as
tasks, analysis/overlap.py), and the pass tiles the runs of a switch only
where `pays`. A switch without a prediction (a global view's, coll-to-mpi)
goes by the older rule: only where each rank has a core of its own (the
function's coll.ranks at most the MPI profile's `cores`,
analysis/profiles/mpi.json). The model holds what made the rule: with more
ranks than cores a waiting rank's core is not idle (it runs another rank),
and a tile on a chain of dependent steps delays every later step of its
rank (ring measured 0.73-0.92x the unfused time at 3-4 ranks on 2 cores,
bench/collective_matmul.py, bench/epilogue.py --backend=mpi; predicted
0.83-0.96x); and what the rule left unused: collective matmuls gain there
too. `--epilogues=on` overlaps anyway.

An SPMD function keeps its local work outside the rank switch that
coll-spmd-to-mpi makes of each collective: the run right before a switch
moves to the start of every case, the run right after it to the end of
every case (the default case too), as the global view's local work is
placed in the cases (to_mpi.py); a switch in the body of an scf.for (a
collective in a loop of constant bounds) likewise, within the body. With
`coll-run --epilogues=off` or
`--profile` (whose clock reads bracket the collective's ops) the pass is
not in the route.
"""
import math
from collections.abc import Callable, Iterable

from mlir import ir
from mlir.dialects import arith, scf

from ...analysis import overlap as overlap_model
from ...analysis.cost_model import Profile
from ...analysis.effects import Resolver, Root, Unresolved, host_effects
from ...analysis.overlap import Local, Prediction
from ...analysis.regions import box
from ...analysis.stats import nbytes
from ...analysis.taskgraph import Graph
from ...core.registry import register
from ...frontends.spmd import RANKS_ATTR
from ...ir.ops import view
from ...ir.views import VIEW_OPS
from ..cpu.epilogue import CONTRACTIONS, LINALG, PASSIVE, Epilogue, emit_rows, match
from ..cpu.fuse import TILE_BYTES
from .local_work import used_values

Op = ir.Operation | ir.OpView
# Ops a piece may be hoisted above with the values they define: no effect.
_PURE = VIEW_OPS + ("arith.constant", "memref.alloc", "memref.alloca", "memref.get_global")
_MESSAGES = ("mpi.isend", "mpi.irecv")
_RANK_QUERIES = ("mpi.comm_world", "mpi.comm_rank", "arith.index_cast")  # (coll-to-mpi's, before its switch)
# Ops an epilogue's tile goes after when they leave its rows alone: they
# post messages (or make what the next post uses) without waiting.
_POSTED = _MESSAGES + _PURE + ("arith.index_cast", "coll.alloc")
# Ops a prologue's tile goes above (they leave its rows alone, or the tile
# would be above them already): it computes while their messages arrive.
_AWAITED = ("mpi.wait",) + _PURE + ("arith.index_cast",)
# coll-spmd-to-mpi's prediction on a collective's rank switch (with a
# profile): {tiles = s, whole = s, compute_bound}, its runs in tiles or
# not (predict, mark).
PREDICTED = "coll.overlap_predicted"
MARGIN = 0.05  # tiles where they are predicted at least this much faster (the model's noise here)
# (root, first byte, end byte) per access: None where an access is not known.
Hull = tuple[Root, int, int]


def _hulls(values: Iterable[ir.Value], resolver: Resolver) -> list[Hull] | None:
    out: list[Hull] = []
    for v in values:
        if not isinstance(v.type, ir.MemRefType):
            continue
        try:
            lay = resolver.layout(v)
        except Unresolved:
            return None
        z = lay.esize
        b = box(lay.shift + z * lay.offset, [(n, st * z) for n, st in zip(lay.shape, lay.strides)], z)
        if b is not None:
            out.append((lay.root, b.lo, b.hi))
    return out


def _accesses(op: ir.Operation, resolver: Resolver) -> tuple[list[Hull], list[Hull]] | None:
    """(hulls read, hulls written) of an op of a rank's case; None: not known."""
    name = op.name
    if name == "mpi.wait":
        owner = op.operands[0].owner
        if isinstance(owner, ir.Block) or owner.operation.name not in _MESSAGES:
            return None
        op, name = owner.operation, owner.operation.name
    if name in _MESSAGES:  # (the buffer, its rank, tag and communicator)
        hulls = _hulls([op.operands[0]], resolver)
        return None if hulls is None else ((hulls, []) if name == "mpi.isend" else ([], hulls))
    if name.startswith("coll."):
        v = view(op)
        if v is None:
            return ([], []) if name == "coll.alloc" else None
        reads, writes = _hulls(v.reads, resolver), _hulls(v.writes, resolver)
        return None if reads is None or writes is None else (reads, writes)
    if name.startswith("mpi.") and any(isinstance(x.type, ir.MemRefType) for x in op.operands):
        return None  # (a blocking collective of upstream's dialect: not coll's)
    eff = host_effects(op)
    if eff is None:
        return None
    reads, writes = _hulls((v for v, _, _ in eff[0]), resolver), _hulls((v for v, _, _ in eff[1]), resolver)
    return None if reads is None or writes is None else (reads, writes)


def _written(ep: Epilogue) -> set[ir.Value]:
    """The row operands the epilogue writes (a fill's, a generic's outs)."""
    out: set[ir.Value] = set()
    for k, op in enumerate(ep.ops):
        first = 1 if op.name == "linalg.fill" else list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[0]
        out.update(op.operands[n] for n in ep.row_operands[k] if n >= first)
    return out


def _hoist(block: ir.Block, ep: Epilogue) -> None:
    """Move the effect-free ops of `block` that define what the epilogue
    uses (its constants, its row sums' buffers, their views) to the block's
    start, where their operands allow: the pieces may then go anywhere."""
    mine = {op.operation for op in ep.ops}
    moved: set[ir.Operation] = set()
    todo = [v for op in ep.ops for v in used_values(op.operation)]
    order: list[ir.Operation] = []
    while todo:
        v = todo.pop()
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op in moved or op in mine or op.block != block or op.name not in _PURE:
            continue
        moved.add(op)
        order.append(op)
        todo.extend(op.operands)
    index = {op.operation: i for i, op in enumerate(block.operations)}
    first = next(op.operation for op in block.operations if op.operation not in moved)
    for op in sorted(order, key=lambda o: index[o]):  # (program order: each after what it uses)
        if all(_defined_above(x, block, moved) for x in op.operands):
            op.move_before(first)
        else:
            moved.discard(op)


def _defined_above(v: ir.Value, block: ir.Block, moved: set[ir.Operation]) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner != block
    return owner.operation.block != block or owner.operation in moved


def split(block: ir.Block, ep: Epilogue, resolver: Resolver, before: bool = False) -> bool:
    """Tiles of `ep` (ops of `block`) placed in `block` as the module
    docstring says: `ep` an epilogue of the ops above it, or (`before`) a
    prologue of the ops below it; False (nothing changed) where a buffer
    of it is not a static one the analysis resolves."""
    if not before:
        _hoist(block, ep)
    ops = [op.operation for op in block.operations]
    first, last = ops.index(ep.ops[0].operation), ops.index(ep.ops[-1].operation)
    others = ops[last + 1:] if before else ops[:first]  # (a prologue's ends with the terminator)
    try:
        lays = {v: resolver.layout(v) for v in ep.row_roots | ep.read_only}
    except Unresolved:
        return False
    row_bytes = {lays[v].root: lays[v].esize * lays[v].strides[0] for v in ep.row_roots}
    written = {lays[v].root for v in _written(ep)}
    whole = {lays[v].root for v in ep.read_only}
    rows = ep.rows
    tile = tile_rows(rows, sum(row_bytes.values()))
    # Per op of `others`: the rows it orders (their hull, in whole rows).
    spans: list[list[tuple[int, int]]] = []
    needed = {v for op in ep.ops for v in used_values(op.operation)}
    for op in others:
        acc = _accesses(op, resolver)
        if acc is None or any(r in needed for r in op.results):  # (_hoist left a definition here)
            spans.append([(0, rows)])
            continue
        span: list[tuple[int, int]] = []
        reads, writes = acc
        for root, lo, hi in writes + [h for h in reads if h[0] in written]:
            if root in whole:
                span = [(0, rows)]
                break
            if root in row_bytes:
                rb = row_bytes[root]
                a, b = max(lo // rb, 0), min(-(-hi // rb), rows)
                if a < b:
                    span.append((a, b))
        spans.append(span)
    # Pieces: the rows between any two ends of those spans; each ordered by
    # the same ops throughout. at: the op of `others` it goes before (None:
    # where `ep` is).
    cuts = sorted({0, rows} | {x for span in spans for ab in span for x in ab})
    pieces: list[tuple[int, int, ir.Operation | None]] = []
    for a, b in zip(cuts, cuts[1:]):
        hit = [j for j, span in enumerate(spans) if any(lo < b and a < hi for lo, hi in span)]
        if before:  # before the first op it orders (the terminator at the latest), above the waits there
            j = hit[0] if hit else len(others) - 1
            while j > 0 and others[j - 1].name in _AWAITED:
                j -= 1
        else:  # after the last op it orders, past the messages posted next that leave it alone
            j = (hit[-1] if hit else -1) + 1
            while j < len(others) and others[j].name in _POSTED and j not in hit:
                j += 1
        at = others[j] if j < len(others) else None
        if pieces and (pieces[-1][2] is None) == (at is None) and (at is None or pieces[-1][2] == at):
            a = pieces.pop()[0]
        pieces.append((a, b, at))
    # Each piece in tiles of whole rows: a loop of whole tiles and a rest.
    index = ir.IndexType.get()
    for a, b, at in pieces:
        with ir.InsertionPoint(at if at is not None else ep.ops[0].operation), ep.ops[0].location:
            full = (b - a) // tile
            if full > 1:
                loop = scf.ForOp(arith.constant(index, a), arith.constant(index, a + full * tile),
                                 arith.constant(index, tile))
                with ir.InsertionPoint(loop.body):
                    emit_rows(ep, loop.induction_variable, tile, {})
                    scf.YieldOp([])
            elif full == 1:
                emit_rows(ep, a, tile, {})
            if (b - a) % tile:
                emit_rows(ep, a + full * tile, (b - a) % tile, {})
    for e in ep.ops:
        e.operation.erase()
    return True


def _runs(block: ir.Block) -> list[tuple[Epilogue, bool]]:
    """The runs in a rank's case (a global view's local work, placed there
    by coll-to-mpi), each with whether it is a prologue: after a message,
    an epilogue; else, with messages after it, a prologue."""
    found: list[tuple[Epilogue, bool]] = []
    ops = [op.operation for op in block.operations]
    seen_message = False
    i = 0
    while i < len(ops):
        name = ops[i].name
        seen_message |= name in _MESSAGES
        if name in LINALG or name in CONTRACTIONS:
            ep = match(ops, i, contractions=True)
            if ep is not None:
                i = ops.index(ep.ops[-1].operation) + 1
                if seen_message or any(op.name in _MESSAGES for op in ops[i:]):
                    found.append((ep, not seen_message))
                seen_message = False
                continue
        i += 1
    return found


def _rank_switches(block: ir.Block) -> list[ir.Operation]:
    """The scf.index_switch ops on the rank that coll-to-mpi made, in
    `block` and in the bodies of its scf.for loops (an SPMD collective in
    a loop of constant bounds: each iteration runs the switch and the
    local work around it), in program order."""
    out = []
    for op in (o.operation for o in block.operations):
        if op.name == "scf.for":
            out += _rank_switches(op.regions[0].blocks[0])
        elif op.name == "scf.index_switch":
            src = op.operands[0].owner
            if not isinstance(src, ir.Block) and src.operation.name == "arith.index_cast" \
                    and not isinstance(src.operation.operands[0].owner, ir.Block) \
                    and src.operation.operands[0].owner.operation.name == "mpi.comm_rank":
                out.append(op.operation)
    return out


def _lift(ep: Epilogue, span: list[ir.Operation], above: ir.Operation) -> bool:
    """Move the effect-free ops of `span` that define what `ep` uses above
    `above`; False (nothing moved) where one has effects."""
    mine = {op.operation for op in ep.ops}
    lift: list[ir.Operation] = []
    todo = [v for op in ep.ops for v in used_values(op.operation)]
    while todo:
        owner = todo.pop().owner
        if isinstance(owner, ir.Block) or owner.operation not in span or owner.operation in mine:
            continue
        op = owner.operation
        if op.name not in _PURE:
            return False
        if op not in lift:
            lift.append(op)
            todo.extend(op.operands)
    for op in sorted(lift, key=span.index):
        op.move_before(above)
    return True


def _prologue(ops: list[ir.Operation], at: int) -> Epilogue | None:
    """The run whose last op is the last one before ops[at] but views,
    constants and rank queries."""
    j = at
    while j > 0 and (ops[j - 1].name in PASSIVE + LINALG + tuple(CONTRACTIONS) + _RANK_QUERIES):
        j -= 1
    last = next((op for op in reversed(ops[j:at]) if op.name in LINALG or op.name in CONTRACTIONS), None)
    for i in range(j, at):
        pro = match(ops, i, contractions=True) if last is not None and ops[i].name not in PASSIVE else None
        if pro is not None and pro.ops[-1].operation == last:
            return pro
    return None


def _sink(switch: ir.Operation) -> None:
    """The run right before `switch` (an SPMD function's collective) to the
    start of every case, the run right after it to the end of every case;
    what they use stays above the switch."""
    ops = [op.operation for op in switch.block.operations]
    pro = _prologue(ops, ops.index(switch))
    if pro is not None:
        for region in switch.regions:
            with ir.InsertionPoint.at_block_begin(region.blocks[0]):
                for e in pro.ops:
                    e.operation.clone()
        for e in pro.ops:
            e.operation.erase()
    ops = [op.operation for op in switch.block.operations]
    after = ops[ops.index(switch) + 1:]
    ep = match(after, 0, contractions=True)
    if ep is None or not _lift(ep, after[:after.index(ep.ops[-1].operation) + 1], switch):
        return
    for region in switch.regions:
        with ir.InsertionPoint(list(region.blocks[0].operations)[-1]):  # (before the scf.yield)
            for e in ep.ops:
                e.operation.clone()
    for e in ep.ops:
        e.operation.erase()


def tile_rows(rows: int, row_bytes: int) -> int:
    """Rows a tile: the largest power of two whose rows of the run's
    buffers (`row_bytes` a row, all of them) fit fuse.py's budget."""
    tile = 1
    while tile * 2 <= rows and tile * 2 * row_bytes <= TILE_BYTES:
        tile *= 2
    return tile


def _work(ep: Epilogue, hot: ir.Value | None) -> tuple[float, float, float, float]:
    """(flops of its contractions, bytes streamed, bytes reused, bytes of
    its buffers) of a run (analysis/overlap.py); `hot`: a buffer whose
    rows are in cache when it starts (an epilogue's collective result)."""
    flops = streamed = reused = 0.0
    seen = set() if hot is None else {hot}
    for op in ep.ops:
        memrefs = [v for v in op.operands if isinstance(v.type, ir.MemRefType)]
        if op.name in CONTRACTIONS:  # (m, k) x (k, n) or (m, k) x (k)
            shapes = [ir.MemRefType(v.type).shape for v in memrefs]
            flops += 2.0 * math.prod(shapes[0]) * (shapes[1][1] if len(shapes[1]) == 2 else 1)
        for v in memrefs:
            if v in seen:
                reused += nbytes(v.type)
            else:
                streamed += nbytes(v.type)
            seen.add(v)
    return flops, streamed, reused, float(sum(nbytes(v.type) for v in seen))


def _or(x: int | None, default: int) -> int:
    return default if x is None else x


def predict(op: ir.Operation, graph: Graph, arg: Callable[[ir.Value, int], int | None],
            profile: Profile) -> Prediction | None:
    """The time of SPMD collective `op` (its
    explicit program: `graph`, whose argument `arg(v, r)` is rank r's `v`)
    with the runs right before and after it that coll-mpi-overlap would
    tile (analysis/overlap.py); None where there is none."""
    ops = [o.operation for o in op.block.operations]
    at = ops.index(op)
    c = view(op)
    assert c is not None, op.name  # (a collective)
    n = len(graph.devices)
    runs: list[Local] = []
    for ep, before, bufs in ((_prologue(ops, at), True, c.inputs), (match(ops[at + 1:], 0, contractions=True),
                                                                     False, c.outputs)):
        if ep is None or ep.rows == 0:  # (no rows: no work to place)
            continue
        tied = next((v for v in bufs if v in (_written(ep) if before else ep.row_roots)), None)
        row = {v: nbytes(v.type) // ep.rows for v in ep.row_roots}
        runs.append(Local(*_work(ep, None if before else tied), ep.rows, row[tied] if tied is not None else 0,
                          tile_rows(ep.rows, sum(row.values())),
                          tuple((r, _or(arg(tied, r) if tied is not None else None, -1)) for r in range(n)),
                          before))
    return overlap_model.predict(graph, runs, profile) if runs else None


def pays(p: Prediction, ranks: int, cores: int) -> bool:
    """Whether runs predicted `p` go in tiles, for `ranks` ranks on
    `cores` cores (0: not known): predicted faster by MARGIN, and where
    ranks outnumber cores only compute-bound runs. The model lets a rank
    that waits leave its core to the others; a rank that shares a core
    spins in its waits instead, and elementwise tiles lost there
    (0.70-0.95x at 4 ranks on 2 cores, predicted 1.1-1.2x), where
    collective matmuls gained (1.16-1.30x)."""
    return p.tiles < p.whole * (1 - MARGIN) and (p.compute_bound or not 0 < cores < ranks)


def prediction_of(switch: ir.Operation) -> Prediction | None:
    """coll-spmd-to-mpi's prediction on a rank switch (PREDICTED)."""
    if PREDICTED not in switch.attributes:
        return None
    d = ir.DictAttr(switch.attributes[PREDICTED])
    return Prediction(ir.FloatAttr(d["tiles"]).value, ir.FloatAttr(d["whole"]).value,
                      ir.BoolAttr(d["compute_bound"]).value)


def mark(switch: ir.Operation, p: Prediction) -> None:
    f64 = ir.F64Type.get()
    switch.attributes[PREDICTED] = ir.DictAttr.get({"tiles": ir.FloatAttr.get(f64, p.tiles),
                                                   "whole": ir.FloatAttr.get(f64, p.whole),
                                                   "compute_bound": ir.BoolAttr.get(p.compute_bound)})


def _wanted(switch: ir.Operation, func_op: ir.Operation, cores: int) -> bool:
    """Whether to tile the runs around `switch`: always with `cores` 0;
    else as coll-spmd-to-mpi's prediction on it says (PREDICTED), and
    without one, where the ranks have a core each (the module docstring)."""
    if cores <= 0:
        return True
    ranks = ir.IntegerAttr(func_op.attributes[RANKS_ATTR]).value if RANKS_ATTR in func_op.attributes else 0
    p = prediction_of(switch)
    return not 0 < cores < ranks if p is None else pays(p, ranks, cores)


def mpi_overlap(module_op: ir.Operation, cores: int = 0) -> None:
    """Every function's runs in tiles among its messages; with `cores` > 0
    only where _wanted says so."""
    for func_op in (op.operation for op in module_op.regions[0].blocks[0].operations):
        if func_op.name != "func.func" or not len(func_op.regions[0].blocks):
            continue
        resolver = Resolver(func_op)
        for switch in _rank_switches(func_op.regions[0].blocks[0]):  # (in order: a run between two is the first's)
            if not _wanted(switch, func_op, cores):
                continue
            _sink(switch)
            for region in list(switch.regions)[1:]:  # (regions[0]: the default case, no messages)
                for ep, before in _runs(region.blocks[0]):
                    split(region.blocks[0], ep, resolver, before)


@register("coll-mpi-overlap",
          "Per-rank programs: the row-parallel local work right before and after a collective "
          "(lowering/cpu/epilogue.py, matmuls too) runs in tiles of rows among its messages in the rank's case: "
          "after, each tile once the collective has finished its rows; before, only when it first needs them",
          anchor="builtin.module", cores=(int, 0))
def mpi_overlap_pass(module_op: ir.Operation, cores: int = 0) -> None:
    with module_op.context, module_op.location:
        mpi_overlap(module_op, cores)
