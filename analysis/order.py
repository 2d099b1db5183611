"""The happens-before analysis of coll-check-order (passes/check_order.py).

Per function, the ops of the entry block are visited in program order, which
is a topological order of the token graph (a token is an SSA value, so its
producer comes first). Each op that orders or touches memory gets a node
number and the set of nodes ordered before it, as a Python int bitset:

- coll.copy, coll.combine (and a func.call that returns a token) run
  asynchronously: after the tokens they take and after what the host had
  waited for when it issued them;
- coll.wait blocks the host, and so does every other op that touches memory
  (memref.load/store/copy, vector.load/store, linalg.*, func.call, loops
  around them): it runs when the host reaches it, after what the host had
  waited for, and everything issued later is ordered after it.

Each buffer operand is followed through the view ops (ir/views.py) to its
root buffer and becomes the exact set of bytes it covers there, a strided
box (analysis/regions.py): a strided subview touches its own elements, not
the hull between them. Root buffers (function arguments, allocations,
globals by name) are taken not to alias one another, as the lowering and
the runtimes create them. What each op reads and writes is
analysis/effects.py's. `argument_roles`, which the runtimes use to tell
inputs from outputs, is this coverage applied to a function's arguments.
"""
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

from mlir import ir

from ..ir.errors import Note
from ..ir.ops import Implements, OpView, view
from ..ir.types import device_of, token_type
from ..ir.views import VIEW_OPS, constant_int, root_of
from ..ir.walk import find_ops
from .effects import (
    UNWRITTEN_ROOTS,
    Effects,
    Layout,
    Resolver,
    Root,
    Unresolved,
    buffer_name,
    effects,
    element_size,
    host_effects,
    touch,
    view_uses,
)
from .effects import Access as EffAccess
from .regions import Box, box, covered, overlaps

MAX_FINDINGS = 50  # per function: one broken edge can make many ops wrong
MAX_NODES = 100_000  # bitsets cost up to nodes^2 / 8 bytes at worst


@dataclass
class Finding:
    location: ir.Location | None
    message: str
    notes: list[Note] = field(default_factory=list)  # [(location, message)]


# What the findings that only say an op or a value is not followed say (the
# others prove the order wrong: a race, a write nothing waits for, an access
# outside its buffer).
NOT_FOLLOWED = ("is not followed by coll-check-order", "does not know how", "cannot order the",
                "ops that coll-check-order orders, above the")


def proves_disorder(message: str) -> bool:
    """Whether coll-check-order's error `message` proves the program's order
    wrong, rather than saying the check could not follow it."""
    return "coll-check-order" in message and not any(m in message for m in NOT_FOLLOWED)



@dataclass
class Access:
    node: int
    op: ir.Operation
    root: Root
    box: Box           # the bytes in the root
    device: int | None
    exact: bool        # False: somewhere in this view (no coverage claim)
    # (base, dims) of the view: equal mappings touch equal elements; None: somewhere in the root
    mapping: tuple[int, tuple[tuple[int, int], ...]] | None
    resz: int          # bytes per element of the root, for messages


# What an op is to the check ('skip', 'async', 'join', 'wait', 'host',
# 'return'; None: reported) and a host op's effects.
Classified = tuple[str | None, Effects | None]
# (box, device, mapping, bytes per root element, exact) of one access.
_Touch = tuple[Box, int | None, tuple[int, tuple[tuple[int, int], ...]], int, bool]


def _owner_op(v: Root) -> ir.Operation | None:
    """The operation defining `v`, or None for a block argument."""
    if isinstance(v, (ir.BlockArgument, str)):
        return None
    return v.owner.operation


