"""coll-check-order: a happens-before check of the explicit level.

Per function, the coll ops are visited in program order, which is a
topological order of the token graph (a token is an SSA value, so its
producer comes first). Each op gets a node number and the set of nodes
ordered before it (through token edges, transitively, and through earlier
coll.wait ops, which block the host) as a Python int bitset. Each buffer
operand is resolved to (root buffer, [start, end) in flattened elements)
through the view ops, from the static offset and strides of its type, so
the check costs O(ops x accesses per root buffer). It reports:

- a read of a region that an unordered op writes (RAW race), a write of a
  region that an unordered op reads (WAR) or writes (WAW);
- a read of scratch (coll.alloc, memref.alloc) that no earlier-ordered
  write covers; function arguments count as written at entry;
- a copy or combine that no coll.wait (or returned token) orders: it could
  still be running when the function returns.

Only coll ops are modeled: other ops that touch memory are not. Regions of
strided (non-contiguous) views are taken as their hull, which may report a
race between interleaved slices that do not really overlap.
"""
from dataclasses import dataclass, field

from mlir import ir

from ..ir.ops import COLLECTIVES, view
from ..ir.types import device_of, token_type
from ..ir.views import root_of
from ..ir.walk import find_ops
from ..core.errors import PassError
from ..core.registry import register

UNWRITTEN_ROOTS = ("coll.alloc", "memref.alloc", "memref.alloca")
ASYNC_OPS = ("coll.copy", "coll.combine") + COLLECTIVES
MAX_FINDINGS = 50  # per function: one broken edge can make many ops wrong
MAX_NODES = 100_000  # bitsets cost up to nodes^2 / 8 bytes at worst


@dataclass
class Finding:
    location: object
    message: str
    notes: list = field(default_factory=list)  # [(location, message)]


class OrderError(PassError):
    """Every finding, each reported as an error with its notes."""

    def __init__(self, findings):
        super().__init__(findings[0].message, findings[0].location)
        self.findings = [(f.location, f.message, f.notes) for f in findings]


class Unresolved(Exception):
    pass


@dataclass
class Access:
    node: int
    op: object
    root: object
    start: int
    end: int
    device: object


def _owner_op(v):
    """The operation defining `v`, or None for a block argument."""
    if isinstance(v, ir.BlockArgument):
        return None
    return v.owner.operation


def _region(v):
    """(root, start, end) of memref value `v`. Raises Unresolved."""
    root, chain = root_of(v)
    if any(op.name == "memref.view" for op in chain):
        # Its byte shift is an operand, not part of the result's layout.
        raise Unresolved("a memref.view is not followed (its offset is an operand)")
    try:
        mt = ir.MemRefType(v.type)
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        raise Unresolved(f"{v.type} has no strided layout") from None
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    shape = list(mt.shape)
    if offset == dyn or dyn in strides or any(d < 0 for d in shape):
        raise Unresolved(f"{v.type} has a dynamic offset, stride or size; expected static ones")
    if any(d == 0 for d in shape):
        return root, offset, offset
    lo = offset + sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
    hi = offset + sum(max(0, (d - 1) * s) for d, s in zip(shape, strides)) + 1
    return root, lo, hi


def _accesses(op):
    """([read values], [written values]) of a coll op."""
    v = view(op)
    if v is None:
        return [], []
    return v.reads, [w for w in v.writes if isinstance(w.type, ir.MemRefType)]


def _name(v):
    try:
        return v.get_name()
    except Exception:  # a name is only for the message
        return "<buffer>"


def _covers(intervals, start, end):
    pos = start
    for s, e in sorted(intervals):
        if s > pos:
            return False
        pos = max(pos, e)
        if pos >= end:
            return True
    return pos >= end


