"""Tiled execution of the explicit program on the CPU.

Run one op after the other and every copy and combine streams its buffers
through memory: ring on 8 devices moves 49x the buffer size. Instead, the
ops that touch the same data (one chunk's copies and combines, or one
device's naive reduction; and the groups that read the same regions, as
naive's and oneshot's N reductions do) form a group, and a group runs tile by tile: all of
its ops on elements [t, t+T) before any op on the next tile, so a tile's
intermediates stay in cache. A scratch buffer that only its group
uses shrinks to one tile. Every copy and combine still happens, in program
order within a tile: only the loop order changes; except in a program
larger than the cache, where copies of a combine's result right after it
are folded into it (`folds`: the result is stored into each destination,
not read back).

Legal because, within a group, two ops that touch overlapping regions of the
same buffer (one of them writing) do it at the same offset, so element k of
one is element k of the other and both run in the same tile, in program
order. A group whose ops have several lengths (rhd: halves, quarters, ...)
is tiled when every buffer's elements have one place in the group's range
(anchors): a tile then runs each op on its part of the tile, maybe none.
Groups are closed under such conflicts, so ops of different groups touch
disjoint data (or only read the same data) and may run in any order.
Ops this analysis does not understand (a frontend's local work) cut a
block into segments, each tiled on its own; the row-parallel local work
right after a collective may join its group as an epilogue (epilogue.py).

Tiles touch disjoint elements, so a large group's tiles may run on several
threads at once (coll-to-cpu's `workers`, the cpu route: every core): an
scf.parallel over the workers, each on consecutive tiles with scratch
tiles of its own (`_tile_loop`), run by upstream's async-parallel-for.
A segment's smaller groups (a chunk each: ring's, twoshot's) run whole
on the workers at once instead (`emit_shared`). Each element is computed
as on one thread: the results are bit for bit the same.
"""
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, llvm, memref, scf

from ...ir.ops import Implements, OpView, view
from ...ir.types import is_token
from ...ir.views import VIEW_OPS
from ...ir.walk import find_ops
from . import epilogue as ep
from .kernels import Combine, Index, Operand, buffer_bytes, combine_element, copy_1d, element_bytes, index, window
from .parallel import MIN_BYTES
from .scratch import ALIGNMENT, Scratch
from .shared import Kernels, create, pointer_of, ptr_type

# Working set of one tile: about one core's L2 (2 MiB here). Measured on
# this 2-core VM (2026-12-03, one process, interleaved): against 4 MiB
# tiles, reduce at 4 and 8 x 64 MiB took 0.88-0.90x the time (direct, whose
# copies into scratch tiles stay in L2), reduce_scatter direct at 8 x 64 MiB
# 0.84x, every allreduce strategy at 1-64 MiB 0.95-1.02x; 1 MiB tiles were
# no better. (On an earlier host, 4 MiB had beaten L2-sized tiles.) A group
# that reads its views again and again (oneshot: N combines over the same N
# input tiles) wants them in L2: at 8 x 16 MiB oneshot took 0.72x the time
# with 1 MiB tiles (64 KiB per view) than with 4 MiB ones.
TILE_BYTES = 2 << 20
SHARED_TILE_BYTES = 1 << 20
REUSE = 2  # accesses per distinct view from which a group takes SHARED_TILE_BYTES
MIN_TILE = 256
# A group worth sharing among threads (_workers): a run worth another thread
# to coll-parallel-devices (parallel.py). Measured on this 2-core VM
# (2026-12-07, bench/cpu_strategies.py, wall ms, against one thread): at
# 8 x 1 MiB (groups of 16 MiB) tree 0.44 against 0.77, rhd 0.62 / 0.95,
# oneshot 0.59 / 1.00; at 8 x 16-64 MiB every strategy 0.54-0.58x the time.
MIN_PARALLEL_BYTES = MIN_BYTES

# Ops a tiled block may hold besides copies and combines (none touches data).
BENIGN_OPS = VIEW_OPS + ("coll.alloc", "coll.join", "coll.wait", Implements.NAME, "arith.constant",
                         "func.return")


Op = ir.Operation | ir.OpView  # a coll.copy or coll.combine


def _view(op: ir.Operation | ir.OpView) -> OpView:
    """view(op) of an op known to be coll's (the op layer's view, never None)."""
    v = view(op)
    assert v is not None, op.name
    return v


@dataclass
class Access:
    root: ir.Value  # block argument or coll.alloc result
    start: int     # element offset in the root
    length: int
    write: bool