class Checker:
    def __init__(self, func_op: ir.Operation, func_name: str) -> None:
        self.func_name = func_name
        self.findings: list[Finding] = []
        self.names: dict[Root, str] = {}
        self.res = Resolver(func_op)
        self.tok = token_type()
        self.whole: dict[tuple[ir.Value, bool, Root], _Touch | None] = {}  # what a whole-view access touches
        self.extents: dict[Root, tuple[int, int] | tuple[()]] = {}  # root -> (lo, hi) bytes it spans, () unknown
        # An argument the first claim that names it names as an output and
        # not as an input holds nothing at entry: reading it before it is
        # written reads garbage, as for scratch. (Without a claim an
        # argument may be in place; one a later claim writes may be an
        # earlier one's input: an unrolled loop's buffers handed round.)
        self.fresh: set[Root] = set()
        self.initial: set[Root] = set()  # arguments some read finds (partly) unwritten: their caller's values
        named: set[Root] = set()
        for claim in find_ops(func_op, Implements.NAME):
            c = Implements.of(claim)
            ins = {root_of(v)[0] for v in c.inputs}
            outs = {root_of(v)[0] for v in c.outputs}
            self.fresh |= {r for r in outs if isinstance(r, ir.BlockArgument) and r not in ins and r not in named}
            named |= ins | outs

    def where(self, a: Access) -> str:
        if a.root not in self.names:
            self.names[a.root] = buffer_name(a.root)
        dev = f" on device {a.device}" if a.device is not None else ""
        b, z = a.box, a.resz
        name = self.names[a.root]
        if a.mapping is None:
            return f"{name} (somewhere in it){dev}"
        if b.lo % z or b.hi % z or any(s % z for _, s in b.dims):
            return f"{name} bytes [{b.lo}, {b.hi}){dev}"
        if not b.dims:
            return f"{name}[{b.lo // z}, {b.hi // z}){dev}"
        shape = "x".join(str(n) for n, _ in b.dims)
        strides = ", ".join(str(s // z) for _, s in b.dims)
        each = "elements" if b.run == z else f"runs of {b.run // z}"
        return f"{name}[{b.lo // z}, {b.hi // z}) ({shape} {each} at strides {strides}){dev}"

    def report(self, op: ir.Operation, message: str, notes: Iterable[Note] = ()) -> None:
        if any(f.message == message and f.location == op.location for f in self.findings):
            return  # (one op's access found twice, e.g. through two of its views: said once)
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(Finding(op.location, message, list(notes)))
        elif len(self.findings) == MAX_FINDINGS:
            self.findings.append(Finding(op.location, f"more ordering errors in @{self.func_name} not shown"))

    # -- classification ---------------------------------------------------------
    def classify(self, op: ir.Operation) -> Classified:
        """'skip', 'async', 'join', 'wait', 'host', 'return' (and the
        effects of a host op), or None after reporting why not."""
        name, tok = op.name, self.tok
        if name == "func.return":
            return "return", None
        if name.startswith("coll."):
            if name in ("coll.alloc", "coll.implements"):  # a claim touches no data
                return "skip", None
            if name == "coll.wait":
                return "wait", None
            if name == "coll.join":
                return "join", None
            return "async", None
        has_token = any(v.type == tok for v in op.operands) or any(r.type == tok for r in op.results)
        if name in ("func.call", "func.call_indirect"):
            if any(v.type == tok for v in op.operands):
                self.report(op, f"a !coll.token passed to {name} is not followed by coll-check-order; "
                                "expected the caller to coll.wait for it before the call")
                return None, None
            eff = effects(op)
            return ("async" if has_token else "host"), eff
        if has_token:
            self.report(op, f"a !coll.token used by '{name}' is not followed by coll-check-order; "
                            "expected tokens only in coll ops, func.call results and func.return")
            return None, None
        if len(op.regions) and not name.startswith("linalg.") and name not in VIEW_OPS:
            return self.nested(op)
        eff = host_effects(op)  # (an op with regions here: linalg, with its body's loads and stores)
        if eff is None:
            self.report(op, f"coll-check-order does not know how '{name}' accesses its memref operands; "
                            "expected memref, vector, linalg, func.call or coll ops")
            return None, None
        return ("host", eff) if eff[0] or eff[1] else ("skip", None)

    def nested(self, op: ir.Operation) -> Classified:
        """An op with regions (a loop, a branch) runs on the host as a whole:
        the union of what its nested ops may touch, none exactly."""
        reads: list[EffAccess] = []
        writes: list[EffAccess] = []
        bad: list[ir.Operation] = []

        def visit(inner: ir.Operation) -> ir.WalkResult:
            if inner == op:
                return ir.WalkResult.ADVANCE
            kind, eff = self.classify(inner)
            if kind not in (None, "skip", "host"):
                self.report(inner, f"{inner.name} inside '{op.name}' is not followed by coll-check-order; "
                                   "expected tokens at the top level of a function")
                kind = None
            if kind is None:
                bad.append(inner)
                return ir.WalkResult.INTERRUPT
            if eff is not None:
                reads.extend((v, None, False) for v, _, _ in eff[0])
                writes.extend((v, None, False) for v, _, _ in eff[1])
            return ir.WalkResult.ADVANCE
        op.walk(visit, ir.WalkOrder.POST_ORDER)
        if bad:
            return None, None
        return ("host", (reads, writes)) if reads or writes else ("skip", None)

    # -- one block, in program order -------------------------------------------
    def block(self, block: ir.Block) -> None:
        plan: list[tuple[ir.Operation, str, Effects | None]] = []
        tok = self.tok
        for view_ in block.operations:
            op = view_.operation
            kind, eff = self.classify(op)
            if kind is None:
                return
            if kind != "skip":
                plan.append((op, kind, eff))
        if len(plan) > MAX_NODES:
            self.report(plan[0][0], f"@{self.func_name} has {len(plan)} ops that coll-check-order orders, "
                                    f"above the {MAX_NODES} that it handles")
            return
        # Uses of each token, so that a node's bitset is freed after its
        # last use: only the bitsets of pending tokens stay alive.
        uses: dict[ir.Value, int] = {}
        for op, _, _ in plan:
            for v in set(op.operands):
                if v.type == tok:
                    uses[v] = uses.get(v, 0) + 1
        node_of: dict[ir.Value, int] = {}  # token value -> node
        anc: list[int | None] = []       # node -> bitset of the nodes ordered before it (None: freed)
        preds: list[list[int]] = []      # node -> nodes it directly waits for
        ops: list[ir.Operation] = []     # node -> op
        late_kind: list[bool] = []       # node -> must be waited for
        barrier = 0                      # what the host has waited for
        last_wait: int | None = None
        writes: dict[Root, list[Access]] = {}
        reads: dict[Root, list[Access]] = {}
        finals: list[ir.Operation] = []
        final_bits = 0
        for op, kind, eff in plan:
            a = barrier
            direct: list[int] = []
            for v in set(op.operands):
                p = node_of.get(v)
                if p is None:
                    continue
                a |= cast(int, anc[p]) | (1 << p)  # alive: a use of its token is left
                direct.append(p)
                uses[v] -= 1
                if uses[v] == 0:
                    anc[p] = None
            if kind == "return":
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
            late_kind.append(kind == "async")
            for r in op.results:
                if r.type == tok and r in uses:
                    node_of[r] = i
            if kind in ("wait", "host"):
                barrier |= a | (1 << i)
                last_wait = i
            if kind == "wait":
                final_bits |= a | (1 << i)
                finals.append(op)
                continue
            if kind == "join":
                continue
            if eff is None:
                coll_op = cast(OpView, view(op))  # a coll op
                eff = ([(x, None, True) for x in coll_op.reads],
                       [(x, None, True) for x in coll_op.writes if isinstance(x.type, ir.MemRefType)])
            self.accesses(op, i, a, eff, reads, writes)
        self.waited(ops, preds, late_kind, finals, final_bits)

    def resolve(self, op: ir.Operation, i: int, values: Iterable[EffAccess], what: str) -> list[Access]:
        out: list[Access] = []
        for v, sub, exact in values:
            try:
                accs = self.access(op, i, v, sub, exact)
            except Unresolved as err:
                acc = None if op.name.startswith("coll.") else self.anywhere(op, i, v)
                if acc is None:
                    notes = [(err.op.location, f"this {err.op.name}")] if err.op is not None else []
                    self.report(op, f"cannot order the {what} of this {op.name}: {err}", notes)
                    continue
                accs = [acc]
            out += [acc for acc in accs if self.inside(op, v, acc, what)]
        return out

    def inside(self, op: ir.Operation, v: ir.Value, acc: Access, what: str) -> bool:
        """Does the access stay inside its root buffer? A view outside it
        (a reinterpret_cast past the end: upstream cannot verify that) would
        read or write other memory, so it is an error, not a region."""
        if acc.mapping is None or isinstance(acc.root, str):
            return True
        extent = self.extents.get(acc.root)
        if extent is None:
            try:
                whole = self._access(acc.root, None, True)
            except Unresolved:
                whole = None
            extent = self.extents[acc.root] = (whole[0].lo, whole[0].hi) if whole else ()
        if not extent:
            return True
        lo, hi = extent
        if lo <= acc.box.lo and acc.box.hi <= hi:
            return True
        chain = root_of(v)[1]
        notes = [(c.location, f"this {c.name}") for c in chain if c.name == "memref.reinterpret_cast"]
        self.report(op, f"the {what} of this {op.name} leave {buffer_name(acc.root)}: bytes "
                        f"[{acc.box.lo}, {acc.box.hi}) of a buffer of bytes [{lo}, {hi}); "
                        "expected a view inside its buffer", notes)
        return False

    def anywhere(self, op: ir.Operation, i: int, v: ir.Value) -> Access | None:
        """A host op's access whose region is unknown (a dynamic shape or
        offset) but whose root buffer is known: it may touch all of it."""
        value = root_of(v)[0]
        try:
            root = self.res._root(value)
        except Unresolved:
            return None
        try:
            dev = device_of(v.type)
        except ValueError:
            dev = None
        return Access(i, op, root, cast(Box, box(0, [], 1 << 62)), dev, False, None, 1)  # not empty

    def access(self, op: ir.Operation, i: int, v: ir.Value, sub: tuple[list[int], list[int]] | None,
               exact: bool) -> list[Access]:
        """The access of `v` (its element box `sub`, or all of it); through
        an arith.select, a possible access of each buffer it may be, none
        exact (a write there covers no later read)."""
        try:
            lays = [self.res.layout(v)]
        except Unresolved:
            lays, exact = self.res.layouts(v), False
        out: list[Access] = []
        for lay in lays:
            key = (v, exact, lay.root)
            got = self.whole.get(key) if sub is None else None
            if got is None:
                got = self._access(v, sub, exact, lay)
                if sub is None:
                    self.whole[key] = got
            if got is not None:
                b, dev, mapping, resz, ex = got
                out.append(Access(i, op, lay.root, b, dev, ex, mapping, resz))
        return out

    def _access(self, v: ir.Value, sub: tuple[list[int], list[int]] | None, exact: bool,
                lay: Layout | None = None) -> "_Touch | None":
        lay = lay or self.res.layout(v)
        z = lay.esize
        start, shape = ([0] * len(lay.shape), list(lay.shape)) if sub is None else sub
        if sub is not None and any(s < 0 or s + e > n for s, e, n in zip(start, shape, lay.shape)):
            start, shape, exact = [0] * len(lay.shape), list(lay.shape), False  # out of bounds: UB
        base = lay.shift + z * (lay.offset + sum(s * st for s, st in zip(start, lay.strides)))
        dims = [(n, st * z) for n, st in zip(shape, lay.strides)]
        b = box(base, dims, z)
        if b is None:
            return None
        try:
            dev = device_of(v.type)
        except ValueError:
            dev = None
        root = lay.root
        resz = z
        if not isinstance(root, str):
            try:
                resz = element_size(ir.MemRefType(root.type).element_type)
            except Unresolved:
                pass
        mapping = (base, tuple((n, st) for n, st in dims if n != 1))
        return b, dev, mapping, resz, exact

    def accesses(self, op: ir.Operation, i: int, a: int, eff: Effects, reads: dict[Root, list[Access]],
                 writes: dict[Root, list[Access]]) -> None:
        rs = self.resolve(op, i, eff[0], "reads")
        ws = self.resolve(op, i, eff[1], "writes")
        if op.name in ("coll.copy", "coll.combine", "memref.copy"):
            self.self_overlap(op, rs, ws)
        for r in rs:
            self.check_read(r, a, writes.get(r.root, ()))
        for w in ws:
            self.check_write(w, a, writes.get(w.root, ()), reads.get(w.root, ()))
        for r in rs:
            reads.setdefault(r.root, []).append(r)
        for w in ws:
            writes.setdefault(w.root, []).append(w)

    def self_overlap(self, op: ir.Operation, rs: list[Access], ws: list[Access]) -> None:
        """An op may write exactly what it reads (combine in place), but a
        partial overlap, or a copy onto itself, has no defined result."""
        for w in ws:
            for r in rs:
                if r.root != w.root or not overlaps(r.box, w.box):
                    continue
                if op.name != "coll.combine" or r.mapping != w.mapping:
                    self.report(op, f"{op.name} reads {self.where(r)} and writes the overlapping {self.where(w)}")
                    return

    def check_read(self, r: Access, a: int, prior: Iterable[Access]) -> None:
        ordered: list[Box] = []
        race: Access | None = None
        rb = r.box
        for w in prior:
            wb = w.box
            if wb.hi <= rb.lo or rb.hi <= wb.lo or not overlaps(wb, rb):
                continue
            if a >> w.node & 1:
                if w.exact:
                    ordered.append(wb)
            else:
                race = w  # the latest unordered write: likely the one meant
        owner = _owner_op(r.root)
        if owner is None and r.root not in self.initial and not covered(rb, ordered):
            # Reads what the caller passed in: what the exact writes ordered
            # before it do not cover. (A read known only as somewhere in a
            # view, a loop's or a call's, after a write of part of the
            # buffer, or a write in a region that may not run, was not taken
            # for one: the argument an output, run on zeros, `ok` against a
            # plain program that read it so too: an outside attack,
            # 2026-12-07.)
            self.initial.add(r.root)
        unwritten = r.exact and (r.root in self.fresh if owner is None
                                 else owner.name in UNWRITTEN_ROOTS)
        covered_ = not unwritten or covered(rb, ordered)
        op = r.op
        if race is not None:
            if covered_:
                self.report(op, f"{op.name} reads {self.where(r)} while an unordered op may write it",
                            [(race.op.location, f"written by this {race.op.name}, not ordered with the read")])
            else:
                self.report(op, f"{op.name} reads {self.where(r)} before it is written",
                            [(race.op.location, f"written by this {race.op.name}, not ordered before the read")])
        elif not covered_:
            what = "only partly written" if ordered else "not written"
            self.report(op, f"{op.name} reads {self.where(r)}, which is {what} by the ops ordered before it")

    def check_write(self, w: Access, a: int, prior_writes: Iterable[Access], prior_reads: Iterable[Access]) -> None:
        op = w.op
        wb = w.box
        # A write must be ordered after every earlier write and read it overlaps.
        for prior, problem, note in (
                (prior_writes, ", racing with another write", "also written by this {}, not ordered with it"),
                (prior_reads, " while an unordered op may still read it",
                 "read by this {}, not ordered before the write")):
            for x in prior:
                xb = x.box
                if xb.hi <= wb.lo or wb.hi <= xb.lo or a >> x.node & 1 or not overlaps(xb, wb):
                    continue
                self.report(op, f"{op.name} writes {self.where(w)}{problem}",
                            [(x.op.location, note.format(x.op.name))])
                return

    def waited(self, ops: list[ir.Operation], preds: list[list[int]], late_kind: list[bool],
               finals: list[ir.Operation], final_bits: int) -> None:
        """Every copy and combine must be ordered before a coll.wait or a
        returned token; report the last ones of each unordered chain."""
        late = [late_kind[i] and not final_bits >> i & 1 for i in range(len(ops))]
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
            wvals = self._writes(op)
            what = f"{op.name} writes {self._first_write(op, i, wvals)}" if wvals else op.name
            if finals:
                last = finals[-1]
                kind = "coll.wait" if last.name == "coll.wait" else "returned token"
                self.report(op, f"{what} but is not ordered before the final {kind}",
                            [(last.location, f"the final {kind}")])
            else:
                self.report(op, f"{what} but nothing waits for it: @{self.func_name} has no coll.wait and returns no "
                                "token")

    @staticmethod
    def _writes(op: ir.Operation) -> list[ir.Value]:
        v = view(op)
        if v is not None:
            return [w for w in v.writes if isinstance(w.type, ir.MemRefType)]
        return [x for x in op.operands if isinstance(x.type, ir.MemRefType)]

    def _first_write(self, op: ir.Operation, i: int, wvals: list[ir.Value]) -> str:
        try:
            accs = self.access(op, i, wvals[0], None, True)
            if accs:
                return " or ".join(self.where(a) for a in accs)
        except (Unresolved, ValueError, AttributeError):
            pass
        return buffer_name(wvals[0])



def _empty(t: ir.Type) -> bool:
    try:
        return 0 in ir.MemRefType(t).shape
    except ValueError:
        return False


def _callee(call: ir.Operation) -> ir.Operation | None:
    """The func.func with a body that a func.call calls, in its module."""
    if call.name != "func.call":
        return None
    module = call.parent
    while module is not None and module.operation.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    try:
        f = ir.SymbolTable(module.operation)[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
    except KeyError:
        return None
    return f.operation if f.operation.name == "func.func" and len(f.operation.regions[0].blocks) else None


def _call_touch(call: ir.Operation, value: ir.Value, calling: tuple[ir.Operation, ...]
                ) -> tuple[bool, bool] | None:
    """(reads, writes) of `value` by func.call `call`: what the callee does
    with the parameters it is passed as (argument_roles), where the module
    defines the callee and it is not already being read (a recursion);
    touch's (both) otherwise. None where the call returns a buffer: it may
    be this one, and its uses are not followed (an outside attack: under
    MPI a collective into such a result wrote an argument taken for
    untouched, never read back, exit 0, 2026-12-08)."""
    if any(isinstance(r.type, ir.MemRefType) for r in call.results):
        return None
    callee = _callee(call)
    if callee is None or any(callee == f for f in calling):
        return touch(call, value)
    roles = argument_roles(callee, calling)
    read = written = False
    for k, x in enumerate(call.operands):
        if x == value:
            role = roles[k]
            if role is None:
                return None
            read, written = read or role[0], written or role[1]
    return read, written


def argument_roles(func_op: ir.Operation | ir.OpView, _calling: tuple[ir.Operation, ...] = ()
                   ) -> list[tuple[bool, bool] | None]:
    """Per argument of `func_op`'s entry block: (whether the program reads
    the value the caller passed in, whether it writes the argument), from
    what its ops do: an argument only read is an input, one only written an
    output, one read before (or without) being written throughout an input
    the program also writes (in place); a call into a function the module
    defines does what the callee does with it; None for an argument whose
    accesses are not known (its pointer escapes, an op whose effects are not
    known). For an argument both read and
    written, whether the first reads find it written is the order check's
    coverage of its accesses (exact regions, in an order of the token
    graph): an exact read that finds part of it unwritten; where the
    function cannot be followed, it is taken to be read."""
    func_op = func_op.operation
    blocks = list(func_op.regions[0].blocks)
    if not blocks:
        return []
    args = list(blocks[0].arguments)
    roles: list[list[bool] | None] = []
    for a in args:
        read: bool | None = False
        written = False
        for op, v in view_uses(a):
            t = _call_touch(op, v, _calling + (func_op,)) if op.name == "func.call" else touch(op, v)
            if t is None:
                read = None
                break
            read, written = read or t[0], written or t[1]
        roles.append([read, written] if read is not None else None)
    if any(r is not None and r[0] and r[1] for r in roles):
        name = ir.StringAttr(func_op.attributes["sym_name"]).value if "sym_name" in func_op.attributes else "?"
        c = Checker(func_op, name)
        c.fresh = set()  # what the program does, not what a claim says
        try:
            c.block(blocks[0])
        except (Unresolved, ValueError, TypeError):
            c.findings.append(Finding(None, "cannot be followed"))  # only its presence is read
        for role, a in zip(roles, args):
            if role is not None and role[0] and role[1] and not _empty(a.type):  # (nothing reads an empty buffer)
                # A racy program (findings) has no order of the token graph to follow: program order.
                role[0] = a in c.initial if not c.findings else _first_touch_reads(func_op, a)
    return [(r[0], r[1]) if r is not None else None for r in roles]


def _first_touch_reads(func_op: ir.Operation, arg: ir.Value) -> bool:
    """Whether the first op in program order that touches `arg` (or a value
    that may be it) reads it (an op that both reads and writes it reads it
    first). Where an op in a region touches it, program order is not the
    order it runs in (a loop's body runs again, through its iteration
    arguments on other buffers; a branch may not run): where the first
    touch is through such a value or may not run first (_runs_first),
    whether any op reads it (an outside attack: an argument a loop's first
    iteration read and a later one wrote was taken for an output,
    2026-12-07)."""
    order: dict[ir.Operation, int] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        order[op] = len(order)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    direct = _views_of(arg)
    touches = [(op, v, t) for op, v in view_uses(arg) if (t := touch(op, v)) is None or t[0] or t[1]]
    if not touches or any(t is None for _, _, t in touches):
        return True  # (not known: taken to be read)
    first = min(order.get(op, len(order)) for op, _, _ in touches)
    at_first = [(op, v, t) for op, v, t in touches if order.get(op, len(order)) == first]
    if not all(_runs_first(op, func_op) and any(v == d for d in direct) for op, v, _ in at_first):
        return any(t is not None and t[0] for _, _, t in touches)  # (first in a branch, or through a loop's value)
    return any(t is not None and t[0] for _, _, t in at_first)


def _views_of(value: ir.Value) -> list[ir.Value]:
    """`value` and the views of it (not the values that may be it)."""
    out = [value]
    for v in out:
        out += [u.owner.operation.results[0] for u in v.uses if u.owner.operation.name in VIEW_OPS
                and u.operand_number == 0 and len(u.owner.operation.results)]
    return out


def _runs_first(op: ir.Operation, func_op: ir.Operation) -> bool:
    """Whether `op` runs before every op after it in program order: at the
    top level, or in scf.for loops of constant bounds that run at least
    once (not in a branch, which may not run)."""
    at = op.parent
    while at is not None and at.operation != func_op:
        loop = at.operation
        if loop.name != "scf.for":
            return False
        lo, hi, step = (constant_int(v) for v in list(loop.operands)[:3])
        if lo is None or hi is None or step is None or not lo < hi:
            return False
        at = loop.parent
    return at is not None