class _Checker:
    def __init__(self, func_name):
        self.func_name = func_name
        self.findings = []
        self.names = {}

    def where(self, a):
        if a.root not in self.names:
            self.names[a.root] = _name(a.root)
        dev = f" on device {a.device}" if a.device is not None else ""
        return f"{self.names[a.root]}[{a.start}, {a.end}){dev}"

    def report(self, op, message, notes=()):
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(Finding(op.location, message, list(notes)))
        elif len(self.findings) == MAX_FINDINGS:
            self.findings.append(Finding(op.location, f"more ordering errors in @{self.func_name} not shown"))

    # -- one block, in program order -------------------------------------------
    def block(self, block):
        tok = token_type()
        items = [op.operation for op in block.operations]
        items = [op for op in items if op.name == "func.return"
                 or (op.name.startswith("coll.") and op.name != "coll.alloc")]
        if len(items) > MAX_NODES:
            self.report(items[0], f"@{self.func_name} has {len(items)} coll ops, above the "
                                  f"{MAX_NODES} that coll-check-order handles")
            return
        # Uses of each token, so that a node's bitset is freed after its
        # last use: only the bitsets of pending tokens stay alive.
        uses = {}
        for op in items:
            for v in set(op.operands):
                if v.type == tok:
                    uses[v] = uses.get(v, 0) + 1
        node_of = {}        # token value -> node
        anc = []            # node -> bitset of the nodes ordered before it
        preds = []          # node -> nodes it directly waits for
        ops = []            # node -> op
        barrier, last_wait = 0, None  # what earlier coll.wait ops ordered
        writes, reads = {}, {}
        finals, final_bits = [], 0
        for op in items:
            a, direct = barrier, []
            for v in set(op.operands):
                p = node_of.get(v)
                if p is None:
                    continue
                a |= anc[p] | (1 << p)
                direct.append(p)
                uses[v] -= 1
                if uses[v] == 0:
                    anc[p] = None
            if op.name == "func.return":
                if direct:  # returned tokens: the caller waits for them
                    final_bits |= a
                    finals.append(op)
                continue
            if last_wait is not None:
                direct.append(last_wait)
            i = len(ops)
            anc.append(a)
            preds.append(direct)
            ops.append(op)
            for r in op.results:
                if r.type == tok and r in uses:
                    node_of[r] = i
            if op.name == "coll.wait":
                barrier |= a | (1 << i)
                last_wait = i
                final_bits |= a | (1 << i)
                finals.append(op)
                continue
            self.accesses(op, i, a, reads, writes)
        self.waited(ops, preds, finals, final_bits)

    def resolve(self, op, i, values, what):
        out = []
        for v in values:
            try:
                root, s, e = _region(v)
            except Unresolved as err:
                self.report(op, f"cannot order the {what} of this {op.name}: {err}")
                continue
            try:
                dev = device_of(v.type)
            except ValueError:
                dev = None
            if e > s:
                out.append(Access(i, op, root, s, e, dev))
        return out

    def accesses(self, op, i, a, reads, writes):
        rvals, wvals = _accesses(op)
        rs = self.resolve(op, i, rvals, "reads")
        ws = self.resolve(op, i, wvals, "writes")
        self.self_overlap(op, rs, ws)
        for r in rs:
            self.check_read(r, a, writes.get(r.root, ()))
        for w in ws:
            self.check_write(w, a, writes.get(w.root, ()), reads.get(w.root, ()))
        for r in rs:
            reads.setdefault(r.root, []).append(r)
        for w in ws:
            writes.setdefault(w.root, []).append(w)

    def self_overlap(self, op, rs, ws):
        """An op may write exactly what it reads (combine in place), but a
        partial overlap, or a copy onto itself, has no defined result."""
        for w in ws:
            for r in rs:
                if r.root != w.root or not (r.start < w.end and w.start < r.end):
                    continue
                if op.name == "coll.copy" or (r.start, r.end) != (w.start, w.end):
                    self.report(op, f"{op.name} reads {self.where(r)} and writes the overlapping {self.where(w)}")
                    return

    def check_read(self, r, a, prior):
        ordered, race = [], None
        for w in prior:
            if w.start < r.end and r.start < w.end:
                if a >> w.node & 1:
                    ordered.append((w.start, w.end))
                else:
                    race = w  # the latest unordered write: likely the one meant
        unwritten = _owner_op(r.root) is not None and _owner_op(r.root).name in UNWRITTEN_ROOTS
        covered = not unwritten or _covers(ordered, r.start, r.end)
        op = r.op
        if race is not None:
            if covered:
                self.report(op, f"{op.name} reads {self.where(r)} while an unordered op may write it",
                            [(race.op.location, f"written by this {race.op.name}, not ordered with the read")])
            else:
                self.report(op, f"{op.name} reads {self.where(r)} before it is written",
                            [(race.op.location, f"written by this {race.op.name}, not ordered before the read")])
        elif not covered:
            what = "only partly written" if ordered else "not written"
            self.report(op, f"{op.name} reads {self.where(r)}, which is {what} by the ops ordered before it")

    def check_write(self, w, a, prior_writes, prior_reads):
        op = w.op
        for x in prior_writes:
            if x.start < w.end and w.start < x.end and not a >> x.node & 1:
                self.report(op, f"{op.name} writes {self.where(w)}, racing with another write",
                            [(x.op.location, f"also written by this {x.op.name}, not ordered with it")])
                return
        for x in prior_reads:
            if x.start < w.end and w.start < x.end and not a >> x.node & 1:
                self.report(op, f"{op.name} writes {self.where(w)} while an unordered op may still read it",
                            [(x.op.location, f"read by this {x.op.name}, not ordered before the write")])
                return

    def waited(self, ops, preds, finals, final_bits):
        """Every copy and combine must be ordered before a coll.wait or a
        returned token; report the last ones of each unordered chain."""
        late = [op.name in ASYNC_OPS and not final_bits >> i & 1 for i, op in enumerate(ops)]
        if not any(late):
            return
        # A late op that some later late op depends on is fixed with it.
        fixed_later = [False] * len(ops)
        for i in reversed(range(len(ops))):
            if late[i] or fixed_later[i]:
                for p in preds[i]:
                    fixed_later[p] = True
        for i, op in enumerate(ops):
            if not late[i] or fixed_later[i]:
                continue
            _, wvals = _accesses(op)
            what = f"{op.name} writes {self._first_write(op, i, wvals)}" if wvals else op.name
            if finals:
                last = finals[-1]
                kind = "coll.wait" if last.name == "coll.wait" else "returned token"
                self.report(op, f"{what} but is not ordered before the final {kind}",
                            [(last.location, f"the final {kind}")])
            else:
                self.report(op, f"{what} but nothing waits for it: @{self.func_name} has no coll.wait and returns no token")

    def _first_write(self, op, i, wvals):
        try:
            root, s, e = _region(wvals[0])
            dev = device_of(wvals[0].type)
        except (Unresolved, ValueError):
            return _name(wvals[0])
        return self.where(Access(i, op, root, s, e, dev))