@dataclass
class Group:
    ops: list[Op]
    length: int
    scratch: list[ir.Value] = field(default_factory=list)  # coll.alloc results shrunk to a tile
    # Ops of several lengths (rhd's halving steps): op -> its anchor, the
    # element of the group's range [0, length) where it starts (_anchors);
    # None: every op covers the whole range.
    anchors: dict[Op, int] | None = None
    # Local work fused after each tile (epilogue.py), on whole rows of
    # `row` places each (anchored groups only).
    epilogue: ep.Epilogue | None = None
    row: int = 0
    local_after: bool = False  # a frontend's local work follows (it reads the results again)
    segment: int = 0  # its segment of the block (plan): groups of one segment touch disjoint data
    # One op alone (all_to_all's and permute's copies, oneshot's reduce):
    # tiled only to share it among threads (`worth`), else left to run whole.
    single: bool = False

    def tile(self, accesses: "Accesses", fixed: int = -1) -> int:
        """Elements per tile: `fixed` if > 0, else the group's distinct views
        share TILE_BYTES (SHARED_TILE_BYTES when it reads them again and
        again)."""
        if fixed > 0:
            return max(fixed - fixed % self.row, self.row) if self.epilogue is not None else fixed
        # The widest element sizes the tile (a 16-bit chain's f32 partials).
        esize = max(element_bytes(ir.MemRefType(v.type).element_type) for op in self.ops for v in _views(op))
        if self.anchors is not None:  # a tile touches T elements of each buffer at most
            roots = {a.root for op in self.ops for a in accesses[op]}
            if self.epilogue is not None:  # whole rows, a power of two of them
                # Sized by the collective's buffers alone: each device's
                # epilogue touches only its own few after them. Measured
                # (bench/epilogue.py, twoshot at 8 x 16 MiB, rows of 16
                # KiB, 2026-12-06): 8 rows a tile 43 ms, 2 rows (the
                # epilogue's buffers counted too) 47, 16 rows 46.
                rows = max(TILE_BYTES // (len(roots) * esize * self.row), 1)
                return self.row << (rows.bit_length() - 1)  # a power of two of rows: whole tiles
            t = TILE_BYTES // (len(roots) * esize)
            return max(1 << max(t.bit_length() - 1, 0), MIN_TILE)
        every = [(a.root, a.start) for op in self.ops for a in accesses[op]]
        views = set(every)
        budget = SHARED_TILE_BYTES if len(every) >= REUSE * len(views) else TILE_BYTES
        t = budget // (len(views) * esize)
        t = 1 << max(t.bit_length() - 1, 0)  # a power of two: whole vectors
        return max(t, MIN_TILE)


Accesses = dict[Op, list[Access]]  # per op, its reads then its writes


# (and block arguments). Two get_global of one global are one buffer only
# when their lifetimes do not overlap (coll-static-local-buffers), so never
# in one segment.
ROOTS = ("coll.alloc", "memref.alloc", "memref.alloca", "memref.get_global")


def _trace(value: ir.Value) -> tuple[ir.Value, int] | None:
    """(root, start) of a rank-1, unit-stride, static-offset view of a
    contiguous block argument or allocation; None otherwise."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "memref.cast":
        return _trace(owner.operands[0])  # a cast that forgot a static layout (one combine's rhs type)
    m = ir.MemRefType(value.type)
    if m.rank != 1:
        return None
    strides, offset = m.get_strides_and_offset()
    if strides[0] != 1 or m.is_dynamic_stride_or_offset(offset) or not m.has_static_shape:
        return None
    v = value
    while not isinstance(v.owner, ir.Block):
        op = v.owner
        if op.operation.name == "memref.view":
            return None  # (its byte shift is in no type: the offset below would be another element's)
        if op.operation.name in VIEW_OPS:  # (.operation: a get_global view's .name is its global)
            v = op.operands[0]
        elif op.operation.name in ROOTS:
            break
        else:
            return None
    r = ir.MemRefType(v.type)
    if not r.has_static_shape:
        return None
    r_strides, r_offset = r.get_strides_and_offset()
    row_major: list[int] = []
    n = 1
    for d in reversed(r.shape):
        row_major.insert(0, n)
        n *= d
    if r_offset != 0 or (r.rank and list(r_strides) != row_major):
        return None
    return v, offset


def _accesses(op: Op, memo: dict[ir.Value, tuple[ir.Value, int] | None] | None = None) -> list[Access] | None:
    """Accesses of a coll.copy or coll.combine, or None if not analysable
    (`memo`: traced views, shared by the ops of a block)."""
    v = _view(op)
    views = [(r, False) for r in v.reads] + [(w, True) for w in v.writes]
    out = []
    for value, write in views:
        if memo is None:
            traced = _trace(value)
        else:
            if value not in memo:
                memo[value] = _trace(value)
            traced = memo[value]
        if traced is None:
            return None
        out.append(Access(traced[0], traced[1], ir.MemRefType(value.type).shape[0], write))
    return out


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


ByRoot = dict[ir.Value, list[tuple[int, Access]]]  # per root, (op index, access)


def _conflicts(items: list[tuple[int, Access]], uf: _UnionFind, clash: set[int]) -> None:
    """Unions the ops of `items` (one root's (op index, access)) that touch
    overlapping elements, one of them writing; `clash` gets ops so joined
    at different offsets. Per distinct interval, not per pair of ops: a
    buffer that N ops read would cost N^2."""
    spans: dict[tuple[int, int], tuple[list[int], bool]] = {}
    for i, a in items:
        members, write = spans.get((a.start, a.length), ([], False))
        members.append(i)
        spans[(a.start, a.length)] = (members, write or a.write)
    keys = sorted(spans)
    for key in keys:
        members, write = spans[key]
        if write:  # every op on it conflicts with the writer
            for i in members[1:]:
                uf.union(members[0], i)
    for k, (start, length) in enumerate(keys):
        mine, mine_write = spans[(start, length)]
        for j in range(k + 1, len(keys)):
            if keys[j][0] >= start + length:
                break  # sorted by start: no later interval overlaps
            theirs, theirs_write = spans[keys[j]]
            if mine_write or theirs_write:
                for i in mine + theirs:
                    uf.union(mine[0], i)
                clash.add(mine[0])


def _share_reads(ops: Sequence[Op], accesses: Accesses, by_root: ByRoot, uf: _UnionFind, clash: set[int]) -> None:
    """Joins the groups that read the same region at the same offset and
    have one length (naive's N reductions all read every input; oneshot's
    N combines too): tiled together, each input tile is read from memory
    once and from cache by the others. Legal: ops of different groups touch
    disjoint data or only read the same, so any interleaving of them is."""
    def length(i: int) -> int:
        return accesses[ops[i]][0].length
    bad = {uf.find(i) for i in clash}
    lengths: dict[int, set[int]] = {}
    for i in range(len(ops)):
        lengths.setdefault(uf.find(i), set()).add(length(i))
    clean = {r for r, ls in lengths.items() if r not in bad and len(ls) == 1}
    for items in by_root.values():
        readers: dict[tuple[int, int], list[int]] = {}
        for i, a in items:
            r = uf.find(i)
            if not a.write and r in clean:
                readers.setdefault((a.start, a.length), []).append(i)
        for same in readers.values():
            for i in same[1:]:
                ra, rb = uf.find(same[0]), uf.find(i)
                if ra != rb and ra in clean and rb in clean:
                    uf.union(rb, ra)
                    clean.discard(rb)
                    clean.add(uf.find(ra))


def plan(block: ir.Block, epilogues: bool = True) -> tuple[list[Group], Accesses]:
    """(groups to tile, accesses per op) for one block. The copies and
    combines between two ops of anything else (a segment: one collective
    amid a frontend's local work) are planned on their own, and with
    `epilogues` the local work right after them may join them
    (_attach_epilogue); a segment with a view the analysis cannot follow
    is not tiled."""
    everything: list[Op] = list(block.operations)
    segments: list[tuple[list[Op], int]] = []  # (copies and combines, index of the op after)
    current: list[Op] = []
    for i, op in enumerate(everything):
        if op.operation.name in ("coll.copy", "coll.combine"):
            current.append(op)
        elif op.operation.name not in BENIGN_OPS:
            if current:
                segments.append((current, i))
            current = []
    if current:
        segments.append((current, len(everything)))
    accesses: Accesses = {}
    memo: dict[ir.Value, tuple[ir.Value, int] | None] = {}
    groups: list[Group] = []
    position: dict[Op, int] | None = None
    for k, (ops, after) in enumerate(segments):
        acc: Accesses = {}
        for op in ops:
            a = _accesses(op, memo)
            if a is None:
                break
            acc[op] = a
        else:
            accesses.update(acc)
            found = _plan_segment(ops, acc)
            singles = [g for g in found if g.single]  # (no epilogue joins one: they run as before)
            found = [g for g in found if not g.single]
            if epilogues and after < len(everything):
                if position is None:  # (once per block: a block of many segments is common)
                    position = {op: i for i, op in enumerate(everything)}
                found = _attach_epilogue(found, acc, everything, after, position)
            found += singles
            for g in found:
                g.local_after = after < len(everything) and everything[after].operation.name != "func.return"
                g.segment = k
            groups += found
    return groups, accesses


def _only_used_by(root: ir.Value, ops: set[ir.Operation], names: tuple[str, ...] = ()) -> bool:
    """Whether every use of `root` (through views) is by one of `ops`, or
    by an op named in `names`."""
    for use in root.uses:
        user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
        if user in ops or user.name in names:
            continue
        if user.name not in VIEW_OPS or not all(_only_used_by(r, ops, names) for r in user.results):
            return False
    return True


def _plan_segment(ops: Sequence[Op], accesses: Accesses) -> list[Group]:
    """The groups of one segment's copies and combines."""
    by_root: ByRoot = {}
    for i, op in enumerate(ops):
        for a in accesses[op]:
            by_root.setdefault(a.root, []).append((i, a))
    uf = _UnionFind(len(ops))
    clash: set[int] = set()
    for items in by_root.values():
        _conflicts(items, uf, clash)
    _share_reads(ops, accesses, by_root, uf, clash)
    members: dict[int, list[int]] = {}
    for i in range(len(ops)):
        members.setdefault(uf.find(i), []).append(i)
    bad_roots = {uf.find(i) for i in clash}
    groups: dict[int, Group] = {}
    for r, idx in members.items():
        lengths = {accesses[ops[i]][0].length for i in idx}
        if r not in bad_roots and len(lengths) == 1:
            groups[r] = Group([ops[i] for i in idx], lengths.pop(), single=len(idx) == 1)
        elif len(idx) >= 2:
            anchors = _anchors([ops[i] for i in idx], accesses)
            if anchors is not None:
                span = max(o + accesses[op][0].length for op, o in anchors.items())
                groups[r] = Group([ops[i] for i in idx], span, anchors=anchors)
    # Scratch that one group alone uses shrinks to a tile: whole, at offset 0
    # (all of a tile's elements at the same place), or any way in a group
    # with anchors (an element is where its anchor puts it).
    for root, items in by_root.items():
        owners = {uf.find(i) for i, _ in items}
        g = groups.get(owners.pop()) if len(owners) == 1 else None
        if g is None or isinstance(root.owner, ir.Block) or root.owner.operation.name != "coll.alloc" \
                or not _only_used_by(root, {op.operation for op in g.ops}):
            continue
        if g.anchors is not None or (ir.MemRefType(root.type).shape == [g.length]
                                     and all(a.start == 0 and a.length == g.length for _, a in items)):
            g.scratch.append(root)
    return list(groups.values())




def _attach_epilogue(groups: list[Group], accesses: Accesses, everything: Sequence[Op], after: int,
                     position: dict[Op, int]) -> list[Group]:
    """`groups` where each part of the epilogue at everything[after]
    (epilogue.py) and the groups that touch its buffers become one anchored
    group that runs it tile by tile, where that is legal: every such
    buffer's element i at place i of the range, which is exactly the
    epilogue's rows. Parts (one device's epilogue, say) share no buffer, so
    each runs where its last op was, whatever the order of the others."""
    found = ep.match(everything, after)
    if found is None:
        return groups
    # Parts: the epilogue's ops and the groups, joined through the
    # epilogue's buffers.
    n = len(found.ops)
    uf = _UnionFind(n + len(groups))
    owner: dict[ir.Value, int] = {}
    for k in range(n):
        for r in found.roots(k):
            uf.union(k, owner.setdefault(r, k))
    for i, g in enumerate(groups):
        for r in {a.root for op in g.ops for a in accesses[op]} & owner.keys():
            uf.union(n + i, owner[r])
    parts: dict[int, tuple[list[int], list[Group]]] = {}
    for k in range(n):
        parts.setdefault(uf.find(k), ([], []))[0].append(k)
    for i, g in enumerate(groups):
        if uf.find(n + i) in parts:
            parts[uf.find(n + i)][1].append(g)
    for keep, merged in parts.values():
        fused = _fuse(found.part(keep), merged, accesses, position)
        if fused is not None:
            groups = [g for g in groups if g not in merged] + [fused]
    return groups


def _fuse(found: ep.Epilogue, merged: list[Group], accesses: Accesses, position: dict[Op, int]) -> Group | None:
    """One anchored group of `merged` running epilogue `found`, or None."""
    if not merged or any(a.write and a.root in found.read_only for g in merged for op in g.ops
                         for a in accesses[op]):
        return None
    ops = sorted((op for g in merged for op in g.ops), key=lambda op: position[op])
    anchors = _anchors(ops, accesses)
    if anchors is None:
        return None
    shift = {a.root: anchors[op] - a.start for op in ops for a in accesses[op]}
    length = max(anchors[op] + accesses[op][0].length for op in ops)
    shared = found.row_roots & shift.keys()
    if not shared or length % found.rows or any(
            shift[r] or ir.MemRefType(r.type).shape[0] != found.rows or math.prod(ir.MemRefType(r.type).shape) != length
            for r in shared):
        return None
    # A result that only the collective and its epilogue use (a frontend's
    # buffer for it) shrinks to one tile: it is never written to memory.
    users = {op.operation for op in ops + found.ops}
    # A global only if coll made it for a buffer (an outside attack's global
    # of the user's, read again after the epilogue, was never written).
    own = [r for r in shared if not isinstance(r.owner, ir.Block)
           and (r.owner.operation.name == "memref.alloc"
                or (r.owner.operation.name == "memref.get_global" and Scratch.made_here(r.owner.operation)))
           and _only_used_by(r, users, ("memref.dealloc",))]
    return Group(ops, length, [s for g in merged for s in g.scratch] + own, anchors, found, length // found.rows)


def _anchors(ops: Sequence[Op], accesses: Accesses) -> dict[Op, int] | None:
    """{op: anchor} when every element of every buffer the ops touch has one
    place in the group's range: op k's element j is at anchor_k + j, and a
    buffer's element i at i + shift_buffer, the same for every op on that
    buffer (rhd: its inputs and outputs at shift 0, each scratch buffer at
    the offset of the chunk it holds). Then an element's ops all run in the
    tile of its place, in program order, whatever their lengths; else None.
    Anchors start at 0."""
    Node = tuple[str, object]  # ("op", index) or ("root", value)
    edges: dict[Node, list[tuple[Node, int]]] = {}
    for k, op in enumerate(ops):
        for a in accesses[op]:
            edges.setdefault(("op", k), []).append((("root", a.root), a.start))
            edges.setdefault(("root", a.root), []).append((("op", k), -a.start))
    value: dict[Node, int] = {("op", 0): 0}
    todo: list[Node] = [("op", 0)]
    while todo:  # value(op) - value(root) = the access's start
        node = todo.pop()
        for other, d in edges[node]:
            v = value[node] - d
            if other not in value:
                value[other] = v
                todo.append(other)
            elif value[other] != v:
                return None
    if len([n for n in value if n[0] == "op"]) != len(ops):
        return None
    low = min(value["op", k] for k in range(len(ops)))
    return {op: value["op", k] - low for k, op in enumerate(ops)}


def footprint(accesses: Accesses) -> int:
    """Bytes of every buffer (argument or scratch) the accesses reach."""
    roots = {a.root for acc in accesses.values() for a in acc}
    return sum(buffer_bytes(r.type) for r in roots)


def folds(group: Group, accesses: Accesses) -> dict[Op, list[Op]]:
    """{combine: copies folded into it}: the copies right after a combine,
    in the group's order, of its result (or of such a copy's), none in
    between. The combine stores its result into their destinations too, so
    the result is not read back (twoshot at 8 x 64 MiB: every write
    streamed, 0.77 -> about 1.0 of the copy's speed, bench/cpu_strategies.py).
    Exact: a copy of the result holds the result, element k of every
    access is in the same tile step (one length, one offset per buffer),
    and each step loads before it stores."""
    out: dict[Op, list[Op]] = {}
    ops, i = group.ops, 0
    while i < len(ops):
        op, i = ops[i], i + 1
        if op.name != "coll.combine":
            continue
        w = accesses[op][-1]
        same, folded = {(w.root, w.start)}, []
        while i < len(ops) and ops[i].name == "coll.copy":
            src, dst = accesses[ops[i]]
            if (src.root, src.start) not in same:
                break
            folded.append(ops[i])
            same.add((dst.root, dst.start))
            i += 1
        if folded:
            out[op] = folded
    return out


def final_writes(group: Group, accesses: Accesses, folded: dict[Op, list[Op]] | None = None) -> set[Op]:
    """The copies and combines of `group` (and copies folded into them,
    `folds`) that write a region of a function argument (a result) that no
    later op of the group reads: nothing reads it again while the program
    runs, so it may bypass the cache. Not where an earlier op of the group
    wrote it: its dirty lines would go to memory twice (tree at 8 x 64 MiB,
    whose partial sums go to the root's result: 108 against 86 ms)."""
    folded = folded or {}
    hidden = {c for cs in folded.values() for c in cs}
    ops = [op for op in group.ops if op not in hidden]

    Spans = dict[ir.Value, list[tuple[int, int, int]]]

    def overlaps(w: Access, spans: Spans, before: int | None = None) -> bool:
        return any(s < w.start + w.length and w.start < e and (before is None or k < before)
                   for k, s, e in spans.get(w.root, ()))
    written: Spans = {}  # root -> (op index, start, end) of every write
    for k, op in enumerate(ops):
        for writer in [op] + folded.get(op, []):
            w = accesses[writer][-1]
            written.setdefault(w.root, []).append((k, w.start, w.start + w.length))
    out: set[Op] = set()
    later: Spans = {}  # root -> spans read after the op
    for k in reversed(range(len(ops))):
        for writer in [ops[k]] + folded.get(ops[k], []):
            w = accesses[writer][-1]
            if isinstance(w.root.owner, ir.Block) and not overlaps(w, later) \
                    and not overlaps(w, written, before=k):
                out.add(writer)
        for a in accesses[ops[k]]:
            if not a.write:
                later.setdefault(a.root, []).append((k, a.start, a.start + a.length))
    return out


def emit(group: Group, accesses: Accesses, tile: int = -1, kernels: Kernels | None = None,
         scratch: Scratch | None = None, streaming: bool = False, workers: int = 1,
         before: ir.Operation | None = None) -> None:
    """Emits the tiled loops of `group` before its last op (tile: elements
    per tile, or -1 to size tiles by TILE_BYTES; kernels: a
    cpu_shared.Kernels to call, or None for inline loops; scratch: the
    scratch.Scratch that allocates its tiles, None: the heap;
    streaming: its final writes (`final_writes`) are non-temporal,
    for a program larger than the cache; workers: threads its tiles may
    be shared among, `_workers`; before: where the loops go, if not
    before its last op: `emit_shared`)."""
    last = group.ops[-1]
    # Results that local work reads next are not streamed past the cache.
    streaming = streaming and kernels is not None and not group.local_after
    if group.anchors is not None:
        stream = final_writes(group, accesses) if streaming else set()
        assert kernels is not None  # (to_cpu tiles a group with anchors through the shared kernels only)
        if group.epilogue is not None:  # where the last op of the epilogue was, which it replaces
            last = group.epilogue.ops[-1]
        with ir.InsertionPoint(before or last), last.location:
            _emit_anchored(group, accesses, tile, kernels, scratch or Scratch(None, "heap"), stream,
                           _workers(group, accesses, workers))
        if group.epilogue is not None:
            for op in group.epilogue.ops:
                op.operation.erase()
            for s in group.scratch:
                if s.owner.operation.name in ("memref.alloc", "memref.get_global"):  # (shrunk: erased when dead)
                    for use in list(s.uses):
                        if use.owner.operation.name == "memref.dealloc":
                            use.owner.operation.erase()
        return
    # Folded stores pay where they skip the cache; in cache a combine and
    # memcpys (glibc's rep movsb) beat one loop of plain stores to every
    # result (twoshot at 8 x 1 MiB: 0.61 against 0.71 ms folded).
    folded = folds(group, accesses) if streaming else {}
    hidden = {c for cs in folded.values() for c in cs}
    stream = final_writes(group, accesses, folded) if streaming else set()
    with ir.InsertionPoint(before or last), last.location:
        L = group.length
        T = min(group.tile(accesses, tile), L)
        types = {s: ir.MemRefType.get([T], ir.MemRefType(s.type).element_type) for s in group.scratch}

        def stepper(tiles: dict[ir.Value, ir.Value]) -> Step:
            def ops_at(base: ir.Value | int, count: int) -> None:
                for op in group.ops:
                    if op not in hidden:
                        _emit_op(op, accesses, tiles, base, count, kernels, stream, folded.get(op, []))
            return ops_at
        _tile_loop(L // T, T, L % T, types, scratch or Scratch(None, "heap"), stepper,
                   _workers(group, accesses, workers))


def shared_among(groups: Sequence[Group], accesses: Accesses, workers: int) -> list[list[Group]]:
    """Per segment, its groups that `emit_shared` runs at once on `workers`
    threads: two or more, each too small to share its tiles (`_workers`)
    and without an epilogue (emitted where the epilogue ends), of
    MIN_PARALLEL_BYTES in all (ring's and twoshot's groups are a chunk
    each: at 8 x 1 MiB, 2 MiB a group)."""
    if workers < 2:
        return []
    segments: dict[int, list[Group]] = {}
    for g in groups:
        if g.epilogue is None and _workers(g, accesses, workers) == 1:
            segments.setdefault(g.segment, []).append(g)
    return [small for small in segments.values()
            if len(small) >= 2 and sum(_bytes(g, accesses) for g in small) >= MIN_PARALLEL_BYTES
            and (not any(_two_names(g, accesses) for g in small) or _independent(small))]


def _two_names(group: Group, accesses: Accesses) -> bool:
    """Whether a memory `group` touches may have a second name in its
    segment, which _accesses would take for another root: a global of the
    user's (two memref.get_global of it; coll's own globals, scratch and
    static local buffers, are one name per lifetime), or an argument of a
    function that is called (a caller may pass one buffer twice; the
    runtime refuses overlapping arrays only at the entry) or of a nested
    block. Allocations have one name."""
    called: set[str] | None = None
    for a in (a for op in group.ops for a in accesses[op]):
        owner = a.root.owner
        if isinstance(owner, ir.Block):
            fn = owner.owner.operation
            if fn.name != "func.func":
                return True
            if called is None:
                module = fn.parent
                called = {ir.FlatSymbolRefAttr(op.attributes["callee"]).value for op in find_ops(module, "func.call")}
            if ir.StringAttr(fn.attributes["sym_name"]).value in called:
                return True
        elif owner.operation.name == "memref.get_global" and not Scratch.made_here(owner.operation):
            return True
    return False


def _independent(groups: Sequence[Group]) -> bool:
    """Whether no copy or combine waits (through tokens, transitively, or
    after a coll.wait on them) on one of `groups` other than its own: the
    program lets them run at once,
    and lets every op between them run before them. Their disjoint
    accesses alone do not show it where two names may be one memory (two
    memref.get_global of a user's global are two roots to _accesses): a
    second collective that waited on the first and read its result
    through such a name ran at once with it, before the first wrote it (an
    outside attack, 2026-12-07; through memref.view too, which _trace no
    longer follows, and through a callee's aliased arguments; a third found
    the same through a coll.wait instead of a token). Twoshot's
    chunks wait on one join of every chunk's reduction: where no memory
    has two names (_two_names) they are shared by their accesses."""
    mine = {op.operation: k for k, g in enumerate(groups) for op in g.ops}
    block = groups[0].ops[0].operation.block
    left = len(mine)  # (ops after the last of them run after emit_shared's loops)
    waits: dict[ir.Operation, set[int]] = {}  # op -> the groups it waits on
    synced: set[int] = set()  # the groups a coll.wait before here waited on: every later op waits on them
    for view_ in block.operations:
        op = view_.operation
        if not left:
            break
        if op.name not in ("coll.copy", "coll.combine", "coll.join", "coll.wait"):
            continue
        left -= op in mine
        on = set(synced)
        for v in op.operands:
            if not is_token(v.type) or isinstance(v.owner, ir.Block):
                continue
            owner = v.owner.operation if isinstance(v.owner, ir.OpView) else v.owner
            if owner in mine:
                on.add(mine[owner])
            on |= waits.get(owner, set())
        waits[op] = on
        if op.name == "coll.wait":
            synced = on
        elif op.name != "coll.join" and on - {mine.get(op, -1)}:  # (a join touches no data)
            return False
    return True


def emit_shared(groups: Sequence[Group], accesses: Accesses, tile: int, kernels: Kernels | None,
                scratch: Scratch | None, streaming: bool, workers: int) -> None:
    """Groups of one segment, each too small to share its tiles (`_workers`),
    shared whole among `workers` threads: an scf.parallel over the workers
    whose body switches on the worker (scf.index_switch), each case
    emitting its groups one after the other (balanced by bytes), where
    the last of the groups ends: `shared_among`'s groups, which may run
    in any order, and at once (every element as on one thread)."""
    def size(g: Group) -> int:  # (the sort key and the load alike)
        return _bytes(g, accesses)
    cases: list[list[Group]] = [[] for _ in range(min(workers, len(groups)))]
    loads = [0] * len(cases)
    for g in sorted(groups, key=size, reverse=True):
        k = loads.index(min(loads))
        cases[k].append(g)
        loads[k] += size(g)
    block = groups[0].ops[-1].operation.block
    order = {op.operation: i for i, op in enumerate(block.operations)}
    last = max((g.ops[-1].operation for g in groups), key=lambda op: order[op])
    with ir.InsertionPoint(last), last.location:
        par = scf.ParallelOp([], [index(0)], [index(len(cases))], [index(1)], [])
        body = par.regions[0].blocks.append(ir.IndexType.get())
        with ir.InsertionPoint(body):
            switch = scf.IndexSwitchOp([], body.arguments[0], list(range(1, len(cases))))
            for where, mine in zip([switch.default_block] + [switch.case_block(i) for i in range(len(cases) - 1)],
                                   cases):
                with ir.InsertionPoint(where):
                    end = scf.YieldOp([])
                for g in sorted(mine, key=lambda g: order[g.ops[-1].operation]):
                    emit(g, accesses, tile, kernels, scratch, streaming, 1, before=end.operation)
            scf.ReduceOp([], 0)


def _emit_op(op: Op, accesses: Accesses, tiles: dict[ir.Value, ir.Value], base: ir.Value | int, count: int,
             kernels: Kernels | None = None, stream: Collection[Op] = (), folded: Sequence[Op] = ()) -> None:
    """`op` on elements [base, base+count) of its range, with the copies
    `folded` into it (a combine's; `folds`); the writes in `stream` are
    non-temporal."""
    def at(o: Op) -> list[tuple[ir.Value, Index]]:
        views: list[tuple[ir.Value, Index]] = []
        for v, a in zip(_views(o), accesses[o]):
            tile = tiles.get(a.root)
            views.append((tile, 0) if tile is not None else (v, base))
        return views
    views = at(op)
    if op.name == "coll.copy":
        if op in stream:
            assert kernels is not None  # (streaming goes through the shared kernels)
            src, dst = (pointer_of(window(v, b, count)) for v, b in views)
            elem = ir.MemRefType(op.operands[0].type).element_type
            kernels.copy_streaming(dst, src, arith.constant(ir.IntegerType.get_signless(64),
                                                            count * element_bytes(elem)))
            return
        copy_1d(views[0], views[1], count)
        return
    kind = ir.StringAttr(op.attributes["kind"]).value
    ins, outs = views[:-1], [views[-1]] + [at(c)[1] for c in folded]
    if kernels is not None:
        kernels.call(kind, [window(v, b, count) for v, b in ins], [window(v, b, count) for v, b in outs],
                     tuple(w in stream for w in [op, *folded]))
        return
    operands: list[Operand] = list(outs)
    Combine(kind, combine_element([v for v, _ in views])[0]).emit_1d(ins, operands, count)


def _views(op: Op) -> list[ir.Value]:
    v = _view(op)
    return v.reads + v.writes


def _emit_anchored(group: Group, accesses: Accesses, tile: int, kernels: Kernels, scratch: Scratch,
                   stream: Collection[Op], workers: int = 1) -> None:
    """A group with anchors: one loop over tiles [t, t+T) of its range; each
    op, in program order, on the part of its range in the tile (maybe
    none), through the shared kernels on pointers."""
    idx, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
    anchors = group.anchors
    assert anchors is not None  # (emit sends only such groups here)
    L = group.length
    T = min(group.tile(accesses, tile), L)
    rows = group.epilogue.row_roots if group.epilogue is not None else set()
    types = {s: ir.MemRefType.get(
        [T // group.row] + ir.MemRefType(s.type).shape[1:] if s in rows else [T],  # (rows for the epilogue)
        ir.MemRefType(s.type).element_type) for s in group.scratch}
    ptrs: dict[ir.Value, ir.Value] = {}  # base pointers, made once before the loop
    for op in group.ops:
        for v, a in zip(_views(op), accesses[op]):
            if v not in ptrs and a.root not in types:
                ptrs[v] = arith.index_cast(idx, llvm.ptrtoint(i64, pointer_of(v)))

    def stepper(tiles: dict[ir.Value, ir.Value]) -> Step:
        at_tile = {root: arith.index_cast(idx, llvm.ptrtoint(i64, pointer_of(buf))) for root, buf in tiles.items()}

        def step(start: ir.Value | int, size: int) -> None:
            """Every op on its part of the tile [start, min(start + size, L))."""
            t = index(start)
            end = arith.minsi(arith.addi(t, index(size)), index(L))
            for op in group.ops:
                o, n = anchors[op], accesses[op][0].length
                lo = arith.maxsi(t, index(o))
                hi = arith.minsi(end, index(o + n))
                count = arith.maxsi(arith.subi(hi, lo), index(0))
                at = []
                views = _views(op)
                types = [ir.MemRefType(v.type).element_type for v in views]
                for v, a, t_ in zip(views, accesses[op], types):
                    if a.root in tiles:  # element e is at e - t of the tile
                        first, base = arith.subi(lo, t), at_tile[a.root]
                    else:  # element e is at e - o of the op's view
                        first, base = arith.subi(lo, index(o)), ptrs[v]
                    addr = arith.addi(base, arith.muli(first, index(element_bytes(t_))))
                    (p,) = create("llvm.inttoptr", [ptr_type()], [arith.index_cast(i64, addr)])
                    at.append(p)
                if op.name == "coll.copy":
                    nbytes = arith.index_cast(i64, arith.muli(count, index(element_bytes(types[0]))))
                    (kernels.copy_streaming if op in stream else kernels.copy)(at[1], at[0], nbytes)
                else:
                    kind = ir.StringAttr(op.attributes["kind"]).value
                    elem, mixed = combine_element(views)
                    kernels.call_ptrs(kind, elem, at, arith.index_cast(i64, count), (op in stream,),
                                      types if mixed else ())
            if group.epilogue is not None:  # its rows of the tile, now that every op has written them
                row0 = start // group.row if isinstance(start, int) else arith.divui(t, index(group.row))
                ep.emit_rows(group.epilogue, row0, size // group.row, tiles)
        return step

    # With an epilogue, whole tiles and then the rest, each of a static
    # size: its ops keep static shapes, so LLVM compiles each row as it
    # does unfused (a row sum's vector association included: bitwise).
    # Without, the last tile is cut short by `step` itself.
    full = L // T if group.epilogue is not None else -(-L // T)
    _tile_loop(full, T, max(L - full * T, 0), types, scratch, stepper, workers, loop_one=True)


# One tile's work: step(first element, elements), given the group's scratch
# tiles (`_tile_loop`).
Step = Callable[[ir.Value | int, int], None]


def _bytes(group: Group, accesses: Accesses) -> int:
    """Bytes `group` touches: its distinct views' (a chunk's group, ring's
    or twoshot's, touches a chunk of each buffer)."""
    views = {(a.root, a.start, a.length) for op in group.ops for a in accesses[op]}
    return sum(n * element_bytes(ir.MemRefType(r.type).element_type) for r, _, n in views)


def worth(group: Group, accesses: Accesses, workers: int, shared: bool) -> bool:
    """Whether to tile `group`: any group of two ops or more; one op alone
    only where it runs on several threads (its tiles shared, or `shared`
    with other groups by emit_shared): on one thread a whole copy or
    combine is as fast as its tiles."""
    return not group.single or shared or _workers(group, accesses, workers) > 1


def _workers(group: Group, accesses: Accesses, workers: int) -> int:
    """Threads the tiles of `group` are shared among: `workers` where its
    buffers take MIN_PARALLEL_BYTES or more, else one (a thread's hand-off
    costs tens of microseconds)."""
    return workers if _bytes(group, accesses) >= MIN_PARALLEL_BYTES else 1


def _tile_loop(full: int, T: int, rest: int, types: Mapping[ir.Value, ir.Type], scratch: Scratch,
               stepper: Callable[[dict[ir.Value, ir.Value]], Step], workers: int = 1,
               loop_one: bool = False) -> None:
    """Tiles [0, T), [T, 2T), ... `full` of them, then `rest` elements, each
    through stepper(tiles) (tiles: a buffer of `types` per scratch root),
    at the insertion point. On one worker, one tile buffer each and an
    scf.for (also for a single tile where `loop_one`). On `workers` > 1,
    an scf.parallel over the workers, each with its own tile buffers (one
    allocation, a memref.view at each worker's offset) and an scf.for over
    its consecutive tiles; upstream's async-parallel-for runs the workers
    on the async runtime's threads (route.py). Tiles touch disjoint
    elements (fuse.py's groups), so every element is computed as on one
    thread: the results are bit for bit the same."""
    workers = min(workers, full)
    if workers < 2:
        tiles = {s: scratch.buffer(t) for s, t in types.items()}
        step = stepper(tiles)
        if full > 1 or (full == 1 and loop_one):
            loop = scf.ForOp(index(0), index(full * T), index(T))
            with ir.InsertionPoint(loop.body):
                step(loop.induction_variable, T)
                scf.YieldOp([])
        elif full == 1:
            step(0, T)
        if rest:
            step(full * T, rest)
        for buf in tiles.values():
            scratch.free(buf)
        return
    per = -(-full // workers)
    workers = -(-full // per)
    i8 = ir.IntegerType.get_signless(8)

    def size(t: ir.Type) -> int:  # a worker's tile in bytes, aligned as the buffer
        return -(-buffer_bytes(t) // ALIGNMENT) * ALIGNMENT
    bufs = {s: scratch.buffer(ir.MemRefType.get([workers * size(t)], i8)) for s, t in types.items()}

    def tiles_at(w: ir.Value | int) -> dict[ir.Value, ir.Value]:
        return {s: memref.view(types[s], b, index(w * size(types[s])) if isinstance(w, int)
                               else arith.muli(w, index(size(types[s]))), []) for s, b in bufs.items()}
    par = scf.ParallelOp([], [index(0)], [index(workers)], [index(1)], [])
    block = par.regions[0].blocks.append(ir.IndexType.get())
    with ir.InsertionPoint(block):
        w = block.arguments[0]
        step = stepper(tiles_at(w))
        first = arith.muli(w, index(per * T))
        end = arith.minsi(arith.addi(first, index(per * T)), index(full * T))
        loop = scf.ForOp(first, end, index(T))
        with ir.InsertionPoint(loop.body):
            step(loop.induction_variable, T)
            scf.YieldOp([])
        scf.ReduceOp([], 0)
    if rest:
        stepper(tiles_at(0))(full * T, rest)
    for buf in bufs.values():
        scratch.free(buf)