def _funcs(module_op):
    return find_ops(module_op, "func.func")


def check_function(func_op):
    """[Finding] for one func.func."""
    func_op = func_op.operation
    name = ir.StringAttr(func_op.attributes["sym_name"]).value
    c = _Checker(name)
    blocks = list(func_op.regions[0].blocks)
    if not blocks:
        return []
    coll_blocks = [b for b in blocks if any(o.operation.name.startswith("coll.") for o in b.operations)]
    if len(coll_blocks) > 1 or (coll_blocks and coll_blocks[0] != blocks[0]):
        c.report(func_op, f"@{name} has coll ops in a block other than its entry block; "
                          "coll-check-order expects them in the entry block")
        return c.findings
    nested = []

    def visit(op):
        if op.name.startswith("coll.") and op.parent is not None and op.parent.operation != func_op:
            nested.append(op)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit)
    if nested:  # the first one is enough to say why
        op = nested[0]
        c.report(op, f"{op.name} inside '{op.parent.name}' is not supported by coll-check-order; "
                     "expected coll ops at the top level of a function")
        return c.findings
    c.block(blocks[0])
    return c.findings


def check_module(module_op):
    """[Finding] for every function under module_op."""
    findings = []
    for f in _funcs(module_op):
        findings += check_function(f)
    return findings


@register("coll-check-order",
          "Check that every read is ordered after the write it needs, no two unordered ops touch "
          "overlapping regions (one writing), and the final wait orders every copy and combine")
def check_order(module_op):
    findings = check_module(module_op)
    if findings:
        raise OrderError(findings)
